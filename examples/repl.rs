//! The memtree REPL: ask a store questions in plain words, run any `memory_tree` mode, browse
//! the results as tables. `cargo run --release --example repl [-- --store DIR] [--demo]`.
//!
//! A plain line goes to `walk`; `:<mode> key=value ...` (or `:mode <mode> ...`) and a raw JSON
//! line run any mode; `:help` lists the rest. With a terminal it has line editing, a history
//! file in the store folder and tab completion; with stdin as a pipe it reads one command per
//! line, prints results on stdout and notices on stderr, and stops at end of input.
//!
//! Tables fit the terminal stdout is (its width read again for every table): one row a line,
//! the text taking what the other columns leave, fewer columns on a narrow terminal. When
//! stdout is a pipe or a file the width is `--width`, else `$COLUMNS`, else 160 (`table.rs`).
//!
//! With the dense model, `:import` and `:demo` return once what they wrote is durable and
//! lexically searchable; a background worker (`BackgroundEmbedder`) makes the vectors after,
//! and `:stats` shows how far it is. Questions asked meanwhile rank with the vectors there are.

use anyhow::{Context as _, Result, anyhow, bail};
use clap::Parser;
use memtree::Scope;
use memtree::tool::{self, FieldSpec, MODE_NAMES, RECALL_OPS, RecallRequest, Request};
use memtree::{BackgroundEmbedder, Clock, Embedding, Memory, OpenOptions, SystemClock};
use memtree::{Format, Parsed};
use render::table::{self, Column, Table};
use render::time;
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Editor, Helper, history::DefaultHistory};
use serde_json::{Map, Value, json};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

// Shared with the `memtree` binary: the tables and the times both programs print.
#[path = "../src/bin/memtree/render/mod.rs"]
mod render;

#[derive(Parser)]
#[command(name = "repl", about = "Ask a memtree store questions (plain lines go to `walk`; :help for more)")]
struct Args {
    /// Store directory (default: memtree/ under the platform's data directory, like the CLI).
    #[arg(long)]
    store: Option<PathBuf>,
    /// Load the demo corpus into an empty store without asking (the only way when stdin is
    /// not a terminal).
    #[arg(long)]
    demo: bool,
    /// Folder with the embedding model (default: as the CLI finds it).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Run without the dense model.
    #[arg(long)]
    no_model: bool,
    /// Folder with a cross-encoder that re-scores walk's top hits (README "Reranking").
    #[arg(long, value_name = "DIR")]
    reranker: Option<PathBuf>,
    /// How many of walk's hits the reranker re-scores (1 to 100).
    #[arg(long, value_name = "N", default_value_t = memtree::DEFAULT_RERANK_TOP as u64,
          value_parser = clap::value_parser!(u64).range(1..=memtree::MAX_RERANK_TOP as u64))]
    rerank_top: u64,
    /// Lay tables out for this many columns (default: the terminal's width; when stdout is not
    /// a terminal, $COLUMNS, else 160).
    #[arg(long, value_parser = clap::value_parser!(u16).range(20..))]
    width: Option<u16>,
    /// The engine's "now" (YYYY-MM-DD, the end of that day UTC, or an RFC 3339 time), as
    /// the CLI's `--now`: relative questions and the demo's dates follow it (`:now` too).
    #[arg(long, value_name = "DATE", value_parser = time::now_arg)]
    now: Option<i64>,
}

/// The session's clock: the system's, or a fixed "now" set by `--now` or `:now DATE`. The
/// store reads it on every question, so `:now` takes effect at once.
#[derive(Debug, Clone)]
struct SessionClock(Arc<AtomicI64>);

/// The value that means "no fixed now: the system clock".
const SYSTEM_TIME: i64 = i64::MIN;

impl SessionClock {
    fn new(fixed: Option<i64>) -> Self {
        SessionClock(Arc::new(AtomicI64::new(fixed.unwrap_or(SYSTEM_TIME))))
    }

    fn set(&self, fixed: Option<i64>) {
        self.0.store(fixed.unwrap_or(SYSTEM_TIME), Ordering::SeqCst);
    }

    fn fixed(&self) -> Option<i64> {
        Some(self.0.load(Ordering::SeqCst)).filter(|&ms| ms != SYSTEM_TIME)
    }
}

impl Clock for SessionClock {
    fn now_ms(&self) -> i64 {
        self.fixed().unwrap_or_else(|| SystemClock.now_ms())
    }
}

/// The demo corpus shipped beside this example.
fn demo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join("demo")
}

const COMMANDS: &[(&str, &str)] = &[
    (":help", "this text"),
    (":mode", "<mode> key=value ...   run any memory_tree mode (also :<mode> key=value ...)"),
    (":drill", "ID|# [DEPTH]           children of a summary (drill_down)"),
    (":leaves", "ID|# ...              full text of leaves (fetch_leaves)"),
    (":entities", "NAME                  people, projects, hashtags, addresses (search_entities)"),
    (":window", "FROM..TO [key=value]  what happened between two dates, e.g. 2023-05-01..2023-05-08"),
    (":recall", "key=value ...         the memory_recall tool (op=search|put|forget|list)"),
    (":stats", "counts and sizes of the store"),
    (":sources", "what the store holds, one line per source"),
    (":forget", "SOURCE_ID [FROM..TO] | leaf ID|#   forget a source, its leaves in a range, or one leaf"),
    (":json", "toggle raw JSON output"),
    (
        ":import",
        "FORMAT PATH           chat-jsonl, mbox, slack, chatgpt, claude, markdown [--prune] [--strict] or locomo",
    ),
    (":demo", "load the demo corpus (re-dated to end last week)"),
    (":now", "[DATE|system]          show or set the clock relative questions use (YYYY-MM-DD, RFC 3339)"),
    (":quit", "leave (also Ctrl-D, Ctrl-C)"),
];

/// The import formats as the REPL lists them: the demo's kinds of data first.
const FORMATS: [Format; 7] =
    [Format::ChatJsonl, Format::Mbox, Format::Slack, Format::ChatGpt, Format::Claude, Format::Markdown, Format::Locomo];

/// The names of [`FORMATS`], comma-separated.
fn format_names() -> String {
    FORMATS.map(Format::name).join(", ")
}

/// The help text, wrapped to `width` columns.
fn help(width: usize) -> String {
    let intro = [
        "Type a question to search with `walk`, e.g. `when is the Lisbon offsite?`",
        "A JSON line runs memory_tree (or memory_recall when it has `op`): {\"mode\":\"search_entities\",\"query\":\"heron\"}",
        "# in :drill/:leaves is a row number of the last table. Values in key=value are JSON when they parse.",
    ];
    let mut lines: Vec<String> = intro.iter().flat_map(|p| table::wrap(p, width, 2)).collect();
    lines.push(String::new());
    for (c, d) in COMMANDS {
        // The description continues under itself: 2 + 10 + 1 columns in.
        let wrapped = table::wrap(&format!("  {c:<10} {d}"), width, 13);
        lines.extend(wrapped);
    }
    lines.push(String::new());
    lines.extend(table::wrap(&format!("modes: {}", MODE_NAMES.join(", ")), width, 7));
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

// ---- the session --------------------------------------------------------------------------

enum Flow {
    Continue,
    Quit,
}

struct Repl {
    mem: Memory,
    json: bool,
    /// Node ids of the last table's rows, for `:drill 3` and `:leaves 1 2`.
    last_ids: Vec<String>,
    /// `--width`: lay tables out for this many columns instead of the terminal's.
    width: Option<usize>,
    clock: SessionClock,
    /// Makes the vectors of what this session writes (with the dense model).
    embedder: Option<BackgroundEmbedder>,
}

impl Repl {
    /// Run one input line; errors are the caller's to print (the session goes on).
    fn handle(&mut self, line: &str) -> Result<Flow> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(Flow::Continue);
        }
        if line.starts_with('{') || line.starts_with('[') {
            return self.raw_json(line).map(|_| Flow::Continue);
        }
        let Some(cmd_line) = line.strip_prefix(':') else {
            let args = json!({"mode": "walk", "query": line});
            self.run_tree(args)?;
            return Ok(Flow::Continue);
        };
        let (cmd, rest) = match cmd_line.split_once(char::is_whitespace) {
            Some((c, r)) => (c, r.trim()),
            None => (cmd_line, ""),
        };
        match cmd {
            "q" | "quit" | "exit" => return Ok(Flow::Quit),
            "help" | "h" | "?" => print!("{}", help(self.width())),
            "json" => {
                self.json = !self.json;
                println!("raw JSON output {}", if self.json { "on" } else { "off" });
            }
            "stats" => self.stats()?,
            "sources" => self.sources()?,
            "forget" => {
                let rest = rest.trim();
                if rest.is_empty() {
                    return Err(anyhow!(
                        "usage: :forget SOURCE_ID [FROM..TO] | :forget leaf ID|# (:sources lists them)"
                    ));
                }
                // A source id may hold spaces (a note's path): a range is the last word only
                // when it reads as one.
                let what = if let Some(leaf) = rest.strip_prefix("leaf ") {
                    memtree::Forget::Leaf(self.resolve(leaf.trim())?.into())
                } else {
                    match rest.rsplit_once(char::is_whitespace).map(|(id, r)| (id.trim(), parse_window(r))) {
                        Some((id, Ok((since_ms, until_ms)))) => {
                            memtree::Forget::Range { source: id.into(), since_ms, until_ms }
                        }
                        _ => memtree::Forget::Source(rest.into()),
                    }
                };
                let r = self.mem.forget(&what)?;
                self.nudge();
                if self.json {
                    println!("{}", serde_json::to_string_pretty(&r)?);
                } else {
                    println!(
                        "forgot {} leaves of {}; {} summaries re-sealed, {} entities gone{}",
                        r.leaves.len(),
                        r.source_id,
                        r.resealed.len(),
                        r.entities.len(),
                        if r.source_removed { "; the source is gone" } else { "" }
                    );
                }
            }
            "demo" => {
                let loaded = load_demo(&mut self.mem);
                self.nudge();
                loaded?;
            }
            "now" => {
                match rest {
                    "" => {}
                    "system" => self.clock.set(None),
                    date => self.clock.set(Some(time::now_arg(date).map_err(|r| anyhow!("now: {r}"))?)),
                }
                let ms = self.clock.now_ms();
                let now = time::rfc3339(ms, chrono::SecondsFormat::Secs).unwrap_or_else(|| ms.to_string());
                match self.clock.fixed() {
                    Some(_) => println!("now is {now} (fixed; `:now system` for the wall clock)"),
                    None => println!("now is {now} (the system clock)"),
                }
            }
            "import" => {
                let (format, path) = rest
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| anyhow!("usage: :import FORMAT PATH (FORMAT: {})", format_names()))?;
                let format = format
                    .parse::<Format>()
                    .map_err(|_| anyhow!("unknown format `{format}`; use one of {}", format_names()))?;
                // Trailing `--prune` / `--strict` as the CLI takes them (a notes folder).
                let mut path = path.trim();
                let mut opts = memtree::ImportOptions::default();
                loop {
                    if let Some(p) = path.strip_suffix("--prune") {
                        opts.prune = true;
                        path = p.trim_end();
                    } else if let Some(p) = path.strip_suffix("--strict") {
                        opts.strict = true;
                        path = p.trim_end();
                    } else {
                        break;
                    }
                }
                let imported = self.mem.import_with(format, Path::new(path), &opts, |_| {});
                // Also after a failure: the batches written before it have no vectors either.
                self.nudge();
                let s = imported?;
                let r = &s.report;
                println!(
                    "imported {path}: {} leaves, {} summaries ({} already there)",
                    r.leaves, r.summaries, r.duplicates
                );
                if let Some(n) = &s.notes {
                    println!(
                        "notes: {} added, {} replaced, {} unchanged, {} vanished{}, {} skipped",
                        n.added,
                        n.replaced,
                        n.unchanged,
                        n.vanished.len(),
                        if opts.prune { " (pruned)" } else { "" },
                        n.skipped.len()
                    );
                    for f in &n.skipped {
                        eprintln!("skipped {}: {}", f.path.display(), f.reason);
                    }
                    for f in &n.warnings {
                        eprintln!("warning: {}: {}", f.path.display(), f.reason);
                    }
                    for id in &n.vanished {
                        println!("  vanished: {id}");
                    }
                }
            }
            "drill" => {
                let mut it = rest.split_whitespace();
                let id = self.resolve(it.next().ok_or_else(|| anyhow!("usage: :drill ID|# [DEPTH]"))?)?;
                let mut args = json!({"mode": "drill_down", "node_id": id});
                if let Some(d) = it.next() {
                    args["max_depth"] =
                        json!(d.parse::<i64>().map_err(|_| anyhow!("DEPTH must be a number, got `{d}`"))?);
                }
                self.run_tree(args)?;
            }
            "leaves" => {
                if rest.is_empty() {
                    bail!("usage: :leaves ID|# ...");
                }
                let ids = rest.split_whitespace().map(|t| self.resolve(t)).collect::<Result<Vec<_>>>()?;
                self.run_tree(json!({"mode": "fetch_leaves", "chunk_ids": ids}))?;
            }
            "entities" => {
                if rest.is_empty() {
                    bail!("usage: :entities NAME");
                }
                self.run_tree(json!({"mode": "search_entities", "query": rest, "limit": 20}))?;
            }
            "window" => {
                let (range, extra) = match rest.split_once(char::is_whitespace) {
                    Some((r, e)) => (r, e),
                    None => (rest, ""),
                };
                let (since, until) = parse_window(range)?;
                let mut args = key_values("cover_window", extra)?;
                args.insert("mode".into(), json!("cover_window"));
                args.insert("since_ms".into(), json!(since));
                args.insert("until_ms".into(), json!(until));
                self.run_tree(Value::Object(args))?;
            }
            "recall" => {
                let args = key_values("memory_recall", rest)?;
                self.run_recall(Value::Object(args))?;
            }
            "mode" => {
                let (mode, rest) = match rest.split_once(char::is_whitespace) {
                    Some((m, r)) => (m, r),
                    None => (rest, ""),
                };
                if mode.is_empty() {
                    bail!("usage: :mode <mode> key=value ...  (modes: {})", MODE_NAMES.join(", "));
                }
                self.run_mode(mode, rest)?;
            }
            m if MODE_NAMES.contains(&m) => self.run_mode(m, rest)?,
            other => bail!("unknown command `:{other}`; type :help for the list"),
        }
        Ok(Flow::Continue)
    }

    fn run_mode(&mut self, mode: &str, rest: &str) -> Result<()> {
        let mut args = key_values(mode, rest)?;
        args.insert("mode".into(), json!(mode));
        self.run_tree(Value::Object(args))
    }

    /// A JSON line: `memory_recall` when it has `op` and no `mode`, else `memory_tree`.
    fn raw_json(&mut self, line: &str) -> Result<()> {
        match serde_json::from_str::<Value>(line) {
            Ok(v) if v.get("op").is_some() && v.get("mode").is_none() => self.run_recall(v),
            Ok(v) => self.run_tree(v),
            Err(e) => bail!("malformed JSON: {e}"),
        }
    }

    fn run_tree(&mut self, args: Value) -> Result<()> {
        let t = Instant::now();
        let req = Request::from_json(&args)?;
        let write = req.is_write();
        let out = serde_json::to_value(tool::call(&mut self.mem, req, &Scope::all())?)?;
        if write {
            self.nudge();
        }
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let mode = args["mode"].as_str().unwrap_or("?").to_string();
        self.show(&mode, &out, ms)
    }

    fn run_recall(&mut self, args: Value) -> Result<()> {
        let t = Instant::now();
        let out = tool::memory_recall(&mut self.mem, RecallRequest::from_json(&args)?)?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        self.show("memory_recall", &out, ms)
    }

    /// A row number of the last table, a full node id, or a unique prefix of a shown id.
    fn resolve(&self, token: &str) -> Result<String> {
        let token = token.trim_start_matches('#');
        if let Ok(n) = token.parse::<usize>() {
            return self
                .last_ids
                .get(n.wrapping_sub(1))
                .cloned()
                .ok_or_else(|| anyhow!("no row {n} in the last result ({} rows)", self.last_ids.len()));
        }
        let matches: Vec<&String> = self.last_ids.iter().filter(|id| id.starts_with(token)).collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            _ => Ok(token.to_string()), // a full id (or let the engine say it is unknown)
        }
    }

    /// Tell the background worker that a write may have left nodes without vectors.
    fn nudge(&self) {
        if let Some(e) = &self.embedder {
            e.nudge();
        }
    }

    fn stats(&self) -> Result<()> {
        let s = self.mem.as_reader().stats()?;
        let bg = self.embedder.as_ref().map(BackgroundEmbedder::status);
        if self.json {
            let mut v = serde_json::to_value(&s)?;
            if let Some(b) = &bg {
                v["embedding"] = json!({"busy": b.busy, "done": b.done, "total": b.total,
                    "embedded": b.embedded, "error": b.error, "stopped": b.stopped});
            }
            println!("{}", serde_json::to_string_pretty(&v)?);
            return Ok(());
        }
        let c = &s.counts;
        let levels: Vec<String> =
            c.summaries_per_level.iter().enumerate().map(|(i, n)| format!("L{}: {n}", i + 1)).collect();
        println!("store      {}", self.mem.as_reader().dir().display());
        println!("sources    {}   trees {}", c.sources, c.trees);
        println!("leaves     {}", c.leaves);
        println!("summaries  {}", if levels.is_empty() { "0".into() } else { levels.join(", ") });
        println!("entities   {}   edges {}", c.entities, c.edges);
        println!("vectors    {}   dense model: {}", c.vectors, s.embedder.as_deref().unwrap_or("off (lexical only)"));
        if s.vectors_pending > 0 || bg.as_ref().is_some_and(|b| b.busy || b.error.is_some()) {
            println!("pending    {} nodes without a vector", s.vectors_pending);
        }
        if let Some(b) = &bg {
            if b.busy {
                // Against what is pending now: a write during the run adds to what is left.
                println!("embedding  {}/{} in the background", b.done, b.done + s.vectors_pending);
            }
            if let Some(e) = &b.error {
                println!("embedding  failed: {e} (the next write retries)");
            }
            if b.stopped {
                println!("embedding  stopped (the next session makes the rest)");
            }
        }
        println!("facts      {}", c.recall_facts);
        println!("on disk    store {}, index {}", human_bytes(s.store_bytes), human_bytes(s.index_bytes));
        Ok(())
    }

    fn sources(&self) -> Result<()> {
        let list = self.mem.as_reader().sources()?;
        if self.json {
            println!("{}", serde_json::to_string_pretty(&list)?);
            return Ok(());
        }
        let day = |ms: Option<i64>| {
            ms.and_then(chrono::DateTime::from_timestamp_millis)
                .map_or_else(|| "-".to_string(), |t| t.format("%Y-%m-%d %H:%M").to_string())
        };
        let columns = vec![
            Column::new("source", 0, 0),
            Column::new("kind", 8, 1),
            Column::new("leaves", 7, 3).right(),
            Column::new("summaries", 9, 5).right(),
            Column::new("first", 16, 4),
            Column::new("last", 16, 2),
        ];
        let rows = list
            .iter()
            .map(|s| {
                vec![
                    s.source_id.to_string(),
                    s.kind.to_string(),
                    s.leaves.to_string(),
                    s.summaries.to_string(),
                    day(s.first_ms),
                    day(s.last_ms),
                ]
            })
            .collect();
        println!("{}", Table { columns, text: 0, rows }.render(self.width()));
        println!("({} sources)", list.len());
        Ok(())
    }

    // ---- output ---------------------------------------------------------------------------

    fn show(&mut self, mode: &str, out: &Value, ms: f64) -> Result<()> {
        let hits: Option<&Vec<Value>> = match out {
            Value::Object(o) if o.contains_key("hits") => o.get("hits").and_then(Value::as_array),
            Value::Array(a) if a.iter().all(|h| h.get("node_id").is_some()) => Some(a),
            _ => None,
        };
        if let Some(h) = hits {
            self.last_ids = h.iter().filter_map(|x| x["node_id"].as_str().map(String::from)).collect();
        }
        if self.json {
            println!("{}", serde_json::to_string_pretty(out)?);
            println!("({mode}, {ms:.1} ms)");
            return Ok(());
        }
        let summary = match (out, hits) {
            (Value::Object(o), Some(h)) if o.contains_key("total") => {
                if h.is_empty() && mode == "drill_down" {
                    println!("no hits (a leaf or an unknown id has no children; :leaves shows a leaf's text)");
                } else if h.is_empty() {
                    println!("no hits");
                } else {
                    println!("{}", self.hit_table(h));
                }
                let total = o["total"].as_u64().unwrap_or(h.len() as u64);
                format!("{} of {total} hits", h.len())
            }
            (_, Some(h)) => {
                // fetch_leaves: the full text is the point.
                for (i, leaf) in h.iter().enumerate() {
                    println!(
                        "[{}] {}  {}  {}  {}",
                        i + 1,
                        leaf["node_id"].as_str().unwrap_or_default(),
                        leaf["tree_scope"].as_str().unwrap_or_default(),
                        short_time(&leaf["time_range_start"], &leaf["time_range_end"]),
                        leaf["source_ref"].as_str().unwrap_or_default()
                    );
                    for l in leaf["content"].as_str().unwrap_or_default().lines() {
                        println!("    {l}");
                    }
                }
                format!("{} leaves", h.len())
            }
            (Value::Array(a), None) if a.iter().all(|e| e.get("canonical_id").is_some()) => {
                println!("{}", entity_table(a, self.width()));
                format!("{} entities", a.len())
            }
            (Value::Array(a), None) if a.iter().all(|e| e.get("key").is_some()) => {
                println!("{}", fact_table(a, self.width()));
                format!("{} facts", a.len())
            }
            (Value::Object(o), None) if o.contains_key("message") => {
                println!("{}", o["message"].as_str().unwrap_or_default());
                "ok".to_string()
            }
            _ => {
                println!("{}", serde_json::to_string_pretty(out)?);
                "ok".to_string()
            }
        };
        println!("({mode}: {summary}, {ms:.1} ms)");
        Ok(())
    }

    fn hit_table(&self, hits: &[Value]) -> String {
        // Display order; `keep` says what a narrow terminal drops first (id, then kind, score,
        // time, scope); the rank and the text always stay.
        let columns = vec![
            Column::new("#", 4, 0).right(),
            Column::new("id", 9, 6),
            Column::new("kind", 6, 5),
            Column::new("scope", 24, 1),
            Column::new("time", 17, 2),
            Column::new("score", 6, 3).right(),
            Column::new("text", 0, 0),
        ];
        let mut rows = Vec::new();
        for (i, h) in hits.iter().enumerate() {
            let kind = match h["node_kind"].as_str() {
                Some("summary") => format!("sum L{}", h["level"].as_u64().unwrap_or(1)),
                Some(k) => k.to_string(),
                None => "?".into(),
            };
            // The passage that matches the question, when the engine picked one out of a long
            // leaf; else the content from its start.
            let text = h["snippet"]["text"].as_str().or_else(|| h["content"].as_str()).unwrap_or_default();
            rows.push(vec![
                (i + 1).to_string(),
                h["node_id"].as_str().unwrap_or_default().to_string(),
                kind,
                h["tree_scope"].as_str().unwrap_or_default().to_string(),
                short_time(&h["time_range_start"], &h["time_range_end"]),
                format_score(h["score"].as_f64().unwrap_or(0.0)),
                text.to_string(),
            ]);
        }
        Table { columns, text: 6, rows }.render(self.width())
    }

    /// The width to lay tables out for, read again for every table (a resized terminal).
    fn width(&self) -> usize {
        table::current_width(self.width)
    }
}

fn entity_table(list: &[Value], width: usize) -> String {
    let columns = vec![
        Column::new("entity", 0, 0),
        Column::new("kind", 12, 1),
        Column::new("mentions", 8, 2).right(),
        Column::new("last seen", 16, 3),
    ];
    let rows = list
        .iter()
        .map(|e| {
            let last = e["last_seen_ms"]
                .as_i64()
                .and_then(chrono::DateTime::from_timestamp_millis)
                .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default();
            vec![
                e["canonical_id"].as_str().unwrap_or_default().to_string(),
                e["kind"].as_str().unwrap_or_default().to_string(),
                e["mention_count"].to_string(),
                last,
            ]
        })
        .collect();
    Table { columns, text: 0, rows }.render(width)
}

/// `memory_recall` facts: the content takes the rest of the width.
fn fact_table(list: &[Value], width: usize) -> String {
    let columns = vec![
        Column::new("namespace", 14, 2),
        Column::new("key", 24, 0),
        Column::new("score", 6, 3).right(),
        Column::new("content", 0, 0),
    ];
    let rows = list
        .iter()
        .map(|f| {
            vec![
                f["namespace"].as_str().unwrap_or_default().to_string(),
                f["key"].as_str().unwrap_or_default().to_string(),
                format!("{:.2}", f["score"].as_f64().unwrap_or(0.0)),
                f["content"].as_str().unwrap_or_default().to_string(),
            ]
        })
        .collect();
    Table { columns, text: 3, rows }.render(width)
}

fn format_score(s: f64) -> String {
    if s.fract() == 0.0 && s.abs() < 1e6 { format!("{s:.0}") } else { format!("{s:.3}") }
}

/// `2023-05-02 10:20` for a point, `2023-05-02..05-04` for a span over days.
fn short_time(start: &Value, end: &Value) -> String {
    let parse = |v: &Value| v.as_str().and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok());
    match (parse(start), parse(end)) {
        (Some(a), Some(b)) if a.date_naive() != b.date_naive() => {
            format!("{}..{}", a.format("%Y-%m-%d"), b.format("%m-%d"))
        }
        (Some(a), _) => a.format("%Y-%m-%d %H:%M").to_string(),
        _ => String::new(),
    }
}

fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

// ---- parsing ------------------------------------------------------------------------------

/// Split on white space outside quotes and brackets; double-quoted text keeps its quotes (so it
/// parses as a JSON string), single quotes are removed.
fn tokens(s: &str) -> Result<Vec<String>> {
    let (mut out, mut cur) = (Vec::new(), String::new());
    let (mut quote, mut depth, mut escaped) = (None::<char>, 0i32, false);
    for c in s.chars() {
        match quote {
            Some(q) => {
                if q == '"' && escaped {
                    escaped = false;
                } else if q == '"' && c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                    if q == '\'' {
                        continue;
                    }
                }
                cur.push(c);
                continue;
            }
            None => match c {
                '"' => quote = Some('"'),
                '\'' => {
                    quote = Some('\'');
                    continue;
                }
                '[' | '{' => depth += 1,
                ']' | '}' => depth -= 1,
                c if c.is_whitespace() && depth <= 0 => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    continue;
                }
                _ => {}
            },
        }
        cur.push(c);
    }
    if let Some(q) = quote {
        bail!("unclosed {q} quote");
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// The JSON type a mode's field takes, from the dispatcher's field tables (`memory_recall`:
/// any op's field of that name).
fn field_type(mode: &str, key: &str) -> Option<&'static str> {
    let fields: Vec<&FieldSpec> = if mode == "memory_recall" {
        RECALL_OPS.iter().flat_map(|o| o.fields).collect()
    } else {
        tool::mode(mode)?.fields.iter().collect()
    };
    fields.into_iter().find(|f| f.name == key).map(|f| f.ty.json_type())
}

/// The field that bare words fill, from the mode's row: `:walk when is the launch` =
/// `:walk query="when is the launch"` (`:recall` words go to the `search` op's).
fn primary_field(mode: &str) -> Option<&'static str> {
    if mode == "memory_recall" {
        return RECALL_OPS.first()?.primary;
    }
    tool::mode(mode)?.primary
}

/// `key=value ...` into a JSON object: values are JSON when they parse (unless the field is a
/// string), else strings; bare words extend the previous string value or fill the primary
/// field.
fn key_values(mode: &str, s: &str) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    let mut last_string: Option<String> = None;
    for tok in tokens(s)? {
        let kv = tok
            .split_once('=')
            .filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if let Some((k, raw)) = kv {
            let parsed = serde_json::from_str::<Value>(raw).ok();
            let v = match (parsed, field_type(mode, k)) {
                (Some(Value::String(s)), _) => Value::String(s),
                (Some(_), Some("string")) | (None, _) => Value::String(raw.to_string()),
                (Some(v), _) => v,
            };
            last_string = v.is_string().then(|| k.to_string());
            out.insert(k.to_string(), v);
            continue;
        }
        let word = tok.trim_matches('"').to_string();
        if let Some(k) = &last_string
            && let Some(Value::String(prev)) = out.get_mut(k)
        {
            prev.push(' ');
            prev.push_str(&word);
            continue;
        }
        match primary_field(mode) {
            Some("chunk_ids") => {
                let ids = out.entry("chunk_ids").or_insert_with(|| json!([]));
                ids.as_array_mut().ok_or_else(|| anyhow!("chunk_ids given twice"))?.push(json!(word));
            }
            Some(p) if !out.contains_key(p) => {
                out.insert(p.to_string(), json!(word));
                last_string = Some(p.to_string());
            }
            _ => bail!("expected key=value, got `{tok}` (fields of {mode}: see :help or the JSON Schema)"),
        }
    }
    Ok(out)
}

/// `2023-05-01..2023-05-08` (whole days, inclusive, UTC), a single day, or RFC 3339 instants
/// (or epoch ms: the CLI's `--since`/`--until` bounds).
fn parse_window(s: &str) -> Result<(i64, i64)> {
    let usage = || anyhow!("usage: :window FROM..TO, e.g. 2023-05-01..2023-05-08 (dates or RFC 3339 times)");
    let (a, b) = s.split_once("..").unwrap_or((s, s));
    if a.trim().is_empty() || b.trim().is_empty() {
        return Err(usage());
    }
    Ok((time::bound(a, false).map_err(|_| usage())?, time::bound(b, true).map_err(|_| usage())?))
}

// ---- loading data -------------------------------------------------------------------------

/// The demo's chat channel that opens the story (its presence means the demo is loaded).
const DEMO_CHAT_SOURCE: &str = "slack:#general";

fn load_demo(mem: &mut Memory) -> Result<()> {
    let dir = demo_dir();
    // The chat's ids carry its times: a second load on another day would add a second copy.
    if mem.as_reader().has_source(DEMO_CHAT_SOURCE)? {
        bail!("the demo corpus is already loaded (:sources lists it; :forget removes a source)");
    }
    let t = Instant::now();
    // The notes carry their dates in front matter (`updated:`), which the importer reads: the
    // CLI's `ingest --format markdown examples/demo/notes` dates them the same.
    let notes = Format::Markdown.read(&dir.join("notes"))?;
    let mut inputs =
        [Format::ChatJsonl.read(&dir.join("chat.jsonl"))?, Format::Mbox.read(&dir.join("mail.mbox"))?, notes];
    // Re-dated so the story's final week is last week (the engine's clock: `--now` applies):
    // "what went wrong last week?" then asks about it. By whole weeks, so the weekdays the
    // story's text names stay true and every time of day stays as written.
    let newest = inputs.iter().filter_map(Parsed::latest_ms).max().unwrap_or(0);
    let delta = memtree::last_week_shift(newest, mem.as_reader().now_ms());
    // One flush after all three inputs, so every summary is sealed knowing all the names.
    let mut r = memtree::IngestReport::default();
    for input in &mut inputs {
        input.shift_time(delta);
    }
    for input in inputs {
        r.absorb(&mem.write_parsed(input, |_| {})?);
    }
    r.absorb(&mem.flush()?);
    let s = mem.as_reader().stats()?;
    eprintln!(
        "loaded the demo corpus from {}: {} sources, {} leaves, {} summaries ({} new leaves) in {:.1} s",
        dir.display(),
        s.counts.sources,
        s.counts.leaves,
        s.counts.summaries_per_level.iter().sum::<u64>(),
        r.leaves,
        t.elapsed().as_secs_f64()
    );
    eprintln!(
        "Larkspur Labs, a month ending last week (May 2023 in the story): six people, the Atlas database migration, the Heron driver app, a Lisbon offsite.\n\
         Try: who is Sam's onboarding buddy? · what caused INC-42? · what went wrong last week? · :entities heron"
    );
    Ok(())
}

// ---- terminal -----------------------------------------------------------------------------

/// Tab completion of `:commands`, mode names, field names and import formats.
struct Complete;

impl Completer for Complete {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &rustyline::Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let head = &line[..pos];
        let start = head.rfind(char::is_whitespace).map(|i| i + 1).unwrap_or(0);
        let word = &head[start..];
        let words: Vec<&str> = head[..start].split_whitespace().collect();
        let pair = |s: String| Pair { display: s.clone(), replacement: s };
        let candidates: Vec<String> = match words.as_slice() {
            [] if word.starts_with(':') => COMMANDS
                .iter()
                .map(|(c, _)| c.to_string())
                .chain(MODE_NAMES.iter().map(|m| format!(":{m}")))
                .filter(|c| c.starts_with(word))
                .map(|c| format!("{c} "))
                .collect(),
            [":mode"] => MODE_NAMES.iter().filter(|m| m.starts_with(word)).map(|m| format!("{m} ")).collect(),
            [":import"] => {
                FORMATS.iter().map(|f| f.name()).filter(|f| f.starts_with(word)).map(|f| format!("{f} ")).collect()
            }
            [first, rest @ ..] if first.starts_with(':') && !word.contains('=') => {
                let mode = match (*first, rest) {
                    (":mode", [m, ..]) => *m,
                    (c, _) => c.trim_start_matches(':'),
                };
                tool::mode(mode)
                    .into_iter()
                    .flat_map(|m| m.fields.iter().map(|f| format!("{}=", f.name)))
                    .filter(|f| f.starts_with(word))
                    .collect()
            }
            _ => Vec::new(),
        };
        Ok((start, candidates.into_iter().map(pair).collect()))
    }
}

impl Hinter for Complete {
    type Hint = String;
}
impl Highlighter for Complete {}
impl Validator for Complete {}
impl Helper for Complete {}

/// The session's store, and the worker that makes its vectors when there is a model: the
/// store is opened deferred, so no write (nor this open) waits for the model.
fn open(args: &mut Args, clock: &SessionClock) -> Result<(Memory, Option<BackgroundEmbedder>)> {
    let dir = match &args.store {
        Some(d) => d.clone(),
        None => memtree::default_store_dir().context("no platform data directory; pass --store DIR")?,
    };
    // A session only reads until told to write: a missing store is made only to load the
    // demo into (--demo, or a yes at a terminal); otherwise it is an error, and nothing is
    // created.
    if !args.demo && !memtree::store_exists(&dir) {
        // A yes is the same as --demo.
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
    let reranker = match &args.reranker {
        Some(dir) => Some(
            memtree::Reranker::load(dir, args.rerank_top as usize)
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
fn create_with_demo(dir: &std::path::Path) -> Result<bool> {
    eprint!("No store at {}. Create it and load the demo corpus? [Y/n] ", dir.display());
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "" | "y" | "yes"))
}

fn run() -> Result<()> {
    let mut args = Args::parse();
    let tty = std::io::stdin().is_terminal();
    let clock = SessionClock::new(args.now);
    let (mem, embedder) = open(&mut args, &clock)?;
    let width = args.width.map(usize::from);
    let mut repl = Repl { mem, json: false, last_ids: Vec::new(), width, clock, embedder };
    let history = repl.mem.as_reader().dir().join("repl_history.txt");
    let empty = repl.mem.as_reader().stats()?.counts.sources == 0;
    let mut editor: Option<Editor<Complete, DefaultHistory>> = None;
    if tty {
        let config = rustyline::Config::builder().completion_type(rustyline::CompletionType::List).build();
        let mut ed = Editor::<Complete, DefaultHistory>::with_config(config)?;
        ed.set_helper(Some(Complete));
        let _ = ed.load_history(&history); // none yet on a new store
        editor = Some(ed);
    }
    eprintln!("memtree REPL · store {} · :help for commands, :quit to leave", repl.mem.as_reader().dir().display());
    if empty {
        if args.demo {
            load_demo(&mut repl.mem)?;
            repl.nudge();
        } else if let Some(ed) = editor.as_mut() {
            let answer = match ed.readline(
                "This store is empty. Load the demo corpus (a small team's month of chat, e-mail and notes)? [Y/n] ",
            ) {
                Ok(a) => a,
                Err(ReadlineError::Interrupted | ReadlineError::Eof) => return Ok(()),
                Err(e) => return Err(e.into()),
            };
            if matches!(answer.trim().to_ascii_lowercase().as_str(), "" | "y" | "yes") {
                load_demo(&mut repl.mem)?;
                repl.nudge();
            } else {
                eprintln!("Import your own data with :import FORMAT PATH ({}).", format_names());
            }
        } else {
            eprintln!("The store is empty: run with --demo to load the demo corpus, or use :import FORMAT PATH.");
        }
    }
    match editor {
        Some(mut ed) => {
            loop {
                let line = match ed.readline("memtree> ") {
                    Ok(l) => l,
                    Err(ReadlineError::Interrupted | ReadlineError::Eof) => break,
                    Err(e) => return Err(e.into()),
                };
                if !line.trim().is_empty() {
                    let _ = ed.add_history_entry(line.as_str());
                }
                match repl.handle(&line) {
                    Ok(Flow::Quit) => break,
                    Ok(Flow::Continue) => {}
                    Err(e) => eprintln!("error: {e:#}"),
                }
            }
            if let Err(e) = ed.save_history(&history) {
                eprintln!("could not save the history to {}: {e}", history.display());
            }
        }
        None => {
            for line in std::io::stdin().lock().lines() {
                let line = line.context("reading stdin")?;
                let flow = repl.handle(&line);
                std::io::stdout().flush()?;
                match flow {
                    Ok(Flow::Quit) => break,
                    Ok(Flow::Continue) => {}
                    Err(e) => eprintln!("error: {e:#}"),
                }
            }
        }
    }
    // Dropping the worker stops it at its next model call (the write in flight rolls back);
    // the next session's worker makes the rest.
    if repl.embedder.as_ref().is_some_and(|e| e.status().busy) {
        let pending = repl.mem.as_reader().stats()?.vectors_pending;
        eprintln!("stopping the background embedding ({pending} vectors pending); the next session makes them");
    }
    Ok(())
}

fn main() {
    // As the `memtree` binary: memory an import frees goes back to the system.
    memtree::tune_malloc();
    if let Err(e) = run() {
        eprintln!("repl: {e:#}");
        std::process::exit(1);
    }
}
