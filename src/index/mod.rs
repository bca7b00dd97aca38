//! The full-text index: the only module that speaks tantivy. Leaves and summaries are
//! documents; content is BM25-searchable, entities and topics are exact-term posting lists.
//! The index is derived from the store: its commits carry the store generation they reflect.

mod identifiers;
mod node_ids;
mod paced;
mod schema;
mod search;

pub use schema::Fields;
pub use search::{IndexSearcher, LevelFilter, NodeDoc, SearchFilter};

use crate::error::{Error, Result};
use crate::store::{NodeRow, TreeRow};
use crate::types::{EntityId, NodeId, NodeKind, TreeId};
use node_ids::NodeIdCache;
use paced::{PacedDoc, Pacer};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tantivy::schema::Term;
use tantivy::{DateTime, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument};

/// Sub-directory of a store holding the tantivy index.
pub const INDEX_DIR: &str = "index";

/// Payload prefix of our commits: `memtree-v<schema>:<generation>`.
const PAYLOAD_PREFIX: &str = "memtree-v";

/// The read side of the index: cheap to clone; clones share one reader, so a commit by
/// the writer that owns one of them is visible to all, and one cache of per-segment node ids.
#[derive(Clone)]
pub struct IndexHandle {
    index: Index,
    reader: IndexReader,
    fields: Fields,
    version: u32,
    node_ids: NodeIdCache,
    /// The store generation of the commit the shared reader was last reloaded at: a reader
    /// compares it with the store's to know when another process's commit is to be picked up.
    loaded: Arc<AtomicU64>,
}

/// The index of a store that this process may write: its read side, and the writer opened
/// for each write ([`FullTextIndex::begin`]), so that between writes no process holds
/// tantivy's writer lock.
pub struct FullTextIndex {
    handle: IndexHandle,
    store_dir: PathBuf,
}

/// One write's index writer (tantivy's `IndexWriter`, which holds tantivy's own writer lock):
/// opened under the store's writer lock and closed before it is released. Dropped without
/// [`IndexWrite::commit`], whatever was queued is discarded.
pub struct IndexWrite {
    handle: IndexHandle,
    writer: IndexWriter<PacedDoc>,
    /// What the writer has queued and its thread not yet indexed.
    pacer: Pacer,
}

/// What one node contributes to the index.
pub struct IndexDoc<'a> {
    /// The node.
    pub node: &'a NodeRow,
    /// Its tree.
    pub tree: &'a TreeRow,
    /// Its entities.
    pub entities: &'a [EntityId],
    /// Its topics.
    pub topics: &'a [String],
}

/// Memory budget of the index writer's one indexing thread (tantivy's minimum is 15 MB; its
/// term table and arena grow into it as documents arrive, they are not allocated up front).
/// Only a write of more than ~10 MB of text reaches it (a segment is then flushed and the
/// next one started); 64 MB made a 50 MB message's import hold ~66 MB here at its peak, beside
/// the model (issue 28).
const WRITER_BUDGET: usize = 32_000_000;

/// How long a write retries tantivy's writer lock once it holds the store's (see
/// [`FullTextIndex::begin`]).
const TANTIVY_LOCK_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

impl FullTextIndex {
    /// Open the index under `store_dir`, creating it when absent. An index whose files are
    /// unreadable or whose schema differs is wiped and recreated empty: it is derived data,
    /// and [`IndexHandle::committed_generation`] then reports it as behind the store. The
    /// caller holds the store's writer lock (the wipe is a write).
    pub fn open(store_dir: &Path) -> Result<FullTextIndex> {
        let (schema, fields) = schema::build()?;
        let version = commit_version()?;
        let dir = store_dir.join(INDEX_DIR);
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let index = match Self::open_existing(&dir, &schema) {
            Some(index) => index,
            None => {
                // Derived data: wipe whatever is there and start over.
                std::fs::remove_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
                std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
                Index::create_in_dir(&dir, schema)?
            }
        };
        let handle = IndexHandle::over(index, fields, version)?;
        Ok(FullTextIndex { handle, store_dir: store_dir.to_path_buf() })
    }

    fn open_existing(dir: &Path, schema: &tantivy::schema::Schema) -> Option<Index> {
        if !dir.join("meta.json").exists() {
            return None;
        }
        let index = Index::open_in_dir(dir).ok()?;
        (index.schema() == *schema).then_some(index)
    }

    /// The read side (shares this writer's reader).
    pub fn handle(&self) -> &IndexHandle {
        &self.handle
    }

    /// Open the writer for one write. The caller holds the store's writer lock, so tantivy's
    /// own lock is free unless a process of an older build holds the store open, or the
    /// previous writer's lock file is still being let go: the previous holder of the store's
    /// lock may release it a moment before tantivy's (its writer's last references drop after
    /// it), so a lock failure is retried for a short grace period rather than failing a write
    /// that waited its turn.
    pub fn begin(&self) -> Result<IndexWrite> {
        let start = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(5);
        loop {
            match self.handle.index.writer_with_num_threads(1, WRITER_BUDGET) {
                Ok(writer) => {
                    return Ok(IndexWrite { handle: self.handle.clone(), writer, pacer: Pacer::default() });
                }
                Err(tantivy::TantivyError::LockFailure(..)) if start.elapsed() < TANTIVY_LOCK_GRACE => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(100));
                }
                Err(tantivy::TantivyError::LockFailure(..)) => {
                    let waited_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                    return Err(Error::Locked { path: self.store_dir.clone(), waited_ms });
                }
                Err(other) => return Err(Error::Index(other)),
            }
        }
    }
}

impl IndexWrite {
    /// Queue a node for indexing (visible after [`IndexWrite::commit`]), once the indexing
    /// thread has taken enough of what is queued (a few MB of text at most wait; `paced`).
    pub fn add(&mut self, d: &IndexDoc<'_>) -> Result<()> {
        let f = &self.handle.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.node_id, d.node.node_id.as_str());
        doc.add_text(f.node_kind, NodeKind::of_level(d.node.level).as_str());
        doc.add_text(f.tree_id, d.node.tree_id.as_str());
        doc.add_text(f.tree_scope, &d.tree.tree_scope);
        doc.add_text(f.source_kind, d.tree.source_kind.as_str());
        doc.add_u64(f.level, u64::from(d.node.level));
        doc.add_text(f.content, d.node.ranked_text(d.tree.source_kind));
        for e in d.entities {
            doc.add_text(f.entities, e.as_str());
        }
        for t in d.topics {
            doc.add_text(f.topics, t);
        }
        doc.add_date(f.time_start, DateTime::from_timestamp_millis(d.node.time_start_ms));
        doc.add_date(f.time_end, DateTime::from_timestamp_millis(d.node.time_end_ms));
        // The second clock: derived from the row as the store derives it (`NodeRow::spoken`).
        for t in d.node.spoken() {
            doc.add_date(f.spoken_since, DateTime::from_timestamp_millis(t.since_ms));
            doc.add_date(f.spoken_until, DateTime::from_timestamp_millis(t.until_ms));
        }
        self.writer.add_document(self.pacer.pace(doc, d.node.content.len()))?;
        Ok(())
    }

    /// Queue the deletion of every node of a tree.
    pub fn delete_tree(&mut self, id: &TreeId) {
        self.writer.delete_term(Term::from_field_text(self.handle.fields.tree_id, id.as_str()));
    }

    /// Queue the deletion of one node's document.
    pub fn delete_node(&mut self, id: &NodeId) {
        self.writer.delete_term(Term::from_field_text(self.handle.fields.node_id, id.as_str()));
    }

    /// Merge away the deleted documents of every segment that has some, so that no term of
    /// a deleted document stays in a term dictionary (a forget must leave no trace of the
    /// words it removed; a plain delete only hides them). Costs a rewrite of those segments.
    pub fn purge_deleted(&mut self) -> Result<()> {
        // From the committed metas, not a searcher: merges finished since the reader last
        // reloaded have replaced segments a searcher still names.
        let ids: Vec<tantivy::index::SegmentId> = self
            .handle
            .index
            .searchable_segment_metas()?
            .iter()
            .filter(|m| m.num_deleted_docs() > 0)
            .map(tantivy::index::SegmentMeta::id)
            .collect();
        if !ids.is_empty() {
            self.writer.merge(&ids).wait()?;
            self.handle.reader.reload()?;
        }
        Ok(())
    }

    /// Queue the deletion of everything (before a rebuild).
    pub fn delete_all(&mut self) -> Result<()> {
        self.writer.delete_all_documents()?;
        Ok(())
    }

    /// Commit what is queued, recording the store generation it reflects, and make it
    /// visible to searchers.
    pub fn commit(&mut self, generation: u64) -> Result<()> {
        let mut prepared = self.writer.prepare_commit()?;
        prepared.set_payload(&format!("{PAYLOAD_PREFIX}{}:{generation}", self.handle.version));
        crate::crash::point("index_commit");
        prepared.commit()?;
        self.handle.reader.reload()?;
        self.handle.loaded.fetch_max(generation, Ordering::AcqRel);
        Ok(())
    }

    /// Close the writer, waiting for the segment merges its commits started, so that no
    /// thread of this process still writes index files once the store's lock is released.
    pub fn close(self) -> Result<()> {
        self.writer.wait_merging_threads()?;
        Ok(())
    }
}

impl IndexHandle {
    /// Open the index under `store_dir` for reading only, without the writer lock: for a
    /// second process reading a store another process writes. Never repairs or creates.
    pub fn open_read_only(store_dir: &Path) -> Result<IndexHandle> {
        let (schema, fields) = schema::build()?;
        let version = commit_version()?;
        let dir = store_dir.join(INDEX_DIR);
        let index = FullTextIndex::open_existing(&dir, &schema).ok_or_else(|| Error::Corrupt {
            what: format!("full-text index at {}", dir.display()),
            reason: "missing, unreadable or of another schema; open the store once with a writer to rebuild it".into(),
        })?;
        IndexHandle::over(index, fields, version)
    }

    fn over(index: Index, fields: Fields, version: u32) -> Result<IndexHandle> {
        // Not one of tantivy's own: every handle registers it before a document or a question
        // is analysed.
        index.tokenizers().register(identifiers::CONTENT_TOKENIZER, identifiers::content_analyzer());
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        let handle =
            IndexHandle { index, reader, fields, version, node_ids: NodeIdCache::default(), loaded: Arc::default() };
        handle.loaded.store(handle.committed_generation()?.unwrap_or(0), Ordering::Release);
        Ok(handle)
    }

    /// The store generation of the last commit, or `None` for an empty/foreign index.
    pub fn committed_generation(&self) -> Result<Option<u64>> {
        let metas = self.index.load_metas()?;
        let want = format!("{PAYLOAD_PREFIX}{}:", self.version);
        Ok(metas.payload.as_deref().and_then(|p| p.strip_prefix(want.as_str())).and_then(|g| g.parse().ok()))
    }

    /// Pick up the last commit when the shared reader is behind store generation
    /// `generation` (another process wrote). The payload is read before the reload, so the
    /// generation recorded is never ahead of what the reader shows; a store commit whose index
    /// commit has not landed yet is picked up by a later call.
    pub fn catch_up(&self, generation: u64) -> Result<()> {
        let loaded = self.loaded.load(Ordering::Acquire);
        if loaded >= generation {
            return Ok(());
        }
        let on_disk = self.committed_generation()?.unwrap_or(0);
        if on_disk <= loaded {
            return Ok(());
        }
        self.reader.reload()?;
        self.loaded.fetch_max(on_disk, Ordering::AcqRel);
        Ok(())
    }

    /// A searcher over the last commit.
    pub fn searcher(&self) -> IndexSearcher {
        IndexSearcher::new(self.reader.searcher(), self.fields, self.index.clone(), self.node_ids.clone())
    }

    /// Size of the index directory on disk, in bytes.
    pub fn size_on_disk(&self, store_dir: &Path) -> u64 {
        dir_size(&store_dir.join(INDEX_DIR))
    }
}

/// What an index commit's payload names besides the store generation: the schema's version,
/// the spoken-time rules' (`time::SPOKEN_RULES`: the index's `spoken_since` /
/// `spoken_until` are derived by them) and a mail's own words' (`text::OWN_WORDS_RULES`: a
/// mail's `content` field holds them), so an index of another schema or other rules reports
/// no generation of the store and is rebuilt from it.
fn commit_version() -> Result<u32> {
    Ok(schema::schema_version()? * 10_000 + crate::text::OWN_WORDS_RULES * 100 + crate::time::SPOKEN_RULES)
}

/// Total size of the files under `dir` (0 when unreadable).
pub fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .filter_map(|e| e.ok())
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
