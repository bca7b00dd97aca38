//! Code in a text (Markdown fences and inline code spans) blanked out before names, handles,
//! hashtags and times are read: an identifier, a CSS `@media` or a C `#include` names
//! nothing, and an assistant's answers are full of them (issue 43: `handle:media`,
//! `misc:ensure` from `// Ensure …` comments became the best-connected entities of a pooled
//! store); `date("2024-12-01")` in a note is an example, no time the note speaks of (issue 45).

/// `text` with every fenced code block (```` ``` ```` or `~~~`, the fence lines included; an
/// unclosed fence runs to the end) and every inline code span (`` `…` `` within one line)
/// blanked: same length in bytes, line breaks kept. A blanked inline span starts with a comma,
/// so that the words on either side are not read as one run of names. Text without a
/// backtick or tilde is returned as it is.
///
/// Chat writes code as Markdown does not: a block on one line (```` ```npm install``` then
/// ask Maria ````, no fence: CommonMark's backtick fence takes no backtick after its opening
/// run, so the line is inline code) and a block closed at the end of its last code line
/// (```` ```\ncode``` ````, Slack): both close where the marks close.
pub(crate) fn blank_code(text: &str) -> String {
    if !text.contains(['`', '~']) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let marker = line.trim();
        match fence {
            Some(f) => {
                // The fence line itself, or a code line ending in the marks.
                if marker.ends_with(f) {
                    fence = None;
                }
                blank_into(&mut out, line);
            }
            None => match ["```", "~~~"].into_iter().find(|f| marker.starts_with(f)) {
                Some("```") if marker.trim_start_matches('`').contains('`') => blank_inline(&mut out, line),
                Some(f) => {
                    fence = Some(f);
                    blank_into(&mut out, line);
                }
                None => blank_inline(&mut out, line),
            },
        }
    }
    out
}

/// Every character of `s` as spaces of its byte length, line breaks kept.
fn blank_into(out: &mut String, s: &str) {
    for c in s.chars() {
        if c == '\n' || c == '\r' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        }
    }
}

/// `line` with its inline code spans (a backtick to the next on the same line) blanked, each
/// starting with a comma.
fn blank_inline(out: &mut String, line: &str) {
    let mut rest = line;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else { break };
        out.push_str(&rest[..open]);
        let span = &rest[open..open + len + 2];
        out.push(',');
        blank_into(out, &span[1..]);
        rest = &rest[open + len + 2..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::blank_code;

    #[test]
    fn fences_and_inline_spans_are_blanked_to_the_same_length() {
        let text = "Use the grid:\n```css\n@media (max-width: 600px) { }\n```\nThen call `Config.load` here.\n";
        let out = blank_code(text);
        assert_eq!(out.len(), text.len());
        assert_eq!(out.lines().count(), text.lines().count());
        assert!(!out.contains("@media") && !out.contains("Config"), "{out}");
        assert!(out.starts_with("Use the grid:\n") && out.contains("Then call ,"), "{out}");
        assert!(out.ends_with(" here.\n"), "{out}");
    }

    /// Chat's code: a one-line block is inline code, not a fence left open; a block closed at
    /// the end of its last line closes there. The prose after either is read.
    #[test]
    fn chat_code_blocks_close_where_their_marks_close() {
        let one_line = blank_code("```npm install``` then ask Maria\nMaria said yes");
        assert!(!one_line.contains("npm") && one_line.contains("then ask Maria\nMaria said yes"), "{one_line}");
        let slack = blank_code("try\n```\nlet Config = 1;```\nthen ask Maria");
        assert!(!slack.contains("Config") && slack.ends_with("then ask Maria"), "{slack}");
        let tilde = blank_code("~~~\nGizmo\n~~~\nAsk Maria");
        assert!(!tilde.contains("Gizmo") && tilde.ends_with("Ask Maria"), "{tilde}");
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end_and_plain_text_is_untouched() {
        let out = blank_code("Intro Alice\n~~~\n#include <stdio.h>\nMore Code");
        assert!(out.starts_with("Intro Alice\n") && !out.contains("include") && !out.contains("More"));
        let plain = "Caroline went to Lisbon with Ana.";
        assert_eq!(blank_code(plain), plain);
        // One backtick alone is no span; a multi-byte character inside a span keeps its bytes.
        assert_eq!(blank_code("it's 5` long"), "it's 5` long");
        assert_eq!(blank_code("say `é` ok").len(), "say `é` ok".len());
    }
}
