//! Query analysis: the question's entities (gazetteer + rules, case- and
//! possessive-insensitive), its content words (stop and wh-words removed).

use crate::entities::ExtractOptions;
use crate::reader::MemoryReader;
use crate::text::content_words;
use crate::types::{EntityId, EntityKind};

/// What walk understood of a question.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryAnalysis {
    /// Canonical ids of the entities named, sorted.
    pub entities: Vec<EntityId>,
    /// People among them (their leaves as author get a mild boost).
    pub people: Vec<String>,
    /// The question without stop words and wh-words: what BM25 sees.
    pub lexical: String,
    /// What the dense model sees: the question without the names of the people it asks
    /// about. Who is asked about is matched exactly (the author boost, the entity routes);
    /// a name left in the embedding pulls in the other speaker's turns that merely
    /// address that person ("Thanks, Melanie!").
    pub dense: String,
    /// A time window the question names ("last week", "in May 2023"), epoch ms.
    pub window: Option<(i64, i64)>,
    /// The question asks what the host's assistant said or advised (`role.rs`).
    pub asks_assistant: bool,
    /// The question asks in what order things happened (`history.rs`).
    pub asks_order: bool,
    /// The question asks for a summary (`history.rs`).
    pub asks_summary: bool,
}

/// Analyse `q` against the store's gazetteer.
pub fn analyse_query(mem: &MemoryReader, q: &str) -> QueryAnalysis {
    let opts = ExtractOptions { case_insensitive: true, discover_names: false };
    let mut found = mem.extractor().extract(q, mem.derived().gazetteer(), opts);
    // Registry aliases added by hand resolve at once (the vault is the source of truth).
    found.extend(mem.with_aliases(|g| mem.extractor().extract(q, g, opts)));
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
        .map(|m| m.id.as_str().trim_start_matches("person:").to_string())
        .collect();
    let surfaces: Vec<&str> =
        found.iter().filter(|m| m.kind == EntityKind::Person).map(|m| m.surface.as_str()).collect();
    let dense = without_names(q, &surfaces);
    let words: Vec<String> = content_words(q).collect();
    let mut lexical = if words.is_empty() { q.to_string() } else { words.join(" ") };
    if about {
        // What answers "who is X" says who X is: "who's who", "X, who leads…".
        lexical.push_str(" who");
    }
    let window = super::time::time_window(q, mem.now_ms());
    QueryAnalysis {
        entities,
        people,
        lexical,
        dense,
        window,
        asks_assistant: super::role::asks_for_assistant(q),
        asks_order: super::history::asks_for_order(q),
        asks_summary: super::history::asks_for_summary(q),
    }
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
    use super::{asks_who, without_names};

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
