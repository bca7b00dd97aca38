//! Dates as a user means them, through the binary: `--now` sets the engine's clock for
//! `tool` and for the MCP server, a relative question's window follows it (walk's
//! `explain.time_window`) and bounds the answer; a question about a time and nothing else is
//! answered from the tree; a date that is not one, a reversed range, a window after now and
//! one that holds nothing are said in `explain`; a bad `--now` is a usage error; the README's demo question is
//! answered; the recall harness asks its time-question set. Runs without the dense model.

use crate::mcp_client;
use crate::support;

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
    // The window bounds the answer: the other failure, outside it, is not given.
    assert!(!texts.iter().any(|t| t.contains("disk quota")), "{texts:?}");
}

/// `walk` as of `now`, the whole response.
fn ask(store: &Path, now: &str, question: &str, limit: usize) -> Value {
    let call = serde_json::json!({"mode": "walk", "query": question, "limit": limit}).to_string();
    let s = memtree(store, &["--now", now, "tool", &call], None);
    s.json()
}

fn contents(out: &Value) -> Vec<String> {
    out["hits"].as_array().unwrap().iter().map(|h| h["content"].as_str().unwrap().to_string()).collect()
}

fn notes(out: &Value) -> String {
    out["explain"]["notes"].to_string()
}

#[test]
fn a_window_bounds_the_answer_and_an_empty_window_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_chat(dir.path());
    // Topic and window: relevance inside the window only.
    let out = ask(&store, "2023-05-10", "which deploy failed in April?", 10);
    assert_eq!(contents(&out), ["Ana: Deploy failed: disk quota exceeded."]);
    assert_eq!(
        out["explain"]["time_window"],
        serde_json::json!(["2023-04-01T00:00:00.000Z", "2023-04-30T23:59:59.999Z"])
    );
    assert_eq!(out["explain"]["time_only"], false);
    // Nothing inside: the window bounds nothing (a question's date is often not when the
    // thing was said), what speaks of it would come first, and the response says so.
    let out = ask(&store, "2023-05-10", "which deploy failed in March 2023?", 10);
    assert_eq!(contents(&out).len(), 2, "{out}");
    assert_eq!(out["explain"]["window_use"], "nothing_inside", "{out}");
    assert!(notes(&out).contains("nothing lies inside the window 2023-03-01"), "{out}");
    assert!(notes(&out).contains("answered from all dates"), "{out}");
    // A question about that time and nothing else still has nothing to answer from.
    let out = ask(&store, "2023-05-10", "what happened in March 2023?", 10);
    assert_eq!(out["hits"], serde_json::json!([]));
    assert!(notes(&out).contains("nothing lies inside the window 2023-03-01"), "{out}");
    // `time_window_days` and the question's window together: both bound it.
    let call = serde_json::json!({"mode": "walk", "query": "which deploy failed in April?", "time_window_days": 3});
    let out = memtree(&store, &["--now", "2023-05-10", "tool", &call.to_string()], None).json();
    assert_eq!(out["hits"], serde_json::json!([]));
    assert!(notes(&out).contains("do not overlap"), "{out}");
}

#[test]
fn a_question_about_a_time_only_is_answered_from_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    // A three-note vault, one note a day: "what happened on May 13 2023" found nothing before.
    let vault = dir.path().join("vault");
    std::fs::create_dir(&vault).unwrap();
    for (day, title, body) in [
        ("2023-05-12", "Friday", "Dry run of the Atlas copy took 41 minutes."),
        ("2023-05-13", "Cutover", "Jonas ran the cutover: MySQL read-only at 06:00, Postgres live at 07:10."),
        ("2023-05-14", "Sunday", "Quiet day, reports checked against the old numbers."),
    ] {
        std::fs::write(vault.join(format!("{title}.md")), format!("---\ndate: {day}\n---\n# {title}\n\n{body}\n"))
            .unwrap();
    }
    let store = dir.path().join("store");
    let s = memtree(&store, &["ingest", "--format", "markdown", vault.to_str().unwrap()], None);
    assert_eq!(s.code, Some(0), "{}", s.err);
    for (now, q) in [
        ("2023-06-01", "What happened on May 13 2023?"),
        ("2023-05-16", "What did we talk about on May 13?"),
        ("2023-05-14T12:00:00Z", "What happened yesterday?"),
        ("2023-05-14T12:00:00Z", "catch me up on yesterday"),
    ] {
        let out = ask(&store, now, q, 10);
        assert_eq!(out["explain"]["time_only"], true, "{q}: {out}");
        let hits = out["hits"].as_array().unwrap();
        assert!(!hits.is_empty(), "{q}: {out}");
        // The day's note, once: its sealed summary is over that one leaf and says what the
        // leaf says, so the leaf comes alone (issue 33); nothing from the other days.
        assert_eq!(hits.len(), 1, "{q}: {out}");
        assert_eq!(hits[0]["node_kind"], "leaf", "{q}: {out}");
        for h in hits {
            assert!(h["time_range_start"].as_str().unwrap().starts_with("2023-05-13"), "{q}: {h}");
        }
        assert!(contents(&out).iter().any(|c| c.contains("Jonas ran the cutover")), "{q}: {out}");
    }
    // A chat day: the day's one message, in time order.
    let chat_store = store_with_chat(dir.path());
    let out = ask(&chat_store, "2023-05-10", "What happened yesterday?", 10);
    assert!(contents(&out).iter().any(|c| c.contains("Lunch at noon")), "{out}");
    for h in out["hits"].as_array().unwrap() {
        assert!(h["time_range_start"].as_str().unwrap().starts_with("2023-05-09"), "{h}");
    }
}

#[test]
fn readings_not_as_written_are_said_never_ignored_silently() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_chat(dir.path());
    // Not a date: no window applied, said so; a time-only question then has nothing to answer.
    let out = ask(&store, "2023-05-10", "what happened on February 30?", 10);
    assert_eq!(out["hits"], serde_json::json!([]));
    assert!(notes(&out).contains("`February 30` is not a date"), "{out}");
    // With a topic the question is still answered, over all dates, and says why.
    let out = ask(&store, "2023-05-10", "which deploy failed on February 30?", 10);
    assert_eq!(out["explain"]["time_window"], Value::Null);
    assert!(notes(&out).contains("not a date"), "{out}");
    assert_eq!(contents(&out).len(), 2, "{out}");
    // A reversed range is read forwards.
    let out = ask(&store, "2023-05-10", "which deploy failed between May 9 and April 15?", 10);
    assert!(notes(&out).contains("read as 2023-04-15 to 2023-05-09"), "{out}");
    assert_eq!(contents(&out).len(), 2, "{out}");
    // A window after now is flagged; it bounds like any other, and only a plan said before
    // it could lie in it (by the time it speaks of): there is none here, and that is said.
    let out = ask(&store, "2023-05-10", "what happens next week?", 10);
    assert!(notes(&out).contains("after now") && notes(&out).contains("nothing lies inside"), "{out}");
    assert_eq!(out["explain"]["window_use"], "filter", "{out}");
    assert_eq!(out["hits"], serde_json::json!([]));
}

/// A question about a time ahead ("next Saturday") asks about a plan: what was said about
/// that time, before it. The window bounds (issue 45: by either clock), and the message that
/// speaks of that day, resolved from its own date when it was written, is what lies in it;
/// a habit ("on Saturdays") names no day at all.
#[test]
fn a_time_ahead_is_answered_from_what_was_said_about_it() {
    let dir = tempfile::tempdir().unwrap();
    let chat = dir.path().join("plans.jsonl");
    std::fs::write(
        &chat,
        r#"{"source_id": "chat:trips", "author": "Ben", "ts": "2023-05-08T09:00:00Z", "text": "The coastal trail was closed after the storm, the trail crew said."}
{"source_id": "chat:trips", "author": "Ben", "ts": "2023-05-08T09:01:00Z", "text": "Trail maps for the trail cafe trail loop trail?"}
{"source_id": "chat:trips", "author": "Ana", "ts": "2023-05-08T09:02:00Z", "text": "Long day at work, then a walk home past the bakery, the park, the river and the old trail, then dinner and an early night."}
{"source_id": "chat:trips", "author": "Ben", "ts": "2023-05-08T09:03:00Z", "text": "Same here: meetings all morning, a late lunch, calls in the afternoon, a short trail run, then laundry."}
{"source_id": "chat:trips", "author": "Ana", "ts": "2023-05-08T09:04:00Z", "text": "Next Saturday we hike the trail with Sam."}
"#,
    )
    .unwrap();
    let store = dir.path().join("store");
    let s = memtree(&store, &["--now", "2023-05-10", "ingest", "--format", "chat-jsonl", chat.to_str().unwrap()], None);
    assert_eq!(s.code, Some(0), "{}", s.err);
    let plan = "Ana: Next Saturday we hike the trail with Sam.";
    // The plan's place among the hits, and whether it scores as high as any.
    let place = |out: &Value| {
        let hits = out["hits"].as_array().unwrap();
        let best = hits.iter().map(|h| h["score"].as_f64().unwrap()).fold(f64::MIN, f64::max);
        let at = hits.iter().position(|h| h["content"] == plan).unwrap_or_else(|| panic!("{out}"));
        (at, hits[at]["score"].as_f64().unwrap() >= best, hits.len())
    };
    // The words alone put the plan last: its one "trail" is the weakest match. (Ana's long
    // day comes as the `answer` of Ben's question before it, not as a hit of its own.)
    let plain = ask(&store, "2023-05-10", "which trail?", 10);
    assert_eq!(place(&plain), (3, false, 4), "{plain}");
    assert!(plain["hits"][0]["answer"]["content"].as_str().is_some_and(|a| a.starts_with("Ana: Long day")), "{plain}");
    // Wednesday 10 May: next Saturday is the 13th, ahead of everything said. The plan's "next
    // Saturday", said on Monday 8 May, is the 13th: it alone lies in the window.
    let out = ask(&store, "2023-05-10", "which trail next Saturday?", 10);
    assert_eq!(out["explain"]["window_use"], "filter", "{out}");
    assert_eq!(
        out["explain"]["time_window"],
        serde_json::json!(["2023-05-13T00:00:00.000Z", "2023-05-13T23:59:59.999Z"]),
        "{out}"
    );
    assert_eq!(place(&out), (0, true, 1), "{out}");
    assert_eq!(out["hits"][0]["explain"]["admitted_by"], "speaks_of", "{out}");
    assert_eq!(out["hits"][0]["speaks_of"][0][0], "2023-05-13T00:00:00.000Z", "{out}");
    // A habit: no window, no note.
    let out = ask(&store, "2023-05-10", "which trail do we hike on Saturdays?", 10);
    assert_eq!(out["explain"]["time_window"], Value::Null, "{out}");
}

/// Issue 33's phrasings through the binary: a reversed range with the year once, a year
/// written once at the end, the week of a day, a week of a month, an ISO date no calendar
/// has and numeric dates read by the rule; each window (or its absence) and note as said.
#[test]
fn dates_with_the_year_once_weeks_and_digits_read_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_chat(dir.path());
    let window = |q: &str| {
        let out = ask(&store, "2023-05-10", q, 10);
        (out["explain"]["time_window"].clone(), notes(&out))
    };
    let span = |a: &str, b: &str| serde_json::json!([format!("{a}T00:00:00.000Z"), format!("{b}T23:59:59.999Z")]);
    let (w, n) = window("which deploy failed between May 10 and May 1, 2023?");
    assert_eq!(w, span("2023-05-01", "2023-05-10"));
    assert!(n.contains("read as 2023-05-01 to 2023-05-10"), "{n}");
    assert_eq!(window("which deploy failed from May 1 to 10 2023?").0, span("2023-05-01", "2023-05-10"));
    assert_eq!(window("which deploy failed between 2 and 4 May 2023?").0, span("2023-05-02", "2023-05-04"));
    // 3 May 2023 is a Wednesday: its Monday–Sunday week.
    assert_eq!(window("which deploy failed the week of May 3, 2023?").0, span("2023-05-01", "2023-05-07"));
    assert_eq!(window("which deploy failed in the first week of May 2023?").0, span("2023-05-01", "2023-05-07"));
    assert_eq!(window("which deploy failed in the last week of April 2023?").0, span("2023-04-24", "2023-04-30"));
    let (w, n) = window("which deploy failed on 2023-06-31?");
    assert_eq!(w, Value::Null);
    assert!(n.contains("`2023-06-31` is not a date"), "{n}");
    let (w, n) = window("which deploy failed on 03.05.2023?");
    assert_eq!(w, span("2023-05-03", "2023-05-03"));
    assert!(n.contains("`03.05.2023` read as 2023-05-03 (day.month.year with dots), not 2023-03-05"), "{n}");
    let (w, n) = window("which deploy failed on 05/03/2023?");
    assert_eq!(w, span("2023-05-03", "2023-05-03"));
    assert!(n.contains("month/day/year with slashes"), "{n}");
    let (w, n) = window("which deploy failed on 03.05.23?");
    assert_eq!(w, Value::Null);
    assert!(n.contains("`03.05.23` looks like a date but is not read"), "{n}");
}

/// The README's CLI example, on the demo as the CLI imports it (the story's own dates):
/// Monday 29 May 2023, "last week" is the story's final week, when Ruth's drivers saw
/// duplicate stops (HER-118). Without the model, the question's words must be the story's
/// ("what went wrong", which the dense signal answers, is asked in `src/tests/model.rs`).
#[test]
fn the_readme_question_is_answered_on_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    for (format, file) in [("chat-jsonl", "chat.jsonl"), ("mbox", "mail.mbox"), ("markdown", "notes")] {
        let s = memtree(&store, &["ingest", "--format", format, demo.join(file).to_str().unwrap()], None);
        assert_eq!(s.code, Some(0), "{}", s.err);
    }
    let out = ask(&store, "2023-05-29", "what problem did the drivers report last week?", 5);
    let texts = contents(&out);
    assert!(texts.iter().take(3).any(|t| t.contains("HER-118") || t.contains("duplicate")), "{texts:#?}");
    // Every hit lies in the week by one clock or the other: said in it, or speaking of a day
    // of it (the kickoff note of 1 May: "beta due May 24").
    let week = "2023-05-22".."2023-05-29";
    for h in out["hits"].as_array().unwrap() {
        let said = h["time_range_start"].as_str().unwrap();
        let spoken = h["speaks_of"].as_array().into_iter().flatten().any(|t| week.contains(&t[0].as_str().unwrap()));
        assert!(week.contains(&said) || spoken, "{h}");
        assert_eq!(h["explain"]["admitted_by"], if week.contains(&said) { "said" } else { "speaks_of" }, "{h}");
    }
}

/// `bench recall` asks the time-question set of a dated conversation and prints its table.
#[test]
fn the_harness_asks_time_questions() {
    let dir = tempfile::tempdir().unwrap();
    let turns = |s: u32, n: u32| -> Value {
        (0..n)
            .map(|i| {
                serde_json::json!({"speaker": if i % 2 == 0 {"Ana"} else {"Ben"}, "dia_id": format!("D{s}:{i}"),
                "text": format!("Session {s} message {i} about the garden and the {} plan", ["tomato", "bean", "pea"][i as usize % 3])})
            })
            .collect()
    };
    let corpus = serde_json::json!([{
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "10:00 am on 8 May, 2023", "session_1": turns(1, 4),
            "session_2_date_time": "3:00 pm on 11 May, 2023", "session_2": turns(2, 3),
        },
        "qa": [{"question": "What did Ana say about tomatoes?", "answer": "x", "evidence": ["D1:0"], "category": 4}],
    }]);
    let path = dir.path().join("tiny.json");
    std::fs::write(&path, corpus.to_string()).unwrap();
    let s = memtree(
        &dir.path().join("unused"),
        &["bench", "recall", "--corpus", path.to_str().unwrap(), "--systems", "walk", "--time-min-turns", "2"],
        None,
    );
    assert_eq!(s.code, Some(0), "{}", s.err);
    assert!(s.out.contains("| phrasing | questions | precision@10 | top hit inside |"), "{}", s.out);
    // Two days, each asked three ways; every answer inside its day.
    for p in ["with-year", "without-year", "yesterday"] {
        assert!(s.out.contains(&format!("| {p} | 2 | 100.0 | 100.0 |")), "{p}: {}", s.out);
    }
}

/// `bench recall --corpora DIR` runs every `<name>/<name>-dev.json` under DIR as one run:
/// one table with a corpus column, each corpus's questions counted and its time table named,
/// per-question lines tagged with their corpus, and stores kept apart by corpus.
#[test]
fn the_harness_runs_several_corpora_as_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = |name: &str, asked: usize| -> Value {
        let turns: Vec<Value> = (0..4)
            .map(|i| {
                serde_json::json!({"speaker": if i % 2 == 0 {"Ana"} else {"Ben"}, "dia_id": format!("D1:{i}"),
                "text": format!("{name} message {i} about the {} plan", ["tomato", "bean", "pea", "kale"][i])})
            })
            .collect();
        let qa: Vec<Value> = (0..asked)
            .map(|i| {
                serde_json::json!({"question": format!("What did Ana say about the {} plan?", ["tomato", "pea"][i % 2]),
                "answer": "x", "evidence": [format!("D1:{}", 2 * (i % 2))], "category": 4})
            })
            .collect();
        serde_json::json!([{"sample_id": name, "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "10:00 am on 8 May, 2023", "session_1": turns}, "qa": qa}])
    };
    let root = dir.path().join("corpora");
    for (name, asked) in [("beam", 1), ("locomo", 2), ("zeta", 1)] {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(root.join(name).join(format!("{name}-dev.json")), corpus(name, asked).to_string()).unwrap();
    }
    // A folder without a dev split is no corpus.
    std::fs::create_dir_all(root.join("notes")).unwrap();
    let (pq, kept) = (dir.path().join("pq.jsonl"), dir.path().join("kept"));
    let s = memtree(
        &dir.path().join("unused"),
        &[
            "bench",
            "recall",
            "--corpora",
            root.to_str().unwrap(),
            "--systems",
            "walk,bm25",
            "--time-min-turns",
            "0",
            "--per-question",
            pq.to_str().unwrap(),
            "--keep-stores",
            kept.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(s.code, Some(0), "{}", s.err);
    assert!(s.out.contains("| corpus | system | bucket | recall@5 |"), "{}", s.out);
    // LoCoMo first, BEAM second (the order BENCHMARKS.md quotes), then the others by name.
    let at = |c: &str| s.out.find(&format!("| {c}-dev | walk | overall |")).unwrap_or_else(|| panic!("{c}: {}", s.out));
    assert!(at("locomo") < at("beam") && at("beam") < at("zeta"), "{}", s.out);
    assert!(s.out.contains("recall locomo-dev (per-conversation, 2 questions with evidence"), "{}", s.out);
    assert!(s.out.contains("recall beam-dev (per-conversation, 1 questions with evidence"), "{}", s.out);
    let lines: Vec<Value> =
        std::fs::read_to_string(&pq).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2 * 4, "four questions, two systems");
    let tagged = |c: &str| lines.iter().filter(|l| l["corpus"] == c).count();
    assert_eq!((tagged("locomo-dev"), tagged("beam-dev"), tagged("zeta-dev")), (4, 2, 2));
    for c in ["locomo-dev", "beam-dev", "zeta-dev"] {
        assert!(kept.join(c).join("per-conversation").is_dir(), "{c}");
    }
    // --corpus and --corpora together are a usage error; an empty folder is an error.
    let both = memtree(&dir.path().join("unused"), &["bench", "recall", "--corpora", "x", "--corpus", "y"], None);
    assert_eq!(both.code, Some(2), "{}", both.err);
    let empty = tempfile::tempdir().unwrap();
    let none = memtree(
        &dir.path().join("unused"),
        &["bench", "recall", "--corpora", empty.path().to_str().unwrap(), "--systems", "bm25"],
        None,
    );
    assert_eq!(none.code, Some(1), "{}", none.err);
    assert!(none.err.contains("no corpus in"), "{}", none.err);
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
