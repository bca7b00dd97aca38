//! Word splitting for extraction: the words of a text with where capitalisation means
//! nothing (sentence starts, line starts, table cells, list items) and where a run of names
//! must stop (punctuation, line breaks), so names never glue across structure.

/// One word of a text, punctuation trimmed, possessive stripped.
pub(super) struct Word<'a> {
    pub text: &'a str,
    /// First word of a sentence, line, table cell or list item: capitalisation says nothing.
    pub sentence_start: bool,
    /// Nothing but white space inside one line separates it from the word before: a run of
    /// capitalised words may continue through it.
    pub joins_prev: bool,
    /// Followed by `.`, `!`, `?`, `,` or `;` (or the end of its line): the end of a clause.
    pub ends_clause: bool,
    /// Followed by `:` ("Owner:", "Updated:"): a field label when it stands alone.
    pub label: bool,
    /// Written as a tag or handle (`#atlas`, `@maya`).
    pub tag: bool,
    /// On a title-like line of a multi-line text (a heading, a signature, a table header):
    /// every word there is capitalised, so none is evidence of a name.
    pub title_line: bool,
    /// In a Markdown heading on its own line (until its text runs into a sentence) or in an
    /// emphasised span (`**Physical Activity:**`): headings and an answer's bold labels are
    /// written in title case, so capitalisation there is no evidence of a name.
    pub title_case: bool,
}

/// Split `text` into words. Lines are read one by one: a line break, a Markdown table cell
/// (`|`), a heading marker (`#` + space) or a list marker (`-`, `*`, `1.`, `[ ]`), wherever
/// it stands, starts a new sentence, and a word with punctuation on either side breaks a run.
pub(super) fn split_words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let multi_line = text.lines().filter(|l| !l.trim().is_empty()).count() > 1;
    for line in text.lines() {
        let title = multi_line && is_title_line(line);
        let own_heading = is_heading_line(line);
        for cell in line.split('|') {
            let mut start = true;
            let mut joins = false;
            let mut heading = false;
            // In a heading on its own line, or in emphasis: written in title case.
            let mut title_case = false;
            let mut emphasis = false;
            let mut prev_lower = false;
            for raw in cell.split_whitespace() {
                // Emphasis opens at a word starting `*` (after an opening bracket or quote
                // too) and closes at one ending `*` before its punctuation; a lone `**`
                // toggles it. A sentence's end ends it too (an unclosed `*args`).
                let marker = is_marker(raw);
                let bare = raw.trim_start_matches(['(', '[', '"', '\'', '“', '‘']);
                let opens = bare.starts_with('*') && !marker;
                let closes = raw.trim_end_matches(|c: char| c.is_ascii_punctuation() && c != '*').ends_with('*');
                let lone = raw.chars().all(|c| c == '*') && raw.len() > 1;
                if marker {
                    // "### 4. **Title**": a list number right after a heading marker is the
                    // heading's.
                    title_case = raw.starts_with('#') && own_heading || (title_case && start);
                    heading = raw.starts_with('#');
                    // A heading or list marker (also inside a line: the document chunker
                    // folds a note's line breaks into spaces): what follows starts anew.
                    start = true;
                    joins = false;
                    continue;
                }
                let t = trim_word(raw);
                let lead_punct = raw.starts_with(|c: char| !c.is_alphanumeric());
                let trail_punct = raw.ends_with(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’');
                if t.is_empty() {
                    // A lone `&`, `-` or `—` between words still breaks a run.
                    joins = false;
                    if lone {
                        emphasis = !emphasis;
                    }
                    continue;
                }
                // Punctuation inside closing emphasis or code marks counts as outside them:
                // "**Tip:** Use…" ends a label and starts a sentence as "Tip: Use…" does.
                let core = raw.trim_end_matches(['*', '_', '`']);
                let ends_clause = core.ends_with(['.', '!', '?', ',', ';']) || core.ends_with("...");
                let capital = t.chars().next().is_some_and(char::is_uppercase);
                if heading && capital && prev_lower {
                    // "## Operation log Every change…": a folded heading runs into its
                    // paragraph; a capital after a lower-case heading word starts it.
                    start = true;
                    heading = false;
                    title_case = false;
                }
                prev_lower = t.chars().next().is_some_and(char::is_lowercase);
                out.push(Word {
                    text: t,
                    sentence_start: start,
                    joins_prev: joins && !lead_punct,
                    ends_clause,
                    label: core.ends_with(':'),
                    tag: raw.starts_with(['#', '@']),
                    title_line: title,
                    title_case: title_case || emphasis || opens,
                });
                if opens || emphasis {
                    emphasis = !closes;
                }
                start = core.ends_with(['.', '!', '?', ':']) || core.ends_with("...");
                if start {
                    title_case = false;
                    emphasis = false;
                }
                joins = !trail_punct;
            }
            if let Some(last) = out.last_mut() {
                last.ends_clause = true;
            }
        }
    }
    out
}

/// Trim punctuation around a word and strip a possessive `'s`.
fn trim_word(raw: &str) -> &str {
    let t = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’' && c != '-');
    let t = t.trim_matches(|c: char| c == '\'' || c == '’' || c == '-');
    t.strip_suffix("'s").or_else(|| t.strip_suffix("’s")).unwrap_or(t)
}

/// A Markdown heading on a line of its own ("### Next Steps"): `#` marks, a space, at most
/// twelve words and no sentence end. A note the document chunker folded into one line runs
/// its heading into the paragraph ("# Standup Quentin moved the planning…"), where the
/// heading's end cannot be told: that line is read as prose.
fn is_heading_line(line: &str) -> bool {
    let t = line.trim();
    let Some((marks, rest)) = t.split_once(' ') else { return false };
    !marks.is_empty()
        && marks.chars().all(|c| c == '#')
        && !rest.trim_end().ends_with(['.', '!', '?'])
        && rest.split_whitespace().count() <= 12
}

/// A Markdown heading or list marker: `#`…, `-`, `*`, `+`, `1.`, `1)`, `[ ]`, `[x]`.
fn is_marker(raw: &str) -> bool {
    let numbered =
        raw.len() > 1 && raw.ends_with(['.', ')']) && raw[..raw.len() - 1].chars().all(|c| c.is_ascii_digit());
    raw.chars().all(|c| c == '#')
        || matches!(raw, "-" | "*" | "+" | ">" | "[" | "]" | "[ ]" | "[x]" | "[X]")
        || numbered
}

/// A line that reads as a title (a heading, a signature line, a table header): no sentence
/// punctuation at its end, and at least three words after the first of which three in four
/// (stop words aside) are capitalised.
fn is_title_line(line: &str) -> bool {
    let l = line.trim();
    if l.ends_with(['.', '!', '?']) {
        return false;
    }
    let words: Vec<&str> = l
        .split(|c: char| c.is_whitespace() || c == '|')
        .map(trim_word)
        .filter(|w| w.chars().next().is_some_and(char::is_alphabetic))
        .skip(1)
        .filter(|w| !crate::text::is_stop_word(&w.to_lowercase()))
        .collect();
    let caps = words.iter().filter(|w| w.chars().next().is_some_and(char::is_uppercase)).count();
    words.len() >= 3 && caps * 4 >= words.len() * 3
}

/// Capitalised words that are not names (months are checked via `text::MONTHS`): pronouns,
/// days, interjections and common
/// sentence-initial words that also appear capitalised mid-sentence (after a colon, in
/// titles).
pub(super) const NOT_NAMES: &[&str] = &[
    "i",
    "i'm",
    "i've",
    "i'll",
    "i'd",
    "im",
    "ive",
    "the",
    "a",
    "an",
    "and",
    "but",
    "or",
    "so",
    "yes",
    "no",
    "oh",
    "hey",
    "hi",
    "hello",
    "wow",
    "thanks",
    "thank",
    "ok",
    "okay",
    "yeah",
    "sure",
    "haha",
    "lol",
    "omg",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mr",
    "mrs",
    "ms",
    "dr",
    "it",
    "it's",
    "that",
    "this",
    "what",
    "when",
    "where",
    "who",
    "why",
    "how",
    "my",
    "you",
    "we",
    "they",
    "he",
    "she",
    "his",
    "her",
    "our",
    "your",
    "their",
    "me",
    "us",
    "them",
    "is",
    "are",
    "was",
    "were",
    "do",
    "did",
    "does",
    "not",
    "just",
    "also",
    "re",
    "fwd",
    "subject",
    "to",
    "from",
    "cc",
    "in",
    "on",
    "at",
    "of",
    "for",
    "with",
    "by",
    "if",
    "then",
    "there",
    "here",
    "good",
    "great",
    "nice",
    "cool",
    "awesome",
    "amazing",
    "love",
    "congrats",
    "congratulations",
    "sorry",
    "please",
    "bye",
    "see",
    "let",
    "let's",
    "have",
    "has",
    "had",
    "be",
    "can",
    "could",
    "would",
    "should",
    "will",
    "am",
    "got",
    "always",
    "even",
    "btw",
    "bet",
    "buddy",
    "dude",
    "man",
    "girl",
    "guys",
    "wait",
    "well",
    "anyway",
    "anyways",
    "totally",
    "definitely",
    "absolutely",
    "exactly",
    "seriously",
    "honestly",
    "really",
    "maybe",
    "hopefully",
];

/// True for a lower-cased word that is never a name on its own: [`NOT_NAMES`], months and
/// stop words.
pub(super) fn is_not_name(lower: &str) -> bool {
    NOT_NAMES.contains(&lower) || crate::text::MONTHS.contains(&lower) || crate::text::is_stop_word(lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(text: &str) -> Vec<(&str, bool, bool)> {
        split_words(text).iter().map(|w| (w.text, w.sentence_start, w.joins_prev)).collect()
    }

    #[test]
    fn structure_starts_sentences_and_breaks_runs() {
        assert_eq!(
            starts("Best,\nRuth Adams\nDirector"),
            vec![("Best", true, false), ("Ruth", true, false), ("Adams", false, true), ("Director", true, false)]
        );
        assert_eq!(
            starts("| Person | Role |\n- [ ] Public page"),
            vec![("Person", true, false), ("Role", true, false), ("Public", true, false), ("page", false, true)]
        );
        // A flattened note: the markers still start items.
        assert_eq!(
            starts("review it. - [ ] Press note # Retro Keep ## Operation log Every change"),
            vec![
                ("review", true, false),
                ("it", false, true),
                ("Press", true, false),
                ("note", false, true),
                ("Retro", true, false),
                ("Keep", false, true),
                ("Operation", true, false),
                ("log", false, true),
                ("Every", true, true),
                ("change", false, true)
            ]
        );
        // A comma or an ampersand ends a run; a possessive does not.
        assert_eq!(
            starts("met Sweden, Norway & Jon's dog"),
            vec![
                ("met", true, false),
                ("Sweden", false, true),
                ("Norway", false, false),
                ("Jon", false, false),
                ("dog", false, true)
            ]
        );
    }

    #[test]
    fn title_lines_are_told_from_sentences() {
        assert!(is_title_line("Director of Operations, Bluefin Logistics"));
        assert!(is_title_line("| Person | Role | E-mail | Chat handle |"));
        assert!(!is_title_line("Owners: Tomás Reyes (schema and data), Jonas Berg (infrastructure)."));
        assert!(!is_title_line("# Who's who at Larkspur Labs"));
    }
}
