//! `Shared`: what a store's writer and its readers in this process hold in common, owned by
//! all of them through an `Arc`: the directory, the options, the index reader, the entity
//! registry and extractor, and the derived state (gazetteer, vectors) behind one lock. Each
//! side brings its own SQLite connection: the writer's writes, a reader's snapshots.

use crate::derived::Derived;
use crate::entities::{Extractor, Registry};
use crate::index::IndexHandle;
use crate::options::OpenOptions;
use std::path::PathBuf;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The state of one open store shared by its writer and readers (see the module doc).
pub(crate) struct Shared {
    /// The store directory.
    pub dir: PathBuf,
    /// The options it was opened with.
    pub opts: OpenOptions,
    /// The full-text index's read side (its reader is reloaded by the writer's commits).
    pub index: IndexHandle,
    /// The entity registry (Markdown files under the content root).
    pub registry: Registry,
    /// The entity extractor.
    pub extractor: Extractor,
    derived: RwLock<Derived>,
}

impl Shared {
    pub(crate) fn new(
        dir: PathBuf,
        opts: OpenOptions,
        index: IndexHandle,
        registry: Registry,
        derived: Derived,
    ) -> Shared {
        Shared { dir, opts, index, registry, extractor: Extractor::new(), derived: RwLock::new(derived) }
    }

    /// The derived state, read-locked while the guard lives (see `MemoryReader::derived`).
    pub(crate) fn derived(&self) -> RwLockReadGuard<'_, Derived> {
        // A writer that panicked mid-update leaves a state that is at worst stale: reading
        // it is safe (hits are resolved against the store), so poisoning is ignored.
        self.derived.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The derived state, write-locked: the writer after its commits, a reader catching up.
    pub(crate) fn derived_mut(&self) -> RwLockWriteGuard<'_, Derived> {
        self.derived.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The wall clock.
    pub(crate) fn now_ms(&self) -> i64 {
        self.opts.clock.now_ms()
    }
}
