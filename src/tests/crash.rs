//! Crash tests: a child process runs a fixed sequence of writes and SIGKILLs itself at a
//! kill point (`crash::POINTS`, armed by `MEMTREE_CRASH_AT=<point>:<n>`); the
//! parent then reopens the store and checks that
//! - every call that returned before the kill is fully present and the call in flight is
//!   either wholly present or wholly absent (the store equals the reference state after
//!   `k` or `k + 1` steps, compared row by row),
//! - the tree invariants hold and the full-text index holds exactly the stored nodes
//!   (`common::check_invariants`), every node has its vector,
//! - the reopened store finishes the sequence and ends in the reference final state.
//!
//! Every point is armed at its 1st, 2nd, … visit until the child runs to completion
//! without reaching it. Repairs on open are crashed too: a kill mid-rebuild of an index
//! that was behind, and a kill while embedding the nodes an earlier model-less run wrote.
//!
//! The same test is the parent and (with `MEMTREE_CRASH_CHILD` set, run alone by name) the
//! child, so the child is exactly this crate's code, no helper binary needed. Built with the
//! `failpoints` feature only: `cargo test --release --no-default-features --features
//! failpoints --lib tests::crash`.

use crate::crash::{CRASH_ENV, POINTS};
use crate::store::{EntityReads, NodeReads, RecallReads, VectorReads};
use crate::tests::common::{HOUR, MIN, T0, chat, self_child};
use crate::{Config, Document, EmailMessage, Item, ManualClock, Memory, OpenOptions, SourceId};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

/// `HashEmbedder`'s model name (vectors are stored per model).
const MODEL: &str = "hash-bow";
const CHILD_ENV: &str = "MEMTREE_CRASH_CHILD";
/// Set in the child: open without the embedder (to leave nodes without vectors).
const NO_MODEL_ENV: &str = "MEMTREE_CRASH_NO_MODEL";
/// Set in the child: stop after this many steps.
const STEPS_ENV: &str = "MEMTREE_CRASH_STEPS";
/// Set in the child: open with deferred embedding, and after the steps make the vectors
/// with `embed_pending` (and check that none is left missing).
const DEFERRED_ENV: &str = "MEMTREE_CRASH_DEFERRED";

/// This test's name, for its child runs.
const SELF: &str = "tests::crash::a_kill_at_any_point_loses_nothing";

#[test]
fn a_kill_at_any_point_loses_nothing() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(Path::new(&dir));
        return;
    }
    let report = parent();
    println!(
        "crash: {} kill runs over {} points ({} repair runs), {} failures",
        report.runs,
        POINTS.len(),
        report.repair_runs,
        report.failures.len()
    );
    assert!(report.failures.is_empty(), "FAIL {}", report.failures.join("\nFAIL "));
}

fn config() -> Config {
    // Small budgets so the sequence seals, cascades and chunks documents into several leaves.
    Config { fanout: 3, chunk_tokens: 40, chunk_overlap_tokens: 5, ..Config::default() }
}

fn options(with_model: bool) -> OpenOptions {
    OpenOptions {
        config: config(),
        clock: Arc::new(ManualClock::new(T0 + 1000 * HOUR)),
        embedder: with_model.then(|| Arc::new(crate::HashEmbedder::new(64)) as _),
        ..OpenOptions::default()
    }
}

/// `n` chat messages on `source`, sessions of 4 turns two hours apart (each session seals
/// by the content clock when the next begins).
fn chats(source: &str, n: usize, start: i64, words: &str) -> Vec<Item> {
    let authors = ["Ada", "Grace", "Linus"];
    (0..n)
        .map(|i| {
            let ts = start + (i / 4) as i64 * 2 * HOUR + (i % 4) as i64 * MIN;
            let who = authors[i % authors.len()];
            chat(source, who, ts, &format!("{who} on {words} number {i}: talk to Kestrel Labs about the {words} plan"))
        })
        .collect()
}

fn document(version: u32) -> Document {
    let para = |i: u32| {
        format!(
            "Section {i} of the roadmap, version {version}. Osprey ships after the Falcon review; Ada owns the budget. "
        )
    };
    Document {
        source_id: SourceId::from("doc:notes/roadmap.md"),
        title: format!("Roadmap v{version}"),
        body: (0..6).map(para).collect(),
        modified_ms: Some(T0 + i64::from(version) * HOUR),
        source_ref: Some("notes/roadmap.md".into()),
        provider: Some("obsidian".into()),
    }
}

fn email(i: usize) -> Item {
    Item::Email(EmailMessage {
        source_id: SourceId::from("gmail:thread-1"),
        message_id: Some(format!("<m{i}@example.com>")),
        from: "Grace Hopper <grace@example.com>".into(),
        to: vec!["ada@example.com".into()],
        cc: vec![],
        subject: "Budget".into(),
        date_ms: T0 + i as i64 * HOUR,
        body: format!("Message {i}: the Osprey budget needs a second look before Friday."),
        source_ref: None,
    })
}

/// The fixed write sequence. Each step is one public call; together they reach every
/// kill point of the write path (sealing, cascades, replaces, deletes, recall facts).
const STEPS: usize = 13;

fn step(mem: &mut Memory, i: usize) -> crate::Result<()> {
    match i {
        0 => mem.ingest(chats("slack:#eng", 14, T0, "osprey")).map(drop),
        1 => mem.ingest_document(document(1)).map(drop),
        2 => mem.ingest((0..3).map(email).collect::<Vec<_>>()).map(drop),
        3 => mem.ingest_document(document(2)).map(drop),
        4 => mem.recall_put("global", "theme", "the user prefers dark mode").map(drop),
        5 => mem.ingest(chats("slack:#eng", 12, T0 + 40 * HOUR, "falcon")).map(drop),
        6 => mem.flush().map(drop),
        7 => mem.delete_source(&SourceId::from("gmail:thread-1")).map(drop),
        8 => mem.ingest_document(document(3)).map(drop),
        9 => mem.recall_forget("global", "theme").map(drop),
        10 => mem.ingest(chats("slack:#ops", 9, T0 + 90 * HOUR, "heron")).map(drop),
        // A forget re-seals the session and the level-2 summary above the leaf.
        11 => {
            let tree = crate::TreeId::for_source(&SourceId::from("slack:#eng"));
            let leaf = mem
                .as_reader()
                .store()
                .tree_nodes(&tree)?
                .into_iter()
                .find(|n| n.level == 0 && n.content.contains("osprey number 1:"));
            let leaf = leaf.expect("the leaf to forget").node_id;
            mem.forget(&crate::Forget::Leaf(leaf)).map(drop)
        }
        12 => mem
            .forget(&crate::Forget::Range {
                source: SourceId::from("slack:#ops"),
                since_ms: T0 + 90 * HOUR,
                until_ms: T0 + 90 * HOUR + 2 * MIN,
            })
            .map(drop),
        _ => unreachable!("{i} is not a step"),
    }
}

/// The child: open, then run the steps, printing `ok <i>` after each returns.
fn child(dir: &Path) {
    let with_model = std::env::var_os(NO_MODEL_ENV).is_none();
    let steps = std::env::var(STEPS_ENV).ok().and_then(|s| s.parse().ok()).unwrap_or(STEPS);
    let deferred = std::env::var_os(DEFERRED_ENV).is_some();
    let mut opts = options(with_model);
    if deferred {
        opts.embedding = crate::Embedding::Deferred;
    }
    let mut mem = Memory::open_with(dir, opts).expect("child open");
    let mut out = std::io::stdout().lock();
    writeln!(out, "open").unwrap();
    out.flush().unwrap();
    for i in 0..steps {
        step(&mut mem, i).unwrap_or_else(|e| panic!("step {i}: {e}"));
        writeln!(out, "ok {i}").unwrap();
        out.flush().unwrap();
    }
    if deferred {
        mem.embed_pending(|_| {}).expect("embed_pending");
        let missing = mem.as_reader().store().nodes_missing_vectors(MODEL).unwrap();
        assert!(missing.is_empty(), "{} nodes still without vectors after embed_pending", missing.len());
    }
}

/// How a child run ended.
struct ChildRun {
    /// Steps that returned before the end.
    acked: usize,
    /// Killed (true) or ran to completion (false).
    killed: bool,
}

fn run_child(dir: &Path, crash_at: Option<&str>, extra: &[(&str, &str)]) -> ChildRun {
    let mut cmd = self_child(SELF);
    cmd.env(CHILD_ENV, dir).env_remove(CRASH_ENV).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(p) = crash_at {
        cmd.env(CRASH_ENV, p);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn child");
    let stdout = child.stdout.take().unwrap();
    let acked = BufReader::new(stdout).lines().map_while(|l| l.ok()).filter(|l| l.starts_with("ok ")).count();
    let out = child.wait_with_output().unwrap();
    let killed = {
        use std::os::unix::process::ExitStatusExt;
        out.status.signal() == Some(9)
    };
    assert!(
        killed || out.status.success(),
        "child failed without being killed ({crash_at:?}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    ChildRun { acked, killed }
}

/// Everything a caller could observe in a store, as comparable text: nodes with their
/// links, envelopes and content; entity counts; edges; recall facts; which nodes have
/// vectors.
fn fingerprint(mem: &Memory) -> Vec<String> {
    let s = mem.as_reader().store();
    let mut out = Vec::new();
    s.for_each_node(|n| {
        out.push(format!(
            "node {} {} lvl{} parent={:?} children={:?} [{}, {}] {:?}",
            n.node_id, n.tree_id, n.level, n.parent_id, n.child_ids, n.time_start_ms, n.time_end_ms, n.content
        ));
        Ok(())
    })
    .unwrap();
    for e in s.all_entities().unwrap() {
        out.push(format!("entity {} {}", e.entity_id, e.mention_count));
        for edge in s.co_occurring(&e.entity_id, 10_000).unwrap() {
            out.push(format!("edge {} {} {}", edge.subject, edge.object, edge.weight));
        }
    }
    for r in s.recall_all().unwrap() {
        out.push(format!("recall {} {} {:?}", r.namespace, r.key, r.content));
    }
    // Stored vectors (an orphan of a deleted node would show here) and the in-memory
    // matrix the dense search uses.
    s.for_each_vector(MODEL, |id, _, codes| out.push(format!("vector {id} {}", codes.len()))).unwrap();
    if let Some(d) = mem.as_reader().dense() {
        out.push(format!("matrix rows {}", d.vectors().len()));
    }
    out.sort();
    out
}

/// Reference states: `refs[k]` = the store after the first `k` steps, no crash.
fn reference_states() -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let mut mem = Memory::open_with(dir.path(), options(true)).unwrap();
    let mut refs = vec![fingerprint(&mem)];
    for i in 0..STEPS {
        step(&mut mem, i).unwrap();
        refs.push(fingerprint(&mem));
    }
    refs
}

struct Report {
    runs: usize,
    repair_runs: usize,
    failures: Vec<String>,
}

/// Reopen after a crash with `acked` steps returned; check and finish the sequence.
fn verify(dir: &Path, acked: usize, refs: &[Vec<String>], what: &str) -> Result<(), String> {
    let mut mem = Memory::open_with(dir, options(true)).map_err(|e| format!("{what}: reopen failed: {e}"))?;
    let fp = fingerprint(&mem);
    let in_flight_done = if fp == refs[acked] {
        false
    } else if acked < STEPS && fp == refs[acked + 1] {
        true
    } else {
        let near = &refs[(acked + 1).min(STEPS)];
        let extra: Vec<&String> = fp.iter().filter(|l| !near.contains(l)).take(3).collect();
        let lacking: Vec<&String> = near.iter().filter(|l| !fp.contains(l)).take(3).collect();
        return Err(format!(
            "{what}: after {acked} acknowledged steps the store matches no reference state; \
             against the state after the step in flight it has {extra:?} and lacks {lacking:?}"
        ));
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| crate::tests::common::check_invariants(&mem, &config())))
        .map_err(|_| format!("{what}: invariants broken after reopen"))?;
    let missing = mem.as_reader().store().nodes_missing_vectors(MODEL).map_err(|e| e.to_string())?;
    if !missing.is_empty() {
        return Err(format!("{what}: {} nodes without vectors after reopen", missing.len()));
    }
    // The reopened store is fully usable: re-running the step in flight is idempotent,
    // and the rest of the sequence ends in the reference final state.
    let from = if in_flight_done { acked + 1 } else { acked };
    for i in from..STEPS {
        step(&mut mem, i).map_err(|e| format!("{what}: step {i} after reopen: {e}"))?;
    }
    if fingerprint(&mem) != refs[STEPS] {
        return Err(format!("{what}: finishing the sequence after the crash did not reach the reference state"));
    }
    Ok(())
}

fn parent() -> Report {
    let refs = reference_states();
    let mut report = Report { runs: 0, repair_runs: 0, failures: Vec::new() };
    let repairs = ["rebuild_index", "open_embed"];
    for point in POINTS.iter().filter(|p| !repairs.contains(p)) {
        let mut reached = 0;
        for nth in 1.. {
            let dir = tempfile::tempdir().unwrap();
            let run = run_child(dir.path(), Some(&format!("{point}:{nth}")), &[]);
            if !run.killed {
                break;
            }
            reached += 1;
            report.runs += 1;
            if let Err(e) = verify(dir.path(), run.acked, &refs, &format!("{point}:{nth}")) {
                report.failures.push(e);
            }
        }
        if reached == 0 {
            report.failures.push(format!("kill point {point} is never reached by the sequence"));
        }
    }

    // A crash while repairing: first leave the index behind the store (killed between the
    // two commits of step `s`), then kill the repairing open itself, then reopen.
    for s in [0, 3, 7] {
        let dir = tempfile::tempdir().unwrap();
        let first = run_child(dir.path(), Some(&format!("after_store_commit:{}", s + 1)), &[]);
        let second = run_child(dir.path(), Some("rebuild_index:1"), &[(STEPS_ENV, "0")]);
        report.repair_runs += 1;
        if !(first.killed && second.killed) {
            report.failures.push(format!("rebuild after step {s}: the kill points were not reached"));
            continue;
        }
        if let Err(e) = verify(dir.path(), first.acked, &refs, &format!("rebuild_index after step {s}")) {
            report.failures.push(e);
        }
    }
    // A crash while embedding what a model-less run wrote.
    for steps in [3, STEPS] {
        let dir = tempfile::tempdir().unwrap();
        let steps_s = steps.to_string();
        let first = run_child(dir.path(), None, &[(NO_MODEL_ENV, "1"), (STEPS_ENV, &steps_s)]);
        let second = run_child(dir.path(), Some("open_embed:1"), &[(STEPS_ENV, "0")]);
        report.repair_runs += 1;
        if first.killed || !second.killed {
            report.failures.push(format!("open_embed after {steps} steps: the kill point was not reached"));
            continue;
        }
        if let Err(e) = verify(dir.path(), steps, &refs, &format!("open_embed after {steps} steps")) {
            report.failures.push(e);
        }
    }
    // Deferred embedding: the steps store no vectors and `embed_pending` makes them after; a
    // kill inside it (before its transaction commits, or in the model call) loses nothing, and
    // the next run's `embed_pending` finishes the job.
    for point in ["open_embed:1", "embed_batch:1"] {
        let dir = tempfile::tempdir().unwrap();
        let first = run_child(dir.path(), Some(point), &[(DEFERRED_ENV, "1")]);
        let second = run_child(dir.path(), None, &[(DEFERRED_ENV, "1"), (STEPS_ENV, "0")]);
        report.repair_runs += 1;
        if !first.killed || first.acked != STEPS {
            report.failures.push(format!("deferred {point}: not reached after the steps ({} acked)", first.acked));
            continue;
        }
        if second.killed {
            report.failures.push(format!("deferred {point}: the resuming run was killed"));
            continue;
        }
        if let Err(e) = verify(dir.path(), STEPS, &refs, &format!("deferred {point}")) {
            report.failures.push(e);
        }
    }
    report
}
