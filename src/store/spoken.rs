//! The times leaves speak of (`spoken_times`, migration 0013; SPEC §5.1's second clock):
//! written with each leaf by [`Tx::insert_node`], deleted with it by the table's trigger, read
//! by every mode's window.

use super::nodes::NodeKey;
use super::{Reader, Tx};
use crate::error::Result;
use crate::store::NodeRow;
use crate::time::{SPOKEN_RULES, SpokenTime};
use crate::types::NodeId;
use rusqlite::{OptionalExtension, params};
use std::collections::HashMap;

impl NodeRow {
    /// The times the node's text speaks of, resolved against when it was said: a leaf's,
    /// none for a summary (its text is its children's, each of which keeps its own). What the
    /// store keeps and the index indexes: both derive it here, so the two agree.
    pub fn spoken(&self) -> Vec<SpokenTime> {
        if self.is_leaf() { crate::time::speaks_of(&self.content, self.time_start_ms) } else { Vec::new() }
    }
}

/// Reads of the spoken times, on the store and inside a write.
pub trait SpokenReads: Reader {
    /// The times each of `ids` speaks of, in time order; a node that speaks of none (every
    /// summary) is absent.
    fn spoken_times(&self, ids: &[NodeId]) -> Result<HashMap<NodeId, Vec<SpokenTime>>> {
        let ids = serde_json::to_string(&ids.iter().map(NodeId::as_str).collect::<Vec<_>>())?;
        let mut stmt = self.conn().prepare_cached(
            "SELECT n.node_id, s.since_ms, s.until_ms FROM nodes n JOIN spoken_times s ON s.node_key = n.node_key \
             WHERE n.node_id IN (SELECT value FROM json_each(?1)) ORDER BY n.node_id, s.since_ms, s.until_ms",
        )?;
        let mut out: HashMap<NodeId, Vec<SpokenTime>> = HashMap::new();
        let mut rows = stmt.query([ids])?;
        while let Some(r) = rows.next()? {
            let t = SpokenTime { since_ms: r.get(1)?, until_ms: r.get(2)? };
            out.entry(NodeId(r.get(0)?)).or_default().push(t);
        }
        Ok(out)
    }

    /// Every leaf's spoken times, with when it was said, by id (the harness's table of the
    /// second clock, `eval::spoken_days`).
    #[cfg(feature = "harness")]
    fn all_spoken(&self) -> Result<Vec<(NodeId, i64, SpokenTime)>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT n.node_id, n.time_start_ms, s.since_ms, s.until_ms FROM spoken_times s \
             JOIN nodes n ON n.node_key = s.node_key ORDER BY n.node_id, s.since_ms, s.until_ms",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((NodeId(r.get(0)?), r.get(1)?, SpokenTime { since_ms: r.get(2)?, until_ms: r.get(3)? }))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The leaves said outside `[since_ms, until_ms]` that speak of a time lying wholly
    /// inside it, by that time then id, at most `limit` (the earliest): what a window admits
    /// by the second clock alone (a leaf said inside it is the first clock's, and would only
    /// use up the limit).
    fn leaves_speaking_within(&self, since_ms: i64, until_ms: i64, limit: usize) -> Result<Vec<NodeId>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT n.node_id FROM spoken_times s JOIN nodes n ON n.node_key = s.node_key \
             WHERE s.since_ms >= ?1 AND s.since_ms <= ?2 AND s.until_ms <= ?2 \
             AND (n.time_end_ms < ?1 OR n.time_start_ms > ?2) \
             GROUP BY n.node_id ORDER BY min(s.since_ms), n.node_id LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt.query_map(params![since_ms, until_ms, limit], |r| Ok(NodeId(r.get(0)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl<R: Reader> SpokenReads for R {}

impl Tx<'_> {
    /// Keep the times a just-inserted leaf speaks of.
    pub(super) fn insert_spoken(&self, key: NodeKey, spoken: &[SpokenTime]) -> Result<()> {
        insert(&self.tx, key, spoken)
    }
}

fn insert(tx: &rusqlite::Transaction<'_>, key: NodeKey, spoken: &[SpokenTime]) -> Result<()> {
    let mut stmt =
        tx.prepare_cached("INSERT OR IGNORE INTO spoken_times (node_key, since_ms, until_ms) VALUES (?1, ?2, ?3)")?;
    for t in spoken {
        stmt.execute(params![key.0, t.since_ms, t.until_ms])?;
    }
    Ok(())
}

/// Migration 0013's code step, and a writer's open when the stored times were derived by
/// other rules than this build's (`meta.spoken_rules` ≠ [`SPOKEN_RULES`]): every leaf's
/// spoken times derived again, as a write derives them, and the rules' version recorded.
pub(super) fn derive_spoken_times(tx: &rusqlite::Transaction<'_>) -> Result<()> {
    tx.execute("DELETE FROM spoken_times", [])?;
    let mut found: Vec<(NodeKey, Vec<SpokenTime>)> = Vec::new();
    {
        let mut stmt = tx.prepare("SELECT node_key, content, time_start_ms FROM nodes WHERE level = 0")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let content: String = r.get(1)?;
            let spoken = crate::time::speaks_of(&content, r.get(2)?);
            if !spoken.is_empty() {
                found.push((NodeKey(r.get(0)?), spoken));
            }
        }
    }
    for (key, spoken) in &found {
        insert(tx, *key, spoken)?;
    }
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('spoken_rules', ?1) ON CONFLICT(key) DO UPDATE SET value = ?1",
        [SPOKEN_RULES.to_string()],
    )?;
    Ok(())
}

/// Derive the spoken times again when the store's were made by other rules (a writer's open,
/// after the migrations; see [`derive_spoken_times`]). The index follows by itself: its
/// commits carry the rules' version, so one of other rules is rebuilt from the store.
pub(super) fn rederive_if_stale(conn: &mut rusqlite::Connection) -> Result<()> {
    let stored: Option<String> =
        conn.query_row("SELECT value FROM meta WHERE key = 'spoken_rules'", [], |r| r.get(0)).optional()?;
    if stored.as_deref() == Some(SPOKEN_RULES.to_string().as_str()) {
        return Ok(());
    }
    let tx = conn.transaction()?;
    derive_spoken_times(&tx)?;
    tx.commit()?;
    Ok(())
}
