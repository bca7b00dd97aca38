//! Rows of sources, trees and nodes (leaves and summaries), and the derived level buffers.

use super::{Reader, Tx, json_list};
use crate::error::Result;
use crate::types::{NodeId, SourceId, SourceKind, TreeId};
use rusqlite::{OptionalExtension, Row, params};

/// One leaf or summary as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    /// Deterministic id.
    pub node_id: NodeId,
    /// Owning tree.
    pub tree_id: TreeId,
    /// 0 = leaf, 1.. = summaries.
    pub level: u32,
    /// Append order within the tree (all levels share one counter).
    pub seq: i64,
    /// Full text.
    pub content: String,
    /// Author (chat/e-mail leaves).
    pub author: Option<String>,
    /// Participants (recipients, channel members) when known.
    pub participants: Vec<String>,
    /// Free tags.
    pub tags: Vec<String>,
    /// Back-pointer: permalink, message-id, path, URL (leaves).
    pub source_ref: Option<String>,
    /// Envelope start, epoch ms.
    pub time_start_ms: i64,
    /// Envelope end, epoch ms.
    pub time_end_ms: i64,
    /// Approximate token count of `content` (leaves) or of the children (summaries).
    pub tokens: u64,
    /// The summary that sealed this node, if any.
    pub parent_id: Option<NodeId>,
    /// Children of a summary, in order; empty on leaves.
    pub child_ids: Vec<NodeId>,
    /// Bit flags, see [`NodeRow::FLAG_SPLIT`], [`NodeRow::FLAG_ASSISTANT`] and
    /// [`NodeRow::FLAG_INSTRUCTION`].
    pub flags: u32,
    /// Wall-clock time the node was appended, epoch ms.
    pub appended_ms: i64,
}

impl NodeRow {
    /// The leaf is one piece of an oversized message that was split.
    pub const FLAG_SPLIT: u32 = 1;
    /// The leaf is a chat message of the host's own assistant ([`crate::ingest::Role`]).
    pub const FLAG_ASSISTANT: u32 = 2;
    /// The leaf holds a person's standing instruction ([`crate::text::leaf_holds_instruction`]).
    pub const FLAG_INSTRUCTION: u32 = 4;

    /// True for level-0 nodes.
    pub fn is_leaf(&self) -> bool {
        self.level == 0
    }

    /// The words ranking reads (the full-text index and the dense vector): a mail's own words
    /// (`text::own_words`: not what it quotes, not its signature), else its content. A reply
    /// quoting a cover letter would otherwise match the cover letter's words as well as the
    /// letter does, and a signature would match every question naming its writer.
    pub(crate) fn ranked_text(&self, kind: SourceKind) -> std::borrow::Cow<'_, str> {
        if kind == SourceKind::Email && self.is_leaf() {
            crate::text::own_words(&self.content)
        } else {
            std::borrow::Cow::Borrowed(&self.content)
        }
    }
}

/// A node's integer key in the store (`nodes.node_key`, migration 0009), handed out in append
/// order: the tables that name nodes by the thousand (`node_entities`) name them by it, so a
/// write appends to their B-trees instead of writing at random places in them. Only the write
/// path holds one; reads name nodes by [`NodeId`]. A key names a live node (a deleted node's
/// rows go with it), so it is never kept across writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeKey(pub(crate) i64);

/// One tree (one per source).
#[derive(Debug, Clone, PartialEq)]
pub struct TreeRow {
    /// `source:<source_id>`.
    pub tree_id: TreeId,
    /// Always `source` today; `topic` and `global` are reserved.
    pub tree_kind: String,
    /// The source id the tree covers.
    pub tree_scope: String,
    /// Kind of the source.
    pub source_kind: SourceKind,
}

/// One source.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRow {
    /// Id.
    pub source_id: SourceId,
    /// Kind.
    pub source_kind: SourceKind,
    /// Provider (documents), e.g. `notion`.
    pub provider: Option<String>,
    /// Title (documents).
    pub title: Option<String>,
}

/// Aggregates of one open buffer (the nodes of a tree level not yet sealed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BufferStats {
    /// Number of nodes waiting.
    pub count: usize,
    /// Sum of their tokens.
    pub tokens: u64,
    /// Earliest content time among them.
    pub oldest_content_ms: i64,
    /// Earliest wall-clock append time among them.
    pub oldest_appended_ms: i64,
}

pub(super) const NODE_COLS: &str = "node_id, tree_id, level, seq, content, author, participants, tags, source_ref, \
     time_start_ms, time_end_ms, tokens, parent_id, child_ids, flags, appended_ms";

/// Migration 0008's code step: flag the standing instructions among the leaves written before
/// the flag existed (the host assistant's own messages are never flagged). Runs inside the
/// migration's transaction.
pub(super) fn flag_standing_instructions(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    let mut flagged: Vec<String> = Vec::new();
    {
        let mut stmt = tx.prepare("SELECT node_id, content, author FROM nodes WHERE level = 0 AND flags & ?1 = 0")?;
        let mut rows = stmt.query([NodeRow::FLAG_ASSISTANT])?;
        while let Some(r) = rows.next()? {
            let content: String = r.get(1)?;
            let author: Option<String> = r.get(2)?;
            if crate::text::leaf_holds_instruction(&content, author.as_deref()) {
                flagged.push(r.get(0)?);
            }
        }
    }
    let mut set = tx.prepare("UPDATE nodes SET flags = flags | ?2 WHERE node_id = ?1")?;
    for id in &flagged {
        set.execute(params![id, NodeRow::FLAG_INSTRUCTION])?;
    }
    Ok(())
}

pub(super) fn node_from_row(r: &Row<'_>) -> rusqlite::Result<NodeRow> {
    let participants: String = r.get(6)?;
    let tags: String = r.get(7)?;
    let children: String = r.get(13)?;
    Ok(NodeRow {
        node_id: NodeId(r.get(0)?),
        tree_id: TreeId(r.get(1)?),
        level: r.get(2)?,
        seq: r.get(3)?,
        content: r.get(4)?,
        author: r.get(5)?,
        participants: json_list("nodes.participants", &participants)?,
        tags: json_list("nodes.tags", &tags)?,
        source_ref: r.get(8)?,
        time_start_ms: r.get(9)?,
        time_end_ms: r.get(10)?,
        tokens: r.get::<_, i64>(11)? as u64,
        parent_id: r.get::<_, Option<String>>(12)?.map(NodeId),
        child_ids: json_list("nodes.child_ids", &children)?.into_iter().map(NodeId).collect(),
        flags: r.get(14)?,
        appended_ms: r.get(15)?,
    })
}

pub(super) fn tree_from_row(r: &Row<'_>) -> rusqlite::Result<TreeRow> {
    let kind: String = r.get(3)?;
    Ok(TreeRow {
        tree_id: TreeId(r.get(0)?),
        tree_kind: r.get(1)?,
        tree_scope: r.get(2)?,
        source_kind: SourceKind::parse(&kind).unwrap_or(SourceKind::Document),
    })
}

/// Node and tree reads, available on the store and inside a write.
pub trait NodeReads: Reader {
    /// One node by id.
    fn node(&self, id: &str) -> Result<Option<NodeRow>> {
        let sql = format!("SELECT {NODE_COLS} FROM nodes WHERE node_id = ?1");
        Ok(self.conn().prepare_cached(&sql)?.query_row([id], node_from_row).optional()?)
    }

    /// One node's text, by id (a write reads back what it let go of; `WrittenNode`).
    fn content(&self, id: &NodeId) -> Result<Option<String>> {
        let mut stmt = self.conn().prepare_cached("SELECT content FROM nodes WHERE node_id = ?1")?;
        Ok(stmt.query_row([id.as_str()], |r| r.get(0)).optional()?)
    }

    /// Several nodes by id, in the order asked; unknown ids are skipped.
    fn nodes(&self, ids: &[NodeId]) -> Result<Vec<NodeRow>> {
        let sql = format!("SELECT {NODE_COLS} FROM nodes WHERE node_id = ?1");
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(n) = stmt.query_row([id.as_str()], node_from_row).optional()? {
                out.push(n);
            }
        }
        Ok(out)
    }

    /// Every node of a tree, by level then append order.
    fn tree_nodes(&self, tree: &TreeId) -> Result<Vec<NodeRow>> {
        let sql = format!("SELECT {NODE_COLS} FROM nodes WHERE tree_id = ?1 ORDER BY level, seq");
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map([tree.as_str()], node_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The ids of up to `limit` leaves of `tree` after append position `seq`, in order (what
    /// follows a leaf sealed last in its summary: a mail's reply, sealed on its own).
    fn leaves_after(&self, tree: &TreeId, seq: i64, limit: usize) -> Result<Vec<NodeId>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT node_id FROM nodes WHERE tree_id = ?1 AND level = 0 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![tree.as_str(), seq, limit as i64], |r| Ok(NodeId(r.get(0)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every node of the store (for rebuilding derived indexes), in a stable order.
    fn for_each_node(&self, mut f: impl FnMut(NodeRow) -> Result<()>) -> Result<()> {
        let sql = format!("SELECT {NODE_COLS} FROM nodes ORDER BY tree_id, level, seq");
        let mut stmt = self.conn().prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            f(node_from_row(r)?)?;
        }
        Ok(())
    }

    /// The open buffer of a tree level: its unsealed nodes in append order (the tests'
    /// invariant checks).
    #[cfg(test)]
    fn buffer(&self, tree: &TreeId, level: u32) -> Result<Vec<NodeRow>> {
        let sql = format!(
            "SELECT {NODE_COLS} FROM nodes WHERE tree_id = ?1 AND level = ?2 AND parent_id IS NULL ORDER BY seq"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map(params![tree.as_str(), level], node_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Aggregates of a buffer without loading its rows.
    fn buffer_stats(&self, tree: &TreeId, level: u32) -> Result<BufferStats> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT COUNT(*), COALESCE(SUM(tokens), 0), COALESCE(MIN(time_start_ms), 0), COALESCE(MIN(appended_ms), 0) \
             FROM nodes WHERE tree_id = ?1 AND level = ?2 AND parent_id IS NULL",
        )?;
        Ok(stmt.query_row(params![tree.as_str(), level], |r| {
            Ok(BufferStats {
                count: r.get::<_, i64>(0)? as usize,
                tokens: r.get::<_, i64>(1)? as u64,
                oldest_content_ms: r.get(2)?,
                oldest_appended_ms: r.get(3)?,
            })
        })?)
    }

    /// Trees whose level-0 buffer is not empty, with the oldest append time of each.
    fn open_leaf_buffers(&self) -> Result<Vec<(TreeId, i64)>> {
        let mut stmt = self.conn().prepare_cached(
            // Per tree through nodes_tree_level (tree_id, level, parent_id): a seek per tree,
            // where a GROUP BY over the nodes would scan that whole index on every write.
            "SELECT tree_id, oldest FROM (SELECT t.tree_id, (SELECT MIN(n.appended_ms) FROM nodes n \
               WHERE n.tree_id = t.tree_id AND n.level = 0 AND n.parent_id IS NULL) AS oldest FROM trees t) \
             WHERE oldest IS NOT NULL ORDER BY tree_id",
        )?;
        let rows = stmt.query_map([], |r| Ok((TreeId(r.get(0)?), r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The largest `seq` used in a tree (0 when empty).
    fn max_seq(&self, tree: &TreeId) -> Result<i64> {
        let mut stmt = self.conn().prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM nodes WHERE tree_id = ?1")?;
        Ok(stmt.query_row([tree.as_str()], |r| r.get(0))?)
    }

    /// True when a node with this id exists.
    fn node_exists(&self, id: &NodeId) -> Result<bool> {
        let mut stmt = self.conn().prepare_cached("SELECT 1 FROM nodes WHERE node_id = ?1")?;
        Ok(stmt.query_row([id.as_str()], |_| Ok(())).optional()?.is_some())
    }

    /// One tree by id.
    fn tree(&self, id: &TreeId) -> Result<Option<TreeRow>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT tree_id, tree_kind, tree_scope, source_kind FROM trees WHERE tree_id = ?1")?
            .query_row([id.as_str()], tree_from_row)
            .optional()?)
    }

    /// Every tree, by id.
    fn trees(&self) -> Result<Vec<TreeRow>> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT tree_id, tree_kind, tree_scope, source_kind FROM trees ORDER BY tree_id")?;
        let rows = stmt.query_map([], tree_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One source by id.
    fn source(&self, id: &SourceId) -> Result<Option<SourceRow>> {
        Ok(self
            .conn()
            .query_row(
                "SELECT source_id, source_kind, provider, title FROM sources WHERE source_id = ?1",
                [id.as_str()],
                |r| {
                    let kind: String = r.get(1)?;
                    Ok(SourceRow {
                        source_id: SourceId(r.get(0)?),
                        source_kind: SourceKind::parse(&kind).unwrap_or(SourceKind::Document),
                        provider: r.get(2)?,
                        title: r.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    /// Nodes whose whole envelope lies inside `[since, until]` (inclusive), oldest first.
    fn nodes_inside_window(&self, since_ms: i64, until_ms: i64) -> Result<Vec<NodeRow>> {
        let sql = format!(
            "SELECT {NODE_COLS} FROM nodes WHERE time_start_ms >= ?1 AND time_start_ms <= ?2 AND time_end_ms <= ?2 \
             ORDER BY time_start_ms, node_id"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map(params![since_ms, until_ms], node_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Summaries (level >= 1) of one tree, newest first (the tests').
    #[cfg(test)]
    fn tree_summaries(&self, tree: &TreeId) -> Result<Vec<NodeRow>> {
        let sql = format!(
            "SELECT {NODE_COLS} FROM nodes WHERE tree_id = ?1 AND level >= 1 ORDER BY time_end_ms DESC, node_id"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map([tree.as_str()], node_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl<R: Reader> NodeReads for R {}

impl Tx<'_> {
    /// Create the source and its tree if new; refresh `updated_ms`, provider and title (an
    /// e-mail thread keeps its first title: the subject its first message gave it).
    pub fn upsert_source(&self, src: &SourceRow, now_ms: i64) -> Result<TreeId> {
        self.tx
            .prepare_cached(
                "INSERT INTO sources (source_id, source_kind, provider, title, created_ms, updated_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?5) \
             ON CONFLICT(source_id) DO UPDATE SET updated_ms = ?5, \
               provider = COALESCE(?3, provider), \
               title = CASE WHEN ?2 = 'email' THEN COALESCE(title, ?4) ELSE COALESCE(?4, title) END",
            )?
            .execute(params![src.source_id.as_str(), src.source_kind.as_str(), src.provider, src.title, now_ms])?;
        let tree = TreeId::for_source(&src.source_id);
        self.tx
            .prepare_cached(
                "INSERT OR IGNORE INTO trees (tree_id, tree_kind, tree_scope, source_kind) VALUES (?1, 'source', ?2, ?3)",
            )?
            .execute(params![tree.as_str(), src.source_id.as_str(), src.source_kind.as_str()],
        )?;
        Ok(tree)
    }

    /// Record the content hash of a source (a Markdown note's bytes) after its write.
    pub fn set_source_hash(&self, source: &SourceId, hash: &str) -> Result<()> {
        self.tx
            .prepare_cached("UPDATE sources SET content_hash = ?2 WHERE source_id = ?1")?
            .execute(params![source.as_str(), hash])?;
        Ok(())
    }

    /// Insert a node row, and a leaf's spoken times; returns its key.
    pub fn insert_node(&self, n: &NodeRow) -> Result<NodeKey> {
        let mut stmt = self.tx.prepare_cached(&format!(
            "INSERT INTO nodes ({NODE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
        ))?;
        stmt.execute(params![
            n.node_id.as_str(),
            n.tree_id.as_str(),
            n.level,
            n.seq,
            n.content,
            n.author,
            serde_json::to_string(&n.participants)?,
            serde_json::to_string(&n.tags)?,
            n.source_ref,
            n.time_start_ms,
            n.time_end_ms,
            n.tokens as i64,
            n.parent_id.as_ref().map(|p| p.as_str()),
            serde_json::to_string(&n.child_ids)?,
            n.flags,
            n.appended_ms,
        ])?;
        let key = NodeKey(self.tx.last_insert_rowid());
        // The second clock is written with the leaf, whatever writes it (a write, a restore).
        self.insert_spoken(key, &n.spoken())?;
        Ok(key)
    }

    /// Record that `children` were sealed under `parent`.
    pub fn set_parent(&self, children: &[NodeKey], parent: &NodeId) -> Result<()> {
        let keys = serde_json::to_string(&children.iter().map(|c| c.0).collect::<Vec<_>>())?;
        self.tx
            .prepare_cached("UPDATE nodes SET parent_id = ?1 WHERE node_key IN (SELECT value FROM json_each(?2))")?
            .execute(params![parent.as_str(), keys])?;
        Ok(())
    }

    /// The open buffer of a tree level with each node's key, in append order: what a seal
    /// reads ([`NodeReads::buffer`] with the keys the seal writes by).
    pub fn buffer_keyed(&self, tree: &TreeId, level: u32) -> Result<Vec<(NodeKey, NodeRow)>> {
        let sql = format!(
            "SELECT {NODE_COLS}, node_key FROM nodes WHERE tree_id = ?1 AND level = ?2 AND parent_id IS NULL ORDER BY seq"
        );
        let mut stmt = self.tx.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![tree.as_str(), level], |r| Ok((NodeKey(r.get(16)?), node_from_row(r)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Delete a source, its tree and all its nodes (the caller clears entity rows first).
    pub fn delete_source_rows(&self, source: &SourceId) -> Result<usize> {
        let tree = TreeId::for_source(source);
        self.tx.execute(
            "DELETE FROM node_topics WHERE node_id IN (SELECT node_id FROM nodes WHERE tree_id = ?1)",
            [tree.as_str()],
        )?;
        self.tx.execute(
            "DELETE FROM vectors WHERE node_id IN (SELECT node_id FROM nodes WHERE tree_id = ?1)",
            [tree.as_str()],
        )?;
        let n = self.tx.execute("DELETE FROM nodes WHERE tree_id = ?1", [tree.as_str()])?;
        self.tx.execute("DELETE FROM trees WHERE tree_id = ?1", [tree.as_str()])?;
        self.tx.execute("DELETE FROM sources WHERE source_id = ?1", [source.as_str()])?;
        Ok(n)
    }

    /// Delete these nodes with their topics and vectors (the caller detaches their entities
    /// first); the tree and the source stay.
    pub fn delete_nodes(&self, ids: &[NodeId]) -> Result<usize> {
        let ids = serde_json::to_string(&ids.iter().map(NodeId::as_str).collect::<Vec<_>>())?;
        for sql in [
            "DELETE FROM node_topics WHERE node_id IN (SELECT value FROM json_each(?1))",
            "DELETE FROM vectors WHERE node_id IN (SELECT value FROM json_each(?1))",
        ] {
            self.tx.execute(sql, [&ids])?;
        }
        Ok(self.tx.execute("DELETE FROM nodes WHERE node_id IN (SELECT value FROM json_each(?1))", [&ids])?)
    }

    /// These nodes with their keys, in the order asked (unknown ids skipped).
    pub fn nodes_keyed(&self, ids: &[NodeId]) -> Result<Vec<(NodeKey, NodeRow)>> {
        let sql = format!("SELECT {NODE_COLS}, node_key FROM nodes WHERE node_id = ?1");
        let mut stmt = self.tx.prepare_cached(&sql)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(r) =
                stmt.query_row([id.as_str()], |r| Ok((NodeKey(r.get(16)?), node_from_row(r)?))).optional()?
            {
                out.push(r);
            }
        }
        Ok(out)
    }

    /// Store a node's topics.
    pub fn insert_topics(&self, node: &NodeId, topics: &[String]) -> Result<()> {
        let mut stmt = self.tx.prepare_cached("INSERT OR IGNORE INTO node_topics (node_id, topic) VALUES (?1, ?2)")?;
        for t in topics {
            stmt.execute(params![node.as_str(), t])?;
        }
        Ok(())
    }
}

/// Topic reads.
pub trait TopicReads: Reader {
    /// A node's topics, sorted.
    fn topics(&self, node: &NodeId) -> Result<Vec<String>> {
        let mut stmt = self.conn().prepare_cached("SELECT topic FROM node_topics WHERE node_id = ?1 ORDER BY topic")?;
        let rows = stmt.query_map([node.as_str()], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl<R: Reader> TopicReads for R {}
