//! `search_entities`: case-insensitive substring search over entity ids and surfaces.

use super::hit::{EntityMatch, Scope};
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::EntityReads;
use crate::types::EntityKind;

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

/// Most-mentioned first, then most recent, then id. Under a scope gate, counts and recency
/// come from the allowed sources' leaves only, and entities seen only elsewhere are hidden.
pub fn search_entities(mem: &MemoryReader, args: &SearchEntitiesArgs, scope: &Scope) -> Result<Vec<EntityMatch>> {
    let q = args.query.trim();
    if q.is_empty() || args.limit == 0 {
        return Ok(Vec::new());
    }
    let rows = match &scope.0 {
        None => mem.store().search_entities(q, &args.kinds, args.limit)?,
        Some(s) if s.is_empty() => Vec::new(),
        Some(s) => {
            let scopes: Vec<String> = s.iter().cloned().collect();
            mem.store().search_entities_scoped(q, &args.kinds, &scopes, args.limit)?
        }
    };
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
