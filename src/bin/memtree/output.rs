//! What the command prints: JSON lines on stdout, and errors as one `: `-separated line.

use crate::Cli;
use crate::render::time::rfc3339;
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

/// True when `e` comes from writing to a pipe whose reader has gone: for a Unix tool that is
/// the end of the conversation, not a failure (status 0, nothing on stderr).
pub(crate) fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

/// `memtree sources`: each source with its title (`null` without one), its counts and its
/// leaves' first and last time (RFC 3339 UTC; `null` for a source without leaves).
pub(crate) fn sources_json(reader: &MemoryReader) -> Result<serde_json::Value> {
    let time = |ms: Option<i64>| ms.and_then(|ms| rfc3339(ms, chrono::SecondsFormat::Millis));
    let rows: Vec<serde_json::Value> = reader
        .sources()?
        .into_iter()
        .map(|s| {
            serde_json::json!({"source_id": s.source_id, "kind": s.kind, "title": s.title, "leaves": s.leaves,
                "summaries": s.summaries, "first": time(s.first_ms), "last": time(s.last_ms)})
        })
        .collect();
    Ok(serde_json::Value::Array(rows))
}

/// One forget record as `memtree forgotten` lists it: id, grain, source, the leaf's id and
/// text hash or the range's bounds, and when (RFC 3339 UTC). No text: the store keeps none.
pub(crate) fn forget_record_json(r: &memtree::ForgetRecord) -> serde_json::Value {
    let time = |ms: Option<i64>| ms.and_then(|ms| rfc3339(ms, chrono::SecondsFormat::Millis));
    serde_json::json!({"id": r.id, "grain": r.grain, "source_id": r.source_id, "leaf_id": r.node_id,
        "content_hash": r.content_hash, "since": time(r.since_ms), "until": time(r.until_ms),
        "forgotten_at": time(Some(r.forgotten_ms))})
}

/// `memtree forgotten`: every forget record, oldest first.
pub(crate) fn forgotten_json(reader: &MemoryReader) -> Result<serde_json::Value> {
    Ok(serde_json::Value::Array(reader.forgotten()?.iter().map(forget_record_json).collect()))
}
