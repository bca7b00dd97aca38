//! The `memtree` command line (SPEC §8): JSON on stdout, progress and errors on stderr,
//! non-zero exit on failure.

mod archive;
mod ask;
mod bench;
mod forget;
mod ingest;
mod open;
mod output;
mod progress;
mod serve;

/// The rendering the CLI shares with the REPL example (`render/mod.rs`): the CLI prints JSON
/// but for `ask`, which prints the REPL's table of hits; the other tables are the REPL's, so
/// the CLI leaves them unused.
#[allow(dead_code)]
mod render;

use anyhow::{Context, Result};
use bench::BenchCmd;
use clap::{Parser, Subcommand};
use ingest::{format_parser, ingest, ingest_json, nothing_read};
use memtree::{Format, ImportOptions, Memory, MemoryReader, Scope};
use open::{default_store, json_arg, open_options_for};
use output::{forget_record_json, forgotten_json, is_closed_pipe, print, sources_json};
use progress::{Phase, Shown};
use serve::{log_embedding, run_read_only};
use std::path::PathBuf;

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
    /// Folder with a cross-encoder (model.onnx, tokenizer.json) that re-scores walk's top
    /// hits, or `default` for the one that ships in models/reranker (README "Reranking").
    /// Off by default.
    #[arg(long, global = true, value_name = "DIR")]
    reranker: Option<PathBuf>,
    /// How many of walk's hits the reranker re-scores (1 to 100).
    #[arg(long, global = true, value_name = "N", default_value_t = memtree::DEFAULT_RERANK_TOP as u64,
          value_parser = clap::value_parser!(u64).range(1..=memtree::MAX_RERANK_TOP as u64))]
    rerank_top: u64,
    /// No progress on stderr (warnings and errors still go there).
    #[arg(long, short, global = true)]
    quiet: bool,
    /// The engine's "now" (YYYY-MM-DD, read as the end of that day UTC, or an RFC 3339
    /// time): "last week" in a question, and the times of a write, are then relative to it.
    /// For a historical store.
    #[arg(long, global = true, value_name = "DATE", value_parser = render::time::now_arg)]
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
        /// Any warning fails the import with nothing written (exit 1): a record that cannot be
        /// read, a date taken from a fallback, an input with nothing to read (default: the
        /// record is skipped or read as the warning says, the rest imported, exit 0).
        #[arg(long)]
        strict: bool,
    },
    /// A question in plain words, answered by `walk`: the REPL's table of hits (rank, time,
    /// source, text cut at a word); --json prints the tool's response.
    Ask(ask::AskArgs),
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
    /// Remove one source, a source's leaves in a range, or one leaf, with everything derived
    /// from them (summaries re-sealed, index documents, vectors, entity counts, edges),
    /// atomically. The forget holds: later imports leave the same content out (`forgotten`
    /// lists what is held back; --undo takes a forget back).
    Forget {
        /// Take back forget record ID (as `memtree forgotten` lists it, or a receipt's
        /// `record`): later imports write its content again. Nothing comes back by itself.
        #[arg(long = "undo", value_name = "RECORD")]
        undo: Option<i64>,
        /// One leaf (a message, an e-mail, a chunk of a note), by node id: the summaries
        /// above it are re-sealed without it.
        #[arg(long = "leaf", value_name = "ID")]
        leaf: Option<String>,
        /// The source id, as `memtree sources` lists it: the whole source, or with
        /// --since/--until its leaves in that range.
        #[arg(long = "source", value_name = "ID")]
        source: Option<String>,
        /// With --source: the range's start (YYYY-MM-DD from the start of that day UTC, RFC
        /// 3339, or epoch ms).
        #[arg(long = "since", value_name = "DATE")]
        since: Option<String>,
        /// With --source: the range's end, inclusive (YYYY-MM-DD to the end of that day).
        #[arg(long = "until", value_name = "DATE")]
        until: Option<String>,
    },
    /// Write the store (or some sources, or a window of time) to a portable archive: JSON
    /// Lines, a versioned header line first (README "Your data"). Nothing forgotten is in it.
    Export {
        /// Only this source (repeatable; default: every source).
        #[arg(long = "source", value_name = "ID")]
        source: Vec<String>,
        /// Only leaves from this time on (YYYY-MM-DD, RFC 3339, or epoch ms), and the
        /// summaries wholly inside the window.
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// Only leaves up to this time, inclusive (YYYY-MM-DD to the end of that day).
        #[arg(long, value_name = "DATE")]
        until: Option<String>,
        /// The archive file (`-`: stdout).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Build the store from an archive `memtree export` wrote: into a missing or empty store,
    /// atomically (it holds everything afterwards, or does not exist); a store that holds
    /// something only with --merge, which writes the archive as an import does.
    Restore {
        /// The archive (`-`: stdin).
        file: PathBuf,
        /// Into a store that holds something: add what it lacks, as an import would.
        #[arg(long)]
        merge: bool,
    },
    /// What forgets hold back from later imports: one record per forget, by id and time
    /// (ids and text hashes, never text).
    Forgotten,
    /// Serve the memory_tree and memory_recall tools over MCP on stdio (for an assistant host).
    Mcp {
        /// Only these tree scopes (source ids) are visible (repeatable; default: everything).
        #[arg(long = "scope")]
        scope: Vec<String>,
        /// Create the store when there is none (the host's first run); without it a missing
        /// store is an error, as for every read.
        #[arg(long)]
        create: bool,
        /// Also serve `memory_forget` (forget a leaf, a source or a range, with a receipt):
        /// off unless the host allows it.
        #[arg(long = "allow-forget")]
        allow_forget: bool,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
}

fn run(cli: &Cli) -> Result<()> {
    match &cli.cmd {
        Cmd::Tool { schema: true, .. } => return print(cli, &memtree::tool::memory_tree_schema()),
        Cmd::Recall { schema: true, .. } => return print(cli, &memtree::tool::memory_recall_schema()),
        _ => {}
    }
    if let Cmd::Bench { what } = &cli.cmd {
        return bench::run_bench(cli, what);
    }
    let dir = match &cli.store {
        Some(d) => d.clone(),
        None => default_store()?,
    };
    // An export reads rows only: neither the model nor the vectors it would load.
    let opts = open_options_for(cli, !matches!(cli.cmd, Cmd::Export { .. }))?;
    if let Cmd::Ask(a) = &cli.cmd {
        if !memtree::store_exists(&dir) {
            return Err(no_store(cli, &dir));
        }
        return ask::ask(cli, &dir, opts, a);
    }
    if let Cmd::Restore { file, merge } = &cli.cmd {
        let shown = Shown::for_stderr(cli.quiet)?;
        let out = archive::restore(&dir, file, opts, *merge, shown)
            .with_context(|| format!("restoring {} into {}", file.display(), dir.display()))?;
        return print(cli, &out);
    }
    // A store this command creates is removed again when its import fails: a mistyped path
    // must not leave an empty store behind.
    let fresh = !dir.exists();
    let recall_call = match &cli.cmd {
        Cmd::Recall { json, .. } => Some(memtree::tool::parse_recall(&json_arg(json)?)?),
        _ => None,
    };
    // Read commands never wait for another process's write (an import while the assistant
    // runs): they try the writer lock once and read through a reader when it is taken.
    // The call is parsed once, here: a malformed one fails before the store is looked at.
    let tool_call = match &cli.cmd {
        Cmd::Tool { json, .. } => Some(Ok::<_, memtree::Error>(memtree::tool::parse_call(&json_arg(json)?)?)),
        _ => None,
    };
    let reads_only = match &cli.cmd {
        Cmd::Stats | Cmd::Sources | Cmd::Forgotten | Cmd::Export { .. } => true,
        Cmd::Tool { .. } => !tool_call.as_ref().is_some_and(|c| c.as_ref().is_ok_and(|r| r.is_write())),
        _ => false,
    };
    // Reads never create a store (nor its directory): only an import, a write through the
    // tools, or an MCP server started with --create make one.
    let may_create = match &cli.cmd {
        Cmd::Ingest { .. } => true,
        Cmd::Tool { .. } => !reads_only,
        Cmd::Recall { .. } => recall_call.as_ref().is_some_and(|r| r.is_write()),
        Cmd::Mcp { create, .. } => *create,
        _ => false,
    };
    if !may_create && !memtree::store_exists(&dir) {
        return Err(no_store(cli, &dir));
    }
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
        Err(memtree::Error::Locked { .. })
            if matches!(
                cli.cmd,
                Cmd::Tool { .. } | Cmd::Stats | Cmd::Sources | Cmd::Forgotten | Cmd::Export { .. }
            ) =>
        {
            let reader =
                MemoryReader::open(&dir, opts).with_context(|| format!("opening store {} read-only", dir.display()))?;
            return run_read_only(cli, &reader, tool_call);
        }
        Err(e) => return Err(e).with_context(|| format!("opening store {}", dir.display())),
    };
    match &cli.cmd {
        Cmd::Ingest { format, path, root, prune, strict } => {
            let opts = ImportOptions { root: root.clone(), strict: *strict, prune: *prune };
            let shown = Shown::for_stderr(cli.quiet)?;
            // Only a store that still holds nothing: another process (the assistant) may have
            // written to it since, or an earlier batch of this import.
            let untouched = |mem: &Memory| {
                mem.as_reader().is_empty().unwrap_or(false)
                    && mem.as_reader().stats().is_ok_and(|s| s.counts.recall_facts == 0)
            };
            let r = match ingest(&mut mem, *format, path, &opts, shown)
                .and_then(|r| nothing_read(path, &r, *strict).map(|n| (r, n)))
            {
                Ok(r) => r,
                Err(e) => {
                    if fresh && untouched(&mem) {
                        drop(mem);
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                    return Err(e);
                }
            };
            let (r, nothing) = r;
            // An input with nothing to read creates no store (it was said on stderr, and the
            // summary's `warnings` say it too).
            if nothing.is_some() && fresh && untouched(&mem) {
                drop(mem);
                let _ = std::fs::remove_dir_all(&dir);
                let mut out = ingest_json(&r, path, nothing.as_deref());
                out["vectors"] = 0.into();
                return print(cli, &out);
            }
            let mut phase: Option<Phase> = None;
            let vectors = mem.embed_pending(|p| {
                phase.get_or_insert_with(|| Phase::new(shown, "vectors", p.total)).update(p.done, p.total);
            })?;
            let mut out = ingest_json(&r, path, nothing.as_deref());
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
                    "memtree: the store at {} holds nothing yet; import with `memtree --store {} ingest --format FORMAT PATH`",
                    dir.display(),
                    dir.display()
                );
            }
            print(cli, &out)?;
        }
        Cmd::Recall { .. } => {
            let req = recall_call.context("a recall command carries its call")?;
            let out = memtree::tool::memory_recall(&mut mem, req)?;
            print(cli, &out)?;
        }
        Cmd::Stats => print(cli, &serde_json::to_value(mem.as_reader().stats()?)?)?,
        Cmd::Sources => print(cli, &sources_json(mem.as_reader())?)?,
        Cmd::Forgotten => print(cli, &forgotten_json(mem.as_reader())?)?,
        Cmd::Export { source, since, until, out } => {
            let filter = archive::filter(source, since.as_deref(), until.as_deref())?;
            let counts = archive::export(mem.as_reader(), out, &filter, Shown::for_stderr(cli.quiet)?)?;
            if out != std::path::Path::new("-") {
                print(cli, &serde_json::to_value(counts)?)?;
            }
        }
        Cmd::Forget { undo: Some(id), leaf, source, since, until } => {
            if leaf.is_some() || source.is_some() || since.is_some() || until.is_some() {
                anyhow::bail!("--undo takes a forget back: it takes no --leaf, --source, --since or --until");
            }
            let record = mem.unforget(*id).map_err(|e| match e {
                memtree::Error::ForgetRecordNotFound { .. } => anyhow::anyhow!("{e} (`memtree forgotten` lists them)"),
                e => e.into(),
            })?;
            print(cli, &serde_json::json!({"undone": forget_record_json(&record)}))?;
        }
        Cmd::Forget { leaf, source, since, until, .. } => {
            let what = forget::grain(leaf.as_deref(), source.as_deref(), since.as_deref(), until.as_deref())?;
            let receipt = mem.forget(&what).map_err(|e| match e {
                memtree::Error::SourceNotFound { .. } => anyhow::anyhow!("{e} (`memtree sources` lists them)"),
                e => e.into(),
            })?;
            print(cli, &serde_json::to_value(&receipt)?)?;
        }
        Cmd::Reindex => {
            // One long call: its phase says how long it has run, every interval.
            let mut phase = Phase::open(Shown::for_stderr(cli.quiet)?, "reindex");
            mem.reindex()?;
            phase.finish(true);
            print(cli, &serde_json::to_value(mem.as_reader().stats()?)?)?;
        }
        Cmd::Mcp { scope, allow_forget, .. } => {
            let scope = if scope.is_empty() { Scope::all() } else { Scope::only(scope.iter().cloned()) };
            let mut server = memtree::McpServer::new(mem, scope).allow_forget(*allow_forget);
            if let Some(w) = worker {
                server = server.with_background(w);
            }
            memtree::serve_stdio(server)?;
        }
        Cmd::Bench { .. } | Cmd::Restore { .. } | Cmd::Ask(_) => unreachable!("handled above"),
    }
    Ok(())
}

/// A read of a store that does not exist: the error, naming the command that makes one.
fn no_store(cli: &Cli, dir: &std::path::Path) -> anyhow::Error {
    let flag = cli.store.as_ref().map(|d| format!(" --store {}", d.display())).unwrap_or_default();
    let missing = memtree::Error::NoStore { dir: dir.to_path_buf() };
    anyhow::anyhow!("{missing} (nothing created); make one with `memtree{flag} ingest --format FORMAT PATH`")
}

fn main() {
    // Freed memory back to the system: an import with the model within 400 MB (issue 28).
    memtree::tune_malloc();
    let cli = Cli::parse();
    if let Err(e) = run(&cli) {
        if is_closed_pipe(&e) {
            return;
        }
        // `{:#}`: the error and its causes, `: `-separated. The engine's errors never repeat
        // their cause in their own message (`Error`'s chain policy), so each shows once.
        eprintln!("memtree: {e:#}");
        std::process::exit(1);
    }
}
