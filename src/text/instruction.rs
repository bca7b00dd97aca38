//! Standing instructions: what a person tells their assistant to do from now on whenever a
//! kind of request comes up ("Always format code with syntax highlighting when I ask about
//! implementation details"). Such a message is evidence for every later request of that
//! kind, however it is worded, so walk gives it a prior (`WalkParams::instruction`).
//!
//! The rule is deliberately narrow: a sentence that opens with "always", "never" or "from now
//! on" (after an optional "please") *and* says when it applies ("when I…", "whenever I…",
//! "if I…"). "Always good to hear!" or "Never been there" are not instructions.

use super::{sentences, words};

/// True when `text` (a message without its `Author:` prefix) holds a standing instruction.
pub fn is_standing_instruction(text: &str) -> bool {
    sentences(text).into_iter().any(|s| {
        let w: Vec<String> = words(s).collect();
        let mut at = 0;
        if w.first().is_some_and(|x| x == "please") {
            at = 1;
        }
        let opens = match w.get(at).map(String::as_str) {
            Some("always" | "never") => true,
            Some("from") => w.get(at + 1).is_some_and(|x| x == "now") && w.get(at + 2).is_some_and(|x| x == "on"),
            _ => false,
        };
        opens && w.windows(2).any(|p| matches!(p[0].as_str(), "when" | "whenever" | "if") && p[1] == "i")
    })
}

/// True when a leaf's `content` (which starts `Author: ` when it has an author) holds a
/// standing instruction. The write path and migration 0008 share it.
pub fn leaf_holds_instruction(content: &str, author: Option<&str>) -> bool {
    let text = author
        .filter(|a| !a.is_empty())
        .and_then(|a| content.strip_prefix(a))
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(content);
    is_standing_instruction(text)
}

#[cfg(test)]
mod tests {
    use super::{is_standing_instruction, leaf_holds_instruction};

    #[test]
    fn the_author_prefix_is_not_the_first_word() {
        let c = "Craig: Always use type hints when I ask for Python code.";
        assert!(leaf_holds_instruction(c, Some("Craig")));
        assert!(!leaf_holds_instruction(c, None), "without the author the sentence opens with the name");
        assert!(leaf_holds_instruction("Always use type hints when I ask for Python code.", None));
    }

    #[test]
    fn instructions_say_what_to_do_and_when() {
        for t in [
            "Always format all code snippets with syntax highlighting when I ask about implementation details.",
            "Never use jargon when I ask about my budget.",
            "Thanks! Please always include a diagram whenever I ask about networking.",
            "From now on, reply in French if I write to you in French.",
        ] {
            assert!(is_standing_instruction(t), "{t}");
        }
        for t in [
            "Always good to hear! See you later!",
            "Never been to an animal shelter before, but it must be great!",
            "I always run when I feel stressed",
            "Always back up the database.",
            "When I ask about recipes, I mostly cook vegan.",
            "",
        ] {
            assert!(!is_standing_instruction(t), "{t}");
        }
    }
}
