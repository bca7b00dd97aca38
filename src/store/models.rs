//! Which model made the stored vectors: a row per model name with its dimension and manifest
//! hash, so that a store opened with another model never mixes two models' vectors.

use super::{Reader, Tx};
use crate::error::Result;
use rusqlite::{OptionalExtension, params};

/// A model as the store records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRecord {
    /// Vector dimension.
    pub dim: usize,
    /// The manifest hash of the model's files; empty when not known (vectors stored before
    /// the store recorded models).
    pub manifest: String,
}

impl ModelRecord {
    /// Whether vectors recorded under this record can be scored with a model of `dim` and
    /// `manifest` (an empty manifest on either side: not known, the name and dimension
    /// decide).
    pub fn matches(&self, dim: usize, manifest: &str) -> bool {
        self.dim == dim && (self.manifest.is_empty() || manifest.is_empty() || self.manifest == manifest)
    }
}

/// What [`Tx::adopt_model`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adopted {
    /// The record already named this model: nothing written.
    Unchanged,
    /// The record was written (a new name, or a manifest now known); no vector dropped.
    Recorded,
    /// The name's vectors were another model's: this many were deleted, to be re-embedded.
    Replaced(usize),
}

impl Tx<'_> {
    /// Record `name` (`dim`, `manifest`) as the model of the vectors stored under that name.
    /// When the record says another dimension or manifest, the vectors under the name are
    /// another model's: they are deleted and the record replaced.
    pub fn adopt_model(&self, name: &str, dim: usize, manifest: &str) -> Result<Adopted> {
        let old = self.model_record(name)?;
        let put = || -> Result<()> {
            self.tx.execute(
                "INSERT OR REPLACE INTO models (name, dim, manifest) VALUES (?1, ?2, ?3)",
                params![name, dim as i64, manifest],
            )?;
            Ok(())
        };
        match old {
            Some(r) if r.matches(dim, manifest) => {
                if r.manifest == manifest {
                    return Ok(Adopted::Unchanged);
                }
                put()?;
                Ok(Adopted::Recorded)
            }
            Some(_) => {
                let n = self.tx.execute("DELETE FROM vectors WHERE model = ?1", [name])?;
                put()?;
                Ok(Adopted::Replaced(n))
            }
            None => {
                // Vectors under a name with no record (written by a test embedder before any
                // writer recorded it) are checked by dimension alone.
                let n = self.tx.execute(
                    "DELETE FROM vectors WHERE model = ?1 AND length(codes) != ?2",
                    params![name, dim as i64],
                )?;
                put()?;
                Ok(if n > 0 { Adopted::Replaced(n) } else { Adopted::Recorded })
            }
        }
    }
}

/// Model reads.
pub trait ModelReads: Reader {
    /// The record of model `name`, if the store has one.
    fn model_record(&self, name: &str) -> Result<Option<ModelRecord>> {
        Ok(self
            .conn()
            .query_row("SELECT dim, manifest FROM models WHERE name = ?1", [name], |r| {
                Ok(ModelRecord { dim: r.get::<_, i64>(0)? as usize, manifest: r.get(1)? })
            })
            .optional()?)
    }

    /// Whether the vectors stored under `name` were made by this model (`dim`, `manifest`):
    /// true when the record matches or there is none.
    fn vectors_usable(&self, name: &str, dim: usize, manifest: &str) -> Result<bool> {
        Ok(self.model_record(name)?.is_none_or(|r| r.matches(dim, manifest)))
    }
}

impl<R: Reader> ModelReads for R {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, VectorReads};
    use crate::types::NodeId;

    #[test]
    fn another_manifest_drops_the_names_vectors_and_readers_ignore_them_until_then() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let tx = store.begin().unwrap();
        assert_eq!(tx.adopt_model("m", 4, "aaaa").unwrap(), Adopted::Recorded);
        tx.put_vector(&NodeId("L1".into()), "m", &[0.5, 0.5, 0.5, 0.5]).unwrap();
        assert_eq!(tx.adopt_model("m", 4, "aaaa").unwrap(), Adopted::Unchanged);
        tx.commit().unwrap();

        assert!(store.vectors_usable("m", 4, "aaaa").unwrap());
        assert!(!store.vectors_usable("m", 4, "bbbb").unwrap(), "another manifest");
        assert!(!store.vectors_usable("m", 8, "aaaa").unwrap(), "another dimension");
        assert!(store.vectors_usable("other", 8, "x").unwrap(), "no record");

        let tx = store.begin().unwrap();
        assert_eq!(tx.adopt_model("m", 4, "bbbb").unwrap(), Adopted::Replaced(1));
        tx.commit().unwrap();
        let mut n = 0;
        store.for_each_vector("m", |_, _, _| n += 1).unwrap();
        assert_eq!(n, 0);
        assert_eq!(store.model_record("m").unwrap(), Some(ModelRecord { dim: 4, manifest: "bbbb".into() }));
    }

    #[test]
    fn an_unknown_manifest_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let tx = store.begin().unwrap();
        assert_eq!(tx.adopt_model("m", 4, "").unwrap(), Adopted::Recorded);
        assert_eq!(tx.adopt_model("m", 4, "cccc").unwrap(), Adopted::Recorded);
        assert_eq!(tx.model_record("m").unwrap().unwrap().manifest, "cccc");
    }
}
