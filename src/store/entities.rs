//! Entity rows, the node ↔ entity index, and the co-occurrence edges derived from it.
//! Mention counts and edge weights are maintained in the same transaction as the nodes, so
//! they are exact after any insert, replace or delete once it commits. A transaction adds
//! them up in memory ([`PendingCounts`]) and writes one row per distinct entity and pair
//! when it commits or detaches: a chat's speakers co-occur on every leaf, so writing per
//! leaf updated the same few rows thousands of times per import.

use super::{NodeKey, Reader, Tx};
use crate::entities::Mention;
use crate::error::Result;
use crate::types::{EntityId, EntityKind, NodeId};
use rusqlite::{OptionalExtension, params};
use std::collections::{BTreeMap, HashMap};

/// One entity as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityRow {
    /// Canonical id.
    pub entity_id: EntityId,
    /// Kind.
    pub kind: EntityKind,
    /// The surface form first seen.
    pub surface: String,
    /// Number of leaves mentioning it.
    pub mention_count: u64,
    /// Latest content time of a leaf mentioning it, epoch ms.
    pub last_seen_ms: i64,
}

/// One co-occurrence edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeRow {
    /// The entity asked about.
    pub subject: EntityId,
    /// The other entity.
    pub object: EntityId,
    /// Number of distinct leaves mentioning both.
    pub weight: u64,
}

fn entity_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EntityRow> {
    let kind: String = r.get(1)?;
    Ok(EntityRow {
        entity_id: EntityId(r.get(0)?),
        kind: EntityKind::parse(&kind).unwrap_or(EntityKind::Misc),
        surface: r.get(2)?,
        mention_count: r.get::<_, i64>(3)? as u64,
        last_seen_ms: r.get(4)?,
    })
}

/// The two case-folds of a search needle. SQLite's `lower()` folds ASCII only, while ids
/// are stored lower-cased by Rust (Unicode): the ASCII fold matches a surface written in the
/// query's own case ("Émile"), the Unicode fold matches a lower-cased id ("person:émile").
/// The match is `instr`, not `LIKE`: `%`, `_` and `\` are plain characters, and a NUL is
/// compared like any other byte (a `LIKE` pattern ends at a NUL, so `"\0"` matched all).
fn needles(needle: &str) -> (String, String) {
    (needle.to_ascii_lowercase(), needle.to_lowercase())
}

/// Entity and graph reads.
pub trait EntityReads: Reader {
    /// One entity.
    fn entity(&self, id: &str) -> Result<Option<EntityRow>> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT entity_id, kind, surface, mention_count, last_seen_ms FROM entities WHERE entity_id = ?1",
            )?
            .query_row([id], entity_from_row)
            .optional()?)
    }

    /// Every entity (for the gazetteer), by id.
    fn all_entities(&self) -> Result<Vec<EntityRow>> {
        let mut stmt = self
            .conn()
            .prepare("SELECT entity_id, kind, surface, mention_count, last_seen_ms FROM entities ORDER BY entity_id")?;
        let rows = stmt.query_map([], entity_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Case-insensitive substring search over ids and surfaces; `%`, `_` and `\` in `needle`
    /// are literal. Most-mentioned first, then most recent, then id.
    fn search_entities(&self, needle: &str, kinds: &[EntityKind], limit: usize) -> Result<Vec<EntityRow>> {
        let (ascii, unicode) = needles(needle);
        let kinds_json = serde_json::to_string(&kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>())?;
        let mut stmt = self.conn().prepare_cached(
            "SELECT entity_id, kind, surface, mention_count, last_seen_ms FROM entities \
             WHERE (instr(lower(entity_id), ?1) > 0 OR instr(lower(surface), ?1) > 0 \
                    OR instr(lower(entity_id), ?4) > 0 OR instr(lower(surface), ?4) > 0) \
               AND (?2 = '[]' OR kind IN (SELECT value FROM json_each(?2))) \
             ORDER BY mention_count DESC, last_seen_ms DESC, entity_id LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![ascii, kinds_json, limit as i64, unicode], entity_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// [`EntityReads::search_entities`] with mention counts and last-seen restricted to
    /// leaves of the allowed scopes; entities not mentioned there are absent.
    fn search_entities_scoped(
        &self,
        needle: &str,
        kinds: &[EntityKind],
        scopes: &[String],
        limit: usize,
    ) -> Result<Vec<EntityRow>> {
        let (ascii, unicode) = needles(needle);
        let kinds_json = serde_json::to_string(&kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>())?;
        let scopes_json = serde_json::to_string(scopes)?;
        let mut stmt = self.conn().prepare_cached(
            "SELECT e.entity_id, e.kind, e.surface, COUNT(*) AS c, MAX(n.time_end_ms) AS seen \
             FROM entities e JOIN node_entities ne ON ne.entity_key = e.entity_key AND ne.is_leaf = 1 \
             JOIN nodes n ON n.node_key = ne.node_key JOIN trees t ON t.tree_id = n.tree_id \
             WHERE (instr(lower(e.entity_id), ?1) > 0 OR instr(lower(e.surface), ?1) > 0 \
                    OR instr(lower(e.entity_id), ?5) > 0 OR instr(lower(e.surface), ?5) > 0) \
               AND (?2 = '[]' OR e.kind IN (SELECT value FROM json_each(?2))) \
               AND t.tree_scope IN (SELECT value FROM json_each(?3)) \
             GROUP BY e.entity_id ORDER BY c DESC, seen DESC, e.entity_id LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![ascii, kinds_json, scopes_json, limit as i64, unicode], entity_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every entity's id and surface, of `kinds` (empty = all), by id: what a fuzzy search
    /// scans when the substring match finds too few.
    fn entity_names(&self, kinds: &[EntityKind]) -> Result<Vec<(String, String)>> {
        let kinds_json = serde_json::to_string(&kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>())?;
        let mut stmt = self.conn().prepare_cached(
            "SELECT entity_id, surface FROM entities \
             WHERE ?1 = '[]' OR kind IN (SELECT value FROM json_each(?1)) ORDER BY entity_id",
        )?;
        let rows = stmt.query_map([kinds_json], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The entities `ids`, ranked as [`EntityReads::search_entities`] ranks (most-mentioned,
    /// most recent, id); with `scopes`, counted over those scopes' leaves only, as
    /// [`EntityReads::search_entities_scoped`] counts (entities not mentioned there absent).
    fn entities_ranked(&self, ids: &[String], scopes: Option<&[String]>, limit: usize) -> Result<Vec<EntityRow>> {
        let ids_json = serde_json::to_string(ids)?;
        let rows = match scopes {
            None => {
                let mut stmt = self.conn().prepare_cached(
                    "SELECT entity_id, kind, surface, mention_count, last_seen_ms FROM entities \
                     WHERE entity_id IN (SELECT value FROM json_each(?1)) \
                     ORDER BY mention_count DESC, last_seen_ms DESC, entity_id LIMIT ?2",
                )?;
                stmt.query_map(params![ids_json, limit as i64], entity_from_row)?.collect::<rusqlite::Result<_>>()?
            }
            Some(scopes) => {
                let mut stmt = self.conn().prepare_cached(
                    "SELECT e.entity_id, e.kind, e.surface, COUNT(*) AS c, MAX(n.time_end_ms) AS seen \
                     FROM entities e JOIN node_entities ne ON ne.entity_key = e.entity_key AND ne.is_leaf = 1 \
                     JOIN nodes n ON n.node_key = ne.node_key JOIN trees t ON t.tree_id = n.tree_id \
                     WHERE e.entity_id IN (SELECT value FROM json_each(?1)) \
                       AND t.tree_scope IN (SELECT value FROM json_each(?2)) \
                     GROUP BY e.entity_id ORDER BY c DESC, seen DESC, e.entity_id LIMIT ?3",
                )?;
                let scopes_json = serde_json::to_string(scopes)?;
                stmt.query_map(params![ids_json, scopes_json, limit as i64], entity_from_row)?
                    .collect::<rusqlite::Result<_>>()?
            }
        };
        Ok(rows)
    }

    /// Entities on a node, sorted by id.
    fn node_entities(&self, node: &NodeId) -> Result<Vec<EntityId>> {
        id_column(self, ENTITIES_OF_NODE, node.as_str(), EntityId)
    }

    /// Edges of `subject`, by weight descending then object id.
    fn co_occurring(&self, subject: &EntityId, limit: usize) -> Result<Vec<EdgeRow>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT e.entity_id, x.weight FROM ( \
               SELECT b AS other, weight FROM edges WHERE a = (SELECT entity_key FROM entities WHERE entity_id = ?1) \
               UNION ALL SELECT a AS other, weight FROM edges \
                 WHERE b = (SELECT entity_key FROM entities WHERE entity_id = ?1)) x \
             JOIN entities e ON e.entity_key = x.other \
             ORDER BY x.weight DESC, e.entity_id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![subject.as_str(), limit as i64], |r| {
            Ok(EdgeRow { subject: subject.clone(), object: EntityId(r.get(0)?), weight: r.get::<_, i64>(1)? as u64 })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl<R: Reader> EntityReads for R {}

const ENTITIES_OF_NODE: &str = "SELECT e.entity_id FROM node_entities ne JOIN entities e ON e.entity_key = ne.entity_key \
     WHERE ne.node_key = (SELECT node_key FROM nodes WHERE node_id = ?1) ORDER BY e.entity_id";
/// A node's entity ids by its key, sorted: what a write hands the index.
const ENTITIES_OF_KEY: &str = "SELECT e.entity_id FROM node_entities ne JOIN entities e ON e.entity_key = ne.entity_key \
     WHERE ne.node_key = ?1 ORDER BY e.entity_id";

/// The one text column of `sql` (one `?1` parameter, `key`) as ids, in the query's order.
fn id_column<R: Reader + ?Sized, T>(r: &R, sql: &str, key: &str, id: fn(String) -> T) -> Result<Vec<T>> {
    let mut stmt = r.conn().prepare_cached(sql)?;
    let rows = stmt.query_map([key], |row| row.get::<_, String>(0).map(id))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// What a transaction's leaves added to the entity counts and edge weights and has not
/// written yet, by the store's entity keys. Only additions wait here; a detach writes them
/// first, then subtracts in SQL.
#[derive(Debug, Default)]
pub(super) struct PendingCounts {
    /// Entity id → its key, for the entities whose row this transaction has created or
    /// updated since its last detach: the first mention writes the row (so that it exists for
    /// reads in the transaction, and the key is known), later mentions add up here.
    keys: HashMap<String, i64>,
    /// Entity key → (leaves mentioning it, latest content time) added and not yet written.
    entities: HashMap<i64, (u64, i64)>,
    /// (a, b) with key a < key b → leaves mentioning both, added and not yet written.
    edges: HashMap<(i64, i64), u64>,
}

impl Tx<'_> {
    /// Attach a leaf's `mentions`: count each mention and add one to the weight of every
    /// pair's edge, added up in memory and written by [`Tx::flush_counts`]. A repeated
    /// mention is ignored.
    pub fn attach_entities(&self, node: NodeKey, time_ms: i64, mentions: &[Mention]) -> Result<()> {
        let mut ins = self
            .tx
            .prepare_cached("INSERT OR IGNORE INTO node_entities (node_key, entity_key, is_leaf) VALUES (?1, ?2, 1)")?;
        let mut pending = self.pending.borrow_mut();
        let mut keys = Vec::with_capacity(mentions.len());
        for m in mentions {
            let key = match pending.keys.get(m.id.as_str()) {
                Some(k) => *k,
                None => {
                    // First sight in this transaction: create or count the row, learn its key.
                    let k: i64 = self
                        .tx
                        .prepare_cached(
                            "INSERT INTO entities (entity_id, kind, surface, mention_count, last_seen_ms) \
                             VALUES (?1, ?2, ?3, 0, ?4) ON CONFLICT(entity_id) DO UPDATE SET \
                               last_seen_ms = MAX(last_seen_ms, ?4) RETURNING entity_key",
                        )?
                        .query_row(params![m.id.as_str(), m.kind.as_str(), m.surface, time_ms], |r| r.get(0))?;
                    pending.keys.insert(m.id.as_str().to_owned(), k);
                    k
                }
            };
            if ins.execute(params![node.0, key])? == 0 {
                continue; // duplicate mention on the same node
            }
            let e = pending.entities.entry(key).or_insert((0, time_ms));
            e.0 += 1;
            e.1 = e.1.max(time_ms);
            keys.push(key);
        }
        keys.sort_unstable();
        for i in 0..keys.len() {
            for j in i + 1..keys.len() {
                *pending.edges.entry((keys[i], keys[j])).or_insert(0) += 1;
            }
        }
        Ok(())
    }

    /// Attach to a summary the union of its children's entities, and return their ids, sorted.
    /// Summaries only index their entities: their sets are unions of their leaves', so
    /// counting them would join everything under one summary. In SQL, from key to key: the
    /// children's entities are never read out and looked up again.
    pub fn attach_union(&self, summary: NodeKey, children: &[NodeKey]) -> Result<Vec<EntityId>> {
        let keys = serde_json::to_string(&children.iter().map(|c| c.0).collect::<Vec<_>>())?;
        self.tx
            .prepare_cached(
                "INSERT OR IGNORE INTO node_entities (node_key, entity_key, is_leaf) \
                 SELECT DISTINCT ?1, ne.entity_key, 0 FROM json_each(?2) j \
                 JOIN node_entities ne ON ne.node_key = j.value ORDER BY ne.entity_key",
            )?
            .execute(params![summary.0, keys])?;
        let mut stmt = self.tx.prepare_cached(ENTITIES_OF_KEY)?;
        let rows = stmt.query_map([summary.0], |r| r.get::<_, String>(0).map(EntityId))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Write what [`Tx::attach_entities`] added up: one statement per distinct entity and
    /// per distinct pair, in key order. Runs before a commit and before a detach (which reads
    /// and subtracts the stored values); a no-op when nothing is pending.
    pub(super) fn flush_counts(&self) -> Result<()> {
        let mut pending = self.pending.borrow_mut();
        if !pending.entities.is_empty() {
            let mut rows: Vec<(i64, (u64, i64))> = pending.entities.drain().collect();
            rows.sort_unstable();
            let mut ent = self.tx.prepare_cached(
                "UPDATE entities SET mention_count = mention_count + ?2, last_seen_ms = MAX(last_seen_ms, ?3) \
                 WHERE entity_key = ?1",
            )?;
            for (key, (count, seen)) in rows {
                ent.execute(params![key, count as i64, seen])?;
            }
        }
        if !pending.edges.is_empty() {
            let mut rows: Vec<((i64, i64), u64)> = pending.edges.drain().collect();
            rows.sort_unstable();
            let mut edge = self.tx.prepare_cached(
                "INSERT INTO edges (a, b, weight) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(a, b) DO UPDATE SET weight = weight + ?3",
            )?;
            for ((a, b), w) in rows {
                edge.execute(params![a, b, w as i64])?;
            }
        }
        Ok(())
    }

    /// Detach every entity of the given nodes, undoing counts and edge weights exactly;
    /// entities left with no node at all are deleted.
    pub fn detach_entities(&self, nodes: &[NodeId]) -> Result<()> {
        // The stored counts must include this transaction's additions before any is undone.
        self.flush_counts()?;
        // A detach may delete an entity row: a later mention must create it again.
        self.pending.borrow_mut().keys.clear();
        // Each entity touched, with the latest content time of a detached leaf naming it
        // (`i64::MIN`: only summaries): its `last_seen_ms` needs recomputing only when that
        // leaf may have been its latest, since removing an earlier one leaves the maximum as it
        // was. Recomputing reads every leaf naming the entity, thousands for a common name.
        let mut touched: BTreeMap<i64, i64> = BTreeMap::new();
        for node in nodes {
            // By key: each pair is (a, b) with a < b, as the edges table keeps it.
            let (ids, is_leaf): (Vec<i64>, bool) = {
                let mut stmt = self.tx.prepare_cached(
                    "SELECT entity_key, is_leaf FROM node_entities \
                     WHERE node_key = (SELECT node_key FROM nodes WHERE node_id = ?1) ORDER BY entity_key",
                )?;
                let rows: Vec<(i64, bool)> = stmt
                    .query_map([node.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?;
                let leaf = rows.first().map(|r| r.1).unwrap_or(false);
                (rows.into_iter().map(|r| r.0).collect(), leaf)
            };
            let latest = if is_leaf {
                self.tx
                    .prepare_cached("SELECT time_end_ms FROM nodes WHERE node_id = ?1")?
                    .query_row([node.as_str()], |r| r.get::<_, i64>(0))?
            } else {
                i64::MIN
            };
            for id in &ids {
                let t = touched.entry(*id).or_insert(i64::MIN);
                *t = (*t).max(latest);
            }
            if is_leaf {
                let mut dec = self
                    .tx
                    .prepare_cached("UPDATE entities SET mention_count = mention_count - 1 WHERE entity_key = ?1")?;
                // Drop an edge whose last shared leaf goes, else decrement (weight stays > 0).
                let mut drop_edge =
                    self.tx.prepare_cached("DELETE FROM edges WHERE a = ?1 AND b = ?2 AND weight <= 1")?;
                let mut edge =
                    self.tx.prepare_cached("UPDATE edges SET weight = weight - 1 WHERE a = ?1 AND b = ?2")?;
                for id in &ids {
                    dec.execute([id])?;
                }
                for i in 0..ids.len() {
                    for j in i + 1..ids.len() {
                        if drop_edge.execute(params![ids[i], ids[j]])? == 0 {
                            edge.execute(params![ids[i], ids[j]])?;
                        }
                    }
                }
            }
            self.tx
                .prepare_cached(
                    "DELETE FROM node_entities WHERE node_key = (SELECT node_key FROM nodes WHERE node_id = ?1)",
                )?
                .execute([node.as_str()])?;
        }
        let mut gone = self.tx.prepare_cached(
            "DELETE FROM entities WHERE entity_key = ?1 AND NOT EXISTS (SELECT 1 FROM node_entities WHERE entity_key = ?1)",
        )?;
        let mut seen = self.tx.prepare_cached(
            "UPDATE entities SET last_seen_ms = COALESCE((SELECT MAX(n.time_end_ms) FROM node_entities e \
               JOIN nodes n ON n.node_key = e.node_key WHERE e.entity_key = ?1 AND e.is_leaf = 1), 0) \
             WHERE entity_key = ?1 AND last_seen_ms <= ?2",
        )?;
        for (id, latest) in &touched {
            if gone.execute([id])? == 0 {
                seen.execute(params![id, latest])?;
            }
        }
        Ok(())
    }
}
