//! Rows of the namespaced key–value memory (`memory_recall`).

use super::{Reader, Tx};
use crate::error::Result;
use rusqlite::{OptionalExtension, params};

/// One stored fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallRow {
    /// `global`, `background`, `autocomplete` or `skill-<id>`.
    pub namespace: String,
    /// Key, unique within the namespace.
    pub key: String,
    /// The fact.
    pub content: String,
    /// Last write, epoch ms.
    pub updated_ms: i64,
}

impl Tx<'_> {
    /// Insert or update a fact; returns true when it was new.
    pub fn put_recall(&self, namespace: &str, key: &str, content: &str, now_ms: i64) -> Result<bool> {
        let existed = self
            .tx
            .query_row("SELECT 1 FROM recall WHERE namespace = ?1 AND key = ?2", params![namespace, key], |_| Ok(()))
            .optional()?
            .is_some();
        self.tx.execute(
            "INSERT INTO recall (namespace, key, content, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?4) \
             ON CONFLICT(namespace, key) DO UPDATE SET content = ?3, updated_ms = ?4",
            params![namespace, key, content, now_ms],
        )?;
        Ok(!existed)
    }

    /// Forget a fact; returns true when it existed.
    pub fn forget_recall(&self, namespace: &str, key: &str) -> Result<bool> {
        Ok(self.tx.execute("DELETE FROM recall WHERE namespace = ?1 AND key = ?2", params![namespace, key])? > 0)
    }
}

/// Recall reads.
pub trait RecallReads: Reader {
    /// Every fact of a namespace, by key.
    fn recall_namespace(&self, namespace: &str) -> Result<Vec<RecallRow>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT namespace, key, content, updated_ms FROM recall WHERE namespace = ?1 ORDER BY key",
        )?;
        let rows = stmt.query_map([namespace], |r| {
            Ok(RecallRow { namespace: r.get(0)?, key: r.get(1)?, content: r.get(2)?, updated_ms: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every fact, by namespace then key.
    fn recall_all(&self) -> Result<Vec<RecallRow>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT namespace, key, content, updated_ms FROM recall ORDER BY namespace, key")?;
        let rows = stmt.query_map([], |r| {
            Ok(RecallRow { namespace: r.get(0)?, key: r.get(1)?, content: r.get(2)?, updated_ms: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl<R: Reader> RecallReads for R {}
