//! The co-occurrence graph, derived from the entity index (no separate triple store): two
//! entities share an edge weighted by the number of distinct leaves mentioning both. SPEC §4's
//! two queries are [`MemoryReader`] methods, so that a host can call them (they used to be
//! free functions over the store's reader trait, which no caller outside the crate can hold).
//!
//! `walk` does not read it: an edge is a leaf naming both entities, which the local branch
//! finds in the index's posting lists directly (`retrieval/walk/router.rs`).

use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{EdgeRow, EntityReads};
use crate::types::EntityId;

impl MemoryReader {
    /// Edges of `subject`, by weight descending then object id, at most `limit`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let mem = memtree::Memory::open(dir.path()).unwrap();
    /// let edges = mem.as_reader().co_occurring_entities(&"person:ada".into(), 10).unwrap();
    /// assert!(edges.is_empty());
    /// ```
    pub fn co_occurring_entities(&self, subject: &EntityId, limit: usize) -> Result<Vec<EdgeRow>> {
        self.store().co_occurring(subject, limit)
    }

    /// Ids of `subject`'s neighbours, strongest first, at most `limit`.
    pub fn neighbors(&self, subject: &EntityId, limit: usize) -> Result<Vec<EntityId>> {
        Ok(self.co_occurring_entities(subject, limit)?.into_iter().map(|e| e.object).collect())
    }
}
