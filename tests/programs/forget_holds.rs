//! A forget holds (issue 32): per importer, forget an item, import the same input again, and
//! the item stays out, counted as `forgotten`; `memtree forgotten` lists the records without
//! text and `forget --undo` takes one back.

use crate::support::memtree;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn store() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("store");
    (d, s)
}

fn ingest(s: &Path, format: &str, path: &Path) -> Value {
    memtree(s, &["ingest", "--format", format, path.to_str().unwrap()], None).json()
}

fn leaves(s: &Path) -> u64 {
    memtree(s, &["stats"], None).json()["leaves"].as_u64().unwrap()
}

/// The leaf a walk for `query` finds whose text holds `needle`.
fn leaf_with(s: &Path, query: &str, needle: &str) -> String {
    let call = serde_json::json!({"mode": "walk", "query": query, "limit": 30}).to_string();
    let hits = memtree(s, &["tool", &call], None).json();
    hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["level"] == 0 && h["content"].as_str().unwrap().contains(needle))
        .unwrap_or_else(|| panic!("no leaf with {needle:?}: {hits}"))["node_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// No hit of any level holds `needle` (a walk for `query` and a window over all time).
fn nowhere(s: &Path, query: &str, needle: &str) {
    let walk = serde_json::json!({"mode": "walk", "query": query, "limit": 50}).to_string();
    let all = r#"{"mode":"cover_window","since_ms":0,"until_ms":4102444800000,"limit":100}"#;
    for call in [walk.as_str(), all] {
        let out = memtree(s, &["tool", call], None).json().to_string();
        assert!(!out.contains(needle), "{needle:?} is back: {out}");
    }
}

/// Forget with `args`, import `path` again: the forgotten leaves stay out and are counted.
fn forget_then_reimport(s: &Path, format: &str, path: &Path, args: &[&str], needle: &str, query: &str) -> Value {
    let before = leaves(s);
    let mut cmd = vec!["forget"];
    cmd.extend_from_slice(args);
    let receipt = memtree(s, &cmd, None).json();
    let gone = receipt["leaves"].as_array().unwrap().len() as u64;
    assert!(gone > 0, "{receipt}");
    assert!(receipt["record"].as_i64().unwrap() > 0, "{receipt}");
    assert_eq!(leaves(s), before - gone);
    nowhere(s, query, needle);
    let again = ingest(s, format, path);
    assert_eq!(again["forgotten_leaves"].as_u64().unwrap(), gone, "{again}");
    assert_eq!(again["leaves"], 0, "{again}");
    assert_eq!(leaves(s), before - gone, "the forgotten leaves stayed out");
    nowhere(s, query, needle);
    again
}

#[test]
fn chat_jsonl_a_forgotten_message_stays_out_until_undone() {
    let (_d, s) = store();
    let chat = root("examples/demo/chat.jsonl");
    ingest(&s, "chat-jsonl", &chat);
    let leaf = leaf_with(&s, "Lisbon offsite book travel", "please book travel by Friday");
    forget_then_reimport(
        &s,
        "chat-jsonl",
        &chat,
        &["--leaf", &leaf],
        "please book travel by Friday",
        "Lisbon offsite travel",
    );
    // The record: ids and a hash, no text.
    let list = memtree(&s, &["forgotten"], None).json();
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["grain"], "leaf");
    assert_eq!(list[0]["leaf_id"], leaf.as_str());
    assert_eq!(list[0]["source_id"], "slack:#general");
    assert_eq!(list[0]["content_hash"].as_str().unwrap().len(), 32);
    assert!(!list[0].to_string().contains("book travel"), "{}", list[0]);
    // Taken back: the next import writes it again, under the same id.
    let id = list[0]["id"].as_i64().unwrap().to_string();
    let undone = memtree(&s, &["forget", "--undo", &id], None).json();
    assert_eq!(undone["undone"]["leaf_id"], leaf.as_str());
    assert_eq!(memtree(&s, &["forgotten"], None).json(), serde_json::json!([]));
    let again = ingest(&s, "chat-jsonl", &chat);
    assert_eq!((again["leaves"].as_u64(), again["forgotten_leaves"].as_u64()), (Some(1), Some(0)), "{again}");
    assert_eq!(leaf_with(&s, "Lisbon offsite book travel", "please book travel by Friday"), leaf);
    let r = memtree(&s, &["forget", "--undo", &id], None);
    assert_eq!(r.code, Some(1));
    assert!(r.err.contains(&format!("no forget record {id}")), "{}", r.err);
}

#[test]
fn locomo_a_forgotten_range_stays_out() {
    let (d, s) = store();
    let file = d.path().join("locomo.json");
    let turn = |id: &str, who: &str, text: &str| serde_json::json!({"speaker": who, "dia_id": id, "text": text});
    let sample = serde_json::json!([{"sample_id": "s1", "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [turn("D1:1", "Ana", "I adopted a greyhound called Pickle"), turn("D1:2", "Ben", "Pickle is a great name")],
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": [turn("D2:1", "Ana", "We hiked the Serra da Estrela trail"), turn("D2:2", "Ben", "Was it cold up there")]
    }, "qa": []}]);
    std::fs::write(&file, sample.to_string()).unwrap();
    ingest(&s, "locomo", &file);
    let sources = memtree(&s, &["sources"], None).json();
    let source = sources[0]["source_id"].as_str().unwrap().to_string();
    let again = forget_then_reimport(
        &s,
        "locomo",
        &file,
        &["--source", &source, "--since", "2023-05-08", "--until", "2023-05-08"],
        "greyhound called Pickle",
        "greyhound Pickle",
    );
    assert_eq!(again["duplicate_leaves"], 2, "the other session is already stored: {again}");
}

#[test]
fn slack_a_forgotten_message_stays_out() {
    let (d, s) = store();
    let export = d.path().join("slack");
    std::fs::create_dir(&export).unwrap();
    crate::cli::slack_export(&export);
    ingest(&s, "slack", &export);
    let leaf = leaf_with(&s, "backups bucket", "Backups moved to the new bucket");
    forget_then_reimport(&s, "slack", &export, &["--leaf", &leaf], "Backups moved", "backups bucket");
}

#[test]
fn mbox_a_forgotten_thread_stays_out() {
    let (_d, s) = store();
    let mail = root("examples/demo/mail.mbox");
    ingest(&s, "mbox", &mail);
    let source = "mbox:cert-warn-8812@kestrel.example";
    // The thread's subject line is the needle: it is in no other thread.
    let hits = memtree(&s, &["tool", r#"{"mode":"walk","query":"certificate Kestrel","limit":30}"#], None).json();
    let hit = hits["hits"].as_array().unwrap().iter().find(|h| h["tree_scope"] == source).expect("found");
    let subject = hit["content"].as_str().unwrap().lines().next().unwrap().to_string();
    assert!(subject.starts_with("Subject: "), "{subject}");
    forget_then_reimport(&s, "mbox", &mail, &["--source", source], &subject, "certificate Kestrel");
    let list = memtree(&s, &["forgotten"], None).json();
    assert_eq!(list[0]["grain"], "source");
    assert_eq!(list[0]["source_id"], source);
}

#[test]
fn markdown_a_forgotten_note_stays_out_of_the_next_sync() {
    let (d, s) = store();
    let notes = d.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    for e in std::fs::read_dir(root("examples/demo/notes")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), notes.join(e.file_name())).unwrap();
    }
    ingest(&s, "markdown", &notes);
    let again = forget_then_reimport(
        &s,
        "markdown",
        &notes,
        &["--source", "doc:team.md"],
        "Larkspur Labs builds scheduling",
        "who is who at Larkspur",
    );
    assert_eq!((again["added"].as_u64(), again["held"].as_u64()), (Some(0), Some(1)), "{again}");
    let ids: Vec<String> = memtree(&s, &["sources"], None)
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["source_id"].as_str().unwrap().to_string())
        .collect();
    assert!(!ids.contains(&"doc:team.md".to_string()), "{ids:?}");
    // An edit of the note is new content, but the source stays forgotten.
    let team = notes.join("team.md");
    let text = std::fs::read_to_string(&team).unwrap();
    std::fs::write(&team, format!("{text}\nA new line.\n")).unwrap();
    let edited = ingest(&s, "markdown", &notes);
    assert_eq!(edited["leaves"], 0, "{edited}");
    assert!(edited["forgotten_leaves"].as_u64().unwrap() > 0, "{edited}");
}

#[test]
fn chatgpt_a_forgotten_conversation_stays_out() {
    let (_d, s) = store();
    let export = root("tests/data/chatgpt/conversations.json");
    ingest(&s, "chatgpt", &export);
    forget_then_reimport(&s, "chatgpt", &export, &["--source", "chatgpt:c1-lisbon"], "Lisbon", "Lisbon trip itinerary");
}

#[test]
fn claude_a_forgotten_message_stays_out() {
    let (_d, s) = store();
    let export = root("tests/data/claude/conversations.json");
    ingest(&s, "claude", &export);
    let leaf = leaf_with(&s, "vegetables plant March shady garden", "Which vegetables can I plant");
    forget_then_reimport(
        &s,
        "claude",
        &export,
        &["--leaf", &leaf],
        "Which vegetables can I plant",
        "vegetables shady garden",
    );
}

#[test]
fn ingest_document_through_the_tool_leaves_a_forgotten_document_out() {
    let (_d, s) = store();
    let call =
        r#"{"mode":"ingest_document","source_id":"notion:plan","title":"Plan","body":"The Quokka budget is 40k"}"#;
    assert_eq!(memtree(&s, &["tool", call], None).json()["leaves"], 1);
    memtree(&s, &["forget", "--source", "notion:plan"], None).json();
    let again = memtree(&s, &["tool", call], None).json();
    assert_eq!((again["leaves"].as_u64(), again["forgotten_leaves"].as_u64()), (Some(0), Some(1)), "{again}");
    assert!(again["message"].as_str().unwrap().contains("the user forgot them"), "{again}");
    assert_eq!(memtree(&s, &["sources"], None).json(), serde_json::json!([]));
    nowhere(&s, "Quokka budget", "Quokka");
}
