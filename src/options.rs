//! How a store is opened: `OpenOptions` (thresholds, summariser, dense model, clock), where
//! a store lives by default, and the layout name of its content folder. Both the writer
//! (`Memory`) and the readers (`MemoryReader`) take these, so they live apart from either.

use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::tree::{ExtractiveSummariser, Summariser};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How long a write waits for another writer by default (`OpenOptions::lock_timeout`).
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// Environment variable overriding the default lock timeout, in milliseconds: for every
/// program built on the library (the CLI, the MCP server, the REPL) without a flag each.
pub const LOCK_TIMEOUT_ENV: &str = "MEMTREE_LOCK_TIMEOUT_MS";

/// Sub-directory of a store holding user-editable content (the entity registry).
pub const CONTENT_DIR: &str = "content";

/// How to open a store. `Default` = SPEC defaults, extractive summaries, no dense model,
/// the system clock, and a lock timeout of [`DEFAULT_LOCK_TIMEOUT`] (or
/// `$MEMTREE_LOCK_TIMEOUT_MS`).
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
    /// How long a write waits for another writer (another handle or process on the same
    /// store) to finish before failing with `Error::Locked`.
    pub lock_timeout: Duration,
    /// When a write's new nodes get their vectors (with a model).
    pub embedding: Embedding,
    /// The rerank stage after `walk` (a cross-encoder re-scoring walk's top N); `None` = off,
    /// and walk's answers are exactly those without the stage.
    pub reranker: Option<crate::reranker::Reranker>,
}

/// When a write's new nodes get their vectors.
///
/// The model embeds ~110–150 short texts a second on two cores, so a 100k-message import
/// spends ~15 minutes on vectors; deferred, it returns once its nodes are durable and
/// lexically searchable, and walk uses whatever vectors exist meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Embedding {
    /// In the write's own transaction: a write returns with its vectors, and a write or open
    /// that finds nodes without one embeds them (a host streaming a few items at a time).
    #[default]
    WithEachWrite,
    /// Later: writes and opens store no vectors; [`crate::Memory::embed_pending`] embeds
    /// what has none, one batch per write, so it can be stopped and resumed at any point.
    Deferred,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            config: Config::default(),
            summariser: Arc::new(ExtractiveSummariser),
            embedder: None,
            clock: Arc::new(SystemClock),
            lock_timeout: lock_timeout_from_env().ok().flatten().unwrap_or(DEFAULT_LOCK_TIMEOUT),
            embedding: Embedding::default(),
            reranker: None,
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

/// Whether `dir` holds a store (its database file): what a read checks before opening, since
/// reads never create one.
pub fn store_exists(dir: &Path) -> bool {
    dir.join(crate::store::DB_FILE).is_file()
}

/// The lock timeout `$MEMTREE_LOCK_TIMEOUT_MS` asks for, `None` when it is unset. `Default`
/// cannot fail and ignores a malformed value; a program checks it with this to say so.
///
/// # Errors
/// [`Error::InvalidArgument`] naming the variable when it is not a whole number of
/// milliseconds.
pub fn lock_timeout_from_env() -> Result<Option<Duration>> {
    let Ok(v) = std::env::var(LOCK_TIMEOUT_ENV) else { return Ok(None) };
    v.trim().parse().map(|ms| Some(Duration::from_millis(ms))).map_err(|_| {
        Error::invalid(
            LOCK_TIMEOUT_ENV,
            format!("`{}` is not a whole number of milliseconds", crate::text::clip(&v, 40)),
        )
    })
}
