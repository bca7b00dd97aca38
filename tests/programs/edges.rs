//! The command line on the user's own files and at its edges, driven as a user drives it:
//! mailboxes in every mbox dialect, ChatGPT and Claude exports, a byte order mark, the `ts`
//! formats, a file given as another format, reads on a missing store, and progress when
//! stderr is not a terminal. Runs without the dense model.

use crate::support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use support::memtree;

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel).to_string_lossy().into_owned()
}

fn store() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("store");
    (d, s)
}

/// Every leaf's content, once each: the topmost nodes covering all time, opened down to
/// their leaves.
fn leaf_texts(s: &Path) -> Vec<String> {
    let call = r#"{"mode":"cover_window","since_ms":0,"until_ms":4102444800000,"limit":1000}"#;
    let top = memtree(s, &["tool", call], None).json();
    let mut seen = std::collections::BTreeMap::new();
    for hit in top["hits"].as_array().unwrap() {
        let mut nodes = vec![hit.clone()];
        if hit["level"] != 0 {
            let call =
                serde_json::json!({"mode": "drill_down", "node_id": hit["node_id"], "max_depth": 16, "limit": 500});
            nodes = memtree(s, &["tool", &call.to_string()], None).json()["hits"].as_array().unwrap().clone();
        }
        for n in nodes.iter().filter(|n| n["level"] == 0) {
            seen.insert(n["node_id"].as_str().unwrap().to_string(), n["content"].as_str().unwrap().to_string());
        }
    }
    seen.into_values().collect()
}

/// Each dialect's fixture (written for these tests, tests/data/mbox/) imports every message
/// as its own leaf: the count read is the count written, and each leaf holds exactly one of
/// the per-message tokens `<dialect>x<n>`.
#[test]
fn every_mbox_dialect_imports_each_message_once() {
    let cases = [
        ("mboxo", 4),
        ("mboxrd", 4),
        ("mboxcl", 3),
        ("mboxcl2", 3),
        ("netscape", 5),
        ("thunderbird", 4),
        ("applemail", 3),
        ("gmail-takeout", 4),
        ("noblank", 3),
    ];
    for (dialect, n) in cases {
        let (_d, s) = store();
        let r = memtree(&s, &["ingest", "--format", "mbox", &data(&format!("mbox/{dialect}.mbox"))], None);
        let v = r.json();
        assert_eq!(v["messages"]["read"], n, "{dialect}: {v}");
        assert_eq!(v["messages"]["written"], n, "{dialect}: {v}");
        assert_eq!(v["leaves"], n, "{dialect}: {v}");
        assert_eq!(v["warnings"], serde_json::json!([]), "{dialect}: {v}");
        let token = dialect.replace('-', "").replace("takeout", "");
        let texts = leaf_texts(&s);
        assert_eq!(texts.len(), n, "{dialect}: {texts:?}");
        for t in &texts {
            let found = (0..10).filter(|i| t.to_lowercase().contains(&format!("{token}x{i}"))).count();
            assert_eq!(found, 1, "{dialect}: a leaf without its token, or two messages glued: {t}");
        }
    }
}

/// A body line that looks like a separator but has no header after it stays text, and the
/// import names it in `warnings` (and on stderr) instead of gluing silently.
#[test]
fn a_doubtful_from_line_is_named() {
    let (d, s) = store();
    let mbox = d.path().join("doubt.mbox");
    std::fs::write(
        &mbox,
        "From a@example.org Tue May  2 09:14:00 2023\nFrom: a@example.org\nSubject: s\n\
         Date: Tue, 2 May 2023 09:14:00 +0000\n\nQuoted:\nFrom b@example.org Tue May  2 08:00:00 2023\nend\n",
    )
    .unwrap();
    let r = memtree(&s, &["ingest", "--format", "mbox", mbox.to_str().unwrap()], None);
    let v = r.json();
    assert_eq!(v["messages"]["read"], 1);
    let w = &v["warnings"][0];
    assert_eq!(w["line"], 7, "{v}");
    assert!(w["reason"].as_str().unwrap().contains("kept as text of the message at line 1"), "{v}");
    assert!(r.err.contains("doubt.mbox:7: "), "stderr: {}", r.err);
}

fn sources_by_id(s: &Path) -> Vec<(String, Value)> {
    let v = memtree(s, &["sources"], None).json();
    v.as_array().unwrap().iter().map(|x| (x["source_id"].as_str().unwrap().to_string(), x.clone())).collect()
}

/// A ChatGPT export: one chat source per conversation, titled; the branch on screen only;
/// system, hidden, tool and reasoning messages left out and counted; attachments named;
/// the person's and the assistant's roles kept; a newer export adds only what is new.
#[test]
fn a_chatgpt_export_imports_the_branch_on_screen() {
    let (_d, s) = store();
    let v = memtree(&s, &["ingest", "--format", "chatgpt", &data("chatgpt/conversations.json")], None).json();
    assert_eq!(v["sources"], 3, "{v}");
    assert_eq!(v["leaves"], 7, "{v}");
    assert_eq!(v["messages"]["read"], 12, "{v}");
    assert_eq!(v["messages"]["written"], 7, "{v}");
    let skipped = serde_json::json!({"hidden message": 2, "reasoning": 1, "tool call": 1, "tool message": 1});
    assert_eq!(v["messages"]["skipped"], skipped, "{v}");
    let sources = sources_by_id(&s);
    let ids: Vec<&str> = sources.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["chatgpt:c1-lisbon", "chatgpt:c2-bread", "chatgpt:c3-cabin"]);
    assert_eq!(sources[0].1["title"], "Lisbon trip");
    assert_eq!(sources[1].1["title"], Value::Null, "an empty title is no title");
    assert_eq!(sources[0].1["kind"], "chat");

    let texts = leaf_texts(&s).join("\n");
    assert!(!texts.contains("abandonedbranch"), "an edited-away branch was imported");
    assert!(!texts.contains("print(open"), "a tool call was imported");
    assert!(texts.contains("[attachment: itinerary.pdf]") && texts.contains("[attachment: lisbon-map.png]"));
    assert!(texts.contains("User: Plan a 3-day trip to Lisbon"));
    assert!(texts.contains("ChatGPT: Start around 70% hydration"));

    // The assistant's words are the assistant's: a question about what it advised finds them.
    let call = r#"{"mode":"walk","query":"what did you recommend about the Pena Palace tickets?"}"#;
    let hits = memtree(&s, &["tool", call], None).json();
    assert!(hits["hits"][0]["content"].as_str().unwrap().starts_with("ChatGPT: Your itinerary"), "{hits}");

    let again = memtree(&s, &["ingest", "--format", "chatgpt", &data("chatgpt/conversations-newer.json")], None).json();
    assert_eq!(again["leaves"], 4, "two new messages in an old conversation, two in a new one: {again}");
    assert_eq!(again["duplicate_leaves"], 7, "{again}");
    assert_eq!(sources_by_id(&s).len(), 4);
}

/// A Claude export: one chat source per conversation (`claude:<uuid>`), text blocks kept,
/// tool and thinking blocks left out and counted, attachments and files named.
#[test]
fn a_claude_export_imports_each_conversation() {
    let (_d, s) = store();
    let v = memtree(&s, &["ingest", "--format", "claude", &data("claude/conversations.json")], None).json();
    assert_eq!((v["sources"].as_u64(), v["leaves"].as_u64()), (Some(2), Some(6)), "{v}");
    // Blocks of kept messages are parts, not records: outside the sum.
    assert_eq!(v["messages"]["left_out"], serde_json::json!({"reasoning": 1, "tool block": 2}), "{v}");
    assert_eq!(v["messages"]["skipped"], serde_json::json!({}), "{v}");
    let sources = sources_by_id(&s);
    assert_eq!(sources[0].0, "claude:5f0c1a2e-0000-4000-8000-000000000001");
    assert_eq!(sources[0].1["title"], "Garden planning");
    assert_eq!(sources[1].1["title"], Value::Null);
    let texts = leaf_texts(&s);
    let joined = texts.join("\n");
    assert!(joined.contains("[attachment: soil-report.pdf]") && joined.contains("[attachment: garden-bed.jpg]"));
    assert!(joined.contains("Claude: Lettuce, spinach and peas tolerate shade.\n\nYour soil at pH 6.5"), "{joined}");
    assert!(!joined.contains("consider light") && !joined.contains("shade vegetables"), "{joined}");
    assert!(joined.contains("User: Convert 3 cups of flour"), "`text` when `content` is empty");
    let again = memtree(&s, &["ingest", "--format", "claude", &data("claude/conversations.json")], None).json();
    assert_eq!((again["leaves"].as_u64(), again["duplicate_leaves"].as_u64()), (Some(0), Some(6)));
}

/// A UTF-8 byte order mark opens JSON, JSON lines and Markdown alike; `ts` takes a date,
/// epoch seconds or milliseconds and RFC 3339, and a bad one lists those.
#[test]
fn a_bom_and_every_ts_format_are_accepted() {
    let (d, s) = store();
    let jsonl = d.path().join("chat.jsonl");
    let lines = [
        r#"{"source_id":"app:a","author":"Me","ts":"2023-01-01","text":"a date"}"#,
        r#"{"source_id":"app:a","author":"Me","ts":1672617600,"text":"epoch seconds"}"#,
        r#"{"source_id":"app:a","author":"Me","ts":1672704000000,"text":"epoch milliseconds"}"#,
        r#"{"source_id":"app:a","author":"Me","ts":"2023-01-04T00:00:00Z","text":"RFC 3339"}"#,
    ];
    std::fs::write(&jsonl, format!("\u{feff}{}\n", lines.join("\n"))).unwrap();
    assert_eq!(memtree(&s, &["ingest", "--format", "chat-jsonl", jsonl.to_str().unwrap()], None).json()["leaves"], 4);
    let src = &memtree(&s, &["sources"], None).json()[0];
    assert_eq!(
        (src["first"].as_str(), src["last"].as_str()),
        (Some("2023-01-01T00:00:00.000Z"), Some("2023-01-04T00:00:00.000Z"))
    );

    let notes = d.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("n.md"), "\u{feff}---\ntitle: Boiler\n---\nThe boiler was serviced.\n").unwrap();
    assert_eq!(memtree(&s, &["ingest", "--format", "markdown", notes.to_str().unwrap()], None).json()["added"], 1);
    let hit = memtree(&s, &["tool", r#"{"mode":"walk","query":"boiler serviced"}"#], None).json();
    assert!(!hit["hits"][0]["content"].as_str().unwrap().contains('\u{feff}'), "{hit}");

    let locomo = d.path().join("locomo.json");
    let sample = r#"[{"sample_id":"s1","conversation":{"speaker_a":"A","speaker_b":"B","session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"A","dia_id":"D1:1","text":"hi"}]},"qa":[]}]"#;
    std::fs::write(&locomo, format!("\u{feff}{sample}")).unwrap();
    assert_eq!(memtree(&s, &["ingest", "--format", "locomo", locomo.to_str().unwrap()], None).json()["leaves"], 1);
    // A call on stdin saved with a BOM.
    let r = memtree(&s, &["tool"], Some("\u{feff}{\"mode\":\"search_entities\",\"query\":\"me\"}"));
    assert!(r.json().is_array());

    std::fs::write(&jsonl, r#"{"source_id":"app:a","author":"Me","ts":"01/02/2023","text":"x"}"#).unwrap();
    // The line is skipped and named (exit 0); `--strict` makes it the error.
    let r = memtree(&s, &["ingest", "--format", "chat-jsonl", jsonl.to_str().unwrap()], None);
    assert_eq!(r.json()["messages"]["skipped"]["unreadable line"], 1);
    assert!(r.err.contains("chat.jsonl:1: ts: `01/02/2023`"), "stderr: {}", r.err);
    let r = memtree(&s, &["ingest", "--format", "chat-jsonl", "--strict", jsonl.to_str().unwrap()], None);
    assert_eq!(r.code, Some(1));
    for form in ["RFC 3339", "a date (2023-05-26", "epoch seconds or milliseconds"] {
        assert!(r.err.contains(form), "stderr: {}", r.err);
    }
    assert!(r.err.contains("chat.jsonl:1: ts: `01/02/2023`"), "stderr: {}", r.err);
}

/// An import given a file of another format says what it is and exits 1, writing nothing.
#[test]
fn a_file_of_another_format_is_refused_by_name() {
    let (d, s) = store();
    let jsonl = d.path().join("chat.jsonl");
    std::fs::write(&jsonl, "{\"source_id\":\"app:a\",\"author\":\"Me\",\"ts\":1,\"text\":\"x\"}\n").unwrap();
    let cases = [
        (
            "markdown",
            jsonl.to_str().unwrap().to_string(),
            "this is JSON lines, not markdown input; import it as format `chat-jsonl`",
        ),
        ("locomo", data("mbox/mboxo.mbox"), "this is an mbox mail file, not locomo input; import it as format `mbox`"),
        (
            "chatgpt",
            data("claude/conversations.json"),
            "this is a Claude export, not chatgpt input; import it as format `claude`",
        ),
        (
            "claude",
            data("chatgpt/conversations.json"),
            "this is a ChatGPT export, not claude input; import it as format `chatgpt`",
        ),
        ("chat-jsonl", data("chatgpt/conversations.json"), "this is a ChatGPT export, not chat-jsonl input"),
        ("mbox", data("chatgpt"), "this is a folder, not mbox input; import it as format `chatgpt`"),
    ];
    for (format, path, says) in cases {
        let r = memtree(&s, &["ingest", "--format", format, &path], None);
        assert_eq!(r.code, Some(1), "{format}: {}", r.err);
        assert!(r.err.contains(says), "{format}: stderr: {}", r.err);
    }
    assert!(!s.exists(), "a refused import created the store");
}

/// Reads on a missing store exit 1 with "no store at …" and the command that makes one, and
/// create nothing, not even the directory; writes still make it.
#[test]
fn reads_never_create_a_store() {
    let (_d, s) = store();
    let reads: [&[&str]; 7] = [
        &["tool", r#"{"mode":"walk","query":"anything"}"#],
        &["tool", r#"{"mode":"search_entities","query":"a"}"#],
        &["recall", r#"{"op":"search","query":"theme"}"#],
        &["recall", r#"{"op":"list","namespace":"global"}"#],
        &["stats"],
        &["sources"],
        &["mcp"],
    ];
    for args in reads {
        let r = memtree(&s, args, None);
        assert_eq!(r.code, Some(1), "{args:?}: {}", r.err);
        assert!(r.err.contains(&format!("no store at {}", s.display())), "{args:?}: {}", r.err);
        assert!(r.err.contains("ingest --format FORMAT PATH"), "{args:?}: {}", r.err);
        assert!(!s.exists(), "{args:?} created {}", s.display());
    }
    let put = r#"{"op":"put","namespace":"global","key":"theme","content":"dark"}"#;
    assert_eq!(memtree(&s, &["recall", put], None).json()["status"], "ok");
    assert!(s.exists(), "a write makes the store");
    assert_eq!(memtree(&s, &["stats"], None).json()["recall_facts"], 1);
}

/// Off a terminal, `ingest` prints plain progress lines (phase, counts, a rounded rate, an
/// ETA) and one at the end of each phase; `--quiet` prints none.
#[test]
fn progress_off_a_terminal_is_plain_lines() {
    let (d, s) = store();
    let jsonl = d.path().join("chat.jsonl");
    // Three writes of 2,000 messages: a line after each with the interval at 0.
    let lines: String = (0..5000)
        .map(|i| {
            format!(
                "{{\"source_id\":\"app:c{}\",\"author\":\"Me\",\"ts\":{},\"text\":\"note {i}\"}}\n",
                i % 7,
                1_672_531_200 + i * 60
            )
        })
        .collect();
    std::fs::write(&jsonl, lines).unwrap();
    let mut cmd =
        support::command(support::memtree_bin(), &s, &["ingest", "--format", "chat-jsonl", jsonl.to_str().unwrap()]);
    cmd.env("MEMTREE_PROGRESS_INTERVAL_MS", "0");
    let r = support::run(cmd, None);
    assert_eq!(r.json()["leaves"], 5000);
    let progress: Vec<&str> = r.err.lines().filter(|l| l.starts_with("memtree: writing messages")).collect();
    assert_eq!(progress.len(), 3, "stderr: {}", r.err);
    assert!(progress[0].starts_with("memtree: writing messages 2,000/5,000 ("), "{}", progress[0]);
    // A rate and an ETA after a second of work; before it, the time spent only.
    assert!(progress[0].contains("/s, eta ") || progress[0].ends_with("s)"), "{}", progress[0]);
    assert!(progress[2].starts_with("memtree: writing messages 5,000/5,000 done in "), "{}", progress[2]);
    // Rounded: no fractional rates of many digits.
    if progress[2].ends_with("/s)") {
        let rate = progress[2].rsplit('(').next().unwrap();
        assert!(rate.trim_end_matches("/s)").chars().all(|c| c.is_ascii_digit() || c == ',' || c == '.'), "{rate}");
        assert!(!rate.contains('.') || rate.split('.').nth(1).unwrap().len() <= 4, "{rate}");
    }

    // The default interval: the end of the phase still prints its line.
    let (_d2, s2) = store();
    let r = memtree(&s2, &["ingest", "--format", "chat-jsonl", jsonl.to_str().unwrap()], None);
    assert!(r.err.lines().any(|l| l.starts_with("memtree: writing messages 5,000/5,000 done in ")), "{}", r.err);

    let (_d3, s3) = store();
    let r = memtree(&s3, &["--quiet", "ingest", "--format", "chat-jsonl", jsonl.to_str().unwrap()], None);
    assert_eq!(r.json()["leaves"], 5000);
    assert!(r.err.is_empty(), "--quiet printed: {}", r.err);
}
