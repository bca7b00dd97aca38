//! The co-occurrence graph, derived from the entity index (no separate triple store): two
//! entities share an edge weighted by the number of distinct leaves mentioning both.
//!
//! `walk` does not read it: an edge is a leaf naming both entities, which the local branch
//! finds in the index's posting lists directly (`retrieval/walk/router.rs`).

use crate::error::Result;
use crate::store::{EdgeRow, EntityReads, Reader};
use crate::types::EntityId;

/// Edges of `subject`, by weight descending then object id.
pub fn co_occurring_entities(r: &impl Reader, subject: &EntityId, limit: usize) -> Result<Vec<EdgeRow>> {
    r.co_occurring(subject, limit)
}

/// Ids of `subject`'s neighbours, strongest first.
pub fn neighbors(r: &impl Reader, subject: &EntityId, limit: usize) -> Result<Vec<EntityId>> {
    Ok(r.co_occurring(subject, limit)?.into_iter().map(|e| e.object).collect())
}
