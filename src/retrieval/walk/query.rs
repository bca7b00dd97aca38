//! Query analysis: the question's entities (gazetteer + rules, case- and
//! possessive-insensitive), its content words (stop and wh-words removed), the time it
//! names, and whether it asks about nothing but that time.

use super::intent;
use crate::entities::ExtractOptions;
use crate::reader::MemoryReader;
use crate::text::content_words;
use crate::types::{EntityId, EntityKind};

/// What walk understood of a question.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryAnalysis {
    /// Canonical ids of the entities named, sorted.
    pub entities: Vec<EntityId>,
    /// People among them (their leaves as author get a mild boost), lower case and without
    /// diacritics (`person_key`): the name typed without accents, or with capitals a
    /// byte-wise comparison misses ("Á"), is the same person.
    pub people: Vec<String>,
    /// The question without stop words and wh-words: what BM25 sees.
    pub lexical: String,
    /// What the dense model sees: the question without the names of the people it asks
    /// about. Who is asked about is matched exactly (the author boost, the entity routes);
    /// a name left in the embedding pulls in the other speaker's turns that merely
    /// address that person ("Thanks, Melanie!").
    pub dense: String,
    /// A time window the question names ("last week", "in May 2023"), epoch ms: the answer
    /// lies inside it (SPEC §5.1).
    pub window: Option<(i64, i64)>,
    /// A window the question names that bounds nothing (`window` is then `None`), and whose
    /// time the leaves that speak of it are preferred for (`score.rs`): one inside which
    /// nothing lies by either clock (`router.rs`: the walk is asked again without the bound).
    pub soft_window: Option<(i64, i64)>,
    /// What the response's `explain.notes` says of the reading: a question cut to the cap
    /// (`text::cap_question`), and how the time was read when not as written (an impossible
    /// date, a reversed range, a window after now, an ambiguous numeric date, a date-like
    /// text not read).
    pub notes: Vec<String>,
    /// The question asks about its window and nothing else ("what happened yesterday?",
    /// "catch me up on last week"): no entity, and no word left once the words that name or
    /// frame the time are gone. Answered from the tree (`timeline.rs`), not by relevance.
    pub time_only: bool,
    /// The question asks what the host's assistant said or advised
    /// (`intent::asks_for_assistant`).
    pub asks_assistant: bool,
    /// The question asks in what order things happened (`intent::asks_for_order`; answered by
    /// `history.rs`).
    pub asks_order: bool,
    /// The question asks for a summary (`intent::asks_for_summary`; answered by `history.rs`).
    pub asks_summary: bool,
    /// The question asks where something began (`intent::asks_for_first`): the earliest of
    /// the memories matching it best comes first (`first.rs`).
    pub asks_first: bool,
}

/// Analyse `q` against the store's gazetteer; a question past the cap is read up to it.
pub fn analyse_query(mem: &MemoryReader, q: &str) -> QueryAnalysis {
    // First, before any step that grows with the question (SPEC §3's cap).
    let (q, cut) = crate::text::cap_question(q);
    let opts = ExtractOptions { case_insensitive: true, discover_names: false };
    let mut found = mem.extractor().extract(q, mem.derived().gazetteer(), opts);
    // Registry aliases added by hand resolve at once (the vault is the source of truth).
    found.extend(mem.with_aliases(|g| mem.extractor().extract(q, g, opts)));
    // A surface made only of words of time names a time, whatever the store has filed under
    // it (a chat's "Yesterday, …" can be mistaken for a name at ingest): it is read as time.
    found.retain(|m| !crate::text::words(&m.surface).all(|w| crate::text::is_time_word(&w)));
    let mut entities: Vec<EntityId> = found.iter().map(|m| m.id.clone()).collect();
    entities.sort();
    entities.dedup();
    // "Who is Maya?" asks what others say about Maya: her own messages are no answer, so
    // she is no boosted speaker (her name still leaves the dense text, as for any person).
    let about = asks_who(
        q,
        &found.iter().filter(|m| m.kind == EntityKind::Person).map(|m| m.surface.as_str()).collect::<Vec<_>>(),
    );
    let people: Vec<String> = found
        .iter()
        .filter(|m| m.kind == EntityKind::Person && !about)
        .map(|m| person_key(m.id.as_str().trim_start_matches("person:")))
        .collect();
    let surfaces: Vec<&str> =
        found.iter().filter(|m| m.kind == EntityKind::Person).map(|m| m.surface.as_str()).collect();
    // A window ahead of now bounds like any other: nothing is said inside it yet, so what it
    // admits is what speaks of it (the plans, by the second clock); when nothing does, the
    // router asks again without the bound (`soft_window`).
    let time = crate::time::read_time(q, mem.now_ms());
    // A question that names a time is answered from inside it: the words that name or frame
    // the time ("what happened", "last", "Tuesday") would only match other days' text.
    let names_time = time.names_time;
    let mut dense = without_names(q, &surfaces);
    if names_time {
        dense = without_time_words(&dense);
    }
    let mut words: Vec<String> = content_words(q).collect();
    if names_time {
        words.retain(|w| !frames_time(w));
    }
    let asks_first = intent::asks_for_first(q);
    if asks_first && words.iter().any(|w| !intent::frames_first(w)) {
        words.retain(|w| !intent::frames_first(w));
    }
    let time_only = names_time && words.is_empty() && entities.is_empty();
    let mut lexical = if words.is_empty() && !names_time { q.to_string() } else { words.join(" ") };
    // An identifier the question writes is asked for whole (`0.15`, `setup.py`: the index
    // keeps them whole, `index::identifiers`); its parts alone are common words and numbers,
    // and pure numbers are no content words at all. A date in digits names the time instead.
    if !words.is_empty() || names_time {
        for id in crate::text::identifiers::question_identifiers(q) {
            let numeric = id.chars().all(|c| c.is_ascii_digit() || !c.is_alphanumeric());
            if !(names_time && numeric) {
                lexical.push(' ');
                lexical.push_str(id);
            }
        }
    }
    if about {
        // What answers "who is X" says who X is: "who's who", "X, who leads…".
        lexical.push_str(" who");
    }
    if dense.trim().is_empty() {
        dense = q.to_string();
    }
    let (asks_order, asks_summary) = (intent::asks_for_order(q), intent::asks_for_summary(q));
    // A history question is searched for what its history is of, not for how it asks.
    if (asks_order || asks_summary)
        && let Some(topic) = intent::history_topic(q)
    {
        lexical = topic;
        dense = intent::history_topic(&dense).unwrap_or(dense);
    }
    QueryAnalysis {
        entities,
        people,
        lexical,
        dense,
        window: time.window,
        soft_window: None,
        notes: cut.into_iter().chain(time.notes).collect(),
        time_only,
        asks_assistant: intent::asks_for_assistant(q),
        asks_order,
        asks_summary,
        asks_first,
    }
}

/// A person's name as questions and authors are compared: lower case, without diacritics.
pub(super) fn person_key(name: &str) -> String {
    crate::entities::fold_diacritics(&name.to_lowercase())
}

/// Words that only frame a question about a time: what happened, what we talked about, what
/// is new, catch me up. With a window named, they say "tell me about that time", not what
/// to look for. Besides these, the words of time themselves (`is_time_word`, ordinals,
/// day and year numbers) frame it.
const FRAMING: &[&str] = &[
    "happen",
    "happened",
    "happening",
    "happens",
    "talk",
    "talked",
    "talking",
    "discuss",
    "discussed",
    "discussing",
    "chat",
    "chatted",
    "say",
    "said",
    "did",
    "does",
    "done",
    "doing",
    "going",
    "went",
    "new",
    "news",
    "catch",
    "anything",
    "everything",
    "something",
    "stuff",
    "thing",
    "things",
    "tell",
    "show",
    "give",
    "remind",
    "recap",
    "summary",
    "summarise",
    "summarize",
    "overview",
    "update",
    "updates",
    "get",
    "got",
    "work",
    "worked",
    "working",
    "since",
    "during",
    "until",
    "till",
    "through",
    "from",
    "ago",
    "latest",
    "recent",
    "recently",
    "day's",
    "week's",
    "month's",
    "year's",
    "yesterday's",
    "today's",
    "earlier",
    "later",
];

/// True for a content word that only names or frames the time a question asks about.
fn frames_time(w: &str) -> bool {
    crate::text::is_time_word(w) || FRAMING.contains(&w) || is_date_number(w)
}

/// "13th", "1st", "2023", "13": numbers a date is written with.
fn is_date_number(w: &str) -> bool {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
        && matches!(suffix, "" | "st" | "nd" | "rd" | "th")
        && digits.parse::<u32>().is_ok_and(|n| (1..=31).contains(&n) || (1900..=2200).contains(&n))
}

/// `q` without the words that name a time (the dense text of a question that names one).
fn without_time_words(q: &str) -> String {
    q.split_whitespace()
        .filter(|w| {
            let bare = w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
            bare.is_empty()
                || !(crate::text::is_time_word(&bare) || is_date_number(&bare) || crate::time::is_numeric_date(&bare))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// True for a question asking who someone named in `people` is, and nothing else ("Who is
/// Maya?", "who's Tomás", "Tell me about Ruth"; not "Who is Tim's inspiration?").
fn asks_who(q: &str, people: &[&str]) -> bool {
    let q = q.trim().trim_end_matches(['?', '.', '!']).trim().to_lowercase();
    ["who is ", "who's ", "who’s ", "who was ", "tell me about "]
        .iter()
        .any(|p| q.strip_prefix(p).is_some_and(|rest| people.iter().any(|n| n.to_lowercase() == rest.trim())))
}

/// `q` without the words of `names` (case-insensitive, possessive `'s` too); `q` itself
/// when nothing else would remain.
fn without_names(q: &str, names: &[&str]) -> String {
    let name_words: Vec<String> = names.iter().flat_map(|n| n.split_whitespace()).map(|w| w.to_lowercase()).collect();
    if name_words.is_empty() {
        return q.to_string();
    }
    let kept: Vec<&str> = q
        .split_whitespace()
        .filter(|w| {
            let bare = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’');
            let bare = bare.strip_suffix("'s").or_else(|| bare.strip_suffix("’s")).unwrap_or(bare);
            !name_words.contains(&bare.to_lowercase())
        })
        .collect();
    if kept.is_empty() { q.to_string() } else { kept.join(" ") }
}

#[cfg(test)]
mod tests {
    use super::{asks_who, frames_time, without_names, without_time_words};

    #[test]
    fn identity_questions_are_told_apart() {
        let who = |q: &str| asks_who(q, &["Maya", "tomás", "Ruth Adams", "Tim"]);
        assert!(who("Who is Maya?"));
        assert!(who("  who's Tomás"));
        assert!(who("Tell me about Ruth Adams."));
        assert!(!who("Who did Maya thank?"));
        assert!(!who("What is Maya's role?"));
        assert!(!who("Who is one of Tim's sources of inspiration?"));
        assert!(!who("Who is Jill?"));
    }

    #[test]
    fn words_that_frame_a_time_are_told_from_topics() {
        for w in ["happened", "yesterday", "tuesday", "13th", "2023", "last", "week", "talked", "may"] {
            assert!(frames_time(w), "{w}");
        }
        for w in ["budget", "cutover", "maya", "300", "2500", "release", "deploy"] {
            assert!(!frames_time(w), "{w}");
        }
        assert_eq!(
            without_time_words("what did Maya say about the budget last week?"),
            "what did Maya say about the budget"
        );
        assert_eq!(without_time_words("the outage on 2023-05-13"), "the outage on");
    }

    #[test]
    fn names_and_possessives_leave_the_dense_text() {
        let cases = [
            ("What did Caroline research?", vec!["Caroline"], "What did research?"),
            ("What do Melanie's kids like?", vec!["melanie"], "What do kids like?"),
            ("When did Jon Snow meet Ada", vec!["Jon Snow", "Ada"], "When did meet"),
            ("Who is Caroline?", vec![], "Who is Caroline?"),
            // Nothing but the name: keep the question as asked.
            ("Caroline", vec!["Caroline"], "Caroline"),
        ];
        for (q, names, want) in cases {
            assert_eq!(without_names(q, &names), want, "{q}");
        }
    }
}
