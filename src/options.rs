//! How a store is opened: `OpenOptions` (thresholds, summariser, dense model, clock), where
//! a store lives by default, and the layout name of its content folder. Both the writer
//! (`Memory`) and the readers (`MemoryReader`) take these, so they live apart from either.

use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::embed::Embedder;
use crate::error::Result;
use crate::tree::{ExtractiveSummariser, Summariser};
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
