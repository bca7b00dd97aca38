//! The `memtree` command line (SPEC §8): JSON on stdout, progress and errors on stderr,
//! non-zero exit on failure.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use memtree::eval::recall::RecallConfig;
use memtree::ingest::import::{locomo, read_chat_jsonl, read_markdown_dir, read_mbox, read_slack_export};
use memtree::retrieval::{Scope, WalkParams};
use memtree::{IngestReport, Memory, MemoryReader, OpenOptions};
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
    /// Folder with the embedding model (default: $MEMTREE_MODEL_DIR, else models/ of the
    /// source tree when fetched). Without it the dense signal is off.
    #[arg(long, global = true)]
    model: Option<PathBuf>,
    /// Run without the dense model even when one is available.
    #[arg(long, global = true)]
    no_model: bool,
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
    /// One `memory_tree` call: the JSON object as argument, or on stdin when absent.
    Tool {
        /// The call, e.g. '{"mode":"walk","query":"..."}'.
        json: Option<String>,
        /// Print the tool's JSON Schema instead.
        #[arg(long)]
        schema: bool,
    },
    /// One `memory_recall` call (JSON argument or stdin).
    Recall {
        /// The call, e.g. '{"op":"put","namespace":"global","key":"theme","content":"dark"}'.
        json: Option<String>,
        /// Print the tool's JSON Schema instead.
        #[arg(long)]
        schema: bool,
    },
    /// Counts of sources, trees, leaves, summaries per level, entities, edges and sizes.
    Stats,
    /// Rebuild the full-text index and vectors from the store.
    Reindex,
    /// Serve the memory_tree and memory_recall tools over MCP on stdio (for an assistant host).
    Mcp {
        /// Only these tree scopes (source ids) are visible (repeatable; default: everything).
        #[arg(long = "scope")]
        scope: Vec<String>,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
}

#[derive(Subcommand)]
enum BenchCmd {
    /// Evidence recall on a LoCoMo-format corpus (SPEC §7); table on stdout, JSON to --out.
    Recall {
        /// LoCoMo JSON file.
        #[arg(long, default_value = "../shared/corpora/locomo/locomo-dev.json")]
        corpus: PathBuf,
        /// Cut-offs, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "5,10,25")]
        k: Vec<usize>,
        /// All conversations in one store (default: one store per conversation).
        #[arg(long)]
        pooled: bool,
        /// Systems to run, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "walk,bm25,dense,hybrid,fts5")]
        systems: Vec<String>,
        /// Where to write the JSON report.
        #[arg(long)]
        out: PathBuf,
        /// Walk scorer weights: a preset (`default`, `spec_baseline`) and/or overrides by
        /// field name, e.g. `--walk spec_baseline --walk dense=0.6,window=0.4` (repeatable).
        #[arg(long = "walk", value_delimiter = ',')]
        walk: Vec<String>,
        /// Write one JSON line per question and system (evidence, recall, ranked turns).
        #[arg(long)]
        per_question: Option<PathBuf>,
        /// Keep the harness stores in this folder and reuse them on the next run (ingest is
        /// idempotent): read-path experiments then skip embedding every leaf.
        #[arg(long)]
        keep_stores: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// LoCoMo JSON (each conversation one chat source).
    Locomo,
    /// One chat message per line: {"source_id","author","ts","text","source_ref"?}.
    ChatJsonl,
    /// A folder of Markdown notes, one document each.
    Markdown,
    /// An mbox mail file: one e-mail per message, each thread one source `mbox:<root id>`.
    Mbox,
    /// A Slack export folder (channels.json, users.json, <channel>/<day>.json): each channel
    /// one chat source `slack:#<name>`.
    Slack,
}

fn default_store() -> Result<PathBuf> {
    memtree::default_store_dir().context("no platform data directory; pass --store DIR")
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
        Format::ChatJsonl => ingest_items(mem, read_chat_jsonl(path)?, "messages", &mut total)?,
        Format::Mbox => ingest_items(mem, read_mbox(path)?, "e-mails", &mut total)?,
        Format::Slack => ingest_items(mem, read_slack_export(path)?, "messages", &mut total)?,
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

/// Ingest parsed items in batches with a progress bar.
fn ingest_items(mem: &mut Memory, items: Vec<memtree::Item>, what: &str, total: &mut IngestReport) -> Result<()> {
    let pb = progress(items.len() as u64, what);
    let mut items = items.into_iter().peekable();
    while items.peek().is_some() {
        let chunk: Vec<_> = items.by_ref().take(2000).collect();
        let n = chunk.len() as u64;
        total.absorb(&mem.ingest(chunk)?);
        pb.inc(n);
    }
    pb.finish_and_clear();
    Ok(())
}

/// Open options with the dense model when it can be loaded; says once on stderr when the
/// dense signal is off.
fn open_options(cli: &Cli) -> Result<OpenOptions> {
    if cli.no_model {
        return Ok(OpenOptions::default());
    }
    let (opts, found) = OpenOptions::with_model(cli.model.as_deref()).context("loading the embedding model")?;
    if !found {
        eprintln!("memtree: no embedding model found (run scripts/fetch-models.sh): dense signal off, lexical only");
    }
    Ok(opts)
}

struct RecallRun<'a> {
    corpus: &'a Path,
    ks: &'a [usize],
    pooled: bool,
    systems: &'a [String],
    out: &'a Path,
    walk: WalkParams,
    per_question: Option<&'a Path>,
    keep_stores: Option<&'a Path>,
}

fn bench_recall(cli: &Cli, r: &RecallRun<'_>) -> Result<()> {
    let (ks, out) = (r.ks, r.out);
    let convs = locomo::read_locomo(r.corpus)?;
    let opts = open_options(cli)?;
    let temp;
    let work = match r.keep_stores {
        Some(dir) => {
            // Pooled and per-conversation stores must not be mistaken for each other.
            let dir = dir.join(if r.pooled { "pooled" } else { "per-conversation" });
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            dir
        }
        None => {
            temp = tempfile::tempdir().context("temp dir for the harness stores")?;
            temp.path().to_path_buf()
        }
    };
    let cfg = RecallConfig {
        ks: ks.to_vec(),
        pooled: r.pooled,
        systems: r.systems.to_vec(),
        walk: r.walk,
        reuse_stores: r.keep_stores.is_some(),
    };
    let pb = ProgressBar::new_spinner();
    let t = std::time::Instant::now();
    let report = memtree::eval::recall::run(&convs, &work, &opts, &cfg, |m| pb.set_message(m.to_string()))?;
    pb.finish_and_clear();
    std::fs::write(out, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("writing {}", out.display()))?;
    if let Some(path) = r.per_question {
        let mut lines = String::new();
        for d in &report.per_question {
            lines.push_str(&serde_json::to_string(d)?);
            lines.push('\n');
        }
        std::fs::write(path, lines).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "recall ({}, {} questions with evidence, {:.0} s); fractional evidence recall over leaves, %",
        report.setting,
        report.questions,
        t.elapsed().as_secs_f64()
    );
    let mut cols: Vec<String> = ks.iter().map(|k| format!("recall@{k}")).collect();
    cols.push("recall@budget2k".into());
    println!("| system | bucket | {} | p50 ms |", cols.join(" | "));
    println!("|---|---|{}---:|", "---:|".repeat(cols.len()));
    for (name, sys) in &report.systems {
        let mut buckets: Vec<(&str, &std::collections::BTreeMap<String, f64>)> = vec![("overall", &sys.overall)];
        for (c, _) in memtree::eval::recall::CATEGORIES.iter().map(|(i, n)| (*n, i)) {
            buckets.push((c, &sys.by_category[c]));
        }
        for (b, m) in buckets {
            let vals: Vec<String> =
                cols.iter().map(|c| format!("{:.1}", 100.0 * m.get(c).copied().unwrap_or(0.0))).collect();
            let p50 = if b == "overall" {
                format!("{:.2}", sys.latency_us.get("p50").copied().unwrap_or(0.0) / 1000.0)
            } else {
                String::new()
            };
            println!("| {name} | {b} | {} | {p50} |", vals.join(" | "));
        }
    }
    Ok(())
}

/// The JSON argument, or all of stdin when absent.
fn json_arg(arg: &Option<String>) -> Result<String> {
    match arg {
        Some(s) => Ok(s.clone()),
        None => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).context("reading the call from stdin")?;
            Ok(s)
        }
    }
}

fn run(cli: &Cli) -> Result<()> {
    match &cli.cmd {
        Cmd::Tool { schema: true, .. } => return print(cli, &memtree::tool::memory_tree_schema()),
        Cmd::Recall { schema: true, .. } => return print(cli, &memtree::tool::memory_recall_schema()),
        _ => {}
    }
    if let Cmd::Bench { what: BenchCmd::Recall { corpus, k, pooled, systems, out, walk, per_question, keep_stores } } =
        &cli.cmd
    {
        let wp = WalkParams::from_cli(walk)?;
        return bench_recall(
            cli,
            &RecallRun {
                corpus,
                ks: k,
                pooled: *pooled,
                systems,
                out,
                walk: wp,
                per_question: per_question.as_deref(),
                keep_stores: keep_stores.as_deref(),
            },
        );
    }
    let dir = match &cli.store {
        Some(d) => d.clone(),
        None => default_store()?,
    };
    let opts = open_options(cli)?;
    let mut mem = match Memory::open_with(&dir, opts.clone()) {
        Ok(m) => m,
        // Another process (the assistant) is writing: reads go through a read-only handle.
        Err(memtree::Error::Locked { .. }) if matches!(cli.cmd, Cmd::Tool { .. } | Cmd::Stats) => {
            let reader =
                MemoryReader::open(&dir, opts).with_context(|| format!("opening store {} read-only", dir.display()))?;
            return run_read_only(cli, &reader);
        }
        Err(e) => return Err(e).with_context(|| format!("opening store {}", dir.display())),
    };
    match &cli.cmd {
        Cmd::Ingest { format, path } => {
            let r = ingest(&mut mem, *format, path)?;
            print(
                cli,
                &serde_json::json!({"sources": r.sources, "leaves": r.leaves, "summaries": r.summaries,
                "duplicates": r.duplicates, "removed": r.removed}),
            )?;
        }
        Cmd::Tool { json, .. } => {
            let input = json_arg(json)?;
            let out = memtree::tool::call_json(&mut mem, &input, &Scope::all())?;
            print(cli, &out)?;
        }
        Cmd::Recall { json, .. } => {
            let input = json_arg(json)?;
            let out = memtree::tool::memory_recall_json(&mut mem, &input)?;
            print(cli, &out)?;
        }
        Cmd::Stats => print(cli, &serde_json::to_value(mem.stats()?)?)?,
        Cmd::Reindex => {
            mem.reindex()?;
            print(cli, &serde_json::to_value(mem.stats()?)?)?;
        }
        Cmd::Mcp { scope } => {
            let scope = if scope.is_empty() { Scope::all() } else { Scope::only(scope.iter().cloned()) };
            memtree::mcp::serve_stdio(mem, scope)?;
        }
        Cmd::Bench { .. } => unreachable!("handled above"),
    }
    Ok(())
}

/// `tool` and `stats` on a store another process holds for writing.
fn run_read_only(cli: &Cli, reader: &MemoryReader) -> Result<()> {
    match &cli.cmd {
        Cmd::Tool { json, .. } => {
            let input = json_arg(json)?;
            let out = memtree::tool::call_read_json(reader, &input, &Scope::all())
                .context("the store is open for writing in another process; read modes only")?;
            print(cli, &out)
        }
        Cmd::Stats => print(cli, &serde_json::to_value(reader.stats()?)?),
        _ => unreachable!("only read commands fall back to a reader"),
    }
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        eprintln!("memtree: {e:#}");
        std::process::exit(1);
    }
}
