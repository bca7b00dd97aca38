//! Keeping what is derived from the record in step with it: the write path's gazetteer, the
//! vector matrix (embedding nodes an open finds without a vector), and the full-text index
//! (rebuilt on open when it is behind, or by `reindex`).

use super::Memory;
use super::commit::{Claim, EMBED_BATCH, MadeVector, embed_rows};
use crate::derived::{WriteGazetteer, load_vectors};
use crate::embed::{Embedder, VectorMatrix};
use crate::error::Result;
use crate::index::{IndexDoc, IndexWrite};
use crate::ingest::import::Progress;
use crate::store::{Adopted, BatchReads, EntityReads, NodeReads, TopicReads, Tx, VectorReads};
use crate::types::{NodeId, TreeId};
use std::collections::{BTreeSet, HashMap};

impl Memory {
    /// Re-read the write-path gazetteer from the store and the vault, and publish it.
    pub(super) fn load_gazetteer(&mut self) -> Result<()> {
        self.gazetteer_fp = self.shared.registry.fingerprint();
        self.gazetteer = WriteGazetteer::load(&self.store, &self.shared.registry)?;
        self.shared.derived_mut().set_gazetteer(self.gazetteer.gazetteer().clone());
        Ok(())
    }

    /// Embed the nodes that have no vector (a store written without the model, a crash
    /// before the vectors of a write were stored, a deferred import stopped before its
    /// vectors) and add them to the matrix; returns how many were embedded. Under the writer
    /// lock, with this write's index writer; one transaction per batch, so that a stop keeps
    /// the batches done.
    pub(super) fn embed_missing(&mut self, iw: &mut IndexWrite) -> Result<usize> {
        let Some(emb) = self.shared.opts.embedder.clone() else { return Ok(0) };
        let missing = self.store.nodes_missing_vectors(emb.name())?;
        let mut done = 0;
        for batch in missing.chunks(EMBED_BATCH) {
            done += self.embed_nodes(iw, emb.as_ref(), batch)?;
        }
        Ok(done)
    }

    /// Embed the nodes without a vector (see [`crate::Embedding::Deferred`]), one batch per
    /// write so that other writers get the lock between batches and a crash or a stop loses
    /// at most the batch in flight; `progress` hears once before the first batch (`done` = 0,
    /// as an import's writes report) and after each batch. Returns how many nodes were
    /// embedded (0 without a model).
    pub fn embed_pending(&mut self, progress: impl FnMut(Progress)) -> Result<usize> {
        self.embed_pending_until(&|| false, EMBED_BATCH, progress)
    }

    /// [`Memory::embed_pending`] in writes of `batch` nodes that asks `stop` before each
    /// write and returns early when it says so (the background embedder: it writes smaller
    /// batches, since each holds the writer lock for its model calls, and its model refuses
    /// the next slice once a stop is asked, which rolls the write in flight back).
    pub(super) fn embed_pending_until(
        &mut self,
        stop: &dyn Fn() -> bool,
        batch: usize,
        mut progress: impl FnMut(Progress),
    ) -> Result<usize> {
        let Some(emb) = self.shared.opts.embedder.clone() else { return Ok(0) };
        // Listed once: a node another writer embeds or deletes meanwhile is written again
        // (the same vector) or skipped (its row is gone).
        let missing = self.store.nodes_missing_vectors(emb.name())?;
        let total = missing.len() as u64;
        // Before the first batch, which can take many seconds (the model's first calls): a
        // front end starts its clock and shows the phase now, not when the batch is done.
        // Nothing to embed is no phase at all.
        if total > 0 {
            progress(Progress { unit: "vectors", done: 0, total });
        }
        let mut done = 0usize;
        for batch in missing.chunks(batch.max(1)) {
            if stop() {
                break;
            }
            let _guard = self.lock()?;
            let mut iw = self.index.begin()?;
            // Like any write: an index left behind the store (another writer died between its
            // two commits) is rebuilt first, or this batch's commit would stamp it current.
            self.repair_index(&mut iw)?;
            self.embed_nodes(&mut iw, emb.as_ref(), batch)?;
            iw.close()?;
            done += batch.len();
            progress(Progress { unit: "vectors", done: done as u64, total });
        }
        Ok(done)
    }

    /// Embed `ids` (those still stored) in one transaction under the writer lock, with this
    /// write's index writer, and add their vectors and the session vectors they change to the
    /// matrix.
    ///
    /// A commit of its own rather than `commit.rs`'s stages: those run a [`WriteBatch`]
    /// (due buffers sealed first, index documents added, the matrix changed by what the
    /// batch wrote and dropped), and a batch of vectors is none of that: it seals nothing,
    /// and the index only takes the new generation. The order is the stages' all the same
    /// (store commit, index commit, then the in-memory state), and the generation the shared
    /// state claims moves through the same [`Claim`] at the same points, so a crash or an
    /// error here leaves what a failed write leaves.
    ///
    /// [`WriteBatch`]: crate::ingest::WriteBatch
    fn embed_nodes(&mut self, iw: &mut IndexWrite, emb: &dyn Embedder, missing: &[NodeId]) -> Result<usize> {
        if missing.is_empty() {
            return Ok(0);
        }
        let n = missing.len();
        let next = self.store.generation()? + 1;
        let tx = self.store.begin()?;
        crate::crash::point("open_embed");
        let (vecs, parents) = embed_stored(&tx, emb, missing)?;
        Claim::Committing(next).set(&mut self.shared.derived_mut());
        let g = match tx.commit() {
            Ok(g) => g,
            Err(e) => {
                Claim::RolledBack(self.store.generation()?).set(&mut self.shared.derived_mut());
                return Err(e);
            }
        };
        self.synced = g;
        // The index did not change, but its payload must track the generation.
        if let Err(e) = iw.commit(g) {
            Claim::IndexFailed(g).set(&mut self.shared.derived_mut());
            return Err(e);
        }
        let store = &self.store;
        let mark = store.vector_mark()?;
        let mut derived = self.shared.derived_mut();
        derived.set_mark(mark);
        if let Some(m) = derived.vectors_mut() {
            for v in vecs {
                v.into_matrix(m);
            }
            // The sessions of the leaves that just got vectors change with them.
            store.for_each_child_list(&parents, |summary, children| {
                m.set_session(summary, children.iter().copied());
                Ok(())
            })?;
        }
        Claim::Settled(g).set(&mut derived);
        Ok(n)
    }

    /// Rebuild the index when its last commit is not of the store's generation (a crash, or
    /// a failed index commit, between the two commits of a write; a lost index directory);
    /// true when it did.
    pub(super) fn repair_index(&mut self, iw: &mut IndexWrite) -> Result<bool> {
        if self.index.handle().committed_generation()? == Some(self.store.generation()?) {
            return Ok(false);
        }
        self.rebuild_with(iw)?;
        Ok(true)
    }

    /// Rebuild the full-text index from the store (under the writer lock, like any write).
    pub fn rebuild_index(&mut self) -> Result<()> {
        let _guard = self.lock()?;
        let mut iw = self.index.begin()?;
        self.rebuild_with(&mut iw)?;
        iw.close()
    }

    fn rebuild_with(&mut self, iw: &mut IndexWrite) -> Result<()> {
        iw.delete_all()?;
        let trees: HashMap<TreeId, crate::store::TreeRow> =
            self.store.trees()?.into_iter().map(|t| (t.tree_id.clone(), t)).collect();
        let store = &self.store;
        let mut added = 0usize;
        store.for_each_node(|n| {
            let Some(tree) = trees.get(&n.tree_id) else { return Ok(()) };
            let entities = store.node_entities(&n.node_id)?;
            let topics = store.topics(&n.node_id)?;
            added += 1;
            if added == 2 {
                crate::crash::point("rebuild_index");
            }
            iw.add(&IndexDoc { node: &n, tree, entities: &entities, topics: &topics })
        })?;
        let g = self.store.generation()?;
        iw.commit(g)
    }

    /// `memtree reindex`: rebuild the full-text index and re-embed every node.
    pub fn reindex(&mut self) -> Result<()> {
        let _guard = self.lock()?;
        let mut iw = self.index.begin()?;
        if let Some(emb) = self.shared.opts.embedder.clone() {
            let tx = self.store.begin()?;
            tx.clear_vectors()?;
            let g = tx.commit()?;
            self.synced = g;
            let mark = self.store.vector_mark()?;
            self.shared.derived_mut().set_vectors(Some(VectorMatrix::new(emb.dim())), mark);
        }
        self.rebuild_with(&mut iw)?;
        self.embed_missing(&mut iw)?;
        iw.close()
    }

    /// Record the open's model as the maker of the vectors under its name; when the store's
    /// vectors under that name are another model's (another dimension or manifest), they are
    /// deleted here and re-embedded like any missing vector: by this open
    /// ([`crate::Embedding::WithEachWrite`]) or by `embed_pending` and the background worker
    /// ([`crate::Embedding::Deferred`]). Never mixes two models' vectors in one matrix.
    pub(super) fn adopt_model(&mut self, iw: &mut IndexWrite) -> Result<()> {
        let Some(emb) = self.shared.opts.embedder.clone() else { return Ok(()) };
        let tx = self.store.begin()?;
        if tx.adopt_model(emb.name(), emb.dim(), emb.manifest())? == Adopted::Unchanged {
            return Ok(());
        }
        let g = tx.commit()?;
        self.synced = g;
        // The index did not change, but its payload must track the generation.
        iw.commit(g)
    }

    pub(super) fn reload_vectors(&mut self) -> Result<()> {
        let Some(emb) = self.shared.opts.embedder.clone() else { return Ok(()) };
        let (m, mark) = load_vectors(&self.store, emb.as_ref())?;
        self.shared.derived_mut().set_vectors(Some(m), mark);
        Ok(())
    }
}

/// The vectors an upkeep step made, and the summaries whose session vectors they change.
type Embedded = (Vec<MadeVector>, Vec<NodeId>);

/// Embed the stored nodes `ids` (read inside `tx`) and store their vectors: the nodes an
/// open finds without one. Also returns the parents of the leaves among them.
fn embed_stored(tx: &Tx<'_>, emb: &dyn Embedder, ids: &[NodeId]) -> Result<Embedded> {
    let mut out = Vec::with_capacity(ids.len());
    let mut parents = BTreeSet::new();
    for chunk in ids.chunks(EMBED_BATCH) {
        let rows = tx.nodes(chunk)?;
        parents.extend(rows.iter().filter(|r| r.level == 0).filter_map(|r| r.parent_id.clone()));
        out.extend(embed_rows(tx, emb, &rows.iter().collect::<Vec<_>>())?);
    }
    Ok((out, parents.into_iter().collect()))
}
