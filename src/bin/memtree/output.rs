//! What the command prints: JSON lines on stdout, and errors as one `: `-separated line.

use crate::Cli;
use anyhow::Result;
use memtree::MemoryReader;
use std::io::Write;

pub(crate) fn print(cli: &Cli, v: &serde_json::Value) -> Result<()> {
    let s = if cli.pretty { serde_json::to_string_pretty(v)? } else { serde_json::to_string(v)? };
    stdout_line(&s)
}

/// One line on stdout. Unlike `println!`, a failed write is an error, not a panic: a reader
/// that closed the pipe (`memtree tool … | head -c 100`) ends the program quietly in `main`.
pub(crate) fn stdout_line(line: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    writeln!(o, "{line}")?;
    o.flush()?;
    Ok(())
}

/// The error and its causes, `: `-separated like anyhow's `{:#}`, but each cause only once: an
/// error whose message already quotes its cause (`/tmp: Is a directory (os error 21)`) would
/// otherwise name the problem twice.
pub(crate) fn chain_once(e: &anyhow::Error) -> String {
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
pub(crate) fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// `memtree sources`: each source with its counts and its leaves' first and last time
/// (RFC 3339 UTC; `null` for a source without leaves).
pub(crate) fn sources_json(reader: &MemoryReader) -> Result<serde_json::Value> {
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
