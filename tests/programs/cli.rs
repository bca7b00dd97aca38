//! The `memtree` command line as scripts use it (SPEC §8): JSON on stdout, errors on stderr,
//! exit 0 on success, 1 on a failure, 2 on a usage error (clap). Runs without the dense model.

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::{command, memtree, memtree_bin, run};

fn demo(file: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo").join(file).to_string_lossy().into_owned()
}

fn store() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("store");
    (d, s)
}

/// A small Slack export: two channels (one without a folder), users, two days.
pub(crate) fn slack_export(dir: &Path) {
    std::fs::write(
        dir.join("users.json"),
        r#"[{"id":"U1","name":"maya","real_name":"Maya Okafor"},{"id":"U2","name":"jonas","profile":{"real_name":"Jonas Berg"}}]"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("channels.json"),
        r#"[{"id":"C1","name":"ops","members":["U1","U2"]},{"id":"C2","name":"quiet"}]"#,
    )
    .unwrap();
    std::fs::create_dir(dir.join("ops")).unwrap();
    std::fs::write(
        dir.join("ops/2023-06-01.json"),
        r#"[{"type":"message","user":"U2","text":"Backups moved to the new bucket #ops","ts":"1685610000.000100"},
            {"type":"message","subtype":"channel_join","user":"U1","text":"<@U1> has joined the channel","ts":"1685600000.000100"}]"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("ops/2023-06-02.json"),
        r#"[{"type":"message","user":"U1","text":"Thanks <@U2>! Restore drill on Friday","ts":"1685696400.000200"}]"#,
    )
    .unwrap();
}

#[test]
fn ingest_prints_counts_and_reimport_adds_nothing() {
    let (_d, s) = store();
    let chat = demo("chat.jsonl");
    let first = memtree(&s, &["ingest", "--format", "chat-jsonl", &chat], None).json();
    assert_eq!(first["sources"], 5);
    assert_eq!(first["leaves"], 88);
    assert!(first["summaries"].as_u64().unwrap() > 0);
    let again = memtree(&s, &["ingest", "--format", "chat-jsonl", &chat], None).json();
    assert_eq!(again["leaves"], 0);
    assert_eq!(again["duplicate_leaves"], 88);

    let mail = memtree(&s, &["ingest", "--format", "mbox", &demo("mail.mbox")], None).json();
    assert_eq!(mail["leaves"], 14);
    assert_eq!(mail["sources"], 9, "one source per thread");
    let notes = memtree(&s, &["ingest", "--format", "markdown", &demo("notes")], None).json();
    assert_eq!(notes["sources"], 6);

    let stats = memtree(&s, &["stats"], None).json();
    assert_eq!(stats["leaves"], 88 + 14 + notes["leaves"].as_u64().unwrap());
    assert_eq!(stats["sources"], 5 + 9 + 6);
}

/// An input longer than one write batch (2,000 items) reports the sources it holds, not one
/// per batch a source's messages fall into.
#[test]
fn sources_are_counted_once_across_write_batches() {
    let (d, s) = store();
    let path = d.path().join("long.jsonl");
    let lines: Vec<String> = (0..4_500)
        .map(|i| {
            json!({"source_id": format!("chat:{}", ["ops", "design"][i % 2]), "author": "Ana",
                   "ts": 1_683_504_000 + i * 60, "text": format!("Message number {i} about the rollout.")})
            .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let r = memtree(&s, &["ingest", "--format", "chat-jsonl", path.to_str().unwrap()], None).json();
    assert_eq!((r["sources"].as_u64(), r["leaves"].as_u64()), (Some(2), Some(4_500)), "{r}");
}

#[test]
fn slack_export_channels_become_chat_sources() {
    let (d, s) = store();
    let export = d.path().join("export");
    std::fs::create_dir(&export).unwrap();
    slack_export(&export);
    let r = memtree(&s, &["ingest", "--format", "slack", export.to_str().unwrap()], None).json();
    assert_eq!(r["sources"], 1);
    assert_eq!(r["leaves"], 2, "the join notice is skipped");
    let q = memtree(&s, &["tool", r#"{"mode":"query_source","source_id":"slack:#ops","limit":10}"#], None).json();
    // The import sealed each day into a summary: open them to read the leaves.
    let mut leaves = Vec::new();
    for h in q["hits"].as_array().unwrap() {
        let call = json!({"mode": "drill_down", "node_id": h["node_id"]}).to_string();
        let d = memtree(&s, &["tool", &call], None).json();
        leaves.extend(d["hits"].as_array().unwrap().iter().map(|l| l["content"].as_str().unwrap().to_string()));
    }
    leaves.sort();
    assert_eq!(
        leaves,
        [
            "Jonas Berg: Backups moved to the new bucket #ops",
            "Maya Okafor: Thanks @Jonas Berg! Restore drill on Friday"
        ]
    );

    // A bad day file is skipped, naming the file and the line; `--strict` makes it the error.
    std::fs::write(export.join("ops/2023-06-03.json"), "[\n{\"type\":\"message\",\n\"text\": nope}]").unwrap();
    let bad = memtree(&s, &["ingest", "--format", "slack", export.to_str().unwrap()], None);
    assert_eq!(bad.json()["messages"]["skipped"]["unreadable day file"], 1);
    assert!(bad.err.contains("2023-06-03.json:3: invalid JSON"), "{}", bad.err);
    let bad = memtree(&s, &["ingest", "--format", "slack", "--strict", export.to_str().unwrap()], None);
    assert_eq!(bad.code, Some(1));
    assert!(bad.err.contains("2023-06-03.json:3: invalid JSON"), "{}", bad.err);
    assert!(bad.out.is_empty());
}

#[test]
fn tool_prints_json_from_argument_or_stdin_and_pretty_prints() {
    let (_d, s) = store();
    memtree(&s, &["ingest", "--format", "chat-jsonl", &demo("chat.jsonl")], None).json();
    let call = r#"{"mode":"walk","query":"When was the Atlas cutover?","limit":5}"#;
    let v = memtree(&s, &["tool", call], None).json();
    let hits = v["hits"].as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 5);
    assert!(v["total"].as_u64().unwrap() >= hits.len() as u64);
    assert_eq!(v["truncated"], json!(v["total"].as_u64().unwrap() > hits.len() as u64));
    for h in hits {
        for field in ["node_id", "node_kind", "tree_scope", "content", "time_range_start", "score"] {
            assert!(h.get(field).is_some(), "hit without {field}: {h}");
        }
    }
    let from_stdin = memtree(&s, &["tool"], Some(call)).json();
    assert_eq!(from_stdin, v, "same store, same query, same answer");
    let pretty = memtree(&s, &["--pretty", "tool", call], None);
    assert!(pretty.out.lines().count() > 10);
    assert_eq!(pretty.json(), v);

    let ents = memtree(&s, &["tool", r#"{"mode":"search_entities","query":"atlas"}"#], None).json();
    assert!(ents.as_array().unwrap().iter().any(|e| e["canonical_id"] == "hashtag:atlas"), "{ents}");
    let schema = memtree(&s, &["tool", "--schema"], None).json();
    assert_eq!(schema, memtree::tool::memory_tree_schema());
}

#[test]
fn failures_exit_1_with_the_message_on_stderr() {
    let (d, s) = store();
    let bad_json = memtree(&s, &["tool", r#"{"mode": "walk", "query": "#], None);
    assert_eq!(bad_json.code, Some(1));
    assert!(bad_json.out.is_empty());
    assert!(bad_json.err.starts_with("memtree: memory_tree: invalid JSON: "), "{}", bad_json.err);

    let unknown = memtree(&s, &["tool", r#"{"mode":"query_topic"}"#], None);
    assert_eq!(unknown.code, Some(1));
    assert_eq!(
        unknown.err.trim_end(),
        "memtree: memory_tree: unknown mode `query_topic`. Valid: search_entities, query_source, drill_down, \
         cover_window, fetch_leaves, ingest_document, walk, smart_walk"
    );
    let missing = memtree(&s, &["tool", r#"{"mode":"drill_down"}"#], None);
    assert_eq!(missing.code, Some(1));
    assert!(missing.err.contains("drill_down") && missing.err.contains("node_id"), "{}", missing.err);

    let absent = d.path().join("nowhere.mbox");
    let r = memtree(&s, &["ingest", "--format", "mbox", absent.to_str().unwrap()], None);
    assert_eq!(r.code, Some(1));
    assert!(r.err.contains("nowhere.mbox: no such file or directory"), "{}", r.err);

    // Mail that is not UTF-8 is read by its charset (here an undeclared 8-bit subject, read
    // as windows-1252), into another store; a truncated message names the file and the line.
    let latin = d.path().join("latin.mbox");
    std::fs::write(&latin, b"From a Tue May  2 09:14:00 2023\nFrom: a@example.com\nSubject: caf\xe9\n\nbody\n")
        .unwrap();
    let latin_store = d.path().join("latin-store");
    let r = memtree(&latin_store, &["ingest", "--format", "mbox", latin.to_str().unwrap()], None);
    assert_eq!(r.json()["leaves"], 1);
    let hits = memtree(&latin_store, &["tool", r#"{"mode":"query_source","source_kind":"email"}"#], None).json();
    assert!(hits.to_string().contains("café"), "{hits}");
    let cut = d.path().join("cut.mbox");
    let mail = std::fs::read_to_string(demo("mail.mbox")).unwrap();
    std::fs::write(&cut, &mail[..mail.find("Content-Type: multipart").unwrap() + 60]).unwrap();
    // The cut message is skipped and named; `--strict` refuses the file.
    let r = memtree(&s, &["ingest", "--format", "mbox", "--strict", cut.to_str().unwrap()], None);
    assert_eq!(r.code, Some(1));
    assert!(r.err.contains(&format!("{}:", cut.display())) && r.err.contains("truncated"), "{}", r.err);
    // Nothing of the failed imports was written, not even a store.
    assert!(!s.exists(), "failed imports left {}", s.display());

    let fmt = memtree(&s, &["ingest", "--format", "csv", "x.csv"], None);
    assert_eq!(fmt.code, Some(2), "a usage error");
    assert!(fmt.err.contains("invalid value 'csv'"), "{}", fmt.err);
    assert!(fmt.err.contains("mbox") && fmt.err.contains("slack"), "{}", fmt.err);
}

#[test]
fn recall_stats_and_help() {
    let (_d, s) = store();
    let put = memtree(
        &s,
        &["recall", r#"{"op":"put","namespace":"global","key":"theme","content":"prefers dark mode"}"#],
        None,
    );
    assert_eq!(put.json()["status"], "ok");
    let found = memtree(&s, &["recall", r#"{"op":"search","query":"dark mode"}"#], None).json();
    assert_eq!(found[0]["key"], "theme");
    let bad = memtree(&s, &["recall", r#"{"op":"put","namespace":"elsewhere","key":"k","content":"c"}"#], None);
    assert_eq!(bad.code, Some(1));
    assert!(bad.err.contains("unknown namespace `elsewhere`"), "{}", bad.err);

    let stats = memtree(&s, &["stats"], None).json();
    assert_eq!(stats["recall_facts"], 1);
    for cmd in ["ingest", "tool", "recall", "stats", "reindex", "bench", "mcp"] {
        let h = memtree(&s, &[cmd, "--help"], None);
        assert_eq!(h.code, Some(0), "{cmd} --help: {}", h.err);
        assert!(h.out.contains("Usage: memtree"), "{cmd}: {}", h.out);
    }
}

/// Privacy: nothing the user wrote or asked reaches stderr (the only place the CLI logs)
/// at default settings — not on success, not in error messages, not with `RUST_LOG` set
/// by the environment (the library installs no logger; a dependency's log lines would
/// have nowhere to go).
#[test]
fn stderr_never_carries_message_or_query_text() {
    let (_d, s) = store();
    // A store to read (reads never create one).
    let put = r#"{"op":"put","namespace":"global","key":"theme","content":"dark"}"#;
    assert_eq!(memtree(&s, &["recall", put], None).json()["status"], "ok");
    let secret = "Zanzibar-ledger-7731";
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("chat.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{{\"source_id\":\"slack:#x\",\"author\":\"Ada\",\"ts\":1683504000000,\"text\":\"the {secret} is in the drawer\"}}\n\
             {{\"source_id\":\"slack:#x\",\"author\":\"Ada\",\"ts\":\"not a time\",\"text\":\"second {secret} line\"}}\n"
        ),
    )
    .unwrap();
    let walk = json!({"mode":"walk","query":format!("where is the {secret}?")}).to_string();
    let calls = [
        format!("{{\"mode\":\"walk\",\"query\":\"{secret}"),
        format!("{{\"mode\":\"walk\",\"query\":[\"{secret}\"]}}"),
        format!("{{\"mode\":\"fetch_leaves\",\"chunk_ids\":\"{secret}\"}}"),
        format!("{{\"op\":\"search\",\"query\":\"{secret}\",\"limit\":\"x\"}}"),
    ];
    let bad = [
        // A malformed line: the strict import fails; the error names the line, not its text.
        vec!["ingest", "--format", "chat-jsonl", "--strict", jsonl.to_str().unwrap()],
        vec!["tool", &walk],
        // Malformed JSON and wrong types around the secret.
        vec!["tool", &calls[0]],
        vec!["tool", &calls[1]],
        vec!["tool", &calls[2]],
        vec!["recall", &calls[3]],
    ];
    let mut failures = 0;
    for args in &bad {
        for env_log in [None, Some("trace")] {
            let mut cmd = command(memtree_bin(), &s, args);
            if let Some(l) = env_log {
                cmd.env("RUST_LOG", l);
            }
            let r = run(cmd, None);
            assert!(!r.err.contains(secret), "{args:?} (RUST_LOG={env_log:?}) leaked the text: {}", r.err);
            failures += usize::from(r.code != Some(0));
        }
    }
    // The calls above did fail (so their error paths were exercised) except the walk.
    assert_eq!(failures, 2 * (bad.len() - 1));
}

/// A reader that closed the pipe ends the program quietly, as `rg … | head` does: exit 0 and
/// no panic text. The pipe's read end is closed before the child starts, so every write the
/// child makes fails with a broken pipe, whatever the timing.
#[test]
fn a_closed_stdout_ends_quietly_with_status_zero() {
    let (s_dir, s) = store();
    let put = r#"{"op":"put","namespace":"global","key":"theme","content":"dark"}"#;
    assert_eq!(memtree(&s, &["recall", put], None).json()["status"], "ok");
    let calls: [&[&str]; 3] =
        [&["tool", "--schema"], &["recall", "--schema"], &["tool", r#"{"mode":"search_entities","query":"x"}"#]];
    for args in calls {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let r = command(memtree_bin(), &s, args)
            .stdin(std::process::Stdio::null())
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8(r.stderr).unwrap();
        assert_eq!(r.status.code(), Some(0), "{args:?}: stderr {err}");
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{args:?}: stderr {err}");
    }
    drop(s_dir);
}

/// A failed import into a store the command would create leaves no directory behind; one
/// into an existing store keeps the store and what it held.
#[test]
fn a_failed_import_leaves_no_new_store_behind() {
    let (_d, s) = store();
    let missing = s.parent().unwrap().join("no-such.jsonl");
    let r = run(command(memtree_bin(), &s, &["ingest", "--format", "chat-jsonl", missing.to_str().unwrap()]), None);
    assert_eq!(r.code, Some(1), "stderr: {}", r.err);
    assert!(r.err.contains("no such file or directory"), "{}", r.err);
    assert!(!s.exists(), "the failed import left {} behind", s.display());

    let v = run(command(memtree_bin(), &s, &["ingest", "--format", "chat-jsonl", &demo("chat.jsonl")]), None).json();
    assert!(v["leaves"].as_u64().unwrap() > 0);
    let r = run(command(memtree_bin(), &s, &["ingest", "--format", "chat-jsonl", missing.to_str().unwrap()]), None);
    assert_eq!(r.code, Some(1));
    let stats = run(command(memtree_bin(), &s, &["stats"]), None).json();
    assert_eq!(stats["leaves"], v["leaves"], "an existing store keeps its content");
}

/// A read on a store that holds nothing answers as usual (empty JSON, status 0) and says why
/// on stderr; a write into it, and reads after the write, say nothing.
#[test]
fn a_read_on_an_empty_store_says_so_on_stderr() {
    let (_d, s) = store();
    let walk = r#"{"mode":"walk","query":"who owns the rollout?"}"#;
    // A fact in the key-value memory makes the store, with nothing in its trees.
    let put = r#"{"op":"put","namespace":"global","key":"theme","content":"dark"}"#;
    assert_eq!(run(command(memtree_bin(), &s, &["recall", put]), None).json()["status"], "ok");
    let r = run(command(memtree_bin(), &s, &["tool", walk]), None);
    assert_eq!(r.json()["total"], 0);
    assert!(r.err.contains("holds nothing yet"), "stderr: {}", r.err);

    let doc = r#"{"mode":"ingest_document","title":"Rollout","body":"Bob owns the rollout now.","source_id":"doc:rollout.md"}"#;
    let r = run(command(memtree_bin(), &s, &["tool", doc]), None);
    assert_eq!(r.json()["status"], "ok");
    assert!(!r.err.contains("holds nothing"), "stderr after a write: {}", r.err);
    let r = run(command(memtree_bin(), &s, &["tool", walk]), None);
    assert!(r.json()["total"].as_u64().unwrap() > 0);
    assert!(!r.err.contains("holds nothing"), "stderr: {}", r.err);
}

/// An error names its problem once, even when a message quotes its own cause.
#[test]
fn an_error_names_the_problem_once() {
    let (d, _) = store();
    // A store under a regular file cannot be made: the OS error, once.
    let file = d.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let r = run(
        command(memtree_bin(), &file.join("store"), &["ingest", "--format", "chat-jsonl", &demo("chat.jsonl")]),
        None,
    );
    assert_eq!(r.code, Some(1), "stderr: {}", r.err);
    assert_eq!(r.err.matches("os error").count(), 1, "stderr: {}", r.err);
}

/// `sources` lists what the store holds, per source, summing to `stats`; `forget --source`
/// removes one source with everything derived from it; an unknown id is an error.
#[test]
fn sources_lists_the_store_and_forget_removes_one() {
    let (_d, s) = store();
    run(command(memtree_bin(), &s, &["ingest", "--format", "chat-jsonl", &demo("chat.jsonl")]), None).json();
    run(command(memtree_bin(), &s, &["ingest", "--format", "mbox", &demo("mail.mbox")]), None).json();
    let stats = run(command(memtree_bin(), &s, &["stats"]), None).json();
    let list = run(command(memtree_bin(), &s, &["sources"]), None).json();
    let list = list.as_array().unwrap();
    assert_eq!(list.len() as u64, stats["sources"].as_u64().unwrap());
    let leaves: u64 = list.iter().map(|e| e["leaves"].as_u64().unwrap()).sum();
    assert_eq!(leaves, stats["leaves"].as_u64().unwrap());
    let ids: Vec<&str> = list.iter().map(|e| e["source_id"].as_str().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "sorted by id: {ids:?}");
    let eng = list.iter().find(|e| e["source_id"] == "slack:#eng").expect("slack:#eng listed");
    assert_eq!(eng["kind"], "chat");
    assert!(eng["first"].as_str().unwrap() <= eng["last"].as_str().unwrap());
    assert!(list.iter().any(|e| e["kind"] == "email"));

    let r = run(command(memtree_bin(), &s, &["forget", "--source", "slack:#eng"]), None).json();
    assert_eq!(r["leaves"].as_array().unwrap().len() as u64, eng["leaves"].as_u64().unwrap());
    assert_eq!(r["source_removed"], true);
    let after = run(command(memtree_bin(), &s, &["stats"]), None).json();
    assert_eq!(after["sources"].as_u64().unwrap(), stats["sources"].as_u64().unwrap() - 1);
    assert_eq!(after["leaves"].as_u64().unwrap(), leaves - eng["leaves"].as_u64().unwrap());
    let hits = run(
        command(memtree_bin(), &s, &["tool", r#"{"mode":"cover_window","since_ms":0,"until_ms":4102444800000}"#]),
        None,
    )
    .json();
    assert!(hits["hits"].as_array().unwrap().iter().all(|h| h["tree_scope"] != "slack:#eng"));

    let r = run(command(memtree_bin(), &s, &["forget", "--source", "slack:#nope"]), None);
    assert_eq!(r.code, Some(1));
    assert!(r.err.contains("no source `slack:#nope`"), "{}", r.err);
}

/// `forget --leaf` plants-and-removes a password from one message; the receipt names the leaf
/// and the re-sealed summaries; `search_entities` and `walk` no longer find it; `--since`/
/// `--until` forget a range; bad flags are refused.
#[test]
fn forget_one_leaf_or_a_range_with_a_receipt() {
    let (d, s) = store();
    let chat = d.path().join("chat.jsonl");
    let mut lines = String::new();
    for i in 0..6 {
        let text = if i == 3 {
            "the vault password is Zqxjvortex42, keep it safe".to_string()
        } else {
            format!("note {i} about the Kestrel backup")
        };
        lines.push_str(&serde_json::json!({"source_id":"slack:#ops","author":"Tomás Reyes","ts":format!("2023-05-01T10:0{i}:00Z"),"text":text}).to_string());
        lines.push('\n');
    }
    std::fs::write(&chat, lines).unwrap();
    run(command(memtree_bin(), &s, &["ingest", "--format", "chat-jsonl", chat.to_str().unwrap()]), None).json();
    // Entities: accents and one typo are forgiven.
    let e = run(command(memtree_bin(), &s, &["tool", r#"{"mode":"search_entities","query":"tomas"}"#]), None).json();
    assert_eq!(e[0]["canonical_id"], "person:tomás reyes", "{e}");
    let e =
        run(command(memtree_bin(), &s, &["tool", r#"{"mode":"search_entities","query":"Tomsa Reyes"}"#]), None).json();
    assert_eq!(e[0]["canonical_id"], "person:tomás reyes", "{e}");

    let hit =
        run(command(memtree_bin(), &s, &["tool", r#"{"mode":"walk","query":"vault password Zqxjvortex42"}"#]), None)
            .json();
    let leaf = hit["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["content"].as_str().unwrap().contains("Zqxjvortex42"))
        .expect("found")["node_id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = run(command(memtree_bin(), &s, &["forget", "--leaf", &leaf]), None).json();
    assert_eq!(r["leaves"], serde_json::json!([leaf]));
    assert_eq!(r["source_id"], "slack:#ops");
    assert!(!r["resealed"].as_array().unwrap().is_empty(), "{r}");
    let hit =
        run(command(memtree_bin(), &s, &["tool", r#"{"mode":"walk","query":"vault password Zqxjvortex42"}"#]), None)
            .json();
    assert!(!hit.to_string().to_lowercase().contains("zqxjvortex42"), "{hit}");
    // The first two minutes.
    let r = run(
        command(
            memtree_bin(),
            &s,
            &["forget", "--source", "slack:#ops", "--since", "2023-05-01T10:00:00Z", "--until", "2023-05-01T10:01:00Z"],
        ),
        None,
    )
    .json();
    assert_eq!(r["leaves"].as_array().unwrap().len(), 2, "{r}");
    let stats = run(command(memtree_bin(), &s, &["stats"]), None).json();
    assert_eq!(stats["leaves"], 3);
    for bad in [
        &["forget"][..],
        &["forget", "--leaf", "L1", "--source", "x"],
        &["forget", "--source", "slack:#ops", "--since", "soon"],
    ] {
        let r = run(command(memtree_bin(), &s, bad), None);
        assert_eq!(r.code, Some(1), "{bad:?}: {}", r.err);
    }
    let r = run(command(memtree_bin(), &s, &["forget", "--leaf", &leaf]), None);
    assert!(r.err.contains("no leaf"), "{}", r.err);
}

/// `bench recall` runs on a fresh clone: its default corpus is the demo's question set, the
/// table goes to stdout and `--out` is optional.
#[test]
fn bench_recall_defaults_to_the_demo_question_set() {
    let (_d, s) = store();
    let r = memtree(&s, &["bench", "recall", "--systems", "bm25"], None);
    assert_eq!(r.code, Some(0), "{}", r.err);
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/questions.json");
    let corpus: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let asked = corpus[0]["qa"].as_array().unwrap().len();
    assert!(r.out.contains(&format!("{asked} questions with evidence")), "{}", r.out);
    let row = r.out.lines().find(|l| l.starts_with("| bm25 | overall |")).unwrap_or_else(|| panic!("{}", r.out));
    let r25: f64 = row.split('|').map(str::trim).nth(5).unwrap().parse().unwrap();
    assert!(r25 > 80.0, "{row}");
}

/// Without a model, `bench recall` refuses the systems that use the dense signal unless
/// `--no-model` says a lexical-only run is meant: such figures pass for no recorded run.
#[test]
fn bench_recall_refuses_a_missing_model() {
    let (_d, s) = store();
    let empty = tempfile::tempdir().unwrap();
    let bare = |args: &[&str]| {
        let mut cmd = std::process::Command::new(memtree_bin());
        cmd.arg("--store").arg(&s).args(args).env("MEMTREE_MODEL_DIR", empty.path());
        run(cmd, None)
    };
    let r = bare(&["bench", "recall", "--systems", "walk,bm25"]);
    assert_eq!(r.code, Some(1), "{}", r.out);
    assert!(r.err.contains("no embedding model found, and walk use(s) the dense signal"), "{}", r.err);
    // Lexical systems alone, or an explicit --no-model, run.
    assert_eq!(bare(&["bench", "recall", "--systems", "bm25"]).code, Some(0));
    let r = bare(&["--no-model", "bench", "recall", "--systems", "walk"]);
    assert_eq!(r.code, Some(0), "{}", r.err);
    assert!(r.out.contains("| walk | overall |"), "{}", r.out);
}

/// A person asked about by name is the same person with or without the name's accents: the
/// author boost lifts Miguel Ángel Fernández's own message first either way (a byte-wise
/// comparison used to miss even the accented name's capital "Á").
#[test]
fn a_name_without_its_accents_asks_about_the_same_person() {
    let (d, s) = store();
    let chat = d.path().join("team.jsonl");
    std::fs::write(
        &chat,
        r#"{"source_id": "chat:team", "author": "Miguel Ángel Fernández", "ts": "2023-05-08T09:00:00Z", "text": "I will review the budget for the Lisbon office on Friday."}
{"source_id": "chat:team", "author": "Ana", "ts": "2023-05-08T09:01:00Z", "text": "Thanks Miguel Ángel Fernández, and Ben will book the Lisbon flights."}
{"source_id": "chat:team", "author": "Ben", "ts": "2023-05-08T09:02:00Z", "text": "Lisbon flights booked, the budget looks fine to me."}
{"source_id": "chat:team", "author": "Ana", "ts": "2023-05-09T09:02:00Z", "text": "Miguel Ángel Fernández met the Lisbon landlord about the budget."}
"#,
    )
    .unwrap();
    let r = memtree(&s, &["ingest", "--format", "chat-jsonl", chat.to_str().unwrap()], None);
    assert_eq!(r.code, Some(0), "{}", r.err);
    let order = |q: &str| -> Vec<(String, bool)> {
        let call = json!({"mode": "walk", "query": q}).to_string();
        let out = memtree(&s, &["tool", &call], None).json();
        out["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["content"].as_str().unwrap().to_string(), h["explain"]["signals"]["speaker"] == true))
            .collect()
    };
    let accented = order("What did Miguel Ángel Fernández say about the Lisbon budget?");
    let plain = order("What did miguel angel fernandez say about the Lisbon budget?");
    assert!(accented[0].0.starts_with("Miguel Ángel Fernández: I will review"), "{accented:?}");
    assert!(accented[0].1, "the author boost applies: {accented:?}");
    let texts = |v: &[(String, bool)]| v.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&plain), texts(&accented));
    assert!(plain[0].1, "{plain:?}");
}

/// `memtree ask` (SPEC §8, issue 47 item 5): a question with an apostrophe straight from the
/// shell, the REPL's table laid out for the width asked, the same hits as the tool's walk with
/// `--json`, the question from stdin with `-`; a missing store is an error and nothing is
/// created.
#[test]
fn ask_answers_from_the_shell_as_a_table_or_json() {
    let (d, s) = store();
    memtree(&s, &["ingest", "--format", "chat-jsonl", &demo("chat.jsonl")], None).json();
    let q = "What's the plan for the rollout?";
    let asked = memtree(&s, &["ask", "--json", "--limit", "3", q], None).json();
    let tool = memtree(&s, &["tool", &json!({"mode": "walk", "query": q, "limit": 3}).to_string()], None).json();
    assert_eq!(asked["hits"], tool["hits"]);
    let hits = asked["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3, "{asked}");
    let from_stdin = memtree(&s, &["ask", "--json", "--limit", "3", "-"], Some(q)).json();
    assert_eq!(from_stdin["hits"], asked["hits"]);

    let table = memtree(&s, &["ask", "--width", "80", "--limit", "3", q], None);
    assert_eq!(table.code, Some(0), "{}", table.err);
    let lines: Vec<&str> = table.out.lines().collect();
    // A header, its rule, one row a hit, and what came back.
    assert_eq!(lines.len(), 2 + hits.len() + 1, "{}", table.out);
    assert!(lines[0].trim_start().starts_with('#') && lines[0].contains("text"), "{}", table.out);
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{}", table.out);
    let total = asked["total"].as_u64().unwrap();
    assert!(lines[5].starts_with(&format!("(3 of {total} hits, ")) && lines[5].ends_with(" ms)"), "{}", table.out);
    // Each row is its hit: the row's text opens with the start of the hit's passage.
    for (row, hit) in lines[2..5].iter().zip(hits) {
        let passage = hit["snippet"]["text"].as_str().or(hit["content"].as_str()).unwrap();
        let first_word = passage.split_whitespace().next().unwrap();
        assert!(row.contains(first_word), "row {row:?} for hit {passage:?}");
    }

    let missing = d.path().join("nothing-here");
    let r = memtree(&missing, &["ask", q], None);
    assert_eq!(r.code, Some(1));
    assert!(r.err.contains("ingest --format"), "{}", r.err);
    assert!(!missing.exists(), "a question created a store");
}

/// `memtree ask --since/--until` (issue 47 item 5) on a real Slack export (tests/data/slack,
/// hfaran/slack-export-viewer's test archive): every hit lies inside the days asked (by when it
/// was said: nothing there speaks of another day), the days outside hold hits for the same
/// question, and a window written backwards is refused with nothing read.
#[test]
fn ask_within_days_on_a_real_export() {
    let (_d, s) = store();
    let export = format!("{}/tests/data/slack/mesos-magellan", env!("CARGO_MANIFEST_DIR"));
    memtree(&s, &["ingest", "--format", "slack", &export], None).json();
    let q = "new commit by hfaran";
    let starts = |v: &Value| -> Vec<String> {
        v["hits"].as_array().unwrap().iter().map(|h| h["time_range_start"].as_str().unwrap().to_string()).collect()
    };
    let all = starts(&memtree(&s, &["ask", "--json", "--limit", "50", q], None).json());
    let window = ["--since", "2016-03-01", "--until", "2016-03-26"];
    let inside = starts(&memtree(&s, &[&["ask", "--json", "--limit", "50"][..], &window, &[q]].concat(), None).json());
    assert!(!inside.is_empty(), "the window holds commit notices");
    assert!(inside.iter().all(|t| t.as_str() >= "2016-03-01" && t.as_str() < "2016-03-27"), "{inside:?}");
    assert!(all.iter().any(|t| t.as_str() >= "2016-03-27" || t.as_str() < "2016-03-01"), "{all:?}");

    let table = memtree(&s, &[&["ask", "--width", "100"][..], &window, &[q]].concat(), None);
    assert_eq!(table.code, Some(0), "{}", table.err);
    assert!(table.out.lines().skip(2).all(|l| !l.ends_with("/…") && l.chars().count() <= 100), "{}", table.out);

    let backwards = memtree(&s, &["ask", "--since", "2016-03-27", "--until", "2016-03-01", q], None);
    assert_eq!(backwards.code, Some(1), "{}", backwards.out);
    assert!(
        backwards.err.contains("`until_ms` (1456876799999) is before `since_ms` (1459036800000)"),
        "{}",
        backwards.err
    );
}
