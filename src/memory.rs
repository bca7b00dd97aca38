//! `Memory`: one store directory (SQLite record, tantivy index, content root), its single
//! writer, and the derived in-memory state (gazetteer, vector matrix) kept in step with it.

use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::embed::{Embedder, VectorMatrix};
use crate::entities::{Gazetteer, Registry};
use crate::error::{Error, Result};
use crate::index::{FullTextIndex, IndexDoc};
use crate::ingest::{Document, IngestReport, Item, WriteBatch};
use crate::reader::{Derived, MemoryReader, Parts, load_gazetteer, load_vectors};
use crate::store::{EntityReads, NodeReads, Store, TopicReads, Tx, VectorReads};
use crate::tree::{ExtractiveSummariser, Summariser};
use crate::types::{NodeId, SourceId, TreeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// Sub-directory of a store holding user-editable content (the entity registry).
pub const CONTENT_DIR: &str = "content";

/// How to open a store. `Default` = SPEC defaults, extractive summaries, no dense model,
/// the system clock.
#[derive(Clone)]
pub struct OpenOptions {
    /// Sealing and chunking thresholds.
    pub config: Config,
    /// Writes summary texts.
    pub summariser: Arc<dyn Summariser>,
    /// The dense model; `None` = lexical only.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Wall clock.
    pub clock: Arc<dyn Clock>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            config: Config::default(),
            summariser: Arc::new(ExtractiveSummariser),
            embedder: None,
            clock: Arc::new(SystemClock),
        }
    }
}

impl OpenOptions {
    /// Default options with the dense model from `model_dir`, or from the discovered folder
    /// (`$MEMTREE_MODEL_DIR`, else `models/` of the source tree) when `None`. The flag says
    /// whether a model was found: without one the options are lexical only, and the caller
    /// tells its user (library code never prints).
    pub fn with_model(model_dir: Option<&Path>) -> Result<(OpenOptions, bool)> {
        let mut opts = OpenOptions::default();
        let paths = match model_dir {
            Some(d) => Some(crate::embed::ModelPaths::new(d)),
            None => crate::embed::ModelPaths::discover(),
        };
        let Some(paths) = paths else { return Ok((opts, false)) };
        opts.embedder = Some(Arc::new(crate::embed::FastEmbedder::load(&paths)?));
        Ok((opts, true))
    }
}

/// The default store: `memtree/` under the platform's data directory, if it has one.
pub fn default_store_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("memtree"))
}

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
        let vecs = embed_nodes(&tx, emb.as_ref(), &missing)?;
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
        let cfg = self.opts.config.clone();
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
        let drafts = doc.into_drafts(&self.opts.config, self.now_ms())?;
        let report = self.write(|b| {
            b.report.removed += drop_source(b, &source)?;
            crate::crash::point("replace_dropped");
            for d in drafts {
                b.append_leaf(d)?;
            }
            let tree = TreeId::for_source(&source);
            b.tx.upsert_source(
                &crate::store::SourceRow {
                    source_id: source.clone(),
                    source_kind: crate::types::SourceKind::Document,
                    provider: provider.clone(),
                    title: Some(title.clone()),
                },
                b.now_ms,
            )?;
            b.seal_level0(&[tree])
        })?;
        Ok(report)
    }

    /// Delete a source with all its nodes, entity mentions, edges and vectors.
    pub fn delete_source(&mut self, source: &SourceId) -> Result<IngestReport> {
        let source = source.clone();
        self.write(|b| {
            b.report.removed += drop_source(b, &source)?;
            Ok(())
        })
    }

    /// Seal every non-empty level-0 buffer now (SPEC: only level 0 is force-flushed).
    pub fn flush(&mut self) -> Result<IngestReport> {
        let trees: Vec<TreeId> = self.store.open_leaf_buffers()?.into_iter().map(|t| t.0).collect();
        if trees.is_empty() {
            return Ok(IngestReport::default());
        }
        self.write(|b| b.seal_level0(&trees))
    }

    /// Seal the level-0 buffers whose oldest item was appended more than the flush age ago
    /// on the wall clock. Runs at the start of every write; a host may also call it on a
    /// timer.
    pub fn flush_due(&mut self) -> Result<IngestReport> {
        let due = self.due_buffers(self.now_ms())?;
        if due.is_empty() {
            return Ok(IngestReport::default());
        }
        self.write(|b| b.seal_level0(&due))
    }

    /// Trees whose level-0 buffer's oldest item was appended at least the flush age before
    /// `now` (wall clock).
    fn due_buffers(&self, now: i64) -> Result<Vec<TreeId>> {
        let age = self.opts.config.flush_age_ms;
        Ok(self
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
        let now = self.now_ms();
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
            let (report, added, dropped) = batch.finish();
            let vecs = match &view.opts.embedder {
                Some(emb) => embed_nodes(&tx, emb.as_ref(), &added)?,
                None => Vec::new(),
            };
            let docs = index_rows(&tx, &added)?;
            crate::crash::point("store_commit");
            let g = tx.commit()?;
            Ok::<_, Error>((report, dropped, vecs, docs, g))
        })();
        let (report, dropped, vecs, docs, g) = match result {
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
            for t in &dropped {
                self.index.delete_tree(t);
            }
            for (node, tree, entities, topics) in &docs {
                self.index.add(&IndexDoc { node, tree, entities, topics })?;
            }
            self.index.commit(g)
        })();
        if let Err(e) = indexed {
            let _ = self.index.rollback();
            return Err(e);
        }
        crate::crash::point("after_index_commit");
        if dropped.is_empty() {
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
        Ok(report)
    }

    fn reload_vectors(&mut self) -> Result<()> {
        let Some(emb) = self.view.opts.embedder.clone() else { return Ok(()) };
        let m = load_vectors(&self.view.store, emb.as_ref())?;
        self.view.derived_mut().set_vectors(Some(m));
        Ok(())
    }

    /// Store or update a `memory_recall` fact; true when it was new.
    pub fn recall_put(&mut self, namespace: &str, key: &str, content: &str) -> Result<bool> {
        let now = self.now_ms();
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

/// Delete a source's rows inside the batch; returns how many leaves went.
fn drop_source(b: &mut WriteBatch<'_, '_>, source: &SourceId) -> Result<usize> {
    let tree = TreeId::for_source(source);
    let nodes = b.tx.tree_nodes(&tree)?;
    if nodes.is_empty() {
        return Ok(0);
    }
    let leaves = nodes.iter().filter(|n| n.is_leaf()).count();
    let ids: Vec<NodeId> = nodes.into_iter().map(|n| n.node_id).collect();
    b.tx.detach_entities(&ids)?;
    b.tx.delete_source_rows(source)?;
    b.dropped_trees.push(tree);
    Ok(leaves)
}

type IndexRow = (crate::store::NodeRow, crate::store::TreeRow, Vec<crate::types::EntityId>, Vec<String>);

/// Read back what the index needs for `ids` (inside the transaction, before commit).
fn index_rows(tx: &Tx<'_>, ids: &[NodeId]) -> Result<Vec<IndexRow>> {
    let mut trees: HashMap<TreeId, crate::store::TreeRow> = HashMap::new();
    let mut out = Vec::with_capacity(ids.len());
    for n in tx.nodes(ids)? {
        let tree = match trees.get(&n.tree_id) {
            Some(t) => t.clone(),
            None => {
                let t = tx.tree(&n.tree_id)?.ok_or_else(|| Error::Corrupt {
                    what: format!("trees[{}]", n.tree_id),
                    reason: "node without a tree".into(),
                })?;
                trees.insert(n.tree_id.clone(), t.clone());
                t
            }
        };
        let entities = tx.node_entities(&n.node_id)?;
        let topics = tx.topics(&n.node_id)?;
        out.push((n, tree, entities, topics));
    }
    Ok(out)
}

/// Embed the nodes `ids` in batches and store their vectors in `tx`.
fn embed_nodes(tx: &Tx<'_>, emb: &dyn Embedder, ids: &[NodeId]) -> Result<Vec<(NodeId, Vec<f32>)>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(256) {
        crate::crash::point("embed_batch");
        let rows = tx.nodes(chunk)?;
        let texts: Vec<&str> = rows.iter().map(|r| r.content.as_str()).collect();
        let vecs = emb.embed(&texts)?;
        if vecs.len() != rows.len() {
            return Err(Error::model(format!("asked for {} vectors, got {}", rows.len(), vecs.len())));
        }
        for (r, v) in rows.iter().zip(vecs) {
            tx.put_vector(&r.node_id, emb.name(), &v)?;
            out.push((r.node_id.clone(), v));
        }
    }
    Ok(out)
}
