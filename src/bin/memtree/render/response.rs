//! A tool's response as the REPL shows it, told by its shape: a table of hits, entities or
//! facts, the full text of fetched leaves, a write's message, else the JSON; and what the line
//! under it says came back.

use super::{cells, tables};
use serde_json::Value;

/// The node ids a response lists (hits, fetched leaves), in order: what a row number in
/// `:drill 3` or `:leaves 1 2` names. `None` for a response of other things.
pub fn node_ids(out: &Value) -> Option<Vec<String>> {
    let nodes = nodes(out)?;
    Some(nodes.iter().filter_map(|n| n["node_id"].as_str().map(String::from)).collect())
}

fn nodes(out: &Value) -> Option<&Vec<Value>> {
    match out {
        Value::Object(o) if o.contains_key("hits") => o.get("hits").and_then(Value::as_array),
        Value::Array(a) if a.iter().all(|h| h.get("node_id").is_some()) => Some(a),
        _ => None,
    }
}

/// `out` as text (no trailing newline), and what came back in a few words (`10 of 24 hits`).
/// `call` is the request, whose window a `cover_window` without hits names.
pub fn show(mode: &str, call: &Value, out: &Value, width: usize) -> (String, String) {
    let all = |a: &[Value], key: &str| a.iter().all(|e| e.get(key).is_some());
    match (out, nodes(out)) {
        (Value::Object(o), Some(h)) if o.contains_key("total") => {
            let total = o["total"].as_u64().unwrap_or(h.len() as u64);
            let text = if h.is_empty() { no_hits(mode, call, out) } else { tables::hits(h, width) };
            (text, format!("{} of {total} hits", h.len()))
        }
        (_, Some(h)) => (leaves(h), format!("{} leaves", h.len())),
        (Value::Array(a), None) if all(a, "canonical_id") => {
            (tables::entities(a, width), format!("{} entities", a.len()))
        }
        (Value::Array(a), None) if all(a, "key") => (tables::facts(a, width), format!("{} facts", a.len())),
        (Value::Object(o), None) if o.contains_key("message") => {
            (o["message"].as_str().unwrap_or_default().to_string(), "ok".into())
        }
        _ => (serde_json::to_string_pretty(out).unwrap_or_default(), "ok".into()),
    }
}

/// An empty answer, and why it may be: a drill into a leaf, or nothing inside the window
/// searched (named, so that a question read as another time than meant shows it).
fn no_hits(mode: &str, call: &Value, out: &Value) -> String {
    if mode == "drill_down" {
        return "no hits (a leaf or an unknown id has no children; :leaves shows a leaf's text)".into();
    }
    match searched(call, out) {
        Some((since, until)) => format!("no hits in the window {}", cells::window(since, until)),
        None => "no hits".into(),
    }
}

/// The window a response was bounded by: walk's reading of the question
/// (`explain.time_window`, RFC 3339), else the call's own `since_ms`/`until_ms`
/// (`cover_window`).
fn searched(call: &Value, out: &Value) -> Option<(i64, i64)> {
    let ms = |v: &Value| Some(chrono::DateTime::parse_from_rfc3339(v.as_str()?).ok()?.timestamp_millis());
    match out["explain"]["time_window"].as_array().map(Vec::as_slice) {
        Some([since, until]) => Some((ms(since)?, ms(until)?)),
        _ => Some((call["since_ms"].as_i64()?, call["until_ms"].as_i64()?)),
    }
}

/// `fetch_leaves`: the full text is the point, under a line naming the leaf.
fn leaves(list: &[Value]) -> String {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut lines = Vec::new();
    for (i, leaf) in list.iter().enumerate() {
        let time = cells::span(&leaf["time_range_start"], &leaf["time_range_end"]);
        lines.push(format!(
            "[{}] {}  {}  {time}  {}",
            i + 1,
            s(&leaf["node_id"]),
            s(&leaf["tree_scope"]),
            s(&leaf["source_ref"])
        ));
        lines.extend(s(&leaf["content"]).lines().map(|l| format!("    {l}")));
    }
    lines.join("\n")
}
