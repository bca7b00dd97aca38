//! One write, in order: the writer lock (and catching up with other writers), a store
//! transaction around a [`WriteBatch`] (with the vectors of what it wrote), its commit, then
//! the index commit and the in-memory updates. The order is what makes a crash between any
//! two steps lose nothing (ARCHITECTURE.md, invariants).

use super::Memory;
use super::lock::{self, WriteGuard};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::index::{IndexDoc, IndexWrite};
use crate::ingest::{IngestReport, WriteBatch, WriteContext, release_texts, restore_texts};
use crate::options::Embedding;
use crate::store::{NodeReads, NodeRow, Tx, VectorReads};
use crate::types::{NodeId, TreeId};

impl Memory {
    /// Trees whose level-0 buffer's oldest item was appended at least the flush age before
    /// `now` (wall clock).
    pub(super) fn due_buffers(&self, now: i64) -> Result<Vec<TreeId>> {
        let age = self.shared.opts.config.flush_age_ms;
        Ok(self
            .store
            .open_leaf_buffers()?
            .into_iter()
            .filter(|(_, appended)| now.saturating_sub(*appended) >= age)
            .map(|t| t.0)
            .collect())
    }

    /// Take the store's writer lock, waiting up to the lock timeout for another writer, and
    /// catch up with what other writers committed since this handle last looked: the shared
    /// index reader and derived state, and the write path's gazetteer. The lock is held
    /// until the guard drops.
    pub(super) fn lock(&mut self) -> Result<WriteGuard> {
        Ok(self.lock_and_catch_up()?.0)
    }

    /// [`Memory::lock`], and whether the store had moved since this handle last looked.
    fn lock_and_catch_up(&mut self) -> Result<(WriteGuard, bool)> {
        let guard = lock::acquire(&self.shared.dir, self.shared.opts.lock_timeout)?;
        let g = self.store.generation()?;
        let moved = g != self.synced;
        if moved {
            let view = &self.view;
            view.store().read_snapshot(|| view.refresh())?;
            self.load_gazetteer()?;
            self.synced = g;
        }
        Ok((guard, moved))
    }

    /// Run `f` as one write under the writer lock (see [`Memory::lock`]), with this write's
    /// index writer, closed before the lock is released.
    pub(super) fn write(&mut self, f: impl FnOnce(&mut WriteBatch<'_, '_>) -> Result<()>) -> Result<IngestReport> {
        let (_guard, moved) = self.lock_and_catch_up()?;
        let mut iw = self.index.begin()?;
        // Another writer may have died between its two commits, or written without the model
        // this handle has: what open repairs, a write that finds the store moved repairs too.
        self.repair_index(&mut iw)?;
        if moved && self.shared.opts.embedding == Embedding::WithEachWrite {
            self.embed_missing(&mut iw)?;
        }
        // On an error the writer is dropped: whatever it queued is discarded.
        let report = self.write_locked(&mut iw, f)?;
        iw.close()?;
        Ok(report)
    }

    /// The write itself: a store transaction, then (after it commits) the index commit and
    /// the in-memory updates. On any error the transaction rolls back and the derived state is
    /// reloaded from the store.
    fn write_locked(
        &mut self,
        iw: &mut IndexWrite,
        f: impl FnOnce(&mut WriteBatch<'_, '_>) -> Result<()>,
    ) -> Result<IngestReport> {
        // A registry edited by hand since the last write: its aliases apply from now on.
        if self.shared.registry.fingerprint() != self.gazetteer_fp {
            self.load_gazetteer()?;
        }
        let now = self.shared.now_ms();
        let due = self.due_buffers(now)?;
        // Under the lock nobody else commits: this write's generation is the next one. The
        // shared state claims it just before the commit, so that this process's readers do
        // not take the commit for another process's and reload everything; until the updates
        // below land they lag by this write, as the index does.
        let next = self.store.generation()? + 1;
        let shared = &self.shared;
        let store = &mut self.store;
        let result = (|| {
            let tx = store.begin()?;
            crate::crash::point("write_begin");
            let ctx = WriteContext {
                cfg: &shared.opts.config,
                summariser: shared.opts.summariser.as_ref(),
                extractor: &shared.extractor,
                gazetteer: &mut self.gazetteer,
                now_ms: now,
            };
            let mut batch = WriteBatch::new(&tx, ctx);
            batch.seal_level0(&due)?;
            f(&mut batch)?;
            let mut written = batch.finish();
            let vecs = match &shared.opts.embedder {
                Some(emb) if shared.opts.embedding == Embedding::WithEachWrite => {
                    // A chunk's texts at a time, read back where the batch let them go; the
                    // chunks are `embed_rows`' own, so the vectors are what they were.
                    let mut vecs = Vec::with_capacity(written.nodes.len());
                    for chunk in written.nodes.chunks_mut(EMBED_BATCH) {
                        restore_texts(&tx, chunk)?;
                        let rows: Vec<&NodeRow> = chunk.iter().map(|w| &w.row).collect();
                        vecs.extend(embed_rows(&tx, emb.as_ref(), &rows)?);
                        release_texts(chunk);
                    }
                    vecs
                }
                // Deferred: `Memory::embed_pending` makes them.
                _ => Vec::new(),
            };
            crate::crash::point("store_commit");
            shared.derived_mut().set_generation(next);
            let g = tx.commit()?;
            Ok::<_, Error>((written, vecs, g))
        })();
        let (mut written, vecs, g) = match result {
            Ok(r) => r,
            Err(e) => {
                // The transaction rolled back when dropped; derived state may have run ahead.
                self.load_gazetteer()?;
                self.shared.derived_mut().set_generation(self.store.generation()?);
                return Err(e);
            }
        };
        crate::crash::point("after_store_commit");
        self.synced = g;
        // The store has committed: the index follows. If this fails the index is behind the
        // store until the next write or open rebuilds it; what was queued is dropped with the
        // writer, so no later commit can carry half of this write.
        let indexed = (|| {
            for t in &written.dropped_trees {
                iw.delete_tree(t);
            }
            for n in &written.dropped_nodes {
                iw.delete_node(n);
            }
            for chunk in written.nodes.chunks_mut(EMBED_BATCH) {
                let read_back = restore_texts(&self.store, chunk)?;
                for w in chunk {
                    iw.add(&IndexDoc { node: &w.row, tree: &w.tree, entities: &w.entities, topics: &w.topics })?;
                    // The index's queue holds its own copy of the text now, and nothing below
                    // reads ours: a large write does not hold its text twice (issue 28).
                    w.row.content = String::new();
                }
                // The pages the texts came from are not read again: a large write's index
                // step holds a chunk of them, not a page cache full (the first chunk also
                // lets go of what the transaction left cached).
                if read_back {
                    self.store.release_cache()?;
                }
            }
            iw.commit(g)
        })();
        if let Err(e) = indexed {
            // The shared state claimed this commit but has none of it: readers reload it.
            self.shared.derived_mut().set_generation(g - 1);
            return Err(e);
        }
        crate::crash::point("after_index_commit");
        // Still under the lock, and the state was caught up before the write: after these
        // updates it holds every stored vector, and the gazetteer the write path holds now
        // (the batch kept it equal to a reload from the store). A replace or delete takes its
        // rows out of the matrix (`remove` also drops a removed summary's session) instead of
        // reloading every vector.
        let mark = self.store.vector_mark()?;
        let mut derived = self.shared.derived_mut();
        derived.set_mark(mark);
        if let Some(m) = derived.vectors_mut() {
            for id in &written.dropped_nodes {
                m.remove(id.as_str());
            }
            for (id, v) in vecs {
                m.upsert(id.as_str(), &v);
            }
            // A summary sealed by this write gets its session vector now, from its
            // children's vectors (written now or earlier).
            for w in written.nodes.iter().filter(|w| w.row.level == 1) {
                m.set_session(w.row.node_id.as_str(), w.row.child_ids.iter().map(NodeId::as_str));
            }
        }
        if let Some(gazetteer) = self.gazetteer.unpublished() {
            derived.set_gazetteer(gazetteer);
        }
        // The shared state now reflects this commit: this process's readers need not reload.
        derived.set_generation(g);
        drop(derived);
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

#[cfg(test)]
mod tests;
