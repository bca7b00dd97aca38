//! The memtree REPL: ask a store questions in plain words, run any `memory_tree` mode, browse
//! the results as tables. `cargo run --release --example repl [-- --store DIR] [--demo]`.
//!
//! A plain line goes to `walk`; `:<mode> key=value ...` (or `:mode <mode> ...`) and a raw JSON
//! line run any mode; `:help` lists the rest. With a terminal it has line editing, a history
//! file in the store folder and tab completion; with stdin as a pipe it reads one command per
//! line, prints results on stdout and notices on stderr, and stops at end of input.
//!
//! This file is the session: its commands (one table, one short method each), their dispatch
//! and the loop. What it prints is drawn by `render/`, shared with the `memtree` binary: tables
//! fit the terminal stdout is (its width read again for every table), else `--width`,
//! `$COLUMNS` or 160 (`render/table.rs`).
//!
//! With the dense model, `:import` and `:demo` return once what they wrote is durable and
//! lexically searchable; a background worker (`BackgroundEmbedder`) makes the vectors after,
//! and `:stats` shows how far it is. Questions asked meanwhile rank with the vectors there are.

mod clock;
mod complete;
mod demo;
mod input;
mod open;
mod words;

// Shared with the `memtree` binary: what both programs print, and the one `--now` parser.
#[path = "../../src/bin/memtree/render/mod.rs"]
mod render;

use anyhow::{Result, anyhow, bail, ensure};
use clap::Parser;
use clock::SessionClock;
use input::Input;
use memtree::tool::{self, MODE_NAMES, RecallRequest, Request};
use memtree::{BackgroundEmbedder, Forget, Format, Memory, Scope};
use open::Args;
use render::{receipts, response, stats, table, tables, time};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

// ---- the commands -------------------------------------------------------------------------

/// One `:command`: the names it answers to (the first is the one `:help` and Tab show), its
/// line in `:help`, and what it does with the rest of the line. A mode's name is a command
/// too (`:walk ...`), read off the tool's rows.
struct Command {
    names: &'static [&'static str],
    help: &'static str,
    run: fn(&mut Repl, &str) -> Result<()>,
}

const fn cmd(names: &'static [&'static str], run: fn(&mut Repl, &str) -> Result<()>, help: &'static str) -> Command {
    Command { names, help, run }
}

const COMMANDS: &[Command] = &[
    cmd(&["help", "h", "?"], Repl::help, "this text"),
    cmd(&["mode"], Repl::mode, "<mode> key=value ...   run any memory_tree mode (also :<mode> key=value ...)"),
    cmd(&["drill"], Repl::drill, "ID|# [DEPTH]           children of a summary (drill_down)"),
    cmd(&["leaves"], Repl::leaves, "ID|# ...              full text of leaves (fetch_leaves)"),
    cmd(&["entities"], Repl::entities, "NAME                  people, projects, hashtags, addresses (search_entities)"),
    cmd(
        &["window"],
        Repl::window,
        "FROM..TO [key=value]  what happened between two dates, e.g. 2023-05-01..2023-05-08",
    ),
    cmd(&["recall"], Repl::recall, "key=value ...         the memory_recall tool (op=search|put|forget|list)"),
    cmd(&["stats"], Repl::stats, "counts and sizes of the store"),
    cmd(&["sources"], Repl::sources, "what the store holds, one line per source"),
    cmd(
        &["forget"],
        Repl::forget,
        "SOURCE_ID [FROM..TO] | leaf ID|#   forget a source, its leaves in a range, or one leaf",
    ),
    cmd(
        &["export"],
        Repl::export,
        "FILE                  write the store to a portable archive (memtree restore reads it)",
    ),
    cmd(&["json"], Repl::json, "toggle raw JSON output"),
    cmd(
        &["import"],
        Repl::import,
        "FORMAT PATH [--strict] chat-jsonl, mbox, slack, chatgpt, claude, markdown [--prune] or locomo",
    ),
    cmd(&["demo"], Repl::demo, "load the demo corpus (re-dated to end last week)"),
    cmd(
        &["now"],
        Repl::now,
        "[DATE|system]          show or set the clock relative questions use (YYYY-MM-DD, RFC 3339)",
    ),
    cmd(&["quit", "q", "exit"], Repl::quit, "leave (also Ctrl-D, Ctrl-C)"),
];

/// The import formats as the REPL lists them: the demo's kinds of data first.
const FORMATS: [Format; 7] =
    [Format::ChatJsonl, Format::Mbox, Format::Slack, Format::ChatGpt, Format::Claude, Format::Markdown, Format::Locomo];

/// The names of [`FORMATS`], comma-separated.
fn format_names() -> String {
    FORMATS.map(Format::name).join(", ")
}

// ---- the session --------------------------------------------------------------------------

struct Repl {
    mem: Memory,
    json: bool,
    quit: bool,
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
    fn handle(&mut self, line: &str) -> Result<()> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(());
        }
        if line.starts_with('{') || line.starts_with('[') {
            return self.raw_json(line);
        }
        let Some(command) = line.strip_prefix(':') else {
            return self.run_tree(json!({"mode": "walk", "query": line}));
        };
        let (name, rest) = words::first(command);
        if let Some(c) = COMMANDS.iter().find(|c| c.names.contains(&name)) {
            return (c.run)(self, rest);
        }
        if tool::mode(name).is_some() {
            return self.run_tree(Value::Object(words::call(name, rest)?));
        }
        bail!("unknown command `:{name}`; type :help for the list")
    }

    /// The help text, wrapped to the width.
    fn help(&mut self, _: &str) -> Result<()> {
        let width = self.width();
        let intro = [
            "Type a question to search with `walk`, e.g. `when is the Lisbon offsite?`",
            "A JSON line runs memory_tree (or memory_recall when it has `op`): {\"mode\":\"search_entities\",\"query\":\"heron\"}",
            "# in :drill/:leaves is a row number of the last table. Values in key=value are JSON when they parse.",
        ];
        let mut lines: Vec<String> = intro.iter().flat_map(|p| table::wrap(p, width, 2)).collect();
        lines.push(String::new());
        for c in COMMANDS {
            // The description continues under itself: 2 + 10 + 1 columns in.
            lines.extend(table::wrap(&format!("  {:<10} {}", format!(":{}", c.names[0]), c.help), width, 13));
        }
        lines.push(String::new());
        lines.extend(table::wrap(&format!("modes: {}", MODE_NAMES.join(", ")), width, 7));
        println!("{}", lines.join("\n"));
        Ok(())
    }

    fn quit(&mut self, _: &str) -> Result<()> {
        self.quit = true;
        Ok(())
    }

    fn json(&mut self, _: &str) -> Result<()> {
        self.json = !self.json;
        println!("raw JSON output {}", if self.json { "on" } else { "off" });
        Ok(())
    }

    fn mode(&mut self, rest: &str) -> Result<()> {
        let (mode, rest) = words::first(rest);
        ensure!(!mode.is_empty(), "usage: :mode <mode> key=value ...  (modes: {})", MODE_NAMES.join(", "));
        self.run_tree(Value::Object(words::call(mode, rest)?))
    }

    fn drill(&mut self, rest: &str) -> Result<()> {
        let mut it = rest.split_whitespace();
        let id = words::node_id(&self.last_ids, it.next().ok_or_else(|| anyhow!("usage: :drill ID|# [DEPTH]"))?)?;
        let mut call = json!({"mode": "drill_down", "node_id": id});
        if let Some(d) = it.next() {
            call["max_depth"] = json!(d.parse::<i64>().map_err(|_| anyhow!("DEPTH must be a number, got `{d}`"))?);
        }
        self.run_tree(call)
    }

    fn leaves(&mut self, rest: &str) -> Result<()> {
        ensure!(!rest.is_empty(), "usage: :leaves ID|# ...");
        let ids = rest.split_whitespace().map(|t| words::node_id(&self.last_ids, t)).collect::<Result<Vec<_>>>()?;
        self.run_tree(json!({"mode": "fetch_leaves", "chunk_ids": ids}))
    }

    fn entities(&mut self, rest: &str) -> Result<()> {
        ensure!(!rest.is_empty(), "usage: :entities NAME");
        self.run_tree(json!({"mode": "search_entities", "query": rest, "limit": 20}))
    }

    fn window(&mut self, rest: &str) -> Result<()> {
        let (range, rest) = words::first(rest);
        let (since, until) = words::window(range)?;
        let mut call = words::call("cover_window", rest)?;
        call.insert("since_ms".into(), json!(since));
        call.insert("until_ms".into(), json!(until));
        self.run_tree(Value::Object(call))
    }

    fn recall(&mut self, rest: &str) -> Result<()> {
        self.run_recall(Value::Object(words::key_values("memory_recall", rest)?))
    }

    fn stats(&mut self, _: &str) -> Result<()> {
        let s = self.mem.as_reader().stats()?;
        let bg = self.embedder.as_ref().map(BackgroundEmbedder::status);
        self.print(&stats::json(&s, bg.as_ref())?, || stats::page(self.mem.as_reader().dir(), &s, bg.as_ref()))
    }

    fn sources(&mut self, _: &str) -> Result<()> {
        let list = self.mem.as_reader().sources()?;
        self.print(&list, || format!("{}\n({} sources)", tables::sources(&list, self.width()), list.len()))
    }

    fn forget(&mut self, rest: &str) -> Result<()> {
        ensure!(!rest.is_empty(), "usage: :forget SOURCE_ID [FROM..TO] | :forget leaf ID|# (:sources lists them)");
        // A source id may hold spaces (a note's path): a range is the last word only when it
        // reads as one.
        let what = match rest.strip_prefix("leaf ") {
            Some(leaf) => Forget::Leaf(words::node_id(&self.last_ids, leaf.trim())?.into()),
            None => match rest.rsplit_once(char::is_whitespace).map(|(id, r)| (id.trim(), words::window(r))) {
                Some((id, Ok((since_ms, until_ms)))) => Forget::Range { source: id.into(), since_ms, until_ms },
                _ => Forget::Source(rest.into()),
            },
        };
        let r = self.mem.forget(&what)?;
        self.nudge();
        self.print(&r, || receipts::forgot(&r))
    }

    fn export(&mut self, rest: &str) -> Result<()> {
        ensure!(!rest.is_empty(), "usage: :export FILE");
        let path = Path::new(rest);
        let file = std::fs::File::create(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let c = self.mem.export(std::io::BufWriter::new(file), &memtree::ExportFilter::default(), |_| {})?;
        println!(
            "exported {} sources, {} leaves, {} summaries, {} recall facts, {} forget records to {}",
            c.sources,
            c.leaves,
            c.summaries,
            c.recall,
            c.forgotten,
            path.display()
        );
        Ok(())
    }

    fn import(&mut self, rest: &str) -> Result<()> {
        let (format, path) = words::first(rest);
        ensure!(!path.is_empty(), "usage: :import FORMAT PATH (FORMAT: {})", format_names());
        let format = format
            .parse::<Format>()
            .map_err(|_| anyhow!("unknown format `{format}`; use one of {}", format_names()))?;
        let (path, opts) = words::import_flags(path);
        let imported = self.mem.import_with(format, Path::new(path), &opts, |_| {});
        // Also after a failure: the batches written before it have no vectors either.
        self.nudge();
        let (out, notices) = receipts::imported(path, &imported?, opts.prune);
        out.iter().for_each(|l| println!("{l}"));
        notices.iter().for_each(|l| eprintln!("{l}"));
        Ok(())
    }

    fn demo(&mut self, _: &str) -> Result<()> {
        let loaded = demo::load(&mut self.mem);
        self.nudge();
        loaded
    }

    fn now(&mut self, rest: &str) -> Result<()> {
        match rest {
            "" => {}
            "system" => self.clock.set(None),
            date => self.clock.set(Some(time::now_arg(date).map_err(|reason| anyhow!("now: {reason}"))?)),
        }
        println!("{}", self.clock.said());
        Ok(())
    }

    /// A JSON line: `memory_recall` when it has `op` and no `mode`, else `memory_tree`.
    fn raw_json(&mut self, line: &str) -> Result<()> {
        match serde_json::from_str::<Value>(line) {
            Ok(v) if v.get("op").is_some() && v.get("mode").is_none() => self.run_recall(v),
            Ok(v) => self.run_tree(v),
            Err(e) => bail!("malformed JSON: {e}"),
        }
    }

    fn run_tree(&mut self, call: Value) -> Result<()> {
        let t = Instant::now();
        let req = Request::from_json(&call)?;
        let write = req.is_write();
        let out = serde_json::to_value(tool::call(&mut self.mem, req, &Scope::all())?)?;
        if write {
            self.nudge();
        }
        self.show(call["mode"].as_str().unwrap_or("?"), &call, &out, t)
    }

    fn run_recall(&mut self, call: Value) -> Result<()> {
        let t = Instant::now();
        let out = tool::memory_recall(&mut self.mem, RecallRequest::from_json(&call)?)?;
        self.show("memory_recall", &call, &out, t)
    }

    /// A response to `call` and its latency (since `t`); its nodes become the rows `#` names.
    fn show(&mut self, mode: &str, call: &Value, out: &Value, t: Instant) -> Result<()> {
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if let Some(ids) = response::node_ids(out) {
            self.last_ids = ids;
        }
        if self.json {
            println!("{}\n({mode}, {ms:.1} ms)", serde_json::to_string_pretty(out)?);
            return Ok(());
        }
        let (text, summary) = response::show(mode, call, out, self.width());
        if !text.is_empty() {
            println!("{text}");
        }
        println!("({mode}: {summary}, {ms:.1} ms)");
        Ok(())
    }

    /// A result as JSON after `:json`, else as text.
    fn print(&self, json: &impl serde::Serialize, text: impl FnOnce() -> String) -> Result<()> {
        if self.json {
            println!("{}", serde_json::to_string_pretty(json)?);
            return Ok(());
        }
        println!("{}", text());
        Ok(())
    }

    /// Tell the background worker that a write may have left nodes without vectors.
    fn nudge(&self) {
        if let Some(e) = &self.embedder {
            e.nudge();
        }
    }

    /// The width to lay tables out for, read again for every table (a resized terminal).
    fn width(&self) -> usize {
        table::current_width(self.width)
    }
}

// ---- the loop -----------------------------------------------------------------------------

fn run() -> Result<()> {
    let mut args = Args::parse();
    let clock = SessionClock::new(args.now);
    let (mem, embedder) = open::open(&mut args, &clock)?;
    let width = args.width.map(usize::from);
    let mut repl = Repl { mem, json: false, quit: false, last_ids: Vec::new(), width, clock, embedder };
    let history = repl.mem.as_reader().dir().join("repl_history.txt");
    let mut input = Input::new(&history)?;
    eprintln!("memtree REPL · store {} · :help for commands, :quit to leave", repl.mem.as_reader().dir().display());
    if repl.mem.as_reader().stats()?.counts.sources == 0 {
        match demo::wanted(args.demo, &mut input)? {
            Some(true) => repl.demo("")?,
            Some(false) => {}
            None => return Ok(()), // gone before answering
        }
    }
    while let Some(line) = input.line("memtree> ")? {
        input.remember(&line);
        let done = repl.handle(&line);
        std::io::stdout().flush()?;
        if let Err(e) = done {
            eprintln!("error: {e:#}");
        }
        if repl.quit {
            break;
        }
    }
    input.save(&history);
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
