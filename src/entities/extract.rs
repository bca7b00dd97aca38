//! Entity extraction: rules for e-mails, URLs, handles and hashtags; the gazetteer for known
//! names; and (optionally) capitalised mid-sentence names not yet known, as `misc:` entities.

use super::Mention;
use super::canonical::canonical_id;
use super::gazetteer::Gazetteer;
use crate::types::EntityKind;
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// How much to extract.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractOptions {
    /// Match gazetteer surfaces in any case (queries), not only capitalised words (content).
    pub case_insensitive: bool,
    /// Turn unknown capitalised mid-sentence words into `misc:` entities.
    pub discover_names: bool,
}

/// The extraction rules. Cheap to build: every extractor shares the one compiled rule set.
#[derive(Debug, Clone)]
pub struct Extractor {
    rules: &'static Rules,
}

/// The rule patterns, compiled once per process on first use: every reader builds an
/// extractor, and compiling the four regexes per reader was waste.
#[derive(Debug)]
struct Rules {
    email: Regex,
    url: Regex,
    handle: Regex,
    hashtag: Regex,
}

static RULES: LazyLock<Rules> = LazyLock::new(|| Rules {
    email: Regex::new(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b").expect("valid regex"),
    url: Regex::new(r#"\bhttps?://[^\s<>"'`]+"#).expect("valid regex"),
    handle: Regex::new(r"(?:^|[^\w@.])@([A-Za-z0-9_][A-Za-z0-9_.-]{0,38}[A-Za-z0-9_]|[A-Za-z0-9_])")
        .expect("valid regex"),
    hashtag: Regex::new(r"(?:^|[^\w&#])#([A-Za-z][\w-]{0,63})").expect("valid regex"),
});

/// Capitalised words that are not names (months are checked via `text::MONTHS`): pronouns,
/// days, interjections and common
/// sentence-initial words that also appear capitalised mid-sentence (after a colon, in
/// titles).
const NOT_NAMES: &[&str] = &[
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

impl Default for Extractor {
    fn default() -> Self {
        Self::new()
    }
}

impl Extractor {
    /// The extractor (the rules are compiled on the first call in the process).
    pub fn new() -> Self {
        Extractor { rules: &RULES }
    }

    /// Extract the entities of `text`, deduplicated by id, sorted by id.
    pub fn extract(&self, text: &str, gaz: &Gazetteer, opts: ExtractOptions) -> Vec<Mention> {
        let rules = self.rules;
        let mut out: BTreeMap<String, Mention> = BTreeMap::new();
        fn add(out: &mut BTreeMap<String, Mention>, kind: EntityKind, surface: &str) {
            if let Some(id) = canonical_id(kind, surface) {
                out.entry(id.0.clone()).or_insert(Mention { id, kind, surface: surface.trim().to_string() });
            }
        }
        let mut masked = text.to_string();
        for m in rules.url.find_iter(text) {
            let url = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '}']);
            add(&mut out, EntityKind::Url, url);
            masked.replace_range(m.range(), &" ".repeat(m.len()));
        }
        for m in rules.email.find_iter(&masked.clone()) {
            add(&mut out, EntityKind::Email, m.as_str());
            masked.replace_range(m.range(), &" ".repeat(m.len()));
        }
        for c in rules.handle.captures_iter(&masked) {
            add(&mut out, EntityKind::Handle, &c[1]);
        }
        for c in rules.hashtag.captures_iter(&masked) {
            add(&mut out, EntityKind::Hashtag, &c[1]);
        }

        let words = split_words(&masked);
        let plain: Vec<&str> = words.iter().map(|w| w.text).collect();
        let capital = |i: usize| words[i].text.chars().next().is_some_and(|c| c.is_uppercase());
        let matches = if opts.case_insensitive { gaz.scan(&plain, |_| true) } else { gaz.scan(&plain, capital) };
        let mut covered = vec![false; words.len()];
        for (start, len, ids) in matches {
            // A surface known as a real kind (a person who also wrote messages) shadows the
            // `misc:` guess made before that kind was known.
            let typed = ids.iter().any(|(k, _)| *k != EntityKind::Misc);
            for (kind, id) in ids.iter().filter(|(k, _)| !typed || *k != EntityKind::Misc) {
                out.entry(id.0.clone()).or_insert(Mention {
                    id: id.clone(),
                    kind: *kind,
                    surface: plain[start..start + len].join(" "),
                });
            }
            covered[start..start + len].iter_mut().for_each(|c| *c = true);
        }
        if opts.discover_names {
            let mut i = 0;
            while i < words.len() {
                let is_name = |j: usize| {
                    !covered[j]
                        && capital(j)
                        && words[j].text.chars().count() >= 2
                        && words[j].text.chars().all(|c| c.is_alphabetic() || c == '-' || c == '\'')
                        && !NOT_NAMES.contains(&words[j].text.to_lowercase().as_str())
                        && !crate::text::MONTHS.contains(&words[j].text.to_lowercase().as_str())
                        && !crate::text::is_stop_word(&words[j].text.to_lowercase())
                };
                if is_name(i) && !words[i].sentence_start {
                    let mut j = i + 1;
                    while j < words.len() && j - i < 4 && is_name(j) && !words[j].sentence_start {
                        j += 1;
                    }
                    add(&mut out, EntityKind::Misc, &plain[i..j].join(" "));
                    i = j;
                } else {
                    i += 1;
                }
            }
        }
        out.into_values().collect()
    }
}

struct Word<'a> {
    text: &'a str,
    /// First word of a sentence (capitalisation says nothing there).
    sentence_start: bool,
}

/// Split on white space, trim punctuation, strip possessives; remember sentence starts.
fn split_words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut start = true;
    for raw in text.split_whitespace() {
        let ends_sentence = raw.ends_with(['.', '!', '?', ':']) || raw.ends_with("...");
        let t = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’' && c != '-');
        let t = t.trim_matches(|c: char| c == '\'' || c == '’' || c == '-');
        let t = t.strip_suffix("'s").or_else(|| t.strip_suffix("’s")).unwrap_or(t);
        if !t.is_empty() {
            out.push(Word { text: t, sentence_start: start });
            start = false;
        }
        if ends_sentence {
            start = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::EntityId;

    fn ids(m: &[Mention]) -> Vec<&str> {
        m.iter().map(|m| m.id.as_str()).collect()
    }

    #[test]
    fn rules_find_emails_urls_handles_hashtags() {
        let x = Extractor::new();
        let m = x.extract(
            "Ping @Bob or mail alice@example.com, see https://Example.com/Path. #Launch-Q2 ready",
            &Gazetteer::new(),
            ExtractOptions::default(),
        );
        assert_eq!(
            ids(&m),
            vec!["email:alice@example.com", "handle:bob", "hashtag:launch-q2", "url:https://Example.com/Path"]
        );
    }

    #[test]
    fn gazetteer_matches_capitalised_and_possessive_names() {
        let x = Extractor::new();
        let mut g = Gazetteer::new();
        g.insert(EntityKind::Person, "Caroline", &EntityId::from("person:caroline"));
        let m = x.extract("Yesterday Caroline's sister called.", &g, ExtractOptions::default());
        assert_eq!(ids(&m), vec!["person:caroline"]);
        // Lower-case mentions count only in query mode.
        assert!(x.extract("ask caroline", &g, ExtractOptions::default()).is_empty());
        let q = x.extract("when did caroline go?", &g, ExtractOptions { case_insensitive: true, ..Default::default() });
        assert_eq!(ids(&q), vec!["person:caroline"]);
    }

    #[test]
    fn discovery_skips_sentence_starts_and_common_words() {
        let x = Extractor::new();
        let m = x.extract(
            "Went to Sweden with Jon Snow last May. Then I rested.",
            &Gazetteer::new(),
            ExtractOptions { discover_names: true, ..Default::default() },
        );
        assert_eq!(ids(&m), vec!["misc:jon snow", "misc:sweden"]);
    }
}
