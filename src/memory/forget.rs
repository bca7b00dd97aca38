//! Forgetting at any grain: one leaf (a message, a chunk of a note), one source, or a
//! source's leaves in a time range, with everything derived from them, in one write; the
//! summaries above a forgotten leaf are re-sealed without it. [`Memory::forget`] returns a
//! receipt of what went.

use super::Memory;
use crate::error::{Error, Result};
use crate::ingest::{Resealed, content_hash};
use crate::store::{ForgetRecord, ForgottenReads, NodeReads};
use crate::types::{EntityId, ForgetGrain, NodeId, SourceId, TreeId};

/// What to forget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forget {
    /// One leaf by id (a chat message, an e-mail, a chunk of a document). An oversized
    /// message split into pieces is several leaves: each is forgotten by its own id.
    Leaf(NodeId),
    /// A whole source: its tree, every leaf and summary.
    Source(SourceId),
    /// The leaves of a source whose time lies in `since_ms ..= until_ms` (epoch ms).
    Range {
        /// The source.
        source: SourceId,
        /// The window's start, inclusive.
        since_ms: i64,
        /// The window's end, inclusive.
        until_ms: i64,
    },
}

/// What a forget removed and re-sealed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ForgetReceipt {
    /// The source the forgotten leaves belonged to.
    pub source_id: SourceId,
    /// The leaves removed.
    pub leaves: Vec<NodeId>,
    /// Every summary removed (re-sealed, or left with no child).
    pub summaries: Vec<NodeId>,
    /// The summaries written in place of removed ones, over their remaining children.
    pub resealed: Vec<Resealed>,
    /// Entities no leaf mentions any more: their rows, counts and edges are gone.
    pub entities: Vec<EntityId>,
    /// The source itself went (forgotten whole, or its last leaf forgotten).
    pub source_removed: bool,
    /// The forget record that holds what went out of later imports (`memtree forgotten`
    /// lists it; `memtree forget --undo` takes this id).
    pub record: i64,
}

impl Memory {
    /// Forget `what` with everything derived from it, atomically: the leaves, their entity
    /// mentions (counts and edges follow; an entity no longer mentioned goes), topics,
    /// vectors and index documents; each summary above a forgotten leaf is replaced by one
    /// sealed over the remaining children (or removed when none remain). A source whose last
    /// leaf is forgotten goes too. Afterwards the index segments that held the removed
    /// documents are rewritten and SQLite's freed pages zeroed, so the words are not left in
    /// the store's files either. The forget holds: a record of what went (ids and the
    /// leaf's text hash, never text; `ForgetReceipt::record`) makes every later import, sync,
    /// `ingest_document` and restore leave the same content out, until
    /// [`Memory::unforget`] takes the record back.
    ///
    /// # Errors
    /// [`Error::NodeNotFound`] for a leaf id that is not a stored leaf,
    /// [`Error::SourceNotFound`] for an unknown source, [`Error::InvalidArgument`] for a
    /// range that ends before it starts; those of the write.
    pub fn forget(&mut self, what: &Forget) -> Result<ForgetReceipt> {
        let store = &self.store;
        let now = self.shared.now_ms();
        let mut record = ForgetRecord {
            id: 0,
            // Each arm of the match below sets it, with the fields of its grain.
            grain: ForgetGrain::Leaf,
            source_id: String::new(),
            node_id: None,
            content_hash: None,
            since_ms: None,
            until_ms: None,
            forgotten_ms: now,
        };
        let (source, leaves) = match what {
            Forget::Leaf(id) => {
                let node = NodeId::is_leaf_id(id.as_str())
                    .then(|| store.node(id.as_str()))
                    .transpose()?
                    .flatten()
                    .filter(|n| n.is_leaf())
                    .ok_or_else(|| Error::NodeNotFound { id: id.to_string() })?;
                record.grain = ForgetGrain::Leaf;
                record.node_id = Some(node.node_id.to_string());
                record.content_hash = Some(content_hash(&node.content));
                (SourceId::from(node.tree_id.scope()), Some(vec![node.node_id]))
            }
            Forget::Source(s) => {
                record.grain = ForgetGrain::Source;
                (s.clone(), None)
            }
            Forget::Range { source, since_ms, until_ms } => {
                if until_ms < since_ms {
                    return Err(Error::invalid("until", "the range ends before it starts"));
                }
                record.grain = ForgetGrain::Range;
                record.since_ms = Some(*since_ms);
                record.until_ms = Some(*until_ms);
                let ids = store
                    .tree_nodes(&TreeId::for_source(source))?
                    .into_iter()
                    .filter(|n| n.is_leaf() && n.time_start_ms >= *since_ms && n.time_start_ms <= *until_ms)
                    .map(|n| n.node_id)
                    .collect();
                (source.clone(), Some(ids))
            }
        };
        if store.source(&source)?.is_none() {
            return Err(Error::SourceNotFound { id: source.to_string() });
        }
        record.source_id = source.to_string();
        let tree = TreeId::for_source(&source);
        let mut receipt = ForgetReceipt {
            source_id: source.clone(),
            leaves: Vec::new(),
            summaries: Vec::new(),
            resealed: Vec::new(),
            entities: Vec::new(),
            source_removed: false,
            record: 0,
        };
        store.set_secure_delete(true)?;
        let written = self.write(|b| {
            let leaves = match leaves {
                Some(l) => l,
                // The whole source: its leaves are forgotten (receipt and all), then the
                // source row goes below.
                None => b.tree_leaves(&tree)?,
            };
            let f = b.forget_leaves(&tree, &leaves)?;
            receipt.leaves = f.leaves;
            receipt.summaries = f.summaries;
            receipt.resealed = f.resealed;
            receipt.entities = f.entities;
            if b.tree_leaves(&tree)?.is_empty() {
                b.remove_source_rows(&source)?;
                receipt.source_removed = true;
            }
            receipt.record = b.hold(&record)?;
            Ok(())
        });
        let reset = self.store.set_secure_delete(false);
        written?;
        reset?;
        // The deleted documents' terms stay in their segments until a merge rewrites them,
        // and the old pages in the write-ahead log until a checkpoint: both now, under the
        // lock, with a fresh index writer (no merge of the write's own in flight).
        let _guard = self.lock()?;
        let mut iw = self.index.begin()?;
        iw.purge_deleted()?;
        iw.close()?;
        self.store.checkpoint_truncate()?;
        Ok(receipt)
    }

    /// Take a forget back: delete forget record `id`, so that a later import writes its
    /// content again (nothing comes back by itself: what went, went). Returns the record.
    ///
    /// # Errors
    /// [`Error::ForgetRecordNotFound`] for an id that names no record; the store's.
    pub fn unforget(&mut self, id: i64) -> Result<ForgetRecord> {
        let _guard = self.lock()?;
        let tx = self.store.begin()?;
        let old = tx.remove_forgotten(id)?.ok_or(Error::ForgetRecordNotFound { id })?;
        tx.commit_record_only()?;
        Ok(old)
    }
}

impl crate::reader::MemoryReader {
    /// What the store holds back from later writes: every forget record, oldest first (ids,
    /// hashes and times; no text).
    pub fn forgotten(&self) -> Result<Vec<ForgetRecord>> {
        self.read(|r| r.store().forgotten_all())
    }
}
