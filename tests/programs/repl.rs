//! The example REPL driven through a pipe, as a script would: a question, a mode command, a
//! JSON line, bad input, end of input. Runs on a temp store with the demo corpus loaded by
//! `--demo`, without the dense model (the lexical path; the REPL itself is what is tested).

use crate::support;

use std::path::Path;
use support::repl_bin;

/// A piped session: `input` on stdin, then end of input.
fn repl(store: &Path, extra: &[&str], input: &str) -> support::Run {
    support::run(support::command(repl_bin(), store, extra), Some(input))
}

/// The lines of stdout between the end of the previous command's latency line and the end of
/// the `n`-th latency line, i.e. the output of the `n`-th command that printed a result.
fn result_block(out: &str, n: usize) -> String {
    let mut blocks = Vec::new();
    let mut cur = String::new();
    for l in out.lines() {
        cur.push_str(l);
        cur.push('\n');
        if l.starts_with('(') && l.ends_with(" ms)") {
            blocks.push(std::mem::take(&mut cur));
        }
    }
    blocks.get(n).cloned().unwrap_or_else(|| panic!("no result block {n} in:\n{out}"))
}

#[test]
fn a_piped_session_answers_questions_modes_and_json_and_survives_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let script = "\
who is Sam's onboarding buddy?
:walk query=what caused the sync outage limit=3
{\"mode\":\"search_entities\",\"query\":\"ruth\"}
:bogus
{\"mode\": broken
{\"mode\":\"query_global\"}
:window 2023-05-13..2023-05-13
:drill 5
:leaves 1
:entities heron
:query_source source_id=doc:offsite-lisbon.md
:json
:search_entities query=atlas limit=2
";
    // As of the story's last day, so its dates stay as written (the demo ends "now").
    let s = repl(&store, &["--demo", "--now", "2023-05-26"], script);
    assert_eq!(s.code, Some(0), "stderr:\n{}", s.err);
    assert!(s.err.contains("loaded the demo corpus"), "{}", s.err);

    // 0: a plain question goes to walk and comes back as a table with latency.
    let walk = result_block(&s.out, 0);
    let header = walk.lines().next().unwrap();
    for col in ["#", "id", "kind", "scope", "time", "score", "text"] {
        assert!(header.split_whitespace().any(|c| c == col), "missing column {col}: {header}");
    }
    assert!(walk.contains("onboarding buddy"), "{walk}");
    assert!(walk.lines().last().unwrap().starts_with("(walk: 10 of "), "{walk}");

    // 1: `:mode key=value`: bare words extend the string value, limit is a number.
    let limited = result_block(&s.out, 1);
    assert!(limited.lines().last().unwrap().starts_with("(walk: 3 of "), "{limited}");
    assert_eq!(limited.lines().filter(|l| l.contains("  leaf  ") || l.contains("  sum L")).count(), 3, "{limited}");
    assert!(limited.contains("INC-42") || limited.contains("outage"), "{limited}");

    // 2: a raw JSON line runs any mode.
    let ents = result_block(&s.out, 2);
    assert!(ents.contains("email:ruth.adams@bluefin.example"), "{ents}");
    assert!(ents.contains("person:ruth adams"), "{ents}");
    assert!(ents.contains("(search_entities: "), "{ents}");

    // Bad input: clear messages on stderr, and the session went on.
    assert!(s.err.contains("error: unknown command `:bogus`; type :help for the list"), "{}", s.err);
    assert!(s.err.contains("error: malformed JSON: "), "{}", s.err);
    assert!(
        s.err.contains(
            "error: memory_tree: unknown mode `query_global`. Valid: search_entities, query_source, drill_down, \
             cover_window, fetch_leaves, ingest_document, walk, smart_walk"
        ),
        "{}",
        s.err
    );

    // 3: the cutover night; 4: drill into its first summary; 5: open a leaf by row number.
    let window = result_block(&s.out, 3);
    assert!(window.contains("(cover_window: "), "{window}");
    assert!(window.contains("Maintenance window open"), "{window}");
    // The plans said before the night speak of it (SPEC §5.1's second clock): rows 1–4, the
    // night's own summaries after them (row 5 is the first, drilled into next).
    assert!(window.contains("Target cutover is the night of Saturday May 13"), "{window}");
    assert!(window.lines().nth(6).is_some_and(|l| l.starts_with("5  S")), "{window}");
    let drill = result_block(&s.out, 4);
    assert!(drill.contains("(drill_down: "), "{drill}");
    let leaf = result_block(&s.out, 5);
    assert!(leaf.starts_with("[1] L"), "{leaf}");
    assert!(leaf.contains("(fetch_leaves: 1 leaves"), "{leaf}");

    let heron = result_block(&s.out, 6);
    assert!(heron.contains("hashtag:heron"), "{heron}");

    // 7: demo notes carry their story dates, not file times.
    let note = result_block(&s.out, 7);
    assert!(note.contains("doc:offsite-lisbon.md") && note.contains("2023-05-19"), "{note}");

    // 8: after :json the raw response is printed, and parses.
    assert!(s.out.contains("raw JSON output on"), "{}", s.out);
    let raw = result_block(&s.out, 8);
    let json_text: String = raw
        .lines()
        .skip_while(|l| !l.starts_with('['))
        .take_while(|l| !l.starts_with('('))
        .collect::<Vec<_>>()
        .join("\n");
    let v: serde_json::Value = serde_json::from_str(&json_text).unwrap_or_else(|e| panic!("{e}: {raw}"));
    let ids: Vec<&str> = v.as_array().unwrap().iter().map(|e| e["canonical_id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"hashtag:atlas"), "{ids:?}");
    assert!(ids.len() <= 2);
}

#[test]
fn an_empty_store_is_not_filled_without_demo_and_quit_stops_reading() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // No store: a session that would only read makes none.
    let s = repl(&store, &[], ":stats\n");
    assert_eq!(s.code, Some(1), "{}", s.err);
    assert!(s.err.contains("no store at") && s.err.contains("--demo"), "{}", s.err);
    assert!(!store.exists(), "a read created {}", store.display());
    // An empty store (a key-value fact only): the REPL opens it and does not fill it.
    let put = r#"{"op":"put","namespace":"global","key":"theme","content":"dark"}"#;
    assert_eq!(support::memtree(&store, &["recall", put], None).json()["status"], "ok");
    let s = repl(&store, &[], ":stats\n:quit\nthis line is never read\n");
    assert_eq!(s.code, Some(0), "{}", s.err);
    assert!(s.err.contains("The store is empty: run with --demo"), "{}", s.err);
    assert!(s.out.contains("leaves     0"), "{}", s.out);
    assert!(!s.out.contains("(walk"), "{}", s.out);

    // A second session on a filled store does not load the demo again.
    let s = repl(&store, &["--demo"], ":stats\n");
    assert!(s.err.contains("loaded the demo corpus"));
    let again = repl(&store, &["--demo"], ":help\n");
    assert!(!again.err.contains("loaded the demo corpus"), "{}", again.err);
    assert!(again.out.contains(":window"), "{}", again.out);
    assert!(again.out.contains("smart_walk"), "{}", again.out);
}

#[test]
fn an_unusable_store_is_a_clear_error_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a store").unwrap();
    let s = repl(&file.join("store"), &["--demo"], "");
    assert_eq!(s.code, Some(1), "{}", s.err);
    assert!(s.err.starts_with("repl: opening store "), "{}", s.err);
}

/// `:sources` lists what the store holds; `:forget ID` removes one source (then `:sources`
/// no longer lists it), `:forget leaf #` one leaf of the last table; an unknown id or a
/// missing one is an error and the session goes on.
#[test]
fn sources_and_forget_in_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let s = repl(
        &store,
        &["--demo"],
        ":sources\n:forget slack:#eng\n:forget slack:#nope\n:forget\n:sources\n:window 2000-01-01..2100-01-01 limit=3\n:drill 1\n:forget leaf 1\n",
    );
    assert_eq!(s.code, Some(0), "{}", s.err);
    let (before, after) =
        s.out.split_once("leaves of slack:#eng; ").unwrap_or_else(|| panic!("no forget line: {}", s.out));
    assert!(before.contains("forgot "), "{before}");
    assert!(after.contains("the source is gone"), "{after}");
    assert!(before.lines().any(|l| l.starts_with("slack:#eng ") && l.contains("chat")), "{before}");
    assert!(after.lines().any(|l| l.starts_with("doc:")), "the other sources stay: {after}");
    assert!(!after.lines().any(|l| l.starts_with("slack:#eng ")), "{after}");
    assert!(s.err.contains("no source `slack:#nope`"), "{}", s.err);
    assert!(s.err.contains("usage: :forget SOURCE_ID"), "{}", s.err);
    assert!(after.contains("forgot 1 leaves of doc:atlas-runbook.md"), "the leaf of row 1: {after}\n{}", s.err);
}

/// The demo is re-dated so that its final week is the session's last week (`--now`, here
/// Monday 11 March 2024: the story's 22–28 May 2023 become 4–10 March, by whole weeks), so
/// "last week" asks about it: the HER-118 fix of Thursday 25 May is found on Thursday 7 March,
/// and the story's other deploy (10 May) lies outside the window, so it is not given.
#[test]
fn the_demo_ends_last_week_and_last_week_bounds_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let s = repl(&store, &["--demo", "--now", "2024-03-11"], ":now\n:json\nwhat was deployed last week?\n:demo\n");
    assert_eq!(s.code, Some(0), "{}", s.err);
    assert!(s.out.contains("now is 2024-03-11T23:59:59Z (fixed;"), "{}", s.out);
    let json = &s.out[s.out.find('{').unwrap()..s.out.find("\n(walk, ").unwrap()];
    let out: serde_json::Value = serde_json::from_str(json).unwrap();
    let hits = out["hits"].as_array().unwrap();
    let (from, to) = ("2024-03-04T00:00:00.000Z", "2024-03-10T23:59:59.999Z");
    assert_eq!(out["explain"]["time_window"], serde_json::json!([from, to]));
    assert_eq!(hits[0]["explain"]["time_window"], serde_json::json!([from, to]));
    assert!(hits[0]["content"].as_str().unwrap().contains("HER-118 fix deployed"), "{json}");
    // The story's Thursday 25 May 17:00: a Thursday still, at its time of day.
    assert_eq!(hits[0]["time_range_start"], "2024-03-07T17:00:00.000Z");
    // The window bounds the answer: every hit lies inside it, so the other deploy is not given.
    for h in hits {
        let t = h["time_range_start"].as_str().unwrap();
        assert!((from..=to).contains(&t), "{t} outside the window: {json}");
        assert!(!h["content"].as_str().unwrap().contains("New certificate deployed"), "{json}");
    }
    // A second load would copy the chat under new ids: refused.
    assert!(s.err.contains("error: the demo corpus is already loaded"), "{}", s.err);
}

/// An answer without hits names the window it searched: `:window`'s own (whole days as dates,
/// other bounds to the minute), or the time walk read in the question; a question without a
/// time says only `no hits`.
#[test]
fn no_hits_names_the_window_searched() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let script = ":window 1990-01-01..1990-01-02\n:window 2023-05-13T02:30:00Z..2023-05-13T03:00:00Z\n\
                  what happened on 1990-01-01?\nxyzzyplugh\n";
    let s = repl(&store, &["--demo", "--now", "2023-05-26"], script);
    assert_eq!(s.code, Some(0), "{}", s.err);
    let blocks: Vec<String> = (0..4).map(|n| result_block(&s.out, n)).collect();
    assert!(blocks[0].starts_with("no hits in the window 1990-01-01..1990-01-02\n(cover_window: 0 of 0"), "{}", s.out);
    assert!(blocks[1].starts_with("no hits in the window 2023-05-13 02:30..2023-05-13 03:00\n"), "{}", s.out);
    assert!(blocks[2].starts_with("no hits in the window 1990-01-01\n(walk: 0 of 0"), "{}", s.out);
    assert!(blocks[3].starts_with("no hits\n(walk: 0 of 0"), "{}", s.out);
}

/// `:export FILE` writes the store as an archive that `memtree restore` reads back: the same
/// sources.
#[test]
fn export_writes_an_archive_restore_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let archive = dir.path().join("demo.jsonl");
    let s = repl(&store, &["--demo"], &format!(":export {}\n:export\n", archive.display()));
    assert_eq!(s.code, Some(0), "{}", s.err);
    assert!(s.out.contains("exported ") && s.out.contains(" leaves, "), "{}", s.out);
    assert!(s.err.contains("usage: :export FILE"), "{}", s.err);
    let restored = dir.path().join("restored");
    let r = crate::support::memtree(&restored, &["restore", archive.to_str().unwrap()], None).json();
    assert!(r["archive"]["leaves"].as_u64().unwrap() > 50, "{r}");
    let a = crate::support::memtree(&store, &["sources"], None).json();
    let b = crate::support::memtree(&restored, &["sources"], None).json();
    assert_eq!(a, b);
}
