//! The `memtree` command line (SPEC §8): JSON on stdout, progress and errors on stderr,
//! non-zero exit on failure.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use memtree::ingest::import::{locomo, read_chat_jsonl, read_markdown_dir};
use memtree::{IngestReport, Memory};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(name = "memtree", version, about = "An embedded memory-retrieval engine: ingest, query, benchmark")]
struct Cli {
    /// Store directory (default: memtree/ under the platform's data directory).
    #[arg(long, global = true)]
    store: Option<PathBuf>,
    /// Pretty-print JSON output.
    #[arg(long, global = true)]
    pretty: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Import a file (or a folder of Markdown notes) into the store.
    Ingest {
        /// Input format.
        #[arg(long, value_enum)]
        format: Format,
        /// File or folder to import.
        path: PathBuf,
    },
    /// Counts of sources, trees, leaves, summaries per level, entities, edges and sizes.
    Stats,
    /// Rebuild the full-text index and vectors from the store.
    Reindex,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// LoCoMo JSON (each conversation one chat source).
    Locomo,
    /// One chat message per line: {"source_id","author","ts","text","source_ref"?}.
    ChatJsonl,
    /// A folder of Markdown notes, one document each.
    Markdown,
}

fn default_store() -> Result<PathBuf> {
    let base = dirs::data_dir().context("no platform data directory; pass --store DIR")?;
    Ok(base.join("memtree"))
}

fn print(cli: &Cli, v: &serde_json::Value) -> Result<()> {
    let s = if cli.pretty { serde_json::to_string_pretty(v)? } else { serde_json::to_string(v)? };
    println!("{s}");
    Ok(())
}

fn progress(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({per_sec}, eta {eta})")
            .expect("static template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

fn ingest(mem: &mut Memory, format: Format, path: &Path) -> Result<IngestReport> {
    if !path.exists() {
        bail!("{}: no such file or directory", path.display());
    }
    let mut total = IngestReport::default();
    match format {
        Format::Locomo => {
            let convs = locomo::read_locomo(path)?;
            let pb = progress(convs.iter().map(|c| c.turns.len() as u64).sum(), "turns");
            for c in &convs {
                total.absorb(&mem.ingest(c.items())?);
                pb.inc(c.turns.len() as u64);
            }
            pb.finish_and_clear();
        }
        Format::ChatJsonl => {
            let items = read_chat_jsonl(path)?;
            let pb = progress(items.len() as u64, "messages");
            let mut items = items.into_iter().peekable();
            while items.peek().is_some() {
                let chunk: Vec<_> = items.by_ref().take(2000).collect();
                let n = chunk.len() as u64;
                total.absorb(&mem.ingest(chunk)?);
                pb.inc(n);
            }
            pb.finish_and_clear();
        }
        Format::Markdown => {
            let docs = read_markdown_dir(path)?;
            let pb = progress(docs.len() as u64, "documents");
            for d in docs {
                total.absorb(&mem.ingest_document(d)?);
                pb.inc(1);
            }
            pb.finish_and_clear();
        }
    }
    // A file import is complete history: seal the open leaf buffers now, as a live stream
    // would have sealed them once the flush age passed.
    total.absorb(&mem.flush()?);
    Ok(total)
}

fn run(cli: &Cli) -> Result<()> {
    let dir = match &cli.store {
        Some(d) => d.clone(),
        None => default_store()?,
    };
    let mut mem = Memory::open(&dir).with_context(|| format!("opening store {}", dir.display()))?;
    match &cli.cmd {
        Cmd::Ingest { format, path } => {
            let r = ingest(&mut mem, *format, path)?;
            print(
                cli,
                &serde_json::json!({"sources": r.sources, "leaves": r.leaves, "summaries": r.summaries,
                "duplicates": r.duplicates, "removed": r.removed}),
            )?;
        }
        Cmd::Stats => print(cli, &serde_json::to_value(mem.stats()?)?)?,
        Cmd::Reindex => {
            mem.reindex()?;
            print(cli, &serde_json::to_value(mem.stats()?)?)?;
        }
    }
    Ok(())
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        eprintln!("memtree: {e:#}");
        std::process::exit(1);
    }
}
