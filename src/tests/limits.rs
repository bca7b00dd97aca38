//! Size limits with bounded memory: a 50 MB document body through the JSON tool, and one
//! chat source of 100,000 leaves. Each scenario runs in a child process (this binary, with
//! `MEMTREE_LIMITS_CHILD=<scenario>`) so its peak RSS (`VmHWM`) is its own; the parent
//! checks the store afterwards and holds the peak to a bound.
//!
//! Parent and child are one test, as in `crash.rs`.

use crate::Scope;
use crate::store::NodeReads;
use crate::tests::common::self_child;
use crate::{ChatMessage, Item, Memory, OpenOptions, SourceId, TreeId};
use std::path::Path;

const CHILD_ENV: &str = "MEMTREE_LIMITS_CHILD";
const MB: usize = 1 << 20;
const BODY_BYTES: usize = 50 * MB;
const LEAVES: usize = 100_000;

/// This test's name, for its child runs.
const SELF: &str = "tests::limits::large_inputs_in_bounded_memory";

#[test]
fn large_inputs_in_bounded_memory() {
    if let Ok(which) = std::env::var(CHILD_ENV) {
        let dir = std::env::var("MEMTREE_LIMITS_DIR").unwrap();
        match which.as_str() {
            "big-body" => big_body(Path::new(&dir)),
            "many-leaves" => many_leaves(Path::new(&dir)),
            other => panic!("unknown scenario {other}"),
        }
        println!("peak_rss_kb {}", peak_rss_kb());
        return;
    }
    let mut failures = Vec::new();
    for (scenario, bound_mb, check) in [
        // The body is held as the JSON input, the parsed string and its chunks (the write
        // keeps 8 MiB of them and reads the rest back for the index): 254 MB measured, the
        // bound ~7.5× the body, far below what holding every chunk's copies would need.
        ("big-body", 384, check_big_body as fn(&Path) -> Result<(), String>),
        // The importer's batches (2,000 items) bound the working set, not the source size.
        ("many-leaves", 256, check_many_leaves),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let t = std::time::Instant::now();
        let out = self_child(SELF).env(CHILD_ENV, scenario).env("MEMTREE_LIMITS_DIR", dir.path()).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            failures.push(format!("{scenario}: child failed: {}", String::from_utf8_lossy(&out.stderr)));
            continue;
        }
        let peak_kb: u64 = stdout
            .lines()
            .find_map(|l| l.strip_prefix("peak_rss_kb "))
            .and_then(|v| v.trim().parse().ok())
            .expect("child reports its peak RSS");
        println!("limits: {scenario}: peak RSS {} MB, {:.1} s", peak_kb / 1024, t.elapsed().as_secs_f64());
        if peak_kb / 1024 > bound_mb {
            failures.push(format!("{scenario}: peak RSS {} MB above the {bound_mb} MB bound", peak_kb / 1024));
        }
        if let Err(e) = check(dir.path()) {
            failures.push(format!("{scenario}: {e}"));
        }
    }
    assert!(failures.is_empty(), "FAIL {}", failures.join("\nFAIL "));
}

/// Peak resident set of this process, from `/proc/self/status` (Linux).
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Distinct words so the body chunks into distinct leaves (no dedup shortcut).
fn body_text(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 64);
    let mut i = 0u64;
    while s.len() < bytes {
        s.push_str(&format!("Paragraph {i} mentions Osprey and budget line {} for Kestrel. ", i * 7919 % 100_003));
        if i % 20 == 19 {
            s.push_str("\n\n");
        }
        i += 1;
    }
    s
}

fn big_body(dir: &Path) {
    let mut mem = Memory::open_with(dir, OpenOptions::default()).unwrap();
    let input = serde_json::json!({
        "mode": "ingest_document",
        "source_id": "doc:huge.md",
        "title": "Huge",
        "body": body_text(BODY_BYTES),
    })
    .to_string();
    let out = crate::tool::call_json(&mut mem, &input, &Scope::all()).unwrap();
    assert!(out["leaves"].as_u64().unwrap() > 1000, "{out}");
}

fn check_big_body(dir: &Path) -> Result<(), String> {
    let mem = Memory::open(dir).map_err(|e| e.to_string())?;
    let nodes = mem
        .as_reader()
        .store()
        .tree_nodes(&TreeId::for_source(&SourceId::from("doc:huge.md")))
        .map_err(|e| e.to_string())?;
    let leaves = nodes.iter().filter(|n| n.is_leaf()).count();
    let text: usize = nodes.iter().filter(|n| n.is_leaf()).map(|n| n.content.len()).sum();
    if text < BODY_BYTES {
        return Err(format!("{leaves} leaves hold {text} bytes, less than the {BODY_BYTES}-byte body"));
    }
    let hits = crate::tool::call_read_json(
        mem.as_reader(),
        r#"{"mode":"walk","query":"budget line 7919 Osprey","limit":5}"#,
        &Scope::all(),
    )
    .map_err(|e| e.to_string())?;
    if hits["hits"].as_array().is_none_or(|h| h.is_empty()) {
        return Err(format!("walk finds nothing in the huge document: {hits}"));
    }
    Ok(())
}

fn many_leaves(dir: &Path) {
    let mut mem = Memory::open_with(dir, OpenOptions::default()).unwrap();
    let t0 = 1_683_504_000_000i64;
    for batch in 0..LEAVES / 2000 {
        let items: Vec<Item> = (0..2000)
            .map(|j| {
                let i = batch * 2000 + j;
                Item::Chat(ChatMessage {
                    source_id: "slack:#firehose".into(),
                    author: ["Ada", "Grace", "Linus", "Barbara"][i % 4].into(),
                    ts_ms: t0 + i as i64 * 1000,
                    text: format!("message {i} about the osprey rollout, ticket OPS-{}", i % 977),
                    source_ref: None,
                    participants: vec![],
                    tags: vec![],
                    role: crate::Role::Person,
                    title: None,
                })
            })
            .collect();
        mem.ingest(items).unwrap();
    }
    mem.flush().unwrap();
}

fn check_many_leaves(dir: &Path) -> Result<(), String> {
    let mem = Memory::open(dir).map_err(|e| e.to_string())?;
    let stats = mem.as_reader().stats().map_err(|e| e.to_string())?;
    if stats.counts.leaves != LEAVES as u64 {
        return Err(format!("{} leaves stored, {LEAVES} sent", stats.counts.leaves));
    }
    if stats.index_docs != stats.counts.leaves + stats.counts.summaries_per_level.iter().sum::<u64>() {
        return Err(format!("index holds {} docs for {stats:?}", stats.index_docs));
    }
    Ok(())
}
