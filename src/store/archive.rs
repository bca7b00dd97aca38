//! What `memtree export` reads and `memtree restore` writes (issue 32): every row an archive
//! carries, streamed one statement at a time (a store's leaves are never collected), and the
//! rows a restore puts back as they were (sources with their times, entities in their order,
//! recall facts with theirs).

use super::nodes::{NODE_COLS, node_from_row};
use super::{NodeRow, Reader, Tx, json_list};
use crate::error::Result;
use rusqlite::params;

/// Which nodes an export takes: the sources (none: all) and the time window (inclusive; a
/// summary only when its whole envelope lies inside).
#[derive(Debug, Clone)]
pub struct NodeFilter {
    /// Source ids as a JSON array, or `None` for every source.
    pub sources_json: Option<String>,
    /// Window start, epoch ms.
    pub since_ms: i64,
    /// Window end, epoch ms.
    pub until_ms: i64,
}

/// The SQL condition of a [`NodeFilter`] on `nodes n`, with its three parameters `?1..?3`.
const FILTER: &str = "(?1 IS NULL OR n.tree_id IN (SELECT 'source:' || value FROM json_each(?1))) \
     AND n.time_start_ms >= ?2 AND n.time_end_ms <= ?3";

/// One source as an archive carries it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceRecord {
    /// Id.
    pub source_id: String,
    /// `chat`, `email` or `document`.
    pub kind: String,
    /// Provider (documents).
    pub provider: Option<String>,
    /// Title.
    pub title: Option<String>,
    /// A note's content hash (what the next sync compares).
    pub content_hash: Option<String>,
    /// First written, epoch ms.
    pub created_ms: i64,
    /// Last written, epoch ms.
    pub updated_ms: i64,
}

/// One `memory_recall` fact with both its times.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecallRecord {
    /// Namespace.
    pub namespace: String,
    /// Key.
    pub key: String,
    /// The fact.
    pub content: String,
    /// First written, epoch ms.
    pub created_ms: i64,
    /// Last written, epoch ms.
    pub updated_ms: i64,
}

/// A node with what an archive carries beside its row: its entity ids and topics, sorted.
pub type ArchiveNode = (NodeRow, Vec<String>, Vec<String>);

/// Archive reads.
pub trait ArchiveReads: Reader {
    /// The sources `filter` names (all without), by id.
    fn archive_sources(&self, sources_json: Option<&str>, mut f: impl FnMut(SourceRecord) -> Result<()>) -> Result<()> {
        let mut stmt = self.conn().prepare(
            "SELECT source_id, source_kind, provider, title, content_hash, created_ms, updated_ms FROM sources \
             WHERE ?1 IS NULL OR source_id IN (SELECT value FROM json_each(?1)) ORDER BY source_id",
        )?;
        let mut rows = stmt.query([sources_json])?;
        while let Some(r) = rows.next()? {
            f(SourceRecord {
                source_id: r.get(0)?,
                kind: r.get(1)?,
                provider: r.get(2)?,
                title: r.get(3)?,
                content_hash: r.get(4)?,
                created_ms: r.get(5)?,
                updated_ms: r.get(6)?,
            })?;
        }
        Ok(())
    }

    /// The entities a leaf inside `filter` names, in the order their rows were made (id,
    /// kind, surface).
    fn archive_entities(
        &self,
        filter: &NodeFilter,
        mut f: impl FnMut(String, String, String) -> Result<()>,
    ) -> Result<()> {
        let sql = format!(
            "SELECT e.entity_id, e.kind, e.surface FROM entities e WHERE EXISTS (SELECT 1 FROM node_entities ne \
               JOIN nodes n ON n.node_key = ne.node_key WHERE ne.entity_key = e.entity_key AND ne.is_leaf = 1 \
               AND {FILTER}) ORDER BY e.entity_key"
        );
        let mut stmt = self.conn().prepare(&sql)?;
        let mut rows = stmt.query(params![filter.sources_json, filter.since_ms, filter.until_ms])?;
        while let Some(r) = rows.next()? {
            f(r.get(0)?, r.get(1)?, r.get(2)?)?;
        }
        Ok(())
    }

    /// The leaves inside `filter` in time order (`leaves`), or its summaries level by level,
    /// each with its entity ids and topics. In the order of an index (`nodes_time`) or of the
    /// table, so SQLite never sorts (a sort would hold every row's text at once).
    fn archive_nodes(
        &self,
        leaves: bool,
        filter: &NodeFilter,
        mut f: impl FnMut(ArchiveNode) -> Result<()>,
    ) -> Result<()> {
        let cols: String = NODE_COLS.split(", ").map(|c| format!("n.{c}")).collect::<Vec<_>>().join(", ");
        let (level, order) = if leaves {
            ("n.level = 0", "n.time_start_ms, n.time_end_ms, n.node_key")
        } else {
            ("n.level = ?4", "n.node_key")
        };
        let sql = format!(
            "SELECT {cols}, \
               (SELECT json_group_array(id) FROM (SELECT e.entity_id AS id FROM node_entities ne \
                  JOIN entities e ON e.entity_key = ne.entity_key WHERE ne.node_key = n.node_key ORDER BY e.entity_id)), \
               (SELECT json_group_array(topic) FROM (SELECT topic FROM node_topics t WHERE t.node_id = n.node_id \
                  ORDER BY topic)) \
             FROM nodes n WHERE {level} AND {FILTER} ORDER BY {order}"
        );
        let mut stmt = self.conn().prepare(&sql)?;
        let levels: Vec<i64> = if leaves {
            vec![0]
        } else {
            let top: i64 = self.conn().query_row("SELECT COALESCE(MAX(level), 0) FROM nodes", [], |r| r.get(0))?;
            (1..=top).collect()
        };
        for lvl in levels {
            let mut rows = if leaves {
                stmt.query(params![filter.sources_json, filter.since_ms, filter.until_ms])?
            } else {
                stmt.query(params![filter.sources_json, filter.since_ms, filter.until_ms, lvl])?
            };
            while let Some(r) = rows.next()? {
                let node = node_from_row(r)?;
                let entities: String = r.get(16)?;
                let topics: String = r.get(17)?;
                f((node, json_list("node_entities", &entities)?, json_list("node_topics", &topics)?))?;
            }
        }
        Ok(())
    }

    /// How many leaves lie inside `filter` (the progress total).
    fn archive_leaf_count(&self, filter: &NodeFilter) -> Result<u64> {
        let sql = format!("SELECT COUNT(*) FROM nodes n WHERE n.level = 0 AND {FILTER}");
        let n: i64 =
            self.conn()
                .query_row(&sql, params![filter.sources_json, filter.since_ms, filter.until_ms], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// Every `memory_recall` fact, by namespace and key.
    fn archive_recall(&self, mut f: impl FnMut(RecallRecord) -> Result<()>) -> Result<()> {
        let mut stmt = self
            .conn()
            .prepare("SELECT namespace, key, content, created_ms, updated_ms FROM recall ORDER BY namespace, key")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            f(RecallRecord {
                namespace: r.get(0)?,
                key: r.get(1)?,
                content: r.get(2)?,
                created_ms: r.get(3)?,
                updated_ms: r.get(4)?,
            })?;
        }
        Ok(())
    }

    /// The names of the models the store's vectors were made by, sorted.
    fn model_names(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn().prepare("SELECT name FROM models ORDER BY name")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether the store holds nothing a restore could overwrite: no source, recall fact or
    /// forget record.
    fn holds_nothing(&self) -> Result<bool> {
        Ok(self.conn().query_row(
            "SELECT NOT EXISTS (SELECT 1 FROM sources) AND NOT EXISTS (SELECT 1 FROM nodes) \
               AND NOT EXISTS (SELECT 1 FROM recall) AND NOT EXISTS (SELECT 1 FROM forgotten)",
            [],
            |r| r.get(0),
        )?)
    }
}

impl<R: Reader> ArchiveReads for R {}

impl Tx<'_> {
    /// Put a source back as it was (times and hash included), with its tree.
    pub fn restore_source(&self, s: &SourceRecord) -> Result<()> {
        self.tx.execute(
            "INSERT INTO sources (source_id, source_kind, provider, title, created_ms, updated_ms, content_hash) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![s.source_id, s.kind, s.provider, s.title, s.created_ms, s.updated_ms, s.content_hash],
        )?;
        self.tx.execute(
            "INSERT INTO trees (tree_id, tree_kind, tree_scope, source_kind) VALUES ('source:' || ?1, 'source', ?1, ?2)",
            params![s.source_id, s.kind],
        )?;
        Ok(())
    }

    /// Make an entity's row (no mention yet: the leaves that name it count it), so that the
    /// rows are made in the archive's order.
    pub fn restore_entity(&self, id: &str, kind: &str, surface: &str) -> Result<()> {
        self.tx
            .prepare_cached(
                "INSERT INTO entities (entity_id, kind, surface, mention_count, last_seen_ms) VALUES (?1, ?2, ?3, 0, 0)",
            )?
            .execute(params![id, kind, surface])?;
        Ok(())
    }

    /// Put a `memory_recall` fact back with its times; with `keep`, a fact already stored
    /// under the key stays (a merge). True when written.
    pub fn restore_recall(&self, r: &RecallRecord, keep: bool) -> Result<bool> {
        let verb = if keep { "INSERT OR IGNORE" } else { "INSERT OR REPLACE" };
        let n = self.tx.execute(
            &format!(
                "{verb} INTO recall (namespace, key, content, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?4, ?5)"
            ),
            params![r.namespace, r.key, r.content, r.created_ms, r.updated_ms],
        )?;
        Ok(n > 0)
    }

    /// A node whose parent the archive does not hold (a window cut through its summary) is
    /// put in its level's open buffer.
    pub fn orphans_to_buffers(&self) -> Result<usize> {
        Ok(self.tx.execute(
            "UPDATE nodes SET parent_id = NULL WHERE parent_id IS NOT NULL \
               AND NOT EXISTS (SELECT 1 FROM nodes p WHERE p.node_id = nodes.parent_id)",
            [],
        )?)
    }
}
