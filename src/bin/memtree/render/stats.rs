//! The `:stats` page: the store's counts and sizes, and how far the background embedding is
//! (as text, or as the JSON of `memtree stats` with the worker's state added).

use super::cells;
use memtree::{EmbedStatus, Stats};
use serde_json::{Value, json};
use std::path::Path;

/// The stats as JSON, with `embedding` when a worker makes the vectors.
pub fn json(s: &Stats, bg: Option<&EmbedStatus>) -> serde_json::Result<Value> {
    let mut v = serde_json::to_value(s)?;
    if let Some(b) = bg {
        v["embedding"] = json!({"busy": b.busy, "done": b.done, "total": b.total,
            "embedded": b.embedded, "error": b.error, "stopped": b.stopped});
    }
    Ok(v)
}

/// The stats as aligned lines (no trailing newline).
pub fn page(dir: &Path, s: &Stats, bg: Option<&EmbedStatus>) -> String {
    let c = &s.counts;
    let levels: Vec<String> =
        c.summaries_per_level.iter().enumerate().map(|(i, n)| format!("L{}: {n}", i + 1)).collect();
    let mut lines = Vec::new();
    let mut line = |label: &str, value: String| lines.push(format!("{label:<10} {value}"));
    line("store", dir.display().to_string());
    line("sources", format!("{}   trees {}", c.sources, c.trees));
    line("leaves", c.leaves.to_string());
    line("summaries", if levels.is_empty() { "0".into() } else { levels.join(", ") });
    line("entities", format!("{}   edges {}", c.entities, c.edges));
    line(
        "vectors",
        format!(
            "{} + {} of passages   dense model: {}",
            c.vectors,
            c.passage_vectors,
            s.embedder.as_deref().unwrap_or("off (lexical only)")
        ),
    );
    if s.vectors_pending > 0 || bg.is_some_and(|b| b.busy || b.error.is_some()) {
        line("pending", format!("{} nodes without a vector", s.vectors_pending));
    }
    if let Some(b) = bg {
        if b.busy {
            // Against what is pending now: a write during the run adds to what is left.
            line("embedding", format!("{}/{} in the background", b.done, b.done + s.vectors_pending));
        }
        if let Some(e) = &b.error {
            line("embedding", format!("failed: {e} (the next write retries)"));
        }
        if b.stopped {
            line("embedding", "stopped (the next session makes the rest)".into());
        }
    }
    line("facts", c.recall_facts.to_string());
    line("on disk", format!("store {}, index {}", cells::bytes(s.store_bytes), cells::bytes(s.index_bytes)));
    lines.join("\n")
}
