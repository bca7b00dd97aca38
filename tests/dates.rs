//! Dates as a user means them, through the binary: `--now` sets the engine's clock for
//! `tool` and for the MCP server, a relative question's window follows it (walk's
//! `explain.time_window`) and lifts what falls inside; a bad `--now` is a usage error. Runs
//! without the dense model.

#[path = "support/mcp_client.rs"]
mod mcp_client;
#[path = "support/cli.rs"]
mod support;

use mcp_client::McpClient;
use serde_json::Value;
use std::path::Path;
use support::memtree;

/// Two failures three weeks apart, worded alike so that BM25 cannot tell them apart (each
/// alone in its channel: no neighbour or summary favours one), and a message about lunch.
const CHAT: &str = r#"{"source_id": "slack:#ops", "author": "Ana", "ts": "2023-04-19T10:00:00Z", "text": "Deploy failed: disk quota exceeded."}
{"source_id": "slack:#deploys", "author": "Ben", "ts": "2023-05-03T10:00:00Z", "text": "Deploy failed: migration timeout exceeded."}
{"source_id": "slack:#random", "author": "Ana", "ts": "2023-05-09T12:00:00Z", "text": "Lunch at noon on Friday?"}
"#;

fn store_with_chat(dir: &Path) -> std::path::PathBuf {
    let chat = dir.join("chat.jsonl");
    std::fs::write(&chat, CHAT).unwrap();
    let store = dir.join("store");
    let s = memtree(&store, &["--now", "2023-05-10", "ingest", "--format", "chat-jsonl", chat.to_str().unwrap()], None);
    assert_eq!(s.code, Some(0), "{}", s.err);
    store
}

/// `walk` as of `now`: the hits' texts, best first, and the window walk read.
fn walk_as_of(store: &Path, now: &str, question: &str) -> (Vec<String>, Value) {
    let call = serde_json::json!({"mode": "walk", "query": question, "limit": 3}).to_string();
    let s = memtree(store, &["--now", now, "tool", &call], None);
    assert_eq!(s.code, Some(0), "{}", s.err);
    let out = s.json();
    let hits = out["hits"].as_array().unwrap();
    let texts = hits.iter().map(|h| h["content"].as_str().unwrap().to_string()).collect();
    (texts, hits[0]["explain"]["time_window"].clone())
}

#[test]
fn now_sets_the_clock_relative_questions_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_chat(dir.path());
    // Wednesday 10 May 2023: last week is 1–7 May, and its failure comes first.
    let (texts, window) = walk_as_of(&store, "2023-05-10", "what failed last week?");
    assert_eq!(window, serde_json::json!(["2023-05-01T00:00:00.000Z", "2023-05-07T23:59:59.999Z"]));
    assert!(texts[0].contains("migration timeout"), "{texts:?}");
    // The same question two weeks earlier names another week, and the other failure leads.
    let (texts, window) = walk_as_of(&store, "2023-04-26T09:00:00Z", "what failed last week?");
    assert_eq!(window, serde_json::json!(["2023-04-17T00:00:00.000Z", "2023-04-23T23:59:59.999Z"]));
    assert!(texts[0].contains("disk quota"), "{texts:?}");
    // Absolute and spelled-out forms read the same clock.
    let (texts, window) = walk_as_of(&store, "2023-05-10", "what failed three weeks ago?");
    assert_eq!(window, serde_json::json!(["2023-04-17T00:00:00.000Z", "2023-04-23T23:59:59.999Z"]));
    assert!(texts[0].contains("disk quota"), "{texts:?}");
    let (texts, window) = walk_as_of(&store, "2023-05-10", "what failed on May 3rd?");
    assert_eq!(window, serde_json::json!(["2023-05-03T00:00:00.000Z", "2023-05-03T23:59:59.999Z"]));
    assert!(texts[0].contains("migration timeout"), "{texts:?}");
    // The window is a boost, never a filter: the other failure is still found.
    assert!(texts.iter().any(|t| t.contains("disk quota")), "{texts:?}");
}

#[test]
fn a_bad_now_is_a_usage_error_naming_the_forms() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["soon", "2023-02-30", "05/10/2023"] {
        let s = memtree(&dir.path().join("store"), &["--now", bad, "stats"], None);
        assert_eq!(s.code, Some(2), "{bad}: {}", s.err);
        assert!(s.err.contains(&format!("invalid value '{bad}' for '--now <DATE>'")), "{}", s.err);
        assert!(s.err.contains("YYYY-MM-DD or an RFC 3339 time"), "{}", s.err);
        assert!(!dir.path().join("store").exists(), "no store is made for a usage error");
    }
}

/// `memtree --now … mcp`: the server's walk reads the same clock (raw JSON-RPC on stdio).
#[test]
fn the_mcp_server_takes_now_too() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_chat(dir.path());
    let mut mcp = McpClient::spawn(&store, &["--now", "2023-04-26"]);
    let out = mcp
        .call("memory_tree", serde_json::json!({"mode": "walk", "query": "what failed last week?", "limit": 3}))
        .unwrap();
    let hit = &out["hits"][0];
    assert_eq!(
        hit["explain"]["time_window"],
        serde_json::json!(["2023-04-17T00:00:00.000Z", "2023-04-23T23:59:59.999Z"])
    );
    assert!(hit["content"].as_str().unwrap().contains("disk quota"), "{hit}");
}
