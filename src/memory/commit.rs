//! One write, in order: the writer lock (and catching up with other writers), then the write
//! in named stages, each starting once the one before it is done: prepare (what the write
//! starts from), store (one transaction around a [`WriteBatch`], with the vectors of what it
//! wrote, and its commit), index (the index commit), then the derived state (the vector
//! matrix, the gazetteer and the generation the shared state reflects). The order is what
//! makes a crash between any two steps lose nothing (ARCHITECTURE.md, invariants).

use super::Memory;
use super::lock::{self, WriteGuard};
use crate::derived::{Derived, WriteGazetteer};
use crate::embed::{Embedder, VectorMatrix, passage_slots, quantise};
use crate::error::{Error, Result};
use crate::index::{IndexDoc, IndexWrite};
use crate::ingest::{IngestReport, WriteBatch, WriteContext, Written, release_texts, restore_texts};
use crate::options::Embedding;
use crate::shared::Shared;
use crate::store::{NodeReads, NodeRow, Store, Tx, VectorReads};
use crate::types::{NodeId, SourceKind, TreeId};

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

    /// The write itself, stage by stage (see the module's documentation). An error stops it
    /// where it happened: before the store commit the transaction rolls back and the write
    /// path's state is reloaded ([`Memory::rolled_back`]); after it, the index is left behind
    /// the store until the next write or open rebuilds it.
    fn write_locked(
        &mut self,
        iw: &mut IndexWrite,
        f: impl FnOnce(&mut WriteBatch<'_, '_>) -> Result<()>,
    ) -> Result<IngestReport> {
        let plan = self.prepare_stage()?;
        let stored = match store_stage(&self.shared, &mut self.store, &mut self.gazetteer, &plan, f) {
            Ok(stored) => stored,
            Err(e) => {
                self.rolled_back()?;
                return Err(e);
            }
        };
        crate::crash::point("after_store_commit");
        self.synced = stored.generation;
        let Stored { mut written, vectors, generation: g } = stored;
        if let Err(e) = index_stage(&self.store, iw, &mut written, g) {
            Claim::IndexFailed(g).set(&mut self.shared.derived_mut());
            return Err(e);
        }
        crate::crash::point("after_index_commit");
        self.derived_stage(&written, vectors, g)?;
        Ok(written.report)
    }

    /// What the write starts from: the write path's gazetteer in step with the vault (a
    /// registry edited by hand since the last write: its aliases apply from now on), the
    /// time, the buffers due to be sealed, and the generation the store commit will make
    /// (under the lock nobody else commits: the next one).
    fn prepare_stage(&mut self) -> Result<Plan> {
        if self.shared.registry.fingerprint() != self.gazetteer_fp {
            self.load_gazetteer()?;
        }
        let now_ms = self.shared.now_ms();
        Ok(Plan { now_ms, due: self.due_buffers(now_ms)?, next: self.store.generation()? + 1 })
    }

    /// After a failed store stage: the transaction rolled back when dropped, but the write
    /// path's gazetteer may have taken in the batch's entities and the shared state may have
    /// claimed the commit. Both go back to the store's.
    fn rolled_back(&mut self) -> Result<()> {
        self.load_gazetteer()?;
        let g = self.store.generation()?;
        Claim::RolledBack(g).set(&mut self.shared.derived_mut());
        Ok(())
    }

    /// The in-memory state, once the store and the index have committed `g`, in one hold of
    /// the shared state's lock, so that this process's readers see all of this write or none
    /// of it: the vectors ([`vector_stage`]), the gazetteer's changes (the batch kept the write
    /// path's equal to a reload from the store; the readers' copy takes the same changes), and
    /// the generation. Still under the
    /// writer lock, and the state was caught up before the write: nothing is reloaded.
    fn derived_stage(&mut self, written: &Written, vectors: Vec<MadeVector>, g: u64) -> Result<()> {
        let mark = self.store.vector_mark()?;
        let mut derived = self.shared.derived_mut();
        derived.set_mark(mark);
        vector_stage(&mut derived, written, vectors);
        self.gazetteer.publish(derived.gazetteer_mut());
        // The shared state now reflects this commit: this process's readers need not reload.
        Claim::Settled(g).set(&mut derived);
        Ok(())
    }
}

/// What the write starts from ([`Memory::prepare_stage`]).
struct Plan {
    /// The wall-clock time of the write.
    now_ms: i64,
    /// Trees whose level-0 buffer is due to be sealed.
    due: Vec<TreeId>,
    /// The generation the store commit makes.
    next: u64,
}

/// What the store stage committed: what the batch wrote, the vectors it stored with it (none
/// when they are deferred), and the store's new generation.
struct Stored {
    written: Written,
    vectors: Vec<MadeVector>,
    generation: u64,
}

/// The generation this process's shared derived state says it reflects, at each point of a
/// write where it moves: [`Claim::set`] is the one place the write path sets it (the writes
/// here, and the vector batches of `upkeep.rs`, which commit the same way). Readers of this
/// process compare it with the store's: behind, they reload the whole state.
#[derive(Debug, Clone, Copy)]
pub(super) enum Claim {
    /// Just before the store commits this generation: the shared state claims it, so that
    /// this process's readers do not take the commit for another process's and reload
    /// everything; until the derived stage lands they lag by this write, as the index does.
    Committing(u64),
    /// The store stage failed and its transaction rolled back: the store's generation.
    RolledBack(u64),
    /// The store committed this generation but the index commit failed: the one before, since
    /// the shared state has none of the write (its readers reload it).
    IndexFailed(u64),
    /// The index committed this generation and the derived stage landed.
    Settled(u64),
}

impl Claim {
    pub(super) fn set(self, derived: &mut Derived) {
        derived.set_generation(match self {
            Claim::Committing(g) | Claim::RolledBack(g) | Claim::Settled(g) => g,
            Claim::IndexFailed(g) => g - 1,
        });
    }
}

/// The store transaction: the due buffers sealed, the batch `f`, the vectors of what it wrote
/// when they are made with each write ([`embed_written`]), then the commit. Nothing is visible
/// before the commit; on an error the transaction rolls back when dropped.
fn store_stage(
    shared: &Shared,
    store: &mut Store,
    gazetteer: &mut WriteGazetteer,
    plan: &Plan,
    f: impl FnOnce(&mut WriteBatch<'_, '_>) -> Result<()>,
) -> Result<Stored> {
    let tx = store.begin()?;
    crate::crash::point("write_begin");
    let ctx = WriteContext {
        cfg: &shared.opts.config,
        summariser: shared.opts.summariser.as_ref(),
        extractor: &shared.extractor,
        gazetteer,
        now_ms: plan.now_ms,
    };
    let mut batch = WriteBatch::new(&tx, ctx);
    batch.seal_level0(&plan.due)?;
    f(&mut batch)?;
    let mut written = batch.finish();
    let vectors = embed_written(&tx, shared, &mut written)?;
    crate::crash::point("store_commit");
    Claim::Committing(plan.next).set(&mut shared.derived_mut());
    let generation = tx.commit()?;
    Ok(Stored { written, vectors, generation })
}

/// The vectors of what the batch wrote, stored in its transaction, when the model embeds with
/// each write (deferred: `Memory::embed_pending` makes them later, and there are none here).
/// A chunk's texts at a time, read back where the batch let them go; the chunks are
/// `embed_rows`' own, so the vectors are what they were.
fn embed_written(tx: &Tx<'_>, shared: &Shared, written: &mut Written) -> Result<Vec<MadeVector>> {
    let Some(emb) = shared.opts.embedder.as_ref().filter(|_| shared.opts.embedding == Embedding::WithEachWrite) else {
        return Ok(Vec::new());
    };
    let mut vectors = Vec::with_capacity(written.nodes.len());
    for chunk in written.nodes.chunks_mut(EMBED_BATCH) {
        restore_texts(tx, chunk)?;
        let rows: Vec<&NodeRow> = chunk.iter().map(|w| &w.row).collect();
        vectors.extend(embed_rows(tx, emb.as_ref(), &rows)?);
        release_texts(chunk);
    }
    Ok(vectors)
}

/// The index follows the store's commit `g`: the dropped trees' and nodes' documents out, the
/// written nodes' in, committed with `g` as its payload. If this fails the index is behind the
/// store until the next write or open rebuilds it; what was queued is dropped with the writer,
/// so no later commit can carry half of this write.
fn index_stage(store: &Store, iw: &mut IndexWrite, written: &mut Written, g: u64) -> Result<()> {
    for t in &written.dropped_trees {
        iw.delete_tree(t);
    }
    for n in &written.dropped_nodes {
        iw.delete_node(n);
    }
    for chunk in written.nodes.chunks_mut(EMBED_BATCH) {
        let read_back = restore_texts(store, chunk)?;
        for w in chunk {
            iw.add(&IndexDoc { node: &w.row, tree: &w.tree, entities: &w.entities, topics: &w.topics })?;
            // The index's queue holds its own copy of the text now, and nothing below reads
            // ours: a large write does not hold its text twice (issue 28).
            w.row.content = String::new();
        }
        // The pages the texts came from are not read again: a large write's index step holds
        // a chunk of them, not a page cache full (the first chunk also lets go of what the
        // transaction left cached).
        if read_back {
            store.release_cache()?;
        }
    }
    iw.commit(g)
}

/// The vector matrix after the commit: a replace or delete takes its rows out (`remove` also
/// drops a removed summary's session) instead of reloading every vector, before the write's
/// own go in (a replace may write a deleted id again); a summary sealed by the write gets its
/// session vector, from its children's vectors (written now or earlier).
fn vector_stage(derived: &mut Derived, written: &Written, vectors: Vec<MadeVector>) {
    let Some(m) = derived.vectors_mut() else { return };
    for id in &written.dropped_nodes {
        m.remove(id.as_str());
    }
    for v in vectors {
        v.into_matrix(m);
    }
    for w in written.nodes.iter().filter(|w| w.row.level == 1) {
        m.set_session(w.row.node_id.as_str(), w.row.child_ids.iter().map(NodeId::as_str));
    }
}

/// Nodes embedded per model call.
pub(super) const EMBED_BATCH: usize = 256;

/// A vector a write made: a node's own (slot 0) or one of a long leaf's passages'.
pub(super) struct MadeVector {
    pub(super) id: NodeId,
    pub(super) slot: u16,
    pub(super) v: Vec<f32>,
}

impl MadeVector {
    /// Into the matrix, where its slot says.
    pub(super) fn into_matrix(self, m: &mut VectorMatrix) {
        match self.slot {
            0 => m.upsert(self.id.as_str(), &self.v),
            slot => {
                let (scale, codes) = quantise(&self.v);
                m.upsert_passage(self.id.as_str(), slot, scale, &codes);
            }
        }
    }
}

/// Embed `rows` in batches and store their vectors in `tx`: each row by the words ranking
/// reads (`NodeRow::ranked_text`: a mail by its own words), and each long leaf's passages
/// past the model's window by themselves (`embed::passage_slots`), in the same model calls.
pub(super) fn embed_rows(tx: &Tx<'_>, emb: &dyn Embedder, rows: &[&NodeRow]) -> Result<Vec<MadeVector>> {
    let mut out = Vec::with_capacity(rows.len());
    let mut kinds: std::collections::HashMap<&TreeId, SourceKind> = std::collections::HashMap::new();
    for chunk in rows.chunks(EMBED_BATCH) {
        crate::crash::point("embed_batch");
        let mut texts: Vec<std::borrow::Cow<'_, str>> = Vec::with_capacity(chunk.len());
        // Per text: its row in the chunk and its slot.
        let mut whose: Vec<(usize, u16)> = Vec::with_capacity(chunk.len());
        for (i, r) in chunk.iter().enumerate() {
            let kind = match kinds.get(&r.tree_id) {
                Some(k) => *k,
                None => {
                    let k = tx.tree(&r.tree_id)?.map_or(SourceKind::Chat, |t| t.source_kind);
                    *kinds.entry(&r.tree_id).or_insert(k)
                }
            };
            texts.push(r.ranked_text(kind));
            whose.push((i, 0));
            if r.is_leaf() {
                for (slot, text) in passage_slots(emb, &r.content, kind)? {
                    texts.push(std::borrow::Cow::Borrowed(text));
                    whose.push((i, slot));
                }
            }
        }
        let texts: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
        let vecs = emb.embed(&texts)?;
        if vecs.len() != texts.len() {
            return Err(Error::model(format!("asked for {} vectors, got {}", texts.len(), vecs.len())));
        }
        for (&(i, slot), v) in whose.iter().zip(vecs) {
            let id = &chunk[i].node_id;
            match slot {
                0 => tx.put_vector(id, emb.name(), &v)?,
                _ => tx.put_passage_vector(id, slot, emb.name(), &v)?,
            }
            out.push(MadeVector { id: id.clone(), slot, v });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
