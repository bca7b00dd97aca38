//! `memtree export` and `memtree restore` (issue 32): the round trip is exact (the same
//! sources, walk answers, entities, recall facts and forget records), an archive holds nothing
//! forgotten, and a bad archive or a bad target leaves no store behind.

use crate::support::memtree;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel).to_string_lossy().into_owned()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A store with chat, mail, notes and recall facts.
fn filled(d: &Path) -> PathBuf {
    let s = d.join("store");
    for (format, input) in [
        ("chat-jsonl", "examples/demo/chat.jsonl"),
        ("mbox", "examples/demo/mail.mbox"),
        ("markdown", "examples/demo/notes"),
        ("claude", "tests/data/claude/conversations.json"),
    ] {
        memtree(&s, &["ingest", "--format", format, &root(input)], None).json();
    }
    for (k, v) in [("theme", "dark"), ("editor", "helix")] {
        let put = serde_json::json!({"op": "put", "namespace": "global", "key": k, "content": v}).to_string();
        memtree(&s, &["recall", &put], None).json();
    }
    s
}

/// Forget one message of the demo chat; its text.
fn forget_a_message(s: &Path) -> String {
    let secret = "please book travel by Friday";
    let hits = memtree(s, &["tool", r#"{"mode":"walk","query":"Lisbon offsite book travel","limit":30}"#], None).json();
    let leaf = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["level"] == 0 && h["content"].as_str().unwrap().contains(secret))
        .expect("the message")["node_id"]
        .as_str()
        .unwrap()
        .to_string();
    memtree(s, &["forget", "--leaf", &leaf], None).json();
    secret.to_string()
}

/// What must be the same after a round trip: sources, counts, walk answers, entities, recall
/// facts and forget records.
fn answers(s: &Path) -> Vec<Value> {
    let mut out = vec![memtree(s, &["sources"], None).json(), memtree(s, &["forgotten"], None).json()];
    let mut stats = memtree(s, &["stats"], None).json();
    for k in ["store_bytes", "index_bytes"] {
        stats.as_object_mut().unwrap().remove(k);
    }
    out.push(stats);
    for q in [
        "Lisbon offsite travel",
        "who owns the sync protocol",
        "what did Maya say about the Atlas migration",
        "vegetables for a shady garden",
        "certificate expiry Kestrel",
        "what happened in May",
    ] {
        let call = serde_json::json!({"mode": "walk", "query": q, "limit": 10}).to_string();
        out.push(memtree(s, &["tool", &call], None).json());
    }
    out.push(memtree(s, &["tool", r#"{"mode":"search_entities","query":"maya"}"#], None).json());
    out.push(
        memtree(s, &["tool", r#"{"mode":"cover_window","since_ms":0,"until_ms":4102444800000,"limit":50}"#], None)
            .json(),
    );
    out.push(memtree(s, &["recall", r#"{"op":"list","namespace":"global"}"#], None).json());
    out
}

#[test]
fn export_then_restore_answers_as_the_store_did() {
    let d = tempfile::tempdir().unwrap();
    let s = filled(d.path());
    let archive = d.path().join("memory.jsonl");
    let counts = memtree(&s, &["export", "--out", p(&archive)], None).json();
    assert_eq!(counts["recall"], 2, "{counts}");
    let text = std::fs::read_to_string(&archive).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        (header["type"].as_str(), header["format"].as_str(), header["version"].as_u64()),
        (Some("header"), Some("memtree-archive"), Some(1))
    );
    assert_eq!(serde_json::from_str::<Value>(text.lines().last().unwrap()).unwrap()["type"], "end");
    // Leaves in time order.
    let times: Vec<i64> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "leaf")
        .map(|v| v["time_ms"].as_i64().unwrap())
        .collect();
    assert_eq!(times.len() as u64, counts["leaves"].as_u64().unwrap());
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    let r = d.path().join("restored");
    let report = memtree(&r, &["restore", p(&archive)], None).json();
    assert_eq!(report["archive"], counts, "{report}");
    let (want, got) = (answers(&s), answers(&r));
    for (i, (a, b)) in want.iter().zip(&got).enumerate() {
        assert_eq!(a, b, "answer {i}");
    }
    // Through stdout and stdin too.
    let piped = memtree(&s, &["export", "--out", "-"], None);
    assert_eq!(piped.code, Some(0), "{}", piped.err);
    let r2 = d.path().join("restored2");
    memtree(&r2, &["restore", "-"], Some(&piped.out)).json();
    assert_eq!(want, answers(&r2));
}

/// After a forget the archive holds nothing of what went, the forget record travels and still
/// holds, and the restored store answers as the original does once its index is rebuilt from
/// its record (a forget leaves the removed documents' terms in the index's statistics until
/// then; a restore builds the index from the rows).
#[test]
fn an_archive_holds_nothing_forgotten_and_the_forget_travels() {
    let d = tempfile::tempdir().unwrap();
    let s = filled(d.path());
    let secret = forget_a_message(&s);
    let archive = d.path().join("memory.jsonl");
    let counts = memtree(&s, &["export", "--out", p(&archive)], None).json();
    assert_eq!(counts["forgotten"], 1, "{counts}");
    let bytes = std::fs::read(&archive).unwrap();
    assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "the forgotten message is in the archive");
    assert!(bytes.windows(6).any(|w| w == b"Lisbon"), "the rest is");
    let r = d.path().join("restored");
    memtree(&r, &["restore", p(&archive)], None).json();
    memtree(&s, &["reindex"], None).json();
    let (want, got) = (answers(&s), answers(&r));
    for (i, (a, b)) in want.iter().zip(&got).enumerate() {
        assert_eq!(a, b, "answer {i}");
    }
    let again = memtree(&r, &["ingest", "--format", "chat-jsonl", &root("examples/demo/chat.jsonl")], None).json();
    assert_eq!((again["leaves"].as_u64(), again["forgotten_leaves"].as_u64()), (Some(0), Some(1)), "{again}");
}

#[test]
fn export_of_one_source_or_a_window() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("store");
    memtree(&s, &["ingest", "--format", "chat-jsonl", &root("examples/demo/chat.jsonl")], None).json();
    let archive = d.path().join("one.jsonl");
    let c = memtree(&s, &["export", "--source", "slack:#general", "--until", "2023-05-10", "--out", p(&archive)], None)
        .json();
    assert_eq!(c["sources"], 1, "{c}");
    let r = d.path().join("r");
    memtree(&r, &["restore", p(&archive)], None).json();
    let list = memtree(&r, &["sources"], None).json();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["source_id"], "slack:#general");
    assert!(list[0]["last"].as_str().unwrap() < "2023-05-11", "{list}");
    assert_eq!(list[0]["leaves"].as_u64(), c["leaves"].as_u64());
}

/// Nothing is left behind by a failed restore: neither the store nor the folder it was built in.
fn nothing_left(parent: &Path, store: &Path) {
    assert!(!store.exists(), "{} exists", store.display());
    let left: Vec<_> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".restore-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_bad_archive_or_target_fails_clearly_and_restores_nothing() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("store");
    memtree(&s, &["ingest", "--format", "mbox", &root("examples/demo/mail.mbox")], None).json();
    let archive = d.path().join("a.jsonl");
    memtree(&s, &["export", "--out", p(&archive)], None).json();
    let text = std::fs::read_to_string(&archive).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let bad = d.path().join("bad.jsonl");
    let target = d.path().join("target");
    let cases: Vec<(String, &str)> = vec![
        (lines[..lines.len() - 1].join("\n"), "truncated"),
        (text[..text.len() / 2].to_string(), "not an archive line"),
        (text.replacen("\"type\":\"leaf\"", "\"type\":\"leaf\",\"seq\":\"x\"", 1), "not an archive line"),
        (text.replacen("\"version\":1", "\"version\":99", 1), "archive format version 99 is newer"),
        (text.replacen("\"model\":null", "\"model\":\"another-model\"", 1), ""),
        ("{\"hello\": 1}\n".to_string(), "not a memtree-archive"),
        (text.replacen("\"leaves\":", "\"leaves\":1000,\"x\":", 1), "the `end` line counts"),
    ];
    let held = memtree(&s, &["stats"], None).json()["leaves"].clone();
    for (body, want) in cases {
        std::fs::write(&bad, &body).unwrap();
        let r = memtree(&target, &["restore", p(&bad)], None);
        if want.is_empty() {
            // Another model in the header, restored without a model: allowed (vectors later).
            assert_eq!(r.code, Some(0), "{}", r.err);
            std::fs::remove_dir_all(&target).unwrap();
            continue;
        }
        assert_eq!(r.code, Some(1), "{want}: {}", r.out);
        assert!(r.err.contains(want), "{want}: {}", r.err);
        nothing_left(d.path(), &target);
        // A merge reads the archive through the same checks, and writes nothing either.
        let r = memtree(&s, &["restore", "--merge", p(&bad)], None);
        assert_eq!(r.code, Some(1), "merge, {want}: {}", r.out);
        assert!(r.err.contains(want), "merge, {want}: {}", r.err);
        assert_eq!(memtree(&s, &["stats"], None).json()["leaves"], held, "merge, {want}");
    }
    // A store that holds something is refused without --merge, and left as it was.
    let before = memtree(&s, &["stats"], None).json();
    let r = memtree(&s, &["restore", p(&archive)], None);
    assert_eq!(r.code, Some(1));
    // The library says what to do; the command line names its flag for it.
    assert!(r.err.contains("is not empty") && r.err.contains("--merge merges it"), "{}", r.err);
    assert_eq!(memtree(&s, &["stats"], None).json()["leaves"], before["leaves"]);
    // --merge behaves as an import: what is stored already is a duplicate.
    let m = memtree(&s, &["restore", "--merge", p(&archive)], None).json();
    assert_eq!(m["merged"]["leaves"], 0, "{m}");
    assert_eq!(m["merged"]["duplicates"], before["leaves"], "{m}");
    // Merged into another store: the leaves arrive.
    let other = d.path().join("other");
    memtree(&other, &["ingest", "--format", "chat-jsonl", &root("examples/demo/chat.jsonl")], None).json();
    let m = memtree(&other, &["restore", "--merge", p(&archive)], None).json();
    assert_eq!(m["merged"]["leaves"], before["leaves"], "{m}");
    // Exporting a store that does not exist: an error, and nothing created.
    let missing = d.path().join("missing");
    let out = d.path().join("missing.jsonl");
    let r = memtree(&missing, &["export", "--out", p(&out)], None);
    assert_eq!(r.code, Some(1));
    assert!(r.err.contains("no store at"), "{}", r.err);
    assert!(!missing.exists() && !out.exists());
}
