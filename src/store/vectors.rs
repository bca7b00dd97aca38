//! Node vectors as the record: little-endian f32 blobs tagged with the model that made them.

use super::{Reader, Tx};
use crate::error::{Error, Result};
use crate::types::NodeId;
use rusqlite::params;

impl Tx<'_> {
    /// Store (or replace) a node's vector.
    pub fn put_vector(&self, node: &NodeId, model: &str, v: &[f32]) -> Result<()> {
        let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.tx
            .prepare_cached("INSERT OR REPLACE INTO vectors (node_id, model, dim, data) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![node.as_str(), model, v.len() as i64, blob])?;
        Ok(())
    }

    /// Drop every stored vector (before a re-embedding with another model).
    pub fn clear_vectors(&self) -> Result<()> {
        self.tx.execute("DELETE FROM vectors", [])?;
        Ok(())
    }
}

/// Vector reads.
pub trait VectorReads: Reader {
    /// Every vector made by `model`, in node-id order.
    fn for_each_vector(&self, model: &str, mut f: impl FnMut(NodeId, Vec<f32>)) -> Result<()> {
        let mut stmt =
            self.conn().prepare("SELECT node_id, dim, data FROM vectors WHERE model = ?1 ORDER BY node_id")?;
        let mut rows = stmt.query([model])?;
        while let Some(r) = rows.next()? {
            let id: String = r.get(0)?;
            let dim: i64 = r.get(1)?;
            let data: Vec<u8> = r.get(2)?;
            if data.len() != dim as usize * 4 {
                return Err(Error::Corrupt { what: format!("vectors[{id}]"), reason: "blob length != 4 * dim".into() });
            }
            let v = data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
            f(NodeId(id), v);
        }
        Ok(())
    }

    /// Ids of nodes that have no vector from `model`.
    fn nodes_missing_vectors(&self, model: &str) -> Result<Vec<NodeId>> {
        let mut stmt = self.conn().prepare(
            "SELECT n.node_id FROM nodes n LEFT JOIN vectors v ON v.node_id = n.node_id AND v.model = ?1 \
             WHERE v.node_id IS NULL ORDER BY n.node_id",
        )?;
        let rows = stmt.query_map([model], |r| Ok(NodeId(r.get(0)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl<R: Reader> VectorReads for R {}
