//! `search_entities`: case-insensitive substring search over entity ids and surfaces, then,
//! when that finds fewer than asked, the same search with accents folded ("tomas" finds
//! `person:tomás reyes`) and one typo forgiven per word ("Jonsa" finds Jonas).

use super::hit::{EntityMatch, Scope};
use crate::entities::fold_diacritics;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{EntityReads, EntityRow};
use crate::types::EntityKind;
use std::collections::HashSet;

/// Arguments (already validated and clamped by the tool layer).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchEntitiesArgs {
    /// Substring to find; `%`, `_` and `\` are literal. Blank → no matches.
    pub query: String,
    /// Only these kinds (empty = all).
    pub kinds: Vec<EntityKind>,
    /// At most this many.
    pub limit: usize,
}

/// Exact (case-insensitive substring) matches first, then accent-folded substring matches,
/// then matches within one typo a word; within each, most-mentioned first, then most recent,
/// then id. Under a scope gate, counts and recency come from the allowed sources' leaves
/// only, and entities seen only elsewhere are hidden.
pub fn search_entities(mem: &MemoryReader, args: &SearchEntitiesArgs, scope: &Scope) -> Result<Vec<EntityMatch>> {
    let q = args.query.trim();
    if q.is_empty() || args.limit == 0 {
        return Ok(Vec::new());
    }
    let scopes: Option<Vec<String>> = match &scope.0 {
        None => None,
        Some(s) if s.is_empty() => return Ok(Vec::new()),
        Some(s) => Some(s.iter().cloned().collect()),
    };
    let store = mem.store();
    let mut rows = match &scopes {
        None => store.search_entities(q, &args.kinds, args.limit)?,
        Some(s) => store.search_entities_scoped(q, &args.kinds, s, args.limit)?,
    };
    if rows.len() < args.limit {
        // The substring match found too few: scan the names with accents folded and one typo
        // forgiven. Only then, so an exact query costs what it always did.
        let found: HashSet<String> = rows.iter().map(|r| r.entity_id.0.clone()).collect();
        let needle = Folded::new(q);
        let (mut accent, mut typo) = (Vec::new(), Vec::new());
        for (id, surface) in store.entity_names(&args.kinds)? {
            if found.contains(&id) {
                continue;
            }
            match needle.classify(&id, &surface) {
                Some(Near::Accent) => accent.push(id),
                Some(Near::Typo) => typo.push(id),
                None => {}
            }
        }
        for class in [accent, typo] {
            if rows.len() >= args.limit || class.is_empty() {
                continue;
            }
            let more: Vec<EntityRow> = store.entities_ranked(&class, scopes.as_deref(), args.limit - rows.len())?;
            rows.extend(more);
        }
    }
    Ok(rows
        .into_iter()
        .map(|e| EntityMatch {
            canonical_id: e.entity_id.0,
            kind: e.kind.as_str().into(),
            surface: e.surface,
            mention_count: e.mention_count,
            last_seen_ms: e.last_seen_ms,
        })
        .collect())
}

/// How a name matched a query that is not its plain substring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Near {
    /// A substring once accents are folded.
    Accent,
    /// Every query word is within one edit (a transposition counts as one) of a word of the
    /// name, or a prefix of one.
    Typo,
}

/// The query folded (lower case, no accents) and split into words.
struct Folded {
    text: String,
    words: Vec<String>,
}

/// Below this many characters a query word must match exactly: one edit away from a
/// three-letter word is most three-letter words.
const MIN_TYPO_CHARS: usize = 4;

impl Folded {
    fn new(q: &str) -> Folded {
        let text = fold(q);
        let words = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_string).collect();
        Folded { text, words }
    }

    fn classify(&self, id: &str, surface: &str) -> Option<Near> {
        // The id's own text, without its `kind:` prefix: a query "person" is not a typo of
        // every person.
        let name = id.split_once(':').map_or(id, |(_, n)| n);
        let (name, surface) = (fold(name), fold(surface));
        if name.contains(&self.text) || surface.contains(&self.text) {
            return Some(Near::Accent);
        }
        if self.words.is_empty() {
            return None;
        }
        let words: Vec<&str> = name
            .split(|c: char| !c.is_alphanumeric())
            .chain(surface.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .collect();
        let near = |q: &str| words.iter().any(|w| one_typo(q, w));
        self.words.iter().all(|q| near(q)).then_some(Near::Typo)
    }
}

/// `q` is `w`, or one edit from `w` or from a prefix of `w` ("jonsa" ~ "jonas",
/// "tomsa" ~ "tomás"), for words of at least [`MIN_TYPO_CHARS`] characters.
fn one_typo(q: &str, w: &str) -> bool {
    if q == w {
        return true;
    }
    let n = q.chars().count();
    if n < MIN_TYPO_CHARS {
        return false;
    }
    if strsim::osa_distance(q, w) <= 1 {
        return true;
    }
    // A prefix of the name's word of the query's length (±1 for an insertion or deletion):
    // "alexandr" still finds "alexandra's".
    (n.saturating_sub(1)..=n + 1).any(|len| {
        let prefix: String = w.chars().take(len).collect();
        prefix.chars().count() == len && len < w.chars().count() && strsim::osa_distance(q, &prefix) <= 1
    })
}

/// Lower case with diacritics removed.
fn fold(s: &str) -> String {
    fold_diacritics(&s.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accents_and_one_typo_are_forgiven_and_short_words_are_not() {
        let q = Folded::new("tomas");
        assert_eq!(q.classify("person:tomás reyes", "Tomás Reyes"), Some(Near::Accent));
        assert_eq!(Folded::new("Jonsa").classify("person:jonas", "Jonas"), Some(Near::Typo));
        assert_eq!(Folded::new("Jonsa Berg").classify("person:jonas berg", "Jonas Berg"), Some(Near::Typo));
        assert_eq!(Folded::new("alexandr").classify("person:alexandra", "Alexandra"), Some(Near::Accent));
        assert_eq!(Folded::new("alexnadra").classify("person:alexandra", "Alexandra"), Some(Near::Typo));
        // Two edits, or a short word one edit away, is another name.
        assert_eq!(Folded::new("Jnosa").classify("person:jonas", "Jonas"), None);
        assert_eq!(Folded::new("bob").classify("person:rob", "Rob"), None);
        // The kind prefix is not a name.
        assert_eq!(Folded::new("persn").classify("person:jonas", "Jonas"), None);
    }
}
