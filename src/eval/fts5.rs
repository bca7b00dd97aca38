//! The SQLite FTS5 baseline: the leaves of a store in an in-memory FTS5 table (Porter
//! stemming, BM25 ranking) — what a user would pick instead of memtree. Used by the recall
//! harness and the latency benchmark only.

use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::Reader;
use crate::types::NodeId;
use rusqlite::{Connection, params};

/// An in-memory FTS5 index over leaf contents.
pub struct Fts5Baseline {
    conn: Connection,
}

impl Fts5Baseline {
    /// Copy every leaf of the store `mem` reads into a fresh FTS5 table.
    pub fn build(mem: &MemoryReader) -> Result<Fts5Baseline> {
        let store = mem.store();
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE VIRTUAL TABLE leaves USING fts5(node_id UNINDEXED, scope UNINDEXED, content, tokenize = 'porter unicode61');",
        )?;
        {
            let tx = conn.unchecked_transaction()?;
            let mut ins = tx.prepare("INSERT INTO leaves (node_id, scope, content) VALUES (?1, ?2, ?3)")?;
            let mut stmt = store.conn().prepare(
                "SELECT n.node_id, t.tree_scope, n.content FROM nodes n JOIN trees t ON t.tree_id = n.tree_id \
                 WHERE n.level = 0 ORDER BY n.node_id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                ins.execute(params![r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?])?;
            }
            drop(ins);
            tx.commit()?;
        }
        Ok(Fts5Baseline { conn })
    }

    /// BM25 top `k` leaves for the words of `text` (OR-ed, each quoted so no FTS5 syntax
    /// reaches the parser), best first.
    pub fn search(&self, text: &str, k: usize) -> Result<Vec<NodeId>> {
        let terms: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| format!("\"{}\"", w.to_lowercase()))
            .collect();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let q = terms.join(" OR ");
        let mut stmt = self.conn.prepare_cached(
            "SELECT node_id FROM leaves WHERE leaves MATCH ?1 ORDER BY bm25(leaves), node_id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![q, k as i64], |r| Ok(NodeId(r.get(0)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
