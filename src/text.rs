//! Small text utilities shared by the summariser, topic extraction, query analysis and error
//! messages: English stop words, word splitting, sentence splitting, clipping caller text;
//! the passages a hit's snippet is chosen from (`passages`); the rule that tells a
//! standing instruction (`instruction`); code blanked out of prose (`code`); and a mail's
//! own words, without what it quotes and its signature (`mail`).

mod code;
pub(crate) mod identifiers;
mod instruction;
mod mail;
mod passages;
mod question;

pub(crate) use code::blank_code;
pub use instruction::leaf_holds_instruction;
pub(crate) use mail::{OWN_WORDS_RULES, own_words, quoted_spans};
pub use passages::{Passage, PassageLimits, passages};
pub use question::{MAX_QUESTION_CHARS, MAX_QUESTION_TERMS, cap_question};

/// English stop words and question words. Removing them from questions costs nothing and
/// lifts BM25 recall (RETRIEVAL-NOTES: +5 points R@5 on LoCoMo).
pub const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "also",
    "get",
    "got",
    "like",
    "really",
    "yeah",
    "yes",
    "oh",
    "im",
    "ive",
    "thats",
    "dont",
    "it's",
    "i'm",
    "i've",
    "that's",
    "don't",
    "you're",
    "youre",
    "much",
    "many",
    "one",
    "well",
    "lot",
    "way",
    "thing",
    "things",
    "know",
    "think",
    "kind",
    "sure",
    "said",
    "say",
    "says",
    "go",
    "going",
    "gone",
    "went",
    "make",
    "made",
    "let",
    "us",
    "see",
    "would",
    "may",
    "might",
    "must",
    "shall",
    "ever",
    "even",
    "still",
    "yet",
    "hey",
    "hi",
    "wow",
    "thanks",
    "thank",
    "great",
    "good",
];

/// English month names, lower-case, January first.
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words of time (besides [`MONTHS`]): what a question says when it names a time
/// ("last week", "next Tuesday", "two days ago"). Never an entity of their own.
const TIME_WORDS: &[&str] = &[
    "last",
    "next",
    "this",
    "past",
    "ago",
    "today",
    "tonight",
    "tomorrow",
    "yesterday",
    "now",
    "day",
    "days",
    "week",
    "weeks",
    "weekend",
    "weekends",
    "month",
    "months",
    "year",
    "years",
    "morning",
    "afternoon",
    "evening",
    "night",
    "spring",
    "summer",
    "autumn",
    "fall",
    "winter",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "mondays",
    "tuesdays",
    "wednesdays",
    "thursdays",
    "fridays",
    "saturdays",
    "sundays",
];

/// True for a word of time or a month (the input must be lower-case).
pub fn is_time_word(w: &str) -> bool {
    TIME_WORDS.contains(&w) || MONTHS.contains(&w)
}

/// True for a stop word (the input must be lower-case).
pub fn is_stop_word(w: &str) -> bool {
    // A set, not a scan of the list: every word of every ingested text and summary asks.
    static SET: std::sync::LazyLock<std::collections::HashSet<&'static str>> =
        std::sync::LazyLock::new(|| STOP_WORDS.iter().copied().collect());
    SET.contains(w)
}

/// Lower-cased alphanumeric words of `text` (apostrophes kept inside words).
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
}

/// Content words: lower-cased, not stop words, at least 3 characters, not pure numbers.
pub fn content_words(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text).filter(|w| w.chars().count() >= 3 && !is_stop_word(w) && !w.chars().all(|c| c.is_ascii_digit()))
}

/// Split text into sentences on `.`, `!`, `?` followed by white space, and on line breaks.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_some_and(|n| n.is_ascii_whitespace()) {
                let s = line[start..=i].trim();
                if !s.is_empty() {
                    out.push(s);
                }
                start = i + 1;
            }
        }
        let s = line[start..].trim();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// Caller text quoted in an error, cut to `max` characters (an ellipsis marks the cut): a
/// 10k-character field must not come back whole in the message.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() > max { format!("{}…", s.chars().take(max).collect::<String>()) } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_on_terminators_and_lines() {
        assert_eq!(
            sentences("Hi there. How are you?\nFine! e.g.x ok"),
            vec!["Hi there.", "How are you?", "Fine!", "e.g.x ok"]
        );
        assert!(sentences("  \n ").is_empty());
    }

    #[test]
    fn content_words_drop_stop_words() {
        let w: Vec<String> = content_words("When did Caroline go to the LGBTQ support group in 2023?").collect();
        assert_eq!(w, vec!["caroline", "lgbtq", "support", "group"]);
    }

    #[test]
    fn clip_counts_characters_not_bytes() {
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("", 0), "");
    }
}
