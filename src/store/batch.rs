//! Batched reads for retrieval over many candidates at once: one statement for thousands of
//! ids instead of one per id, and only the columns a scorer needs (not the content).
//!
//! Why: walk scores every candidate with its parent and neighbours. On a 100k-leaf store that
//! is ~10k candidate rows and ~4k parents; one prepared statement per id spent most of its
//! time stepping statements and decoding content that only the few returned hits show.

use super::nodes::tree_from_row;
use super::{NodeRow, Reader, TreeRow, json_list};
use crate::error::Result;
use crate::time::SpokenTime;
use crate::types::{EntityId, NodeId, TreeId};
use rusqlite::params;
use std::collections::HashMap;

/// The columns of a node that scoring needs (no content, participants, tags or children).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeBrief {
    /// Deterministic id.
    pub node_id: NodeId,
    /// Owning tree.
    pub tree_id: TreeId,
    /// 0 = leaf.
    pub level: u32,
    /// The summary that sealed it, if any.
    pub parent_id: Option<NodeId>,
    /// Author (chat/e-mail leaves).
    pub author: Option<String>,
    /// Envelope start, epoch ms.
    pub time_start_ms: i64,
    /// Envelope end, epoch ms.
    pub time_end_ms: i64,
    /// Written by the host's own assistant (`NodeRow::FLAG_ASSISTANT`).
    pub assistant: bool,
    /// Holds a standing instruction (`NodeRow::FLAG_INSTRUCTION`).
    pub instruction: bool,
    /// The times its text speaks of (`spoken_times`; none for a summary).
    pub spoken: Vec<SpokenTime>,
}

impl NodeBrief {
    /// True for level-0 nodes.
    pub fn is_leaf(&self) -> bool {
        self.level == 0
    }
}

/// The spoken times of the row's node, as a column: a JSON array of `[since, until]` pairs.
const SPOKEN_COL: &str = "(SELECT json_group_array(json_array(s.since_ms, s.until_ms)) \
     FROM spoken_times s WHERE s.node_key = n.node_key)";

/// The spoken times in column `i` ([`SPOKEN_COL`]).
fn spoken_column(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Vec<SpokenTime>> {
    let pairs: Vec<(i64, i64)> = serde_json::from_str(text_column(r, i)?)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))?;
    let mut out: Vec<SpokenTime> =
        pairs.into_iter().map(|(since_ms, until_ms)| SpokenTime { since_ms, until_ms }).collect();
    out.sort();
    Ok(out)
}

/// A TEXT column of a row, borrowed.
pub(super) fn text_column<'r>(r: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    r.get_ref(i)?
        .as_str()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e)))
}

/// Hand `f(node, children)` the ids of a `child_ids` column. Ids are plain hex and borrow
/// straight from the row; anything with escapes is decoded the ordinary way.
pub(super) fn with_child_list<E: From<rusqlite::Error>>(
    node: &str,
    raw: &str,
    f: &mut impl FnMut(&str, &[&str]) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    match serde_json::from_str::<Vec<&str>>(raw) {
        Ok(children) => f(node, &children),
        Err(_) => {
            let owned = json_list("nodes.child_ids", raw)?;
            f(node, &owned.iter().map(String::as_str).collect::<Vec<_>>())
        }
    }
}

/// A node lying inside a time window, with what a time-only question ranks it by.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowNode {
    /// The node, as the scorer sees it.
    pub brief: NodeBrief,
    /// How many entities and topics it carries: what makes a leaf stand out in a day.
    pub salience: u32,
}

/// Ids as one JSON array parameter (read back with `json_each`).
fn id_array(ids: &[NodeId]) -> Result<String> {
    Ok(serde_json::to_string(&ids.iter().map(|i| i.as_str()).collect::<Vec<_>>())?)
}

/// Batched reads, available on the store and inside a write.
pub trait BatchReads: Reader {
    /// Briefs of several nodes, in the order asked (a repeated id repeats); unknown ids are
    /// skipped.
    fn node_briefs(&self, ids: &[NodeId]) -> Result<Vec<NodeBrief>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT j.key, n.node_id, n.tree_id, n.level, n.parent_id, n.author, n.time_start_ms, n.time_end_ms, n.flags, \
             {SPOKEN_COL} FROM json_each(?1) j JOIN nodes n ON n.node_id = j.value",
        ))?;
        let rows = stmt.query_map([id_array(ids)?], |r| {
            let flags: u32 = r.get(8)?;
            Ok((
                r.get::<_, i64>(0)?,
                NodeBrief {
                    node_id: NodeId(r.get(1)?),
                    tree_id: TreeId(r.get(2)?),
                    level: r.get(3)?,
                    parent_id: r.get::<_, Option<String>>(4)?.map(NodeId),
                    author: r.get(5)?,
                    time_start_ms: r.get(6)?,
                    time_end_ms: r.get(7)?,
                    assistant: flags & NodeRow::FLAG_ASSISTANT != 0,
                    instruction: flags & NodeRow::FLAG_INSTRUCTION != 0,
                    spoken: spoken_column(r, 9)?,
                },
            ))
        })?;
        let mut out: Vec<(i64, NodeBrief)> = rows.collect::<rusqlite::Result<_>>()?;
        out.sort_by_key(|r| r.0);
        Ok(out.into_iter().map(|r| r.1).collect())
    }

    /// The ordered children of several nodes, handed to `f(node, children)` one node at a
    /// time and in no particular order, without copying the ids out of the row; unknown ids
    /// are skipped.
    fn for_each_child_list(&self, ids: &[NodeId], mut f: impl FnMut(&str, &[&str]) -> Result<()>) -> Result<()> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT n.node_id, n.child_ids FROM nodes n WHERE n.node_id IN (SELECT value FROM json_each(?1))",
        )?;
        let mut rows = stmt.query([id_array(ids)?])?;
        while let Some(r) = rows.next()? {
            with_child_list(text_column(r, 0)?, text_column(r, 1)?, &mut f)?;
        }
        Ok(())
    }

    /// Every node whose envelope lies wholly inside `[since_ms, until_ms]` (what
    /// `cover_window` covers), by start time then id, with its number of entities and
    /// topics; at most `limit` (the earliest).
    fn nodes_inside_with_salience(&self, since_ms: i64, until_ms: i64, limit: usize) -> Result<Vec<WindowNode>> {
        let mut stmt = self.conn().prepare_cached(&format!(
            "SELECT n.node_id, n.tree_id, n.level, n.parent_id, n.author, n.time_start_ms, n.time_end_ms, n.flags, \
             (SELECT count(*) FROM node_entities e WHERE e.node_key = n.node_key) \
             + (SELECT count(*) FROM node_topics t WHERE t.node_id = n.node_id), {SPOKEN_COL} \
             FROM nodes n WHERE n.time_start_ms >= ?1 AND n.time_start_ms <= ?2 AND n.time_end_ms <= ?2 \
             ORDER BY n.time_start_ms, n.node_id LIMIT ?3",
        ))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![since_ms, until_ms, limit], |r| {
            let flags: u32 = r.get(7)?;
            Ok(WindowNode {
                brief: NodeBrief {
                    node_id: NodeId(r.get(0)?),
                    tree_id: TreeId(r.get(1)?),
                    level: r.get(2)?,
                    parent_id: r.get::<_, Option<String>>(3)?.map(NodeId),
                    author: r.get(4)?,
                    time_start_ms: r.get(5)?,
                    time_end_ms: r.get(6)?,
                    assistant: flags & NodeRow::FLAG_ASSISTANT != 0,
                    instruction: flags & NodeRow::FLAG_INSTRUCTION != 0,
                    spoken: spoken_column(r, 9)?,
                },
                salience: r.get(8)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// `(id, envelope end)` of every summary (level >= 1) of a tree, in no particular order.
    fn summary_ends(&self, tree: &TreeId) -> Result<Vec<(NodeId, i64)>> {
        let mut stmt =
            self.conn().prepare_cached("SELECT node_id, time_end_ms FROM nodes WHERE tree_id = ?1 AND level >= 1")?;
        let rows = stmt.query_map([tree.as_str()], |r| Ok((NodeId(r.get(0)?), r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// `(id, envelope end)` of the open buffer of a tree level, in append order.
    fn buffer_ends(&self, tree: &TreeId, level: u32) -> Result<Vec<(NodeId, i64)>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT node_id, time_end_ms FROM nodes WHERE tree_id = ?1 AND level = ?2 AND parent_id IS NULL ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![tree.as_str(), level], |r| Ok((NodeId(r.get(0)?), r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Ids of the open buffer of a tree level (its unsealed nodes), in append order.
    fn buffer_ids(&self, tree: &TreeId, level: u32) -> Result<Vec<NodeId>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT node_id FROM nodes WHERE tree_id = ?1 AND level = ?2 AND parent_id IS NULL ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![tree.as_str(), level], |r| Ok(NodeId(r.get(0)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The entities on each of several nodes, each node's sorted by id (as
    /// `EntityReads::node_entities` gives one node's); a node without any is absent.
    fn entities_of_nodes(&self, ids: &[NodeId]) -> Result<HashMap<NodeId, Vec<EntityId>>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT n.node_id, e.entity_id FROM nodes n \
             JOIN node_entities ne ON ne.node_key = n.node_key JOIN entities e ON e.entity_key = ne.entity_key \
             WHERE n.node_id IN (SELECT value FROM json_each(?1)) ORDER BY e.entity_id",
        )?;
        let mut out: HashMap<NodeId, Vec<EntityId>> = HashMap::new();
        let mut rows = stmt.query([id_array(ids)?])?;
        while let Some(r) = rows.next()? {
            out.entry(NodeId(r.get(0)?)).or_default().push(EntityId(r.get(1)?));
        }
        Ok(out)
    }

    /// The topics of each of several nodes, each node's sorted (as `TopicReads::topics`
    /// gives one node's); a node without any is absent.
    fn topics_of_nodes(&self, ids: &[NodeId]) -> Result<HashMap<NodeId, Vec<String>>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT node_id, topic FROM node_topics WHERE node_id IN (SELECT value FROM json_each(?1)) ORDER BY topic",
        )?;
        let mut out: HashMap<NodeId, Vec<String>> = HashMap::new();
        let mut rows = stmt.query([id_array(ids)?])?;
        while let Some(r) = rows.next()? {
            out.entry(NodeId(r.get(0)?)).or_default().push(r.get(1)?);
        }
        Ok(out)
    }

    /// Several trees by id, in no particular order; unknown ids are skipped.
    fn trees_by_id(&self, ids: &[TreeId]) -> Result<Vec<TreeRow>> {
        let ids = serde_json::to_string(&ids.iter().map(|i| i.as_str()).collect::<Vec<_>>())?;
        let mut stmt = self.conn().prepare_cached(
            "SELECT tree_id, tree_kind, tree_scope, source_kind FROM trees \
             WHERE tree_id IN (SELECT value FROM json_each(?1))",
        )?;
        let rows = stmt.query_map([ids], tree_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl<R: Reader> BatchReads for R {}
