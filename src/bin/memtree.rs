//! The `memtree` command line (SPEC §8): JSON on stdout, progress and errors on stderr,
//! non-zero exit on failure.

use anyhow::{Context, Result};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use memtree::Format;
use memtree::eval::read_corpus;
use memtree::eval::recall::RecallConfig;
use memtree::{ImportOptions, ImportSummary, Memory, MemoryReader, OpenOptions};
use memtree::{Scope, WalkParams};
use std::io::Write;
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
    /// The engine's "now" (YYYY-MM-DD, read as the end of that day UTC, or an RFC 3339
    /// time): "last week" in a question, and the times of a write, are then relative to it.
    /// For a historical store.
    #[arg(long, global = true, value_name = "DATE", value_parser = now_parser)]
    now: Option<i64>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Import a file (or a folder of Markdown notes) into the store.
    Ingest {
        /// Input format.
        #[arg(long, value_parser = format_parser())]
        format: Format,
        /// File or folder to import.
        path: PathBuf,
        /// Markdown: the vault root that note ids are relative to (default: the nearest
        /// folder with `.obsidian/`, else PATH), so a subfolder import names notes as the
        /// whole vault's import does.
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Markdown: remove the stored notes under PATH whose files are gone (default: list
        /// them as `vanished`).
        #[arg(long)]
        prune: bool,
        /// Markdown: a note that cannot be read fails the import with nothing written
        /// (default: it is skipped with a warning and listed as `skipped`).
        #[arg(long)]
        strict: bool,
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
    /// What the store holds: one entry per source (id, kind, leaves, summaries, first and last
    /// time).
    Sources,
    /// Remove one source and everything derived from it (leaves, summaries, index documents,
    /// vectors, entity counts, edges), atomically.
    Forget {
        /// The source id, as `memtree sources` lists it.
        #[arg(long = "source", value_name = "ID")]
        source: String,
    },
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
    /// Evidence recall on a LoCoMo-shaped corpus: a table on stdout (and JSON to --out). By
    /// default the demo corpus's labelled questions (examples/demo/questions.json).
    Recall {
        /// LoCoMo-shaped JSON: LoCoMo itself (data/locomo10.json of its public repository,
        /// github.com/snap-research/locomo), or samples that import files (the demo's).
        #[arg(long, default_value_os_t = demo_corpus())]
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
        /// Also write the JSON report here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Walk scorer weights: a preset (`default`, `spec_baseline`) and/or overrides by
        /// field name, e.g. `--walk spec_baseline --walk dense=0.6,window=0.4` (repeatable).
        #[arg(long = "walk", value_delimiter = ',')]
        walk: Vec<String>,
        /// Write one JSON line per question and system (evidence, recall, ranked turns).
        #[arg(long)]
        per_question: Option<PathBuf>,
        /// Write one JSON line per question walk answered: its candidates with their signals
        /// before any weight, to try other weights offline (scripts/walk_weights.py).
        #[arg(long)]
        candidates: Option<PathBuf>,
        /// Keep the harness stores in this folder and reuse them on the next run (ingest is
        /// idempotent): read-path experiments then skip embedding every leaf.
        #[arg(long)]
        keep_stores: Option<PathBuf>,
    },
}

/// `--format`: the library's formats as clap's possible values, so an unknown one is a usage
/// error listing them.
fn format_parser() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(Format::ALL.map(|f| PossibleValue::new(f.name()).help(f.about())))
        .map(|name| name.parse::<Format>().expect("clap admits only the formats' own names"))
}

fn default_store() -> Result<PathBuf> {
    memtree::default_store_dir().context("no platform data directory; pass --store DIR")
}

fn print(cli: &Cli, v: &serde_json::Value) -> Result<()> {
    let s = if cli.pretty { serde_json::to_string_pretty(v)? } else { serde_json::to_string(v)? };
    stdout_line(&s)
}

/// One line on stdout. Unlike `println!`, a failed write is an error, not a panic: a reader
/// that closed the pipe (`memtree tool … | head -c 100`) ends the program quietly in `main`.
fn stdout_line(line: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{line}")?;
    o.flush()?;
    Ok(())
}

/// The error and its causes, `: `-separated like anyhow's `{:#}`, but each cause only once: an
/// error whose message already quotes its cause (`/tmp: Is a directory (os error 21)`) would
/// otherwise name the problem twice.
fn chain_once(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// True when `e` comes from writing to a pipe whose reader has gone: for a Unix tool that is
/// the end of the conversation, not a failure (status 0, nothing on stderr).
fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
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

/// Import with a progress bar on stderr, shown while the input is written and cleared before
/// the open buffers are sealed; a notes folder's skipped files and warnings are named on
/// stderr too.
fn ingest(mem: &mut Memory, format: Format, path: &Path, opts: &ImportOptions) -> Result<ImportSummary> {
    let mut bar: Option<ProgressBar> = None;
    let summary = mem.import_with(format, path, opts, |p| {
        let pb = bar.get_or_insert_with(|| progress(p.total, p.unit));
        pb.set_position(p.done);
        if p.done >= p.total {
            pb.finish_and_clear();
        }
    })?;
    if let Some(n) = &summary.notes {
        for f in &n.skipped {
            eprintln!("memtree: skipped {}: {}", f.path.display(), f.reason);
        }
        for f in &n.warnings {
            eprintln!("memtree: warning: {}: {}", f.path.display(), f.reason);
        }
    }
    Ok(summary)
}

/// The `ingest` summary: the write counts, and for a notes folder what the sync did.
fn ingest_json(s: &ImportSummary) -> serde_json::Value {
    let r = &s.report;
    let mut v = serde_json::json!({"sources": r.sources, "leaves": r.leaves, "summaries": r.summaries,
        "duplicates": r.duplicates, "removed": r.removed});
    if let Some(n) = &s.notes {
        v["added"] = n.added.into();
        v["replaced"] = n.replaced.into();
        v["unchanged"] = n.unchanged.into();
        v["vanished"] = serde_json::json!(n.vanished);
        v["pruned"] = serde_json::json!(n.pruned);
        v["skipped"] = serde_json::json!(n.skipped);
    }
    v
}

/// Open options with the dense model when it can be loaded; says once on stderr when the
/// dense signal is off.
fn open_options(cli: &Cli) -> Result<OpenOptions> {
    // A malformed lock timeout is the user's to fix, not to be ignored silently.
    memtree::lock_timeout_from_env()?;
    let mut opts = if cli.no_model {
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
    if let Some(ms) = cli.now {
        // A fixed clock: the store is read as of that moment, however long the command runs.
        opts.clock = std::sync::Arc::new(memtree::ManualClock::new(ms));
    }
    Ok(opts)
}

/// The demo corpus's question set in this source tree.
fn demo_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(memtree::eval::DEMO_QUESTIONS)
}

/// `--now`: the library's reading, its message as clap's usage error (exit 2).
fn now_parser(s: &str) -> std::result::Result<i64, String> {
    // clap names the flag already: the reason alone.
    memtree::parse_now(s).map_err(|e| match e {
        memtree::Error::InvalidArgument { reason, .. } => reason,
        e => e.to_string(),
    })
}

struct RecallRun<'a> {
    corpus: &'a Path,
    ks: &'a [usize],
    pooled: bool,
    systems: &'a [String],
    out: Option<&'a Path>,
    walk: WalkParams,
    per_question: Option<&'a Path>,
    candidates: Option<&'a Path>,
    keep_stores: Option<&'a Path>,
}

/// `items` as JSON lines in `path`.
fn write_json_lines<T: serde::Serialize>(path: &Path, items: &[T]) -> Result<()> {
    let mut lines = String::new();
    for d in items {
        lines.push_str(&serde_json::to_string(d)?);
        lines.push('\n');
    }
    std::fs::write(path, lines).with_context(|| format!("writing {}", path.display()))
}

fn bench_recall(cli: &Cli, r: &RecallRun<'_>) -> Result<()> {
    let (ks, out) = (r.ks, r.out);
    let samples = read_corpus(r.corpus)?;
    let opts = open_options(cli)?;
    // Figures without the dense signal are not comparable with any recorded run: a missing
    // model (a copied binary, a clone without the fetch) must not pass for a result.
    let dense: Vec<&str> = r.systems.iter().map(String::as_str).filter(|s| !matches!(*s, "bm25" | "fts5")).collect();
    if opts.embedder.is_none() && !cli.no_model && !dense.is_empty() {
        anyhow::bail!(
            "no embedding model found, and {} use(s) the dense signal: run scripts/fetch-models.sh, pass --model DIR, or --no-model to measure lexical only",
            dense.join(", ")
        );
    }
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
        candidates: r.candidates.is_some(),
    };
    let pb = ProgressBar::new_spinner();
    let t = std::time::Instant::now();
    let report = memtree::eval::recall::run(&samples, &work, &opts, &cfg, |m| pb.set_message(m.to_string()))?;
    pb.finish_and_clear();
    if let Some(out) = out {
        std::fs::write(out, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    if let Some(path) = r.per_question {
        write_json_lines(path, &report.per_question)?;
    }
    if let Some(path) = r.candidates {
        write_json_lines(path, &report.candidates)?;
    }
    stdout_line(&format!(
        "recall ({}, {} questions with evidence, {:.0} s); fractional evidence recall over leaves, %",
        report.setting,
        report.questions,
        t.elapsed().as_secs_f64()
    ))?;
    let mut cols: Vec<String> = ks.iter().map(|k| format!("recall@{k}")).collect();
    cols.push("recall@budget2k".into());
    cols.push("recall@budget2k-snippets".into());
    stdout_line(&format!("| system | bucket | {} | p50 ms |", cols.join(" | ")))?;
    stdout_line(&format!("|---|---|{}---:|", "---:|".repeat(cols.len())))?;
    for (name, sys) in &report.systems {
        // Categories without questions (all of BEAM's are single-hop) are left out; the
        // question types follow the categories when the corpus gives them.
        let asked = |m: &std::collections::BTreeMap<String, f64>| m.get("questions").copied().unwrap_or(0.0) > 0.0;
        let mut buckets: Vec<(&str, &std::collections::BTreeMap<String, f64>)> = vec![("overall", &sys.overall)];
        for (_, c) in memtree::eval::recall::CATEGORIES {
            if asked(&sys.by_category[c]) {
                buckets.push((c, &sys.by_category[c]));
            }
        }
        for (t, m) in &sys.by_type {
            buckets.push((t.as_str(), m));
        }
        for (b, m) in buckets {
            let vals: Vec<String> =
                cols.iter().map(|c| format!("{:.1}", 100.0 * m.get(c).copied().unwrap_or(0.0))).collect();
            let p50 = if b == "overall" {
                format!("{:.2}", sys.latency_us.get("p50").copied().unwrap_or(0.0) / 1000.0)
            } else {
                String::new()
            };
            stdout_line(&format!("| {name} | {b} | {} | {p50} |", vals.join(" | ")))?;
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
    if let Cmd::Bench {
        what: BenchCmd::Recall { corpus, k, pooled, systems, out, walk, per_question, candidates, keep_stores },
    } = &cli.cmd
    {
        let wp = WalkParams::from_cli(walk)?;
        return bench_recall(
            cli,
            &RecallRun {
                corpus,
                ks: k,
                pooled: *pooled,
                systems,
                out: out.as_deref(),
                walk: wp,
                per_question: per_question.as_deref(),
                candidates: candidates.as_deref(),
                keep_stores: keep_stores.as_deref(),
            },
        );
    }
    let dir = match &cli.store {
        Some(d) => d.clone(),
        None => default_store()?,
    };
    let opts = open_options(cli)?;
    // A store this command creates is removed again when its import fails: a mistyped path
    // must not leave an empty store behind.
    let fresh = !dir.exists();
    // Read commands never wait for another process's write (an import while the assistant
    // runs): they try the writer lock once and read through a reader when it is taken.
    // The call is parsed once, here; a malformed one still fails where it did, after the open.
    let tool_call = match &cli.cmd {
        Cmd::Tool { json, .. } => Some(memtree::tool::parse_call(&json_arg(json)?)),
        _ => None,
    };
    let reads_only = match &cli.cmd {
        Cmd::Stats | Cmd::Sources => true,
        Cmd::Tool { .. } => !tool_call.as_ref().is_some_and(|c| c.as_ref().is_ok_and(|r| r.is_write())),
        _ => false,
    };
    let mut open_opts = opts.clone();
    if reads_only && !fresh {
        open_opts.lock_timeout = std::time::Duration::ZERO;
    }
    // An import is durable and searchable before its vectors are made; they follow, with
    // their own progress bar (a stopped run's are made by the next `ingest`). A read never
    // waits for a stopped import's vectors either. The MCP server's writes return before
    // theirs too: a background worker makes them.
    if reads_only || matches!(cli.cmd, Cmd::Ingest { .. } | Cmd::Mcp { .. }) {
        open_opts.embedding = memtree::Embedding::Deferred;
    }
    // The MCP server's worker starts first: the server's own handle takes its turns at the
    // model through it (a question's embedding goes before the worker's next slice).
    let worker = match &cli.cmd {
        Cmd::Mcp { .. } if opts.embedder.is_some() => {
            let hook: memtree::EmbedHook = std::sync::Arc::new(log_embedding);
            let w = memtree::BackgroundEmbedder::start(&dir, opts.clone(), Some(hook))
                .with_context(|| format!("starting the background embedder on {}", dir.display()))?;
            open_opts = w.host_options(open_opts);
            Some(w)
        }
        _ => None,
    };
    let mut mem = match Memory::open_with(&dir, open_opts) {
        Ok(m) => m,
        // Another process (the assistant) is writing: reads go through a read-only handle.
        Err(memtree::Error::Locked { .. }) if matches!(cli.cmd, Cmd::Tool { .. } | Cmd::Stats | Cmd::Sources) => {
            let reader =
                MemoryReader::open(&dir, opts).with_context(|| format!("opening store {} read-only", dir.display()))?;
            return run_read_only(cli, &reader, tool_call);
        }
        Err(e) => return Err(e).with_context(|| format!("opening store {}", dir.display())),
    };
    match &cli.cmd {
        Cmd::Ingest { format, path, root, prune, strict } => {
            let opts = ImportOptions { root: root.clone(), strict: *strict, prune: *prune };
            let r = match ingest(&mut mem, *format, path, &opts) {
                Ok(r) => r,
                Err(e) => {
                    // Only a store that still holds nothing: another process (the assistant)
                    // may have written to it since, or an earlier batch of this import.
                    let untouched = mem.as_reader().is_empty().unwrap_or(false)
                        && mem.as_reader().stats().is_ok_and(|s| s.counts.recall_facts == 0);
                    if fresh && untouched {
                        drop(mem);
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                    return Err(e);
                }
            };
            let mut bar: Option<ProgressBar> = None;
            let vectors = mem.embed_pending(|p| {
                let pb = bar.get_or_insert_with(|| progress(p.total, "vectors"));
                pb.set_position(p.done);
                if p.done >= p.total {
                    pb.finish_and_clear();
                }
            })?;
            let mut out = ingest_json(&r);
            out["vectors"] = vectors.into();
            print(cli, &out)?;
        }
        Cmd::Tool { .. } => {
            let req = tool_call.context("a tool command carries its call")??;
            let out = serde_json::to_value(memtree::tool::call(&mut mem, req, &Scope::all())?)?;
            // Asked after the call, so a write (`ingest_document`) into a new store says nothing.
            if mem.as_reader().is_empty()? {
                // Say why every read comes back empty; the answer itself stays the JSON a
                // script expects.
                eprintln!(
                    "memtree: the store at {} holds nothing yet{}; import with `memtree --store {} ingest --format FORMAT PATH`",
                    dir.display(),
                    if fresh { " (it did not exist: created empty)" } else { "" },
                    dir.display()
                );
            }
            print(cli, &out)?;
        }
        Cmd::Recall { json, .. } => {
            let input = json_arg(json)?;
            let out = memtree::tool::memory_recall_json(&mut mem, &input)?;
            print(cli, &out)?;
        }
        Cmd::Stats => print(cli, &serde_json::to_value(mem.as_reader().stats()?)?)?,
        Cmd::Sources => print(cli, &sources_json(mem.as_reader())?)?,
        Cmd::Forget { source } => {
            if !mem.as_reader().has_source(source)? {
                anyhow::bail!("no source `{source}` in the store (`memtree sources` lists them)");
            }
            let r = mem.delete_source(&source.as_str().into())?;
            print(cli, &serde_json::json!({"source_id": source, "removed_leaves": r.removed}))?;
        }
        Cmd::Reindex => {
            mem.reindex()?;
            print(cli, &serde_json::to_value(mem.as_reader().stats()?)?)?;
        }
        Cmd::Mcp { scope } => {
            let scope = if scope.is_empty() { Scope::all() } else { Scope::only(scope.iter().cloned()) };
            let mut server = memtree::McpServer::new(mem, scope);
            if let Some(w) = worker {
                server = server.with_background(w);
            }
            memtree::serve_stdio(server)?;
        }
        Cmd::Bench { .. } => unreachable!("handled above"),
    }
    Ok(())
}

/// The MCP server's background embedding, on stderr (stdout is the protocol): each batch, the
/// end of a run that made vectors, and every failure (the next write retries).
fn log_embedding(event: &memtree::EmbedEvent<'_>) {
    match event {
        memtree::EmbedEvent::Batch(p) => eprintln!("memtree: embedding {}/{} vectors", p.done, p.total),
        memtree::EmbedEvent::Finished { embedded: 0 } => {}
        memtree::EmbedEvent::Finished { embedded } => eprintln!("memtree: embedded {embedded} vectors"),
        memtree::EmbedEvent::Failed(e) => {
            let mut text = e.to_string();
            let mut cause = std::error::Error::source(*e);
            while let Some(c) = cause {
                let c_text = c.to_string();
                if !text.contains(&c_text) {
                    text = format!("{text}: {c_text}");
                }
                cause = c.source();
            }
            eprintln!("memtree: background embedding failed: {text}");
        }
    }
}

/// `memtree sources`: each source with its counts and its leaves' first and last time
/// (RFC 3339 UTC; `null` for a source without leaves).
fn sources_json(reader: &MemoryReader) -> Result<serde_json::Value> {
    let time = |ms: Option<i64>| {
        ms.and_then(chrono::DateTime::from_timestamp_millis)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    };
    let rows: Vec<serde_json::Value> = reader
        .sources()?
        .into_iter()
        .map(|s| {
            serde_json::json!({"source_id": s.source_id, "kind": s.kind, "leaves": s.leaves,
                "summaries": s.summaries, "first": time(s.first_ms), "last": time(s.last_ms)})
        })
        .collect();
    Ok(serde_json::Value::Array(rows))
}

/// `tool`, `stats` and `sources` on a store another process holds for writing.
fn run_read_only(
    cli: &Cli,
    reader: &MemoryReader,
    call: Option<memtree::Result<memtree::tool::Request>>,
) -> Result<()> {
    match &cli.cmd {
        Cmd::Tool { .. } => {
            let out = call
                .context("a tool command carries its call")?
                .and_then(|req| memtree::tool::call_read(reader, req, &Scope::all()))
                .context("the store is open for writing in another process; read modes only")?;
            print(cli, &serde_json::to_value(out)?)
        }
        Cmd::Stats => print(cli, &serde_json::to_value(reader.stats()?)?),
        Cmd::Sources => print(cli, &sources_json(reader)?),
        _ => unreachable!("only read commands fall back to a reader"),
    }
}

/// Caps glibc's malloc arenas at 2. Each thread that allocates (ONNX Runtime's pool, the
/// tokenizer's rayon threads) otherwise gets an arena of its own, and memory freed there is
/// kept: a 173-note import with the model peaked at 470 MB RSS with 219 MB of live heap, and
/// at 285 MB with two arenas (BENCHMARKS.md, "Model footprint").
fn cap_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called first thing in main.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

fn main() {
    cap_malloc_arenas();
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        if is_closed_pipe(&e) {
            return;
        }
        eprintln!("memtree: {}", chain_once(&e));
        std::process::exit(1);
    }
}
