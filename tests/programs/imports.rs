//! Imports through the CLI on inputs that are partly broken or empty (issue 33): one record
//! that cannot be read is skipped and named and the rest imported (`--strict` refuses it with
//! nothing written), an input with nothing to read creates no store, and the counts add up
//! (`read = written + duplicates + forgotten + skipped`) for every importer, on a re-import
//! too. Fixtures are written by each test. Runs without the dense model.

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::memtree;

fn store() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("store");
    (d, s)
}

/// The counts of an import's summary (`messages`, or `notes` for a folder of notes), checked
/// to add up.
fn counts(v: &Value) -> Value {
    let c = if v.get("notes").is_some() { v["notes"].clone() } else { v["messages"].clone() };
    let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("no `{k}` in {v}"));
    let skipped: u64 = c["skipped"].as_object().unwrap().values().map(|x| x.as_u64().unwrap()).sum();
    assert_eq!(n("written") + n("duplicates") + n("forgotten") + skipped, n("read"), "the counts do not add up: {v}");
    c
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap();
    }
    std::fs::write(path, bytes).unwrap();
}

const CHAT_OK: &str =
    r#"{"source_id":"app:a","author":"Maya","ts":"2023-05-02T09:00:00Z","text":"the atlas cutover is on Friday"}"#;
const CHAT_OK2: &str =
    r#"{"source_id":"app:a","author":"Tomas","ts":"2023-05-02T09:05:00Z","text":"I will book the rollback window"}"#;

/// A mailbox with an empty `Date:` (its `From ` line has the date), a good message, and a
/// last message cut off inside its multipart body (an interrupted download).
const MBOX_BROKEN: &str = "From maya@example.com Tue May  2 09:14:00 2023\n\
From: Maya <maya@example.com>\nSubject: Atlas cutover\nDate: \nMessage-ID: <m1@example.com>\n\n\
The atlas cutover is on Friday.\n\n\
From tomas@example.com Tue May  2 10:00:00 2023\n\
From: Tomas <tomas@example.com>\nSubject: Re: Atlas cutover\nDate: Tue, 2 May 2023 10:00:00 +0000\n\
Message-ID: <m2@example.com>\nIn-Reply-To: <m1@example.com>\n\nI will book the rollback window.\n\n\
From jonas@example.com Tue May  2 11:00:00 2023\n\
From: Jonas <jonas@example.com>\nSubject: Budget\nDate: Tue, 2 May 2023 11:00:00 +0000\n\
Message-ID: <m3@example.com>\nContent-Type: multipart/alternative; boundary=\"XX\"\n\n\
--XX\nContent-Type: text/plain\n\nThe budget is appro";

/// One case: a format, how to write its input under a folder (returning the path to import),
/// what the first import must count and the warnings' fragments.
struct Case {
    format: &'static str,
    input: fn(&Path) -> PathBuf,
    read: u64,
    written: u64,
    skipped: Value,
    warnings: &'static [&'static str],
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            format: "chat-jsonl",
            input: |d| {
                let p = d.join("chat.jsonl");
                let mut bytes = format!("{CHAT_OK}\nnot json\n").into_bytes();
                bytes.extend_from_slice(b"{\"source_id\":\"app:a\",\"author\":\"M\",\"ts\":1,\"text\":\"\xff\"}\n\n");
                bytes.extend_from_slice(format!("{CHAT_OK2}\n").as_bytes());
                write(&p, bytes);
                p
            },
            read: 4,
            written: 2,
            skipped: json!({"unreadable line": 2}),
            warnings: &["chat.jsonl:2: expected ident", "chat.jsonl:3: invalid UTF-8 at byte"],
        },
        Case {
            format: "mbox",
            input: |d| {
                let p = d.join("mail.mbox");
                write(&p, MBOX_BROKEN);
                p
            },
            read: 3,
            written: 2,
            skipped: json!({"unreadable message": 1}),
            warnings: &[
                "mail.mbox:4: empty Date header: dated by its `From ` line's date",
                "truncated multipart body (starts at line 25)",
            ],
        },
        Case {
            format: "slack",
            input: |d| {
                let p = d.join("slack");
                write(&p.join("users.json"), r#"[{"id":"U1","real_name":"Maya Okafor"}]"#);
                write(&p.join("channels.json"), r#"[{"id":"C1","name":"eng"},{"id":"C2","name":"../up"}]"#);
                write(
                    &p.join("eng/2023-05-02.json"),
                    r#"[
 {"type":"message","subtype":"channel_join","user":"U1","text":"<@U1> has joined the channel","ts":"1683010000.000100"},
 {"type":"message","user":"U1","text":"the atlas cutover is on Friday","ts":"1683019000.000100"},
 {"type":"message","user":"U1","text":"no time"},
 {"type":"message","user":"U1","text":"","ts":"1683019100.000100"}
]"#,
                );
                write(&p.join("eng/2023-05-03.json"), "[{\"type\":\"message\",\"text\": oops}]");
                p
            },
            // The unsafe channel, 4 messages of the good day, the unreadable day file.
            read: 6,
            written: 1,
            skipped: json!({"empty message": 1, "join or leave notice": 1, "unreadable channel": 1,
                "unreadable day file": 1, "unreadable message": 1}),
            warnings: &[
                "channels.json:1: unsafe channel name `../up`",
                "has no string `ts`",
                "2023-05-03.json:1: invalid JSON",
            ],
        },
        Case {
            format: "chatgpt",
            input: |d| {
                let p = d.join("chatgpt.json");
                let good = json!({"id": "c1", "title": "Atlas", "create_time": 1683018000, "current_node": "m1",
                    "mapping": {"m1": {"message": {"id": "m1", "author": {"role": "user"}, "create_time": 1683018000,
                        "content": {"content_type": "text", "parts": ["when is the atlas cutover?"]}}, "children": []}}});
                // One conversation a line: the skipped one is named at its line.
                write(&p, format!("[\n{good},\n{}\n]", json!({"id": "c2", "title": "no mapping"})));
                p
            },
            read: 2,
            written: 1,
            skipped: json!({"unreadable conversation": 1}),
            warnings: &["chatgpt.json:3: conversation 2 (c2): no `mapping` of messages: skipped"],
        },
        Case {
            format: "claude",
            input: |d| {
                let p = d.join("claude.json");
                let good = json!({"uuid": "u1", "name": "Atlas", "created_at": "2023-05-02T09:00:00Z",
                    "chat_messages": [{"uuid": "x1", "sender": "human", "text": "when is the atlas cutover?",
                        "created_at": "2023-05-02T09:00:00Z"},
                        {"uuid": "x2", "sender": "assistant", "text": "On Friday."}]});
                write(&p, format!("[\n{},\n{good}\n]", json!({"name": "no id", "chat_messages": []})));
                p
            },
            read: 3,
            written: 2,
            skipped: json!({"unreadable conversation": 1}),
            warnings: &["claude.json:2: conversation 1 (no uuid): no `uuid`: skipped"],
        },
        Case {
            format: "locomo",
            input: |d| {
                let p = d.join("locomo.json");
                let good = json!({"sample_id": "conv-1", "conversation": {"speaker_a": "Maya", "speaker_b": "Tomas",
                    "session_1_date_time": "1:56 pm on 8 May, 2023",
                    "session_1": [{"speaker": "Maya", "dia_id": "D1:1", "text": "the atlas cutover is on Friday"},
                                  {"speaker": "Tomas", "dia_id": "D1:2", "text": "I will book the rollback window"}],
                    "session_2_date_time": "someday",
                    "session_2": [{"speaker": "Maya", "dia_id": "D2:1", "text": "lost"}]}});
                write(&p, json!([good, {"sample_id": "conv-2"}]).to_string());
                p
            },
            read: 4,
            written: 2,
            skipped: json!({"turn of a session without a date": 1, "unreadable conversation": 1}),
            warnings: &["conv-1: session_2 has no readable date_time", "conv-2: no conversation object"],
        },
        Case {
            format: "markdown",
            input: |d| {
                let p = d.join("notes");
                write(&p.join("atlas.md"), "# Atlas\nThe atlas cutover is on Friday.\n");
                write(&p.join("rollback.md"), "# Rollback\nTomas books the rollback window.\n");
                write(&p.join("empty.md"), "---\ntags: [x]\n---\n\n");
                write(&p.join("broken.md"), b"# Broken\n\xff\xfe\n");
                p
            },
            read: 4,
            written: 2,
            skipped: json!({"empty note": 1, "unreadable note": 1}),
            warnings: &["skipped", "broken.md: line 2: invalid UTF-8"],
        },
    ]
}

/// Every importer: the bad record is skipped and named on stderr and in the summary, the
/// rest imported (exit 0), the counts add up; a re-import writes nothing and counts every
/// record again as a duplicate; `--strict` refuses the input with nothing written (no store).
#[test]
fn one_bad_record_never_sinks_a_file_and_the_counts_add_up() {
    for c in cases() {
        let d = tempfile::tempdir().unwrap();
        let input = (c.input)(d.path());
        let s = d.path().join("store");
        let r = memtree(&s, &["ingest", "--format", c.format, input.to_str().unwrap()], None);
        let v = r.json();
        let n = counts(&v);
        assert_eq!((n["read"].as_u64(), n["written"].as_u64()), (Some(c.read), Some(c.written)), "{}: {v}", c.format);
        assert_eq!(n["skipped"], c.skipped, "{}: {v}", c.format);
        assert_eq!(n["duplicates"], 0, "{}: {v}", c.format);
        assert_eq!(n["forgotten"], 0, "{}: {v}", c.format);
        for w in c.warnings {
            assert!(r.err.contains(w), "{}: stderr does not name `{w}`: {}", c.format, r.err);
        }
        assert!(v["leaves"].as_u64().unwrap() >= c.written, "{}: {v}", c.format);

        let again = memtree(&s, &["ingest", "--format", c.format, input.to_str().unwrap()], None).json();
        let n = counts(&again);
        assert_eq!(
            (n["written"].as_u64(), n["duplicates"].as_u64()),
            (Some(0), Some(c.written)),
            "{}: {again}",
            c.format
        );
        assert_eq!(again["leaves"], 0, "{}: {again}", c.format);

        let strict_store = d.path().join("strict");
        let r = memtree(&strict_store, &["ingest", "--format", c.format, "--strict", input.to_str().unwrap()], None);
        assert_eq!(r.code, Some(1), "{}: --strict accepted it: {}", c.format, r.out);
        assert!(!strict_store.exists(), "{}: --strict left a store behind", c.format);
        assert!(r.err.starts_with("memtree: "), "{}: {}", c.format, r.err);
    }
}

/// A real-world mailbox shape: one message has an empty `Date:` header (its `From ` line is
/// dated) and the download was cut in the middle of the last one. The complete messages are
/// imported (the thread keeps its reply), the empty date is named with the fallback taken,
/// the cut message is named and skipped.
#[test]
fn a_mailbox_with_an_empty_date_and_a_cut_tail_imports_the_complete_messages() {
    let (d, s) = store();
    let mbox = d.path().join("mail.mbox");
    write(&mbox, MBOX_BROKEN);
    let r = memtree(&s, &["ingest", "--format", "mbox", mbox.to_str().unwrap()], None);
    let v = r.json();
    let w: Vec<(u64, String)> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["line"].as_u64().unwrap(), w["reason"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(w.len(), 2, "{v}");
    assert_eq!(w[0], (4, "empty Date header: dated by its `From ` line's date".to_string()));
    assert_eq!(w[1].0, 28, "the cut message's last line: {v}");
    assert!(w[1].1.starts_with("truncated multipart body (starts at line 25)") && w[1].1.ends_with(": skipped"), "{v}");
    let call = r#"{"mode":"cover_window","since_ms":1682985600000,"until_ms":1683071999999,"limit":50}"#;
    let hits = memtree(&s, &["tool", call], None).json().to_string();
    assert!(hits.contains("atlas cutover is on Friday") || hits.contains("Atlas cutover"), "{hits}");
    assert!(!hits.contains("budget is appro"), "the cut message was imported: {hits}");
}

/// An input that holds nothing creates no store: exit 0 and a warning saying nothing was
/// read; with `--strict` it is an error. Empty files of each format, an empty folder of notes,
/// a Slack export without channels, and a file whose only record cannot be read.
#[test]
fn an_empty_input_creates_no_store() {
    let d = tempfile::tempdir().unwrap();
    let empty = |name: &str, text: &str| {
        let p = d.path().join(name);
        write(&p, text);
        p
    };
    let notes = d.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    let slack = d.path().join("slack");
    write(&slack.join("channels.json"), "[]");
    let inputs = [
        ("chat-jsonl", empty("empty.jsonl", ""), "nothing was read from it (no record)"),
        ("mbox", empty("empty.mbox", ""), "nothing was read from it (no record)"),
        ("locomo", empty("empty-locomo.json", "\n"), "(no record)"),
        ("chatgpt", empty("empty-chatgpt.json", ""), "(no record)"),
        ("claude", empty("empty-claude.json", "[]"), "(no record)"),
        ("markdown", notes.clone(), "(no record)"),
        ("slack", slack.clone(), "(no record)"),
        ("chat-jsonl", empty("bad.jsonl", "not json\n"), "its 1 records were all skipped"),
    ];
    for (format, input, said) in inputs {
        let s = d.path().join(format!("store-{format}"));
        let r = memtree(&s, &["ingest", "--format", format, input.to_str().unwrap()], None);
        let v = r.json();
        assert!(r.err.contains(said) && r.err.contains("warning"), "{format}: {}", r.err);
        // The summary's `warnings` say it too, as the last of them.
        let last = v["warnings"].as_array().and_then(|w| w.last()).cloned().unwrap_or_default();
        assert!(last["reason"].as_str().is_some_and(|r| r.contains(said)), "{format}: {v}");
        assert!(!s.exists(), "{format}: an empty input created a store");
        assert_eq!(v["leaves"], 0, "{format}: {v}");
        let r = memtree(&s, &["ingest", "--format", format, "--strict", input.to_str().unwrap()], None);
        assert_eq!(r.code, Some(1), "{format}: {}", r.out);
        // Nothing to read is the error; where a record was there, its warning is.
        let strict_said = if said.contains("skipped") { "bad.jsonl:1: expected ident" } else { said };
        assert!(r.err.contains(strict_said), "{format}: {}", r.err);
        assert!(!s.exists(), "{format}: --strict on an empty input created a store");
    }
    // Into an existing store, an empty input says so and changes nothing.
    let s = d.path().join("store");
    let chat = empty("chat.jsonl", &format!("{CHAT_OK}\n"));
    memtree(&s, &["ingest", "--format", "chat-jsonl", chat.to_str().unwrap()], None).json();
    let r = memtree(&s, &["ingest", "--format", "chat-jsonl", d.path().join("empty.jsonl").to_str().unwrap()], None);
    let v = r.json();
    assert!(r.err.contains("nothing was read"), "{}", r.err);
    assert_eq!(v["warnings"], json!([{"line": 0, "reason": "nothing was read from it (no record)"}]), "{v}");
    assert!(s.exists());
}

/// The title of each source, by id, as `memtree sources` lists them.
fn titles(s: &Path) -> std::collections::BTreeMap<String, Value> {
    let v = memtree(s, &["sources"], None).json();
    v.as_array().unwrap().iter().map(|x| (x["source_id"].as_str().unwrap().to_string(), x["title"].clone())).collect()
}

/// An e-mail thread is titled by its first message's subject (a reply's `Re:` does not
/// replace it, nor does a later import of the reply alone); a note by its front matter's
/// `title`, else its first heading outside fenced code, else its file name.
#[test]
fn sources_are_titled_by_subject_front_matter_heading_or_file_name() {
    let (d, s) = store();
    let mbox = d.path().join("mail.mbox");
    // The reply first in the file: the thread's title is still the root's subject.
    let text = "From tomas@example.com Tue May  2 10:00:00 2023\nFrom: tomas@example.com\nSubject: Re: Atlas cutover\n\
                Date: Tue, 2 May 2023 10:00:00 +0000\nMessage-ID: <m2@example.com>\nIn-Reply-To: <m1@example.com>\n\n\
                I will book the rollback window.\n\n\
                From maya@example.com Tue May  2 09:14:00 2023\nFrom: maya@example.com\nSubject: Atlas cutover\n\
                Date: Tue, 2 May 2023 09:14:00 +0000\nMessage-ID: <m1@example.com>\n\nThe cutover is on Friday.\n\n\
                From jonas@example.com Tue May  2 11:00:00 2023\nFrom: jonas@example.com\n\
                Date: Tue, 2 May 2023 11:00:00 +0000\nMessage-ID: <m3@example.com>\n\nNo subject here.\n";
    write(&mbox, text);
    memtree(&s, &["ingest", "--format", "mbox", mbox.to_str().unwrap()], None).json();
    let later = d.path().join("later.mbox");
    write(
        &later,
        "From ana@example.com Wed May  3 09:00:00 2023\nFrom: ana@example.com\nSubject: Re: Atlas cutover (moved)\n\
         Date: Wed, 3 May 2023 09:00:00 +0000\nMessage-ID: <m4@example.com>\nReferences: <m1@example.com>\n\nMoved to Monday.\n",
    );
    memtree(&s, &["ingest", "--format", "mbox", later.to_str().unwrap()], None).json();
    let notes = d.path().join("notes");
    write(&notes.join("fm.md"), "---\ntitle: Boiler log\n---\n# Heading\nserviced\n");
    write(&notes.join("code.md"), "Simple filter:\n```sh\n# not a title\nls\n```\n# Real title\ntext\n");
    write(&notes.join("plain.md"), "Just text.\n```\n# in code\n```\n");
    memtree(&s, &["ingest", "--format", "markdown", notes.to_str().unwrap()], None).json();
    let t = titles(&s);
    assert_eq!(t["mbox:m1@example.com"], "Atlas cutover", "{t:?}");
    assert_eq!(t["mbox:m3@example.com"], Value::Null, "no subject, no title: {t:?}");
    assert_eq!(t["doc:fm.md"], "Boiler log");
    assert_eq!(t["doc:code.md"], "Real title");
    assert_eq!(t["doc:plain.md"], "plain");
}

/// The rates a progress line shows (`1,234/s`), as numbers.
fn rates(stderr: &str) -> Vec<f64> {
    stderr
        .split(['(', ' '])
        .filter_map(|w| w.strip_suffix("/s,").or_else(|| w.strip_suffix("/s)")))
        .filter_map(|r| r.replace(',', "").parse().ok())
        .collect()
}

/// Off a terminal, progress comes by time, not by writes: with the interval at 20 ms (the
/// documented `MEMTREE_PROGRESS_INTERVAL_MS`), an import of 20,000 messages prints lines while
/// it reads and writes, and `reindex` while it rebuilds; no line shows a rate before a second
/// of work, so none is above the whole input's count (a rate over a few milliseconds once read
/// as hundreds of millions a second).
#[test]
fn progress_comes_by_time_and_shows_no_absurd_rate() {
    let (d, s) = store();
    let jsonl = d.path().join("chat.jsonl");
    let n = 20_000u64;
    let lines: String = (0..n)
        .map(|i| {
            format!(
                "{{\"source_id\":\"app:c{}\",\"author\":\"Me\",\"ts\":{},\"text\":\"note {i} about the atlas cutover\"}}\n",
                i % 7,
                1_672_531_200 + i * 60
            )
        })
        .collect();
    write(&jsonl, lines);
    let mut cmd =
        support::command(support::memtree_bin(), &s, &["ingest", "--format", "chat-jsonl", jsonl.to_str().unwrap()]);
    cmd.env("MEMTREE_PROGRESS_INTERVAL_MS", "20");
    let r = support::run(cmd, None);
    assert_eq!(r.json()["leaves"], n);
    let ticks: Vec<&str> =
        r.err.lines().filter(|l| l.starts_with("memtree: writing messages") && !l.contains(" done in ")).collect();
    assert!(ticks.len() >= 2, "no lines while writing: {}", r.err);
    assert!(r.err.contains("memtree: writing messages 20,000/20,000 done in "), "{}", r.err);
    for rate in rates(&r.err) {
        assert!(rate <= n as f64, "an absurd rate {rate}/s: {}", r.err);
    }

    let mut cmd = support::command(support::memtree_bin(), &s, &["reindex"]);
    cmd.env("MEMTREE_PROGRESS_INTERVAL_MS", "20");
    let r = support::run(cmd, None);
    r.json();
    assert!(r.err.lines().any(|l| l.starts_with("memtree: reindex done in ")), "{}", r.err);

    // A small import: its end line, and no rate.
    let small = d.path().join("small.jsonl");
    write(&small, format!("{CHAT_OK}\n{CHAT_OK2}\n"));
    let (_d2, s2) = store();
    let r = memtree(&s2, &["ingest", "--format", "chat-jsonl", small.to_str().unwrap()], None);
    r.json();
    assert!(r.err.contains("memtree: writing messages 2/2 done in "), "{}", r.err);
    assert!(rates(&r.err).is_empty(), "a rate before a second of work: {}", r.err);
}
