//! `Memory`: one store directory (SQLite record, tantivy index, content root), its single
//! writer, and the derived in-memory state (gazetteer, vector matrix) kept in step with it.

use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::embed::{Embedder, VectorMatrix};
use crate::entities::{Extractor, Gazetteer, Registry};
use crate::error::{Error, Result};
use crate::index::{FullTextIndex, IndexDoc};
use crate::ingest::{Document, IngestReport, Item, WriteBatch};
use crate::store::{EntityReads, NodeReads, StatsReads, Store, StoreCounts, TopicReads, Tx, VectorReads};
use crate::tree::{ExtractiveSummariser, Summariser};
use crate::types::{NodeId, SourceId, TreeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// Sizes and counts for `memtree stats`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Stats {
    /// Row counts.
    #[serde(flatten)]
    pub counts: StoreCounts,
    /// Bytes of the SQLite database (with its WAL).
    pub store_bytes: u64,
    /// Bytes of the tantivy index.
    pub index_bytes: u64,
    /// Documents in the full-text index.
    pub index_docs: u64,
    /// The dense model in use, if any.
    pub embedder: Option<String>,
}

/// An open memory store: the single writer and its readers.
pub struct Memory {
    dir: PathBuf,
    opts: OpenOptions,
    store: Store,
    index: FullTextIndex,
    extractor: Extractor,
    gazetteer: Gazetteer,
    vectors: Option<VectorMatrix>,
    opened: OpenReport,
    registry: Registry,
    /// Registry aliases as a gazetteer, with the vault fingerprint they were read at: the
    /// vault is the source of truth, so a hand edit is picked up at the next lookup.
    aliases: RefCell<((usize, u128, u64), Gazetteer)>,
    /// The vault fingerprint the write-path gazetteer was built at.
    gazetteer_fp: (usize, u128, u64),
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
        let mut mem = Memory {
            registry,
            aliases: RefCell::new(((usize::MAX, 0, 0), Gazetteer::new())),
            gazetteer_fp: (usize::MAX, 0, 0),
            dir,
            vectors: opts.embedder.as_ref().map(|e| VectorMatrix::new(e.dim())),
            opts,
            store,
            index,
            extractor: Extractor::new(),
            gazetteer: Gazetteer::new(),
            opened: OpenReport::default(),
        };
        mem.load_gazetteer()?;
        if mem.index.committed_generation()? != Some(mem.store.generation()?) {
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

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.opts.config
    }

    /// The store (read access for retrieval).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The full-text index.
    pub fn index(&self) -> &FullTextIndex {
        &self.index
    }

    /// The gazetteer of known surfaces.
    pub fn gazetteer(&self) -> &Gazetteer {
        &self.gazetteer
    }

    /// The entity extractor.
    pub fn extractor(&self) -> &Extractor {
        &self.extractor
    }

    /// The dense model and the node vectors, when a model is configured.
    pub fn dense(&self) -> Option<(&dyn Embedder, &VectorMatrix)> {
        Some((self.opts.embedder.as_deref()?, self.vectors.as_ref()?))
    }

    /// The wall clock.
    pub fn now_ms(&self) -> i64 {
        self.opts.clock.now_ms()
    }

    /// The entity registry (Markdown files under the content root).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Run `f` with the registry's aliases as a gazetteer, re-reading the vault first when
    /// its files changed since the last look.
    pub fn with_aliases<T>(&self, f: impl FnOnce(&Gazetteer) -> T) -> T {
        let fp = self.registry.fingerprint();
        let mut cache = self.aliases.borrow_mut();
        if cache.0 != fp {
            *cache = (fp, alias_gazetteer(&self.registry));
        }
        f(&cache.1)
    }

    fn load_gazetteer(&mut self) -> Result<()> {
        self.gazetteer_fp = self.registry.fingerprint();
        let mut g = alias_gazetteer(&self.registry);
        for e in self.store.all_entities()? {
            g.insert(e.kind, &e.surface, &e.entity_id);
            // The id's own surface too: "person:caroline" is findable as "caroline".
            if let Some((_, s)) = e.entity_id.as_str().split_once(':') {
                g.insert(e.kind, s, &e.entity_id);
            }
        }
        self.gazetteer = g;
        Ok(())
    }

    /// Load stored vectors into the matrix and embed nodes that have none; returns how
    /// many were embedded.
    fn load_vectors(&mut self) -> Result<usize> {
        let Some(emb) = self.opts.embedder.clone() else { return Ok(0) };
        let mut m = VectorMatrix::new(emb.dim());
        self.store.for_each_vector(emb.name(), |id, v| m.upsert(id.as_str(), &v))?;
        self.vectors = Some(m);
        let missing = self.store.nodes_missing_vectors(emb.name())?;
        if missing.is_empty() {
            return Ok(0);
        }
        let n = missing.len();
        let tx = self.store.begin()?;
        let vecs = embed_nodes(&tx, emb.as_ref(), &missing)?;
        let g = tx.commit()?;
        // The index did not change, but its payload must track the generation.
        self.index.commit(g)?;
        if let Some(m) = self.vectors.as_mut() {
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
            self.store.trees()?.into_iter().map(|t| (t.tree_id.clone(), t)).collect();
        let store = &self.store;
        let index = &mut self.index;
        store.for_each_node(|n| {
            let Some(tree) = trees.get(&n.tree_id) else { return Ok(()) };
            let entities = store.node_entities(&n.node_id)?;
            let topics = store.topics(&n.node_id)?;
            index.add(&IndexDoc { node: &n, tree, entities: &entities, topics: &topics })
        })?;
        let g = self.store.generation()?;
        self.index.commit(g)
    }

    /// `memtree reindex`: rebuild the full-text index and re-embed every node.
    pub fn reindex(&mut self) -> Result<()> {
        if let Some(emb) = self.opts.embedder.clone() {
            let tx = self.store.begin()?;
            tx.clear_vectors()?;
            tx.commit()?;
            self.vectors = Some(VectorMatrix::new(emb.dim()));
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
        let drafts = doc.into_drafts(&self.opts.config)?;
        let report = self.write(|b| {
            b.report.removed += drop_source(b, &source)?;
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
        if self.registry.fingerprint() != self.gazetteer_fp {
            self.load_gazetteer()?;
        }
        let now = self.now_ms();
        let due = self.due_buffers(now)?;
        let result = (|| {
            let tx = self.store.begin()?;
            let mut batch = WriteBatch::new(
                &tx,
                &self.opts.config,
                self.opts.summariser.as_ref(),
                &self.extractor,
                &mut self.gazetteer,
                now,
            );
            batch.seal_level0(&due)?;
            f(&mut batch)?;
            let (report, added, dropped) = batch.finish();
            let vecs = match &self.opts.embedder {
                Some(emb) => embed_nodes(&tx, emb.as_ref(), &added)?,
                None => Vec::new(),
            };
            let docs = index_rows(&tx, &added)?;
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
        // The store has committed: the index follows. If this fails the index is behind and
        // the next open rebuilds it.
        for t in &dropped {
            self.index.delete_tree(t);
        }
        for (node, tree, entities, topics) in &docs {
            self.index.add(&IndexDoc { node, tree, entities, topics })?;
        }
        self.index.commit(g)?;
        if dropped.is_empty() {
            if let Some(m) = self.vectors.as_mut() {
                for (id, v) in vecs {
                    m.upsert(id.as_str(), &v);
                }
            }
        } else {
            // A replace or delete removed nodes: reload the derived state from the record.
            self.reload_vectors()?;
            self.load_gazetteer()?;
        }
        Ok(report)
    }

    fn reload_vectors(&mut self) -> Result<()> {
        let Some(emb) = self.opts.embedder.clone() else { return Ok(()) };
        let mut m = VectorMatrix::new(emb.dim());
        self.store.for_each_vector(emb.name(), |id, v| m.upsert(id.as_str(), &v))?;
        self.vectors = Some(m);
        Ok(())
    }

    /// Store or update a `memory_recall` fact; true when it was new.
    pub fn recall_put(&mut self, namespace: &str, key: &str, content: &str) -> Result<bool> {
        let now = self.now_ms();
        let tx = self.store.begin()?;
        let created = tx.put_recall(namespace, key, content, now)?;
        tx.commit_record_only()?;
        Ok(created)
    }

    /// Forget a `memory_recall` fact; true when it existed.
    pub fn recall_forget(&mut self, namespace: &str, key: &str) -> Result<bool> {
        let tx = self.store.begin()?;
        let existed = tx.forget_recall(namespace, key)?;
        tx.commit_record_only()?;
        Ok(existed)
    }

    /// Counts and sizes.
    pub fn stats(&self) -> Result<Stats> {
        let db = self.store.path();
        let wal = PathBuf::from(format!("{}-wal", db.display()));
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        Ok(Stats {
            counts: self.store.counts()?,
            store_bytes: size(db) + size(&wal),
            index_bytes: self.index.size_on_disk(&self.dir),
            index_docs: self.index.searcher().num_docs(),
            embedder: self.opts.embedder.as_ref().map(|e| e.name().to_string()),
        })
    }
}

/// The registry's names (display name, aliases, handle values) → their entity ids.
/// Unreadable files are skipped: the vault must never stop the engine.
fn alias_gazetteer(registry: &Registry) -> Gazetteer {
    let mut g = Gazetteer::new();
    for r in registry.all().unwrap_or_default() {
        g.insert(r.kind, &r.display_name, &r.id);
        for a in &r.aliases {
            g.insert(r.kind, a, &r.id);
        }
        for h in &r.handles {
            g.insert(r.kind, &h.value, &r.id);
        }
    }
    g
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
