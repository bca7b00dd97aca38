//! `memtree ask`: a question in plain words from the shell, answered by `walk` and printed as
//! the REPL prints it (a table: rank, time, source, text cut at a word), or as the tool's JSON.

use crate::Cli;
use crate::output::{print, stdout_line};
use crate::render;
use anyhow::{Context, Result};
use memtree::{MemoryReader, OpenOptions, Scope};
use serde_json::json;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

/// `memtree ask`'s arguments.
#[derive(clap::Args)]
pub(crate) struct AskArgs {
    /// The question in plain words (quote it for the shell); `-` reads it from stdin.
    pub(crate) question: String,
    /// Print the tool's response (walk's JSON) instead of the table.
    #[arg(long)]
    json: bool,
    /// Hits wanted (1 to 100).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100))]
    limit: u64,
    /// Lay the table out for this many columns (default: the terminal's width; when stdout is
    /// not a terminal, $COLUMNS, else 160).
    #[arg(long)]
    width: Option<usize>,
    /// Only what was said from this time, or speaks of a time from it (YYYY-MM-DD: that day's
    /// start, UTC; an RFC 3339 time; epoch milliseconds).
    #[arg(long, value_name = "TIME", value_parser = since_arg)]
    since: Option<i64>,
    /// Only what was said up to this time, or speaks of a time up to it (YYYY-MM-DD: that
    /// day's end, UTC).
    #[arg(long, value_name = "TIME", value_parser = until_arg)]
    until: Option<i64>,
}

fn since_arg(s: &str) -> Result<i64, String> {
    render::time::bound(s, false).map_err(|e| e.to_string())
}

fn until_arg(s: &str) -> Result<i64, String> {
    render::time::bound(s, true).map_err(|e| e.to_string())
}

/// Answer `a` from the store at `dir` through a read-only handle (a question never waits for
/// a writer, and never creates a store).
pub(crate) fn ask(cli: &Cli, dir: &Path, opts: OpenOptions, a: &AskArgs) -> Result<()> {
    let question = if a.question == "-" {
        let mut q = String::new();
        std::io::stdin().read_to_string(&mut q).context("reading the question from stdin")?;
        q
    } else {
        a.question.clone()
    };
    // Built as a value, not as text: an apostrophe or a quote in the question is just a
    // character ("Alexander's talk").
    let mut call = json!({"mode": "walk", "query": question.trim(), "limit": a.limit});
    if let Some(ms) = a.since {
        call["since_ms"] = json!(ms);
    }
    if let Some(ms) = a.until {
        call["until_ms"] = json!(ms);
    }
    let req = memtree::tool::Request::from_json(&call)?;
    let reader = MemoryReader::open(dir, opts).with_context(|| format!("opening store {}", dir.display()))?;
    let started = Instant::now();
    let out = serde_json::to_value(memtree::tool::call_read(&reader, req, &Scope::all())?)?;
    if a.json {
        return print(cli, &out);
    }
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let (text, said) = render::response::show("walk", &call, &out, render::table::current_width(a.width));
    stdout_line(&text)?;
    stdout_line(&format!("({said}, {ms:.1} ms)"))
}
