//! `MemoryReader`: the read side of a store — everything retrieval needs (a SQLite
//! connection, the index's reader, the gazetteer and the vectors) and nothing that writes.
//! A reader owns its SQLite connection and shares the rest of the store's state (`Shared`) with
//! the writer and the other readers of this process; `Memory::reader` hands out more for
//! other threads, and `MemoryReader::open` reads a store that another process writes.

use crate::config::Config;
use crate::derived::{Delta, Derived, alias_gazetteer};
use crate::embed::{Embedder, VectorMatrix};
use crate::entities::{Extractor, Gazetteer, Registry, VaultFingerprint};
use crate::error::{Error, Result};
use crate::index::IndexHandle;
use crate::options::{CONTENT_DIR, OpenOptions};
use crate::shared::Shared;
use crate::store::{SourceSummary, StatsReads, Store, StoreCounts, VectorReads};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};

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
    /// Nodes without a vector yet (with a model: deferred embedding still to run, or an
    /// interrupted one; `Memory::embed_pending` makes them). 0 without a model.
    pub vectors_pending: u64,
}

/// The dense model and the node vectors, held for one query.
pub struct Dense<'a> {
    /// The query embedder.
    pub embedder: &'a dyn Embedder,
    derived: RwLockReadGuard<'a, Derived>,
}

impl Dense<'_> {
    /// The node vectors.
    pub fn vectors(&self) -> &VectorMatrix {
        self.derived.vectors().expect("Dense is only built when vectors exist")
    }
}

/// A read handle on a store. `Send`, not `Sync`: one per thread (`Memory::reader`). Its own
/// SQLite connection; everything else is the store's [`Shared`] state.
pub struct MemoryReader {
    shared: Arc<Shared>,
    store: Store,
    /// Registry aliases as a gazetteer, with the vault fingerprint they were read at: the
    /// vault is the source of truth, so a hand edit is picked up at the next lookup.
    aliases: RefCell<(Option<VaultFingerprint>, Gazetteer)>,
}

impl MemoryReader {
    /// Open a store that another process may be writing, for reading only: no writer lock,
    /// no migration, no repair. The index must exist (a writer creates and repairs it).
    pub fn open(dir: impl AsRef<Path>, opts: OpenOptions) -> Result<MemoryReader> {
        let dir = dir.as_ref().to_path_buf();
        if !crate::options::store_exists(&dir) {
            return Err(Error::NoStore { dir });
        }
        let store = Store::open_read_only(&dir)?;
        let index = IndexHandle::open_read_only(&dir)?;
        let registry = Registry::open(&dir.join(CONTENT_DIR))?;
        let derived = store.read_snapshot(|| Derived::load(&store, &registry, opts.embedder.as_deref()))?;
        Ok(MemoryReader::new(Arc::new(Shared::new(dir, opts, index, registry, derived)), store))
    }

    /// A reader of `shared` through `store`, its own connection. Every reader catches up with
    /// commits it did not see (another process may write between any two reads); a writer in
    /// this process keeps the shared index reader and derived state current itself, so its
    /// own commits cost its readers nothing.
    pub(crate) fn new(shared: Arc<Shared>, store: Store) -> MemoryReader {
        MemoryReader { shared, store, aliases: RefCell::new((None, Gazetteer::new())) }
    }

    /// Another reader on the same store for another thread: its own SQLite connection,
    /// sharing this one's index reader and derived state.
    pub fn reader(&self) -> Result<MemoryReader> {
        Ok(MemoryReader::new(Arc::clone(&self.shared), Store::open_read_only(&self.shared.dir)?))
    }

    /// Run `f` in one SQLite read snapshot: every statement sees the same committed state,
    /// so a concurrent replace is wholly visible or not at all. A reader of another
    /// process's store first catches up with the writer's last commit.
    pub fn read<T>(&self, f: impl FnOnce(&MemoryReader) -> Result<T>) -> Result<T> {
        self.store.read_snapshot(|| {
            self.refresh()?;
            f(self)
        })
    }

    /// Catch up with a writer in another process: reload the index reader and the derived
    /// state when the store generation moved past what they reflect. Two generation reads
    /// when nothing moved (every commit of a writer in this process moves them itself).
    pub(crate) fn refresh(&self) -> Result<()> {
        let g = self.store.generation()?;
        self.shared.index.catch_up(g)?;
        if self.derived().generation() >= g {
            return Ok(());
        }
        // Loaded without holding the lock, so that other threads' queries go on meanwhile;
        // two threads may both load, and the later swap finds nothing left to do.
        //
        // When the other writer only added vectors (the common case: an import), only the
        // rows after the last one held are read, not all of them.
        let since = self.derived().mark();
        if let Some(emb) = self.shared.opts.embedder.as_deref()
            && let Some(delta) = Delta::read(&self.store, &self.shared.registry, emb, since)?
        {
            let mut d = self.derived_mut();
            if d.generation() < g && d.mark() == since {
                d.apply(delta);
            }
            return Ok(());
        }
        let fresh = Derived::load(&self.store, &self.shared.registry, self.shared.opts.embedder.as_deref())?;
        let mut d = self.derived_mut();
        if d.generation() < fresh.generation() {
            *d = fresh;
        }
        Ok(())
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The configuration in force.
    pub fn config(&self) -> &Config {
        &self.shared.opts.config
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &OpenOptions {
        &self.shared.opts
    }

    /// The store (read access for retrieval).
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The full-text index's read side.
    pub(crate) fn index(&self) -> &IndexHandle {
        &self.shared.index
    }

    /// The derived state (gazetteer, vectors), read-locked for as long as the guard lives.
    /// Hold one guard (this or [`MemoryReader::dense`]) per thread at a time: std's
    /// `RwLock` lets a waiting writer block new readers, so taking a second read guard
    /// while holding one can deadlock against the writer.
    pub(crate) fn derived(&self) -> RwLockReadGuard<'_, Derived> {
        self.shared.derived()
    }

    pub(crate) fn derived_mut(&self) -> RwLockWriteGuard<'_, Derived> {
        self.shared.derived_mut()
    }

    /// The entity extractor.
    pub(crate) fn extractor(&self) -> &Extractor {
        &self.shared.extractor
    }

    /// The dense model and the node vectors, when a model is configured (a read guard on
    /// the derived state: see [`MemoryReader::derived`]).
    pub(crate) fn dense(&self) -> Option<Dense<'_>> {
        let embedder = self.shared.opts.embedder.as_deref()?;
        let derived = self.derived();
        derived.vectors()?;
        Some(Dense { embedder, derived })
    }

    /// The wall clock.
    pub fn now_ms(&self) -> i64 {
        self.shared.now_ms()
    }

    /// The entity registry (Markdown files under the content root), for the tests; the
    /// engine reads it through [`MemoryReader::with_aliases`].
    #[cfg(test)]
    pub(crate) fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// Run `f` with the registry's aliases as a gazetteer, re-reading the vault first when
    /// its files changed since the last look.
    pub(crate) fn with_aliases<T>(&self, f: impl FnOnce(&Gazetteer) -> T) -> T {
        let fp = self.shared.registry.fingerprint();
        let mut cache = self.aliases.borrow_mut();
        if cache.0 != Some(fp) {
            *cache = (Some(fp), alias_gazetteer(&self.shared.registry));
        }
        f(&cache.1)
    }

    /// True when the store holds no leaf or summary yet (a fresh store, or one whose sources
    /// were all deleted); `memory_recall` facts do not count.
    pub fn is_empty(&self) -> Result<bool> {
        self.store.is_empty()
    }

    /// True when the store holds a source with this id.
    pub fn has_source(&self, source_id: &str) -> Result<bool> {
        self.store.has_source(source_id)
    }

    /// Every source the store holds, by id, with its counts and time span.
    pub fn sources(&self) -> Result<Vec<SourceSummary>> {
        self.store.sources()
    }

    /// Counts and sizes.
    pub fn stats(&self) -> Result<Stats> {
        let db = self.store.path();
        let wal = PathBuf::from(format!("{}-wal", db.display()));
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let vectors_pending = match self.shared.opts.embedder.as_deref() {
            Some(e) => self.store.nodes_missing_vectors(e.name())?.len() as u64,
            None => 0,
        };
        Ok(Stats {
            vectors_pending,
            counts: self.store.counts()?,
            store_bytes: size(db) + size(&wal),
            index_bytes: self.shared.index.size_on_disk(&self.shared.dir),
            index_docs: self.shared.index.searcher().num_docs(),
            embedder: self.shared.opts.embedder.as_ref().map(|e| e.name().to_string()),
        })
    }
}

impl std::fmt::Debug for MemoryReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryReader").field("dir", &self.shared.dir).finish_non_exhaustive()
    }
}
