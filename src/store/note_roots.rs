//! The folders notes were imported from, and where a stored note's file now is: what a notes
//! sync needs to keep one id per file whichever folder of a vault the user passes.

use super::{Reader, Tx};
use crate::error::Result;
use std::path::PathBuf;

/// Reads of the remembered note roots.
pub trait NoteRootReads: Reader {
    /// Every folder a notes import named its notes relative to, resolved, sorted.
    fn note_roots(&self) -> Result<Vec<PathBuf>> {
        let mut stmt = self.conn().prepare_cached("SELECT root FROM note_roots ORDER BY root")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        Ok(rows.map(|r| r.map(PathBuf::from)).collect::<rusqlite::Result<_>>()?)
    }
}

impl<R: Reader> NoteRootReads for R {}

impl Tx<'_> {
    /// Remember `root` (resolved) as a folder notes were named relative to.
    pub fn remember_note_root(&self, root: &str) -> Result<()> {
        self.tx.prepare_cached("INSERT OR IGNORE INTO note_roots (root) VALUES (?1)")?.execute([root])?;
        Ok(())
    }

    /// Record that note `source_id` is now read from `file` (a vault that moved, a note stored
    /// with a relative path before notes recorded resolved ones): its leaves' `source_ref`.
    pub fn refile_note(&self, source_id: &str, file: &str) -> Result<usize> {
        let n = self
            .tx
            .prepare_cached("UPDATE nodes SET source_ref = ?2 WHERE tree_id = 'source:' || ?1 AND level = 0")?
            .execute([source_id, file])?;
        Ok(n)
    }
}
