//! `Memory`: one store directory (SQLite record, tantivy index, content root), its single
//! writer, and the derived in-memory state (gazetteer, vector matrix) kept in step with it.

use crate::embed::{Embedder, VectorMatrix};
use crate::entities::{Gazetteer, Registry};
use crate::error::{Error, Result};
use crate::index::{FullTextIndex, IndexDoc};
use crate::options::{CONTENT_DIR, OpenOptions};
use crate::ingest::{Document, IngestReport, Item, WriteBatch};
use crate::reader::{Derived, MemoryReader, Parts, load_gazetteer, load_vectors};
use crate::store::{EntityReads, NodeReads, NodeRow, SourceRow, Store, TopicReads, Tx, VectorReads};
use crate::types::{NodeId, SourceId, SourceKind, TreeId};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// What `open` had to repair.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct OpenReport {
    /// The full-text index was behind the store (or unreadable) and was rebuilt.
    pub index_rebuilt: bool,
    /// Nodes that had no vector and were embedded.
    pub vectors_added: usize,
}

/// An open memory store: the single writer, and (through `Deref`) its own read side.
/// A `Memory` *is* a reader that may also write, so every read mode takes a
/// [`MemoryReader`] and accepts a `&Memory` as well.
pub struct Memory {
    view: MemoryReader,
    index: FullTextIndex,
    /// The write path's gazetteer (a write adds the surfaces it discovers); published to the
    /// readers' shared state after each commit.
    gazetteer: Gazetteer,
    /// The vault fingerprint the write-path gazetteer was built at.
    gazetteer_fp: (usize, u128, u64),
    opened: OpenReport,
}

impl std::ops::Deref for Memory {
    type Target = MemoryReader;

    fn deref(&self) -> &MemoryReader {
        &self.view
    }
}

impl Memory {
    /// Open (or create) the store in `dir` with default options.
    pub fn open(dir: impl AsRef<Path>) -> Result<Memory> {
        Self::open_with(dir, OpenOptions::default())
    }

    /// Open (or create) the store in `dir`. Repairs a full-text index that is behind the
    /// store (a crash between the two commits) and embeds nodes that lack vectors.
    pub fn open_with(dir: impl AsRef<Path>, opts: OpenOptions) -> Result<Memory> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(dir.join(CONTENT_DIR)).map_err(|e| Error::io(&dir, e))?;
        // The index first: its writer lock is the store's single-writer lock.
        let index = FullTextIndex::open(&dir)?;
        let store = Store::open(&dir)?;
        let registry = Registry::open(&dir.join(CONTENT_DIR))?;
        let gazetteer_fp = registry.fingerprint();
        let gazetteer = load_gazetteer(&store, &registry)?;
        let vectors = opts.embedder.as_ref().map(|e| VectorMatrix::new(e.dim()));
        let derived = Derived::new(gazetteer.clone(), vectors);
        let parts = Parts {
            dir,
            opts,
            store,
            index: index.handle().clone(),
            registry,
            derived: Arc::new(RwLock::new(derived)),
        };
        let view = MemoryReader::from_parts(parts, None);
        let mut mem = Memory { view, index, gazetteer, gazetteer_fp, opened: OpenReport::default() };
        if mem.index.handle().committed_generation()? != Some(mem.view.store.generation()?) {
            mem.rebuild_index()?;
            mem.opened.index_rebuilt = true;
        }
        mem.opened.vectors_added = mem.load_vectors()?;
        Ok(mem)
    }

    /// What `open` repaired.
    pub fn open_report(&self) -> &OpenReport {
        &self.opened
    }

    /// Re-read the write-path gazetteer from the store and the vault, and publish it.
    fn load_gazetteer(&mut self) -> Result<()> {
        self.gazetteer_fp = self.view.registry.fingerprint();
        self.gazetteer = load_gazetteer(&self.view.store, &self.view.registry)?;
        self.view.derived_mut().set_gazetteer(self.gazetteer.clone());
        Ok(())
    }

    /// Load stored vectors into the matrix and embed nodes that have none; returns how
    /// many were embedded.
    fn load_vectors(&mut self) -> Result<usize> {
        let Some(emb) = self.view.opts.embedder.clone() else { return Ok(0) };
        let m = load_vectors(&self.view.store, emb.as_ref())?;
        self.view.derived_mut().set_vectors(Some(m));
        let missing = self.view.store.nodes_missing_vectors(emb.name())?;
        if missing.is_empty() {
            return Ok(0);
        }
        let n = missing.len();
        let tx = self.view.store.begin()?;
        crate::crash::point("open_embed");
        let vecs = embed_stored(&tx, emb.as_ref(), &missing)?;
        let g = tx.commit()?;
        // The index did not change, but its payload must track the generation.
        self.index.commit(g)?;
        if let Some(m) = self.view.derived_mut().vectors_mut() {
            for (id, v) in vecs {
                m.upsert(id.as_str(), &v);
            }
        }
        Ok(n)
    }

    /// Rebuild the full-text index from the store.
    pub fn rebuild_index(&mut self) -> Result<()> {
        self.index.delete_all()?;
        let trees: HashMap<TreeId, crate::store::TreeRow> =
            self.view.store.trees()?.into_iter().map(|t| (t.tree_id.clone(), t)).collect();
        let store = &self.view.store;
        let index = &mut self.index;
        let mut added = 0usize;
        store.for_each_node(|n| {
            let Some(tree) = trees.get(&n.tree_id) else { return Ok(()) };
            let entities = store.node_entities(&n.node_id)?;
            let topics = store.topics(&n.node_id)?;
            added += 1;
            if added == 2 {
                crate::crash::point("rebuild_index");
            }
            index.add(&IndexDoc { node: &n, tree, entities: &entities, topics: &topics })
        })?;
        let g = self.view.store.generation()?;
        self.index.commit(g)
    }

    /// `memtree reindex`: rebuild the full-text index and re-embed every node.
    pub fn reindex(&mut self) -> Result<()> {
        if let Some(emb) = self.view.opts.embedder.clone() {
            let tx = self.view.store.begin()?;
            tx.clear_vectors()?;
            tx.commit()?;
            self.view.derived_mut().set_vectors(Some(VectorMatrix::new(emb.dim())));
        }
        self.rebuild_index()?;
        self.load_vectors()?;
        Ok(())
    }

    /// Append chat messages and e-mails. Validates every item first (a bad item fails the
    /// whole call and writes nothing), then writes them in one transaction.
    pub fn ingest(&mut self, items: impl IntoIterator<Item = Item>) -> Result<IngestReport> {
        let cfg = self.view.opts.config.clone();
        let mut drafts = Vec::new();
        for it in items {
            drafts.extend(it.into_drafts(&cfg)?);
        }
        self.write(|b| {
            for d in drafts {
                b.append_leaf(d)?;
            }
            Ok(())
        })
    }

    /// Ingest a document, replacing any earlier version of the same `source_id`
    /// atomically. Its leaves are sealed at once: a document arrives complete.
    pub fn ingest_document(&mut self, doc: Document) -> Result<IngestReport> {
        let source = doc.source_id.clone();
        let provider = doc.provider.clone();
        let title = doc.title.clone();
        let drafts = doc.into_drafts(&self.view.opts.config)?;
        let report = self.write(|b| {
            b.drop_source(&source)?;
            crate::crash::point("replace_dropped");
            for d in drafts {
                b.append_leaf(d)?;
            }
            b.upsert_source(&SourceRow {
                source_id: source.clone(),
                source_kind: SourceKind::Document,
                provider: provider.clone(),
                title: Some(title.clone()),
            })?;
            b.seal_level0(&[TreeId::for_source(&source)])
        })?;
        Ok(report)
    }

    /// Delete a source with all its nodes, entity mentions, edges and vectors.
    pub fn delete_source(&mut self, source: &SourceId) -> Result<IngestReport> {
        let source = source.clone();
        self.write(|b| b.drop_source(&source).map(drop))
    }

    /// Seal every non-empty level-0 buffer now (SPEC: only level 0 is force-flushed).
    pub fn flush(&mut self) -> Result<IngestReport> {
        let trees: Vec<TreeId> = self.view.store.open_leaf_buffers()?.into_iter().map(|t| t.0).collect();
        if trees.is_empty() {
            return Ok(IngestReport::default());
        }
        self.write(|b| b.seal_level0(&trees))
    }

    /// Seal the level-0 buffers whose oldest item was appended more than the flush age ago
    /// on the wall clock. Runs at the start of every write; a host may also call it on a
    /// timer.
    pub fn flush_due(&mut self) -> Result<IngestReport> {
        let due = self.due_buffers(self.view.now_ms())?;
        if due.is_empty() {
            return Ok(IngestReport::default());
        }
        self.write(|b| b.seal_level0(&due))
    }

    /// Trees whose level-0 buffer's oldest item was appended at least the flush age before
    /// `now` (wall clock).
    fn due_buffers(&self, now: i64) -> Result<Vec<TreeId>> {
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
    fn write(&mut self, f: impl FnOnce(&mut WriteBatch<'_, '_>) -> Result<()>) -> Result<IngestReport> {
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
            let mut batch = WriteBatch::new(
                &tx,
                &view.opts.config,
                view.opts.summariser.as_ref(),
                &view.extractor,
                &mut self.gazetteer,
                now,
            );
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

    fn reload_vectors(&mut self) -> Result<()> {
        let Some(emb) = self.view.opts.embedder.clone() else { return Ok(()) };
        let m = load_vectors(&self.view.store, emb.as_ref())?;
        self.view.derived_mut().set_vectors(Some(m));
        Ok(())
    }

    /// Store or update a `memory_recall` fact; true when it was new.
    pub fn recall_put(&mut self, namespace: &str, key: &str, content: &str) -> Result<bool> {
        let now = self.view.now_ms();
        let tx = self.view.store.begin()?;
        let created = tx.put_recall(namespace, key, content, now)?;
        crate::crash::point("recall_commit");
        tx.commit_record_only()?;
        Ok(created)
    }

    /// Forget a `memory_recall` fact; true when it existed.
    pub fn recall_forget(&mut self, namespace: &str, key: &str) -> Result<bool> {
        let tx = self.view.store.begin()?;
        let existed = tx.forget_recall(namespace, key)?;
        crate::crash::point("recall_commit");
        tx.commit_record_only()?;
        Ok(existed)
    }

    /// A reader for another thread: its own SQLite connection (reads see committed
    /// snapshots and never block this writer), the same index reader and derived state.
    pub fn reader(&self) -> Result<MemoryReader> {
        self.view.reader()
    }
}

/// Embed the stored nodes `ids` (read inside `tx`) and store their vectors: the nodes an
/// open finds without one.
fn embed_stored(tx: &Tx<'_>, emb: &dyn Embedder, ids: &[NodeId]) -> Result<Vec<(NodeId, Vec<f32>)>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(EMBED_BATCH) {
        let rows = tx.nodes(chunk)?;
        out.extend(embed_rows(tx, emb, &rows.iter().collect::<Vec<_>>())?);
    }
    Ok(out)
}

/// Nodes embedded per model call.
const EMBED_BATCH: usize = 256;

/// Embed `rows` in batches and store their vectors in `tx`.
fn embed_rows(tx: &Tx<'_>, emb: &dyn Embedder, rows: &[&NodeRow]) -> Result<Vec<(NodeId, Vec<f32>)>> {
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
