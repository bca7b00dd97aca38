//! `Memory`: one store directory (SQLite record, tantivy index, content root) and a writer
//! of it. This file is the coordinator: opening, and the write entry points, each one
//! [`WriteBatch`] run through `commit` (the writer lock, the transaction, then the index, then
//! the derived state); `upkeep` keeps the index and the in-memory state in step with the
//! record; `lock` is the writer lock that lets several writers take turns.

mod archive;
mod background;
mod commit;
mod forget;
mod import;
mod lock;
mod note_identity;
mod sync;
mod upkeep;

pub use archive::{
    ARCHIVE_FORMAT, ARCHIVE_VERSION, Counts as ArchiveCounts, ExportFilter, ExportReport, RestoreOptions, RestoreReport,
};
pub use background::{BackgroundEmbedder, EmbedEvent, EmbedHook, EmbedStatus};
pub use forget::{Forget, ForgetReceipt};
pub use import::{ImportOptions, ImportSummary};
pub use sync::SyncReport;

use crate::derived::{Derived, WriteGazetteer};
use crate::embed::VectorMatrix;
use crate::entities::{Registry, VaultFingerprint};
use crate::error::{Error, Result};
use crate::index::FullTextIndex;
use crate::ingest::{Document, DocumentReport, IngestReport, Item};
use crate::options::{CONTENT_DIR, Embedding, OpenOptions};
use crate::reader::MemoryReader;
use crate::shared::Shared;
use crate::store::{NodeReads, NoteRootReads, SourceRow, StatsReads, Store};
use crate::types::{EntityKind, SourceId, SourceKind, TreeId};
use std::path::Path;
use std::sync::Arc;

/// What `open` had to repair.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct OpenReport {
    /// The full-text index was behind the store (or unreadable) and was rebuilt.
    pub index_rebuilt: bool,
    /// Nodes that had no vector and were embedded.
    pub vectors_added: usize,
}

/// An open memory store: a writer, with its own read side ([`Memory::as_reader`]). Several
/// may be open on one store (in one process or several: the assistant's MCP server and the
/// user's import): each write takes the store's writer lock for its own length, waiting up to
/// `OpenOptions::lock_timeout` for another writer, and first catches up with what the others
/// committed. Between writes a `Memory` holds no lock.
pub struct Memory {
    /// What this writer and its readers hold in common (options, index reader, registry,
    /// derived state).
    shared: Arc<Shared>,
    /// The write connection: every transaction, and the writer's own reads around them.
    store: Store,
    /// This handle's read side, on its own connection: what the read modes take.
    view: MemoryReader,
    index: FullTextIndex,
    /// The write path's gazetteer, equal to a reload from the store after every write (a
    /// write adds the names of the entities it creates and takes away those of the entities
    /// it deletes); the readers' shared copy takes the same changes after each commit.
    gazetteer: WriteGazetteer,
    /// The vault fingerprint the write-path gazetteer was built at.
    gazetteer_fp: VaultFingerprint,
    /// The store generation the write path's state (the gazetteer) reflects; a write that
    /// finds the store further on reloads it first.
    synced: u64,
    opened: OpenReport,
}

/// What a document carries beyond [`Document`] when a notes folder is synced.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DocumentExtras<'a> {
    /// Front-matter tags: leaf tags and `hashtag:` entities.
    pub tags: &'a [String],
    /// Front-matter aliases: leaf tags (the engine has no entity for a note to alias).
    pub aliases: &'a [String],
    /// BLAKE3 of the note's bytes, hex.
    pub hash: Option<&'a str>,
}

impl Memory {
    /// Open (or create) the store in `dir` with default options.
    pub fn open(dir: impl AsRef<Path>) -> Result<Memory> {
        Self::open_with(dir, OpenOptions::default())
    }

    /// Open (or create) the store in `dir`. Repairs a full-text index that is behind the
    /// store (a crash between the two commits) and embeds nodes that lack vectors. Holds the
    /// writer lock while it does (waiting for another writer like any write), not after.
    pub fn open_with(dir: impl AsRef<Path>, opts: OpenOptions) -> Result<Memory> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(dir.join(CONTENT_DIR)).map_err(|e| Error::io(&dir, e))?;
        // Creating the index, migrating the record and repairing are writes.
        let _guard = lock::acquire(&dir, opts.lock_timeout)?;
        let index = FullTextIndex::open(&dir)?;
        let store = Store::open(&dir)?;
        let registry = Registry::open(&dir.join(CONTENT_DIR))?;
        let gazetteer_fp = registry.fingerprint();
        let gazetteer = WriteGazetteer::load(&store, &registry)?;
        let generation = store.generation()?;
        let vectors = opts.embedder.as_ref().map(|e| VectorMatrix::new(e.dim()));
        let derived = Derived::new(gazetteer.gazetteer().clone(), vectors, generation);
        let shared = Arc::new(Shared::new(dir, opts, index.handle().clone(), registry, derived));
        let view = MemoryReader::new(Arc::clone(&shared), Store::open_read_only(&shared.dir)?);
        let mut mem = Memory {
            shared,
            store,
            view,
            index,
            gazetteer,
            gazetteer_fp,
            synced: generation,
            opened: OpenReport::default(),
        };
        let mut iw = mem.index.begin()?;
        mem.opened.index_rebuilt = mem.repair_index(&mut iw)?;
        mem.adopt_model(&mut iw)?;
        mem.reload_vectors()?;
        if mem.shared.opts.embedding == Embedding::WithEachWrite {
            mem.opened.vectors_added = mem.embed_missing(&mut iw)?;
        }
        iw.close()?;
        Ok(mem)
    }

    /// This store's read side, which every read mode takes: a writer reads through its own
    /// connection under the same snapshot rules as any reader.
    pub fn as_reader(&self) -> &MemoryReader {
        &self.view
    }

    /// What `open` repaired.
    pub fn open_report(&self) -> &OpenReport {
        &self.opened
    }

    /// Append chat messages and e-mails. Validates every item first (a bad item fails the
    /// whole call and writes nothing), then writes them in one transaction.
    pub fn ingest(&mut self, items: impl IntoIterator<Item = Item>) -> Result<IngestReport> {
        let cfg = self.shared.opts.config.clone();
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
    /// atomically. Its leaves are sealed at once: a document arrives complete. What a forget
    /// holds back (the source, a range, a leaf's text) is left out, counted in
    /// `IngestReport::forgotten`.
    /// A note the app writes as `doc:<path in the vault>` that a notes import stored from
    /// that file under another id (named from another root) is written to that source: see
    /// [`Memory::write_document`], which also says which source that was.
    pub fn ingest_document(&mut self, doc: Document) -> Result<IngestReport> {
        Ok(self.write_document(doc)?.report)
    }

    /// [`Memory::ingest_document`], saying which source the document is stored under: its
    /// own id, unless that is not stored and it is `doc:<path>` naming a note file that a
    /// notes import stored under another id: the file at `<path>` under a folder notes were
    /// imported relative to (the innermost first), else the one stored note file under such a
    /// folder that ends with `<path>` (two or more: none, it cannot be told which). So the
    /// app's note and the vault's file are one source whichever came first and whichever
    /// folder was synced.
    pub fn write_document(&mut self, mut doc: Document) -> Result<DocumentReport> {
        if let Some((id, file)) = self.app_note_file(&doc.source_id)? {
            doc.source_id = id;
            // The file stays recorded: the next sync compares the note with it.
            doc.source_ref.get_or_insert(file);
        }
        let source_id = doc.source_id.clone();
        let report = self.replace_document(doc, &DocumentExtras::default())?;
        Ok(DocumentReport { source_id, report })
    }

    /// The note (id, file) a document written as `id` is: `id` itself when stored with its
    /// file, else the note stored from the file `id` names under a note root, else `id` with
    /// that file when it is on disk only (the app wrote the file too: the next sync matches
    /// the note by it). A sync finds the file of a note written without one the same way
    /// (`note_identity::identify`).
    fn app_note_file(&self, id: &SourceId) -> Result<Option<(SourceId, String)>> {
        let Some(rel) = note_identity::id_path(id.as_str()) else { return Ok(None) };
        if self.store.has_source(id.as_str())? {
            // Its file stays its file (the app's write names none).
            return Ok(self.store.source_file(id.as_str())?.map(|f| (id.clone(), f)));
        }
        let roots = self.store.note_roots()?;
        let notes = self.store.note_hashes("doc:")?;
        let stored = |file: &str| notes.iter().find(|n| n.file.as_deref() == Some(file));
        for file in note_identity::under_roots(rel, &roots) {
            if let Some(n) = stored(&file) {
                return Ok(Some((n.id.as_str().into(), file)));
            }
            if std::path::Path::new(&file).is_file() {
                return Ok(Some((id.clone(), file)));
            }
        }
        let tail = note_identity::one_ending_with(rel, &roots, notes.iter().filter_map(|n| n.file.as_deref()));
        Ok(tail.and_then(stored).and_then(|n| n.file.clone().map(|f| (n.id.as_str().into(), f))))
    }

    /// [`Memory::ingest_document`] with what a Markdown note's front matter adds, and the
    /// content hash that the next sync compares.
    pub(crate) fn replace_document(&mut self, doc: Document, extras: &DocumentExtras<'_>) -> Result<IngestReport> {
        let source = doc.source_id.clone();
        let provider = doc.provider.clone();
        let title = doc.title.clone();
        let hash = extras.hash;
        let mut drafts = doc.into_drafts(&self.shared.opts.config, self.shared.now_ms())?;
        for d in &mut drafts {
            d.tags = extras.tags.iter().chain(extras.aliases).cloned().collect();
            // A front-matter tag is the note's `#tag`, as an inline one is: a hashtag entity.
            d.structured.extend(extras.tags.iter().map(|t| (EntityKind::Hashtag, t.clone())));
        }
        let report = self.write(|b| {
            b.drop_source(&source)?;
            crate::crash::point("replace_dropped");
            for d in drafts {
                b.append_leaf(d)?;
            }
            let tree = TreeId::for_source(&source);
            // Every leaf held back by a forget (the note, or all of it that is left, was
            // forgotten): no source without leaves is left behind.
            if b.tree_leaves(&tree)?.is_empty() {
                return b.remove_source_rows(&source);
            }
            b.upsert_source(&SourceRow {
                source_id: source.clone(),
                source_kind: SourceKind::Document,
                provider: provider.clone(),
                title: Some(title.clone()),
            })?;
            if let Some(h) = hash {
                b.set_source_hash(&source, h)?;
            }
            b.seal_level0(&[tree])
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
        let due = self.due_buffers(self.shared.now_ms())?;
        if due.is_empty() {
            return Ok(IngestReport::default());
        }
        self.write(|b| b.seal_level0(&due))
    }

    /// Store or update a `memory_recall` fact; true when it was new.
    pub fn recall_put(&mut self, namespace: &str, key: &str, content: &str) -> Result<bool> {
        let _guard = self.lock()?;
        let now = self.shared.now_ms();
        let tx = self.store.begin()?;
        let created = tx.put_recall(namespace, key, content, now)?;
        crate::crash::point("recall_commit");
        tx.commit_record_only()?;
        Ok(created)
    }

    /// Forget a `memory_recall` fact; true when it existed.
    pub fn recall_forget(&mut self, namespace: &str, key: &str) -> Result<bool> {
        let _guard = self.lock()?;
        let tx = self.store.begin()?;
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
