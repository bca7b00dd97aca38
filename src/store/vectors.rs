//! Node vectors as the record: int8 codes and their scale (`embed::codes`), tagged with the
//! model that made them; and the child lists the session vectors are made from.

use super::batch::{text_column, with_child_list};
use super::{Reader, Tx};
use crate::embed::quantise;
use crate::error::{Error, Result};
use crate::types::NodeId;
use rusqlite::{OptionalExtension, Transaction, params};

/// The slot of a node's own text; a leaf's passage `i` past the model's window is slot `i`
/// (`embed::passage_slots`).
const OWN_SLOT: i64 = 0;

impl Tx<'_> {
    /// Store (or replace) a node's vector, quantised.
    pub fn put_vector(&self, node: &NodeId, model: &str, v: &[f32]) -> Result<()> {
        let (scale, codes) = quantise(v);
        put_codes(&self.tx, node.as_str(), OWN_SLOT, model, scale, &codes)
    }

    /// Store (or replace) the vector of a leaf's passage `slot` (1 or more,
    /// `embed::passage_slots`), quantised.
    pub fn put_passage_vector(&self, node: &NodeId, slot: u16, model: &str, v: &[f32]) -> Result<()> {
        let (scale, codes) = quantise(v);
        put_codes(&self.tx, node.as_str(), i64::from(slot.max(1)), model, scale, &codes)
    }

    /// Drop every stored vector (before a re-embedding with another model).
    pub fn clear_vectors(&self) -> Result<()> {
        self.tx.execute("DELETE FROM vectors", [])?;
        Ok(())
    }
}

fn put_codes(tx: &Transaction<'_>, node: &str, slot: i64, model: &str, scale: f32, codes: &[i8]) -> Result<()> {
    let blob: Vec<u8> = codes.iter().map(|&c| c as u8).collect();
    tx.prepare_cached(
        "INSERT OR REPLACE INTO vectors (node_id, slot, model, scale, codes) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![node, slot, model, f64::from(scale), blob])?;
    Ok(())
}

/// Migration 0003's second half: quantise the f32 vectors the migration set aside into the
/// new table, then drop the old one. Runs inside the migration's transaction.
pub(super) fn convert_f32_vectors(tx: &Transaction<'_>) -> Result<()> {
    let mut stmt = tx.prepare("SELECT node_id, model, dim, data FROM vectors_f32")?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let id: String = r.get(0)?;
        let model: String = r.get(1)?;
        let dim: i64 = r.get(2)?;
        let data: Vec<u8> = r.get(3)?;
        if data.len() as i64 != dim * 4 {
            // A damaged vector is dropped, not carried over: the node is re-embedded on open.
            continue;
        }
        let v: Vec<f32> = data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
        let (scale, codes) = quantise(&v);
        put_codes(tx, &id, OWN_SLOT, &model, scale, &codes)?;
    }
    drop(rows);
    drop(stmt);
    tx.execute("DROP TABLE vectors_f32", [])?;
    Ok(())
}

/// Where the stored vectors stand: the last row written and how many rows were ever deleted.
/// A reader holding the vectors up to `seq` catches up by loading the later rows, unless
/// `deleted` moved (then it reloads them all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VectorMark {
    /// The largest `seq` of a vector row (0 when none was ever written).
    pub seq: i64,
    /// Vector rows deleted since the table was made.
    pub deleted: i64,
    /// Level-1 summaries written since the counter was made (a write can seal sessions
    /// without writing a vector: then the session vectors are remade).
    pub sessions: i64,
}

/// A vector row written after some `seq`, with what its session vector depends on.
#[derive(Debug, Clone)]
pub struct NewVector {
    /// The node.
    pub node_id: NodeId,
    /// The node's level (0 = leaf).
    pub level: u32,
    /// The summary that sealed it, if any.
    pub parent_id: Option<NodeId>,
    /// 0 for the node's own vector, else the passage it is of.
    pub slot: u16,
    /// The codes' scale.
    pub scale: f32,
    /// The int8 codes.
    pub codes: Vec<i8>,
}

/// Vector reads.
pub trait VectorReads: Reader {
    /// The current [`VectorMark`].
    fn vector_mark(&self) -> Result<VectorMark> {
        let seq: i64 = self.conn().query_row("SELECT COALESCE(MAX(seq), 0) FROM vectors", [], |r| r.get(0))?;
        let counter = |key: &str| -> Result<i64> {
            let v: String = self
                .conn()
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()?
                .ok_or_else(|| Error::Corrupt { what: format!("meta.{key}"), reason: "missing".into() })?;
            v.parse()
                .map_err(|_| Error::Corrupt { what: format!("meta.{key}"), reason: format!("not a number: {v:?}") })
        };
        Ok(VectorMark { seq, deleted: counter("vectors_deleted")?, sessions: counter("sessions_sealed")? })
    }

    /// The node and passage vectors of `model` written after `seq`, oldest first (nodes
    /// deleted since are not among them: their rows went with them).
    fn vectors_since(&self, model: &str, seq: i64) -> Result<Vec<NewVector>> {
        let mut stmt = self.conn().prepare(
            "SELECT v.node_id, n.level, n.parent_id, v.scale, v.codes, v.slot FROM vectors v \
             JOIN nodes n ON n.node_id = v.node_id \
             WHERE v.seq > ?1 AND v.model = ?2 ORDER BY v.seq",
        )?;
        let mut rows = stmt.query(params![seq, model])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let id = text_column(r, 0)?;
            let (scale, raw) = code_columns(r, 3, id)?;
            out.push(NewVector {
                node_id: NodeId(id.to_string()),
                level: r.get(1)?,
                parent_id: r.get::<_, Option<String>>(2)?.map(NodeId),
                scale,
                codes: raw.iter().map(|&b| b as i8).collect(),
                slot: slot_column(r, 5, id)?,
            });
        }
        Ok(out)
    }

    /// Every node vector made by `model` as `f(id, scale, codes)`, in node-id order.
    fn for_each_vector(&self, model: &str, mut f: impl FnMut(&str, f32, &[i8])) -> Result<()> {
        let sql = "SELECT node_id, slot, scale, codes FROM vectors WHERE model = ?1 AND slot = ?2 ORDER BY node_id";
        for_each_code_row(self.conn(), sql, model, |id, _, scale, codes| f(id, scale, codes))
    }

    /// Every passage vector made by `model` as `f(id, slot, scale, codes)`.
    fn for_each_passage_vector(&self, model: &str, f: impl FnMut(&str, u16, f32, &[i8])) -> Result<()> {
        let sql = "SELECT node_id, slot, scale, codes FROM vectors WHERE model = ?1 AND slot > ?2";
        for_each_code_row(self.conn(), sql, model, f)
    }

    /// Ids of nodes that have no vector from `model`.
    fn nodes_missing_vectors(&self, model: &str) -> Result<Vec<NodeId>> {
        let mut stmt = self.conn().prepare(
            "SELECT n.node_id FROM nodes n LEFT JOIN vectors v ON v.node_id = n.node_id AND v.slot = ?2 \
             AND v.model = ?1 WHERE v.node_id IS NULL ORDER BY n.node_id",
        )?;
        let rows = stmt.query_map(params![model, OWN_SLOT], |r| Ok(NodeId(r.get(0)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every level-1 summary and its children (the leaves whose vectors make its session
    /// vector), handed to `f(summary, children)` in no particular order.
    fn for_each_session(&self, mut f: impl FnMut(&str, &[&str])) -> Result<()> {
        let mut stmt = self.conn().prepare("SELECT node_id, child_ids FROM nodes WHERE level = 1")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            with_child_list(text_column(r, 0)?, text_column(r, 1)?, &mut |id, children| {
                f(id, children);
                Ok::<(), Error>(())
            })?;
        }
        Ok(())
    }
}

/// Every row of `sql` (columns node_id, slot, scale, codes; parameters `model` and the own
/// slot) as `f(id, slot, scale, codes)`, one buffer reused for the codes.
fn for_each_code_row(
    conn: &rusqlite::Connection,
    sql: &str,
    model: &str,
    mut f: impl FnMut(&str, u16, f32, &[i8]),
) -> Result<()> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query(params![model, OWN_SLOT])?;
    let mut codes: Vec<i8> = Vec::new();
    while let Some(r) = rows.next()? {
        let id = text_column(r, 0)?;
        let slot = slot_column(r, 1, id)?;
        let (scale, raw) = code_columns(r, 2, id)?;
        codes.clear();
        codes.extend(raw.iter().map(|&b| b as i8));
        f(id, slot, scale, &codes);
    }
    Ok(())
}

/// A row's scale (column `i`, finite) and its codes' raw bytes (column `i + 1`).
fn code_columns<'r>(r: &'r rusqlite::Row<'_>, i: usize, id: &str) -> Result<(f32, &'r [u8])> {
    let scale: f64 = r.get(i)?;
    let raw = r.get_ref(i + 1)?.as_blob().map_err(|_| corrupt(id, "codes are not a blob"))?;
    if !scale.is_finite() {
        return Err(corrupt(id, "scale is not finite"));
    }
    Ok((scale as f32, raw))
}

/// A row's slot, which fits a `u16` (`embed::PASSAGE_SLOTS`).
fn slot_column(r: &rusqlite::Row<'_>, i: usize, id: &str) -> Result<u16> {
    let slot: i64 = r.get(i)?;
    u16::try_from(slot).map_err(|_| corrupt(id, "slot out of range"))
}

fn corrupt(id: &str, reason: &str) -> Error {
    Error::Corrupt { what: format!("vectors[{id}]"), reason: reason.into() }
}

impl<R: Reader> VectorReads for R {}
