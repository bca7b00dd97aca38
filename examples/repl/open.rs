//! The session's flags, and its store opened as they say: a missing store is made only to
//! load the demo into; with a model, the store is opened deferred and a background worker
//! makes the vectors, so no write (nor this open) waits for the model.

use crate::clock::SessionClock;
use crate::input::yes;
use crate::render::time;
use anyhow::{Context as _, Result, anyhow};
use clap::Parser;
use memtree::{BackgroundEmbedder, Embedding, Memory, OpenOptions};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The REPL's flags.
#[derive(Parser)]
#[command(name = "repl", about = "Ask a memtree store questions (plain lines go to `walk`; :help for more)")]
pub struct Args {
    /// Store directory (default: memtree/ under the platform's data directory, like the CLI).
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// Load the demo corpus into an empty store without asking (the only way when stdin is
    /// not a terminal).
    #[arg(long)]
    pub demo: bool,
    /// Folder with the embedding model (default: as the CLI finds it).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Run without the dense model.
    #[arg(long)]
    pub no_model: bool,
    /// Folder with a cross-encoder that re-scores walk's top hits, or `default` for the one
    /// that ships in models/reranker (README "Reranking").
    #[arg(long, value_name = "DIR")]
    pub reranker: Option<PathBuf>,
    /// How many of walk's hits the reranker re-scores (1 to 100).
    #[arg(long, value_name = "N", default_value_t = memtree::DEFAULT_RERANK_TOP as u64,
          value_parser = clap::value_parser!(u64).range(1..=memtree::MAX_RERANK_TOP as u64))]
    pub rerank_top: u64,
    /// Lay tables out for this many columns (default: the terminal's width; when stdout is not
    /// a terminal, $COLUMNS, else 160).
    #[arg(long, value_parser = clap::value_parser!(u16).range(20..))]
    pub width: Option<u16>,
    /// The engine's "now" (YYYY-MM-DD, the end of that day UTC, or an RFC 3339 time), as
    /// the CLI's `--now`: relative questions and the demo's dates follow it (`:now` too).
    #[arg(long, value_name = "DATE", value_parser = time::now_arg)]
    pub now: Option<i64>,
}

/// The store, and the worker that makes its vectors when there is a model. A yes to making a
/// missing store sets `args.demo`.
pub fn open(args: &mut Args, clock: &SessionClock) -> Result<(Memory, Option<BackgroundEmbedder>)> {
    let dir = match &args.store {
        Some(d) => d.clone(),
        None => memtree::default_store_dir().context("no platform data directory; pass --store DIR")?,
    };
    // A session only reads until told to write: a missing store is made only to load the
    // demo into (--demo, or a yes at a terminal); otherwise it is an error, and nothing is
    // created.
    if !args.demo && !memtree::store_exists(&dir) {
        args.demo = std::io::stdin().is_terminal() && create_with_demo(&dir)?;
    }
    if !args.demo && !memtree::store_exists(&dir) {
        return Err(anyhow!(
            "{} (nothing created); make one with `memtree --store {} ingest --format FORMAT PATH`, or start the REPL with --demo",
            memtree::Error::NoStore { dir: dir.clone() },
            dir.display()
        ));
    }
    let opts = if args.no_model {
        OpenOptions::default()
    } else {
        let (opts, found) = OpenOptions::with_model(args.model.as_deref()).context("loading the embedding model")?;
        if !found {
            eprintln!("no embedding model found (run scripts/fetch-models.sh): dense signal off, lexical only");
        }
        opts
    };
    let reranker = match args.reranker.as_deref().map(memtree::reranker_dir) {
        Some(dir) => Some(
            memtree::Reranker::load(&dir, args.rerank_top as usize)
                .with_context(|| format!("loading the reranker from {}", dir.display()))?,
        ),
        None => None,
    };
    let opts = OpenOptions { clock: Arc::new(clock.clone()), reranker, ..opts };
    let mut deferred = OpenOptions { embedding: Embedding::Deferred, ..opts.clone() };
    // The worker first: the session's own handle takes its turns at the model through it.
    let embedder = match opts.embedder {
        Some(_) => Some(BackgroundEmbedder::start(&dir, opts, None).context("starting the background embedder")?),
        None => None,
    };
    if let Some(e) = &embedder {
        deferred = e.host_options(deferred);
    }
    let mem = Memory::open_with(&dir, deferred).with_context(|| format!("opening store {}", dir.display()))?;
    Ok((mem, embedder))
}

/// At a terminal, on a store that does not exist: ask whether to make it and load the demo.
fn create_with_demo(dir: &Path) -> Result<bool> {
    eprint!("No store at {}. Create it and load the demo corpus? [Y/n] ", dir.display());
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(yes(&answer))
}
