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
    /// The question as asked: what the dense model sees.
    pub raw: String,
    /// A time window the question names ("last week", "in May 2023"), epoch ms.
    pub window: Option<(i64, i64)>,
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
    let people = found
        .iter()
        .filter(|m| m.kind == EntityKind::Person)
        .map(|m| m.id.as_str().trim_start_matches("person:").to_string())
        .collect();
    let words: Vec<String> = content_words(q).collect();
    let lexical = if words.is_empty() { q.to_string() } else { words.join(" ") };
    let window = super::time::time_window(q, mem.now_ms());
    QueryAnalysis { entities, people, lexical, raw: q.to_string(), window }
}
