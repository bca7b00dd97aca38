//! Where the store is and how it is opened: the store directory, the model, the clock of
//! `--now` (read by `render::time::now_arg`), and the call read from the argument or stdin.

use crate::Cli;
use anyhow::{Context, Result};
use memtree::OpenOptions;
use std::path::PathBuf;

pub(crate) fn default_store() -> Result<PathBuf> {
    memtree::default_store_dir().context("no platform data directory; pass --store DIR")
}

/// Open options with the dense model when it can be loaded; says once on stderr when the
/// dense signal is off.
pub(crate) fn open_options(cli: &Cli) -> Result<OpenOptions> {
    open_options_for(cli, true)
}

/// [`open_options`], without loading the model unless `model` (an export reads rows only).
pub(crate) fn open_options_for(cli: &Cli, model: bool) -> Result<OpenOptions> {
    // A malformed lock timeout is the user's to fix, not to be ignored silently.
    memtree::lock_timeout_from_env()?;
    let mut opts = if cli.no_model || !model {
        OpenOptions::default()
    } else {
        let (opts, found) = OpenOptions::with_model(cli.model.as_deref()).context("loading the embedding model")?;
        if !found {
            eprintln!(
                "memtree: no embedding model found (run scripts/fetch-models.sh): dense signal off, lexical only"
            );
        }
        opts
    };
    if let Some(arg) = &cli.reranker {
        let dir = memtree::reranker_dir(arg);
        opts.reranker = Some(
            memtree::Reranker::load(&dir, cli.rerank_top as usize)
                .with_context(|| format!("loading the reranker from {}", dir.display()))?,
        );
    }
    if let Some(ms) = cli.now {
        // A fixed clock: the store is read as of that moment, however long the command runs.
        opts.clock = std::sync::Arc::new(memtree::ManualClock::new(ms));
    }
    Ok(opts)
}

/// The JSON argument, or all of stdin when absent.
pub(crate) fn json_arg(arg: &Option<String>) -> Result<String> {
    match arg {
        Some(s) => Ok(s.clone()),
        None => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).context("reading the call from stdin")?;
            Ok(s)
        }
    }
}
