//! One write, in order: a store transaction around a [`WriteBatch`] (with the vectors of
//! what it wrote), its commit, then the index commit and the in-memory updates. The order is
//! what makes a crash between any two steps lose nothing (ARCHITECTURE.md, invariants).

use super::Memory;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::index::IndexDoc;
use crate::ingest::{IngestReport, WriteBatch, WriteContext};
use crate::store::{NodeReads, NodeRow, Tx};
use crate::types::{NodeId, TreeId};

impl Memory {
    /// Trees whose level-0 buffer's oldest item was appended at least the flush age before
    /// `now` (wall clock).
    pub(super) fn due_buffers(&self, now: i64) -> Result<Vec<TreeId>> {
        let age = self.view.opts.config.flush_age_ms;
        Ok(self
            .view
            .store
            .open_leaf_buffers()?
            .into_iter()
            .filter(|(_, appended)| now.saturating_sub(*appended) >= age)
            .map(|t| t.0)
            .collect())
    }

    /// Run `f` as one write: a store transaction, then (after it commits) the index commit
    /// and the in-memory updates. On any error the transaction rolls back and the derived
    /// state is reloaded from the store.
    pub(super) fn write(&mut self, f: impl FnOnce(&mut WriteBatch<'_, '_>) -> Result<()>) -> Result<IngestReport> {
        // A registry edited by hand since the last write: its aliases apply from now on.
        if self.view.registry.fingerprint() != self.gazetteer_fp {
            self.load_gazetteer()?;
        }
        let revision = self.gazetteer.revision();
        let now = self.view.now_ms();
        let due = self.due_buffers(now)?;
        let view = &mut self.view;
        let result = (|| {
            let tx = view.store.begin()?;
            crate::crash::point("write_begin");
            let ctx = WriteContext {
                cfg: &view.opts.config,
                summariser: view.opts.summariser.as_ref(),
                extractor: &view.extractor,
                gazetteer: &mut self.gazetteer,
                registry: &view.registry,
                now_ms: now,
            };
            let mut batch = WriteBatch::new(&tx, ctx);
            batch.seal_level0(&due)?;
            f(&mut batch)?;
            let written = batch.finish();
            let vecs = match &view.opts.embedder {
                Some(emb) => {
                    let rows: Vec<&NodeRow> = written.nodes.iter().map(|w| &w.row).collect();
                    embed_rows(&tx, emb.as_ref(), &rows)?
                }
                None => Vec::new(),
            };
            crate::crash::point("store_commit");
            let g = tx.commit()?;
            Ok::<_, Error>((written, vecs, g))
        })();
        let (written, vecs, g) = match result {
            Ok(r) => r,
            Err(e) => {
                // The transaction rolled back when dropped; derived state may have run ahead.
                self.load_gazetteer()?;
                return Err(e);
            }
        };
        crate::crash::point("after_store_commit");
        // The store has committed: the index follows. If this fails the index is behind the
        // store until the next open rebuilds it; what was queued is dropped so that a later
        // commit cannot carry half of this write.
        let indexed = (|| {
            for t in &written.dropped_trees {
                self.index.delete_tree(t);
            }
            for w in &written.nodes {
                self.index.add(&IndexDoc { node: &w.row, tree: &w.tree, entities: &w.entities, topics: &w.topics })?;
            }
            self.index.commit(g)
        })();
        if let Err(e) = indexed {
            let _ = self.index.rollback();
            return Err(e);
        }
        crate::crash::point("after_index_commit");
        if written.dropped_trees.is_empty() {
            if let Some(m) = self.view.derived_mut().vectors_mut() {
                for (id, v) in vecs {
                    m.upsert(id.as_str(), &v);
                }
            }
            if self.gazetteer.revision() != revision {
                self.view.derived_mut().set_gazetteer(self.gazetteer.clone());
            }
        } else {
            // A replace or delete removed nodes: reload the derived state from the record.
            self.reload_vectors()?;
            self.load_gazetteer()?;
        }
        Ok(written.report)
    }
}

/// Nodes embedded per model call.
pub(super) const EMBED_BATCH: usize = 256;

/// Embed `rows` in batches and store their vectors in `tx`.
pub(super) fn embed_rows(tx: &Tx<'_>, emb: &dyn Embedder, rows: &[&NodeRow]) -> Result<Vec<(NodeId, Vec<f32>)>> {
    let mut out = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(EMBED_BATCH) {
        crate::crash::point("embed_batch");
        let texts: Vec<&str> = chunk.iter().map(|r| r.content.as_str()).collect();
        let vecs = emb.embed(&texts)?;
        if vecs.len() != chunk.len() {
            return Err(Error::model(format!("asked for {} vectors, got {}", chunk.len(), vecs.len())));
        }
        for (r, v) in chunk.iter().zip(vecs) {
            tx.put_vector(&r.node_id, emb.name(), &v)?;
            out.push((r.node_id.clone(), v));
        }
    }
    Ok(out)
}
