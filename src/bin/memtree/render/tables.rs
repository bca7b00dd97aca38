//! The REPL's tables of results: hits, entities, `memory_recall` facts, sources. Each column
//! says what a narrow terminal drops first (`keep`: 0 goes last); `table.rs` lays them out
//! for the width.

use super::cells;
use super::table::{Column, Table};
use serde_json::Value;

/// A JSON string field, or empty.
fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// Hits of `walk`, `cover_window`, `drill_down`, `query_source`: the rank and the text always
/// stay; then the time, the scope, the score, the kind and the id, in that order (at 80
/// columns a hit is `#  time  text`: when it was says more than where, for a question asked
/// in words, and the scope is a `:sources` away).
pub fn hits(hits: &[Value], width: usize) -> String {
    let columns = vec![
        Column::new("#", 4, 0).right(),
        Column::new("id", 9, 6),
        Column::new("kind", 6, 5),
        Column::new("scope", 24, 2),
        Column::new("time", 17, 1),
        Column::new("score", 6, 3).right(),
        Column::new("text", 0, 0),
    ];
    // The passage that matches the question, when the engine picked one out of a long leaf;
    // else the content from its start.
    let passage =
        |h: &Value| h["snippet"]["text"].as_str().or_else(|| h["content"].as_str()).unwrap_or_default().to_string();
    let mut rows = Vec::with_capacity(hits.len());
    for (i, h) in hits.iter().enumerate() {
        let kind = match h["node_kind"].as_str() {
            Some("summary") => format!("sum L{}", h["level"].as_u64().unwrap_or(1)),
            Some(k) => k.to_string(),
            None => "?".into(),
        };
        rows.push(vec![
            (i + 1).to_string(),
            text(&h["node_id"]),
            kind,
            text(&h["tree_scope"]),
            cells::span(&h["time_range_start"], &h["time_range_end"]),
            cells::score(h["score"].as_f64().unwrap_or(0.0)),
            passage(h),
        ]);
        // A hit that asks comes with the reply that answers it, on the line below.
        let a = &h["answer"];
        if a.is_object() {
            rows.push(vec![
                "↳".into(),
                text(&a["node_id"]),
                "reply".into(),
                text(&a["tree_scope"]),
                cells::span(&a["time_range_start"], &a["time_range_end"]),
                String::new(),
                passage(a),
            ]);
        }
    }
    Table { columns, text: 6, rows }.render(width)
}

/// `search_entities`: the entity takes the rest of the width.
pub fn entities(list: &[Value], width: usize) -> String {
    let columns = vec![
        Column::new("entity", 0, 0),
        Column::new("kind", 12, 1),
        Column::new("mentions", 8, 2).right(),
        Column::new("last seen", 16, 3),
    ];
    let rows = list
        .iter()
        .map(|e| {
            let last = cells::minute(e["last_seen_ms"].as_i64()).unwrap_or_default();
            vec![text(&e["canonical_id"]), text(&e["kind"]), e["mention_count"].to_string(), last]
        })
        .collect();
    Table { columns, text: 0, rows }.render(width)
}

/// `memory_recall` facts: the content takes the rest of the width.
pub fn facts(list: &[Value], width: usize) -> String {
    let columns = vec![
        Column::new("namespace", 14, 2),
        Column::new("key", 24, 0),
        Column::new("score", 6, 3).right(),
        Column::new("content", 0, 0),
    ];
    let rows = list
        .iter()
        .map(|f| {
            let score = format!("{:.2}", f["score"].as_f64().unwrap_or(0.0));
            vec![text(&f["namespace"]), text(&f["key"]), score, text(&f["content"])]
        })
        .collect();
    Table { columns, text: 3, rows }.render(width)
}

/// What the store holds, one row per source: the source id takes the rest; the summaries,
/// the first time, the leaves, the last time and the kind give way in that order.
pub fn sources(list: &[memtree::SourceSummary], width: usize) -> String {
    let columns = vec![
        Column::new("source", 0, 0),
        Column::new("kind", 8, 1),
        Column::new("leaves", 7, 3).right(),
        Column::new("summaries", 9, 5).right(),
        Column::new("first", 16, 4),
        Column::new("last", 16, 2),
    ];
    let day = |ms: Option<i64>| cells::minute(ms).unwrap_or_else(|| "-".into());
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
    Table { columns, text: 0, rows }.render(width)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn a_hit_that_asks_shows_its_answer_below_it() {
        let hit = |id: &str, text: &str| {
            json!({"node_id": id, "node_kind": "leaf", "level": 0, "tree_scope": "chatgpt:c1", "score": 0.9,
                   "time_range_start": "2023-05-01T10:00:00Z", "time_range_end": "2023-05-01T10:00:00Z", "content": text})
        };
        let mut asks = hit("L1", "Which base image should I use?");
        asks["answer"] = hit("L2", "Use python:3.11-slim.");
        let out = super::hits(&[asks, hit("L3", "Something else")], 100);
        let lines: Vec<&str> =
            out.lines().filter(|l| l.contains("base image") || l.contains("slim") || l.contains("else")).collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(
            lines[0].contains("base image") && lines[1].contains("↳") && lines[1].contains("python:3.11-slim"),
            "{out}"
        );
        assert!(lines[2].trim_start().starts_with('2'), "the next hit keeps its rank: {out}");
    }
}
