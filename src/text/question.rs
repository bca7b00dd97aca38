//! The cap on a question (SPEC §3): at most [`MAX_QUESTION_CHARS`] characters and
//! [`MAX_QUESTION_TERMS`] distinct words are read, the rest cut with a note. Every step of a
//! read grows with the question (the gazetteer scan, one BM25 term query and one snippet
//! weight per distinct word, the tokenizer's encoding before it truncates), so a 1 MB
//! question of 100,000 distinct words took 890 MB and 16 s on a three-note store; cut first,
//! it costs what a question of the cap does. Applied in the engine (every read mode that
//! takes a question, so a library caller is held to it too) and by the tool layer before it.

/// At most this many characters of a question are read.
pub const MAX_QUESTION_CHARS: usize = 2_000;

/// At most this many distinct words (case-insensitive) of a question are read.
pub const MAX_QUESTION_TERMS: usize = 100;

/// `question` cut to the cap, and a note saying so when it was cut. A cut falls between
/// words: a word the character cap would split is left out whole (unless it is the only one).
pub fn cap_question(question: &str) -> (&str, Option<String>) {
    let mut end = question.char_indices().nth(MAX_QUESTION_CHARS).map_or(question.len(), |(i, _)| i);
    let by_chars = end < question.len();
    if by_chars {
        // Back to the start of a word the cut would split.
        let head = &question[..end];
        if question[end..].starts_with(char::is_alphanumeric) {
            // (One word longer than the cap is cut inside it rather than to nothing.)
            // (The separator may be several bytes: a combining accent, a non-breaking space.)
            end = head.char_indices().rev().find(|&(_, c)| !c.is_alphanumeric()).map_or(end, |(i, c)| i + c.len_utf8());
        }
    }
    // The distinct words, in order: the cut falls before the first one past the cap.
    let mut seen = std::collections::HashSet::new();
    let mut word_start = None;
    let mut by_terms = false;
    for (i, c) in question[..end].char_indices().chain(std::iter::once((end, ' '))) {
        match (c.is_alphanumeric(), word_start) {
            (true, None) => word_start = Some(i),
            (false, Some(s)) => {
                word_start = None;
                if seen.insert(question[s..i].to_lowercase()) && seen.len() > MAX_QUESTION_TERMS {
                    end = s;
                    by_terms = true;
                    break;
                }
            }
            _ => {}
        }
    }
    if !by_chars && !by_terms {
        return (question, None);
    }
    let kept = question[..end].trim_end();
    let note = format!(
        "the question was cut to its first {} characters (of {}): at most {MAX_QUESTION_CHARS} characters and \
         {MAX_QUESTION_TERMS} distinct words of a question are read",
        kept.chars().count(),
        question.chars().count(),
    );
    (kept, Some(note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_cut_between_words_at_either_cap() {
        assert_eq!(cap_question("when is the launch?"), ("when is the launch?", None));
        // The same word many times is one term: only the characters cap applies.
        let long = "budget ".repeat(1_000);
        let (kept, note) = cap_question(&long);
        assert!(kept.chars().count() <= MAX_QUESTION_CHARS && kept.ends_with("budget"), "{kept}");
        assert!(note.unwrap().contains("of 7000"));
        // Distinct words past the cap are cut, and the kept words are whole.
        let many: String = (0..500).map(|i| format!("w{i} ")).collect();
        let (kept, note) = cap_question(&many);
        assert_eq!(kept.split_whitespace().count(), MAX_QUESTION_TERMS);
        assert!(kept.ends_with(&format!("w{}", MAX_QUESTION_TERMS - 1)), "{kept}");
        assert!(note.is_some());
        // Multi-byte text is cut on a character boundary.
        let wide = "é".repeat(3 * MAX_QUESTION_CHARS);
        let (kept, _) = cap_question(&wide);
        assert_eq!(kept.chars().count(), MAX_QUESTION_CHARS);
        // A cut that backs up to a multi-byte separator (a combining accent between letters,
        // as the fuzzer found) ends after it, on a boundary.
        let accented = "e\u{301}".repeat(MAX_QUESTION_CHARS);
        let (kept, note) = cap_question(&accented);
        assert!(kept.ends_with('\u{301}') && kept.chars().count() <= MAX_QUESTION_CHARS, "{}", kept.len());
        assert!(note.is_some());
    }
}
