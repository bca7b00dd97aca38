//! The write path of an edit: replacing one note of a store of 10k notes
//! (`Memory::ingest_document` with a changed body, as a notes sync does per changed note).
//! The store is built once with the deterministic `HashEmbedder` (384 dimensions), so every
//! node has a vector and the timing is the write path's own (the index, the record, the
//! vector matrix and the gazetteer after the write), not the model's. `cargo bench --bench
//! replace` prints the median, fastest and slowest replace; `-- --test` runs a 200-note smoke
//! version. After the replaces it times one-leaf forgets (`Memory::forget(&Forget::Leaf)`, each
//! of another note's leaf, as `memtree forget --leaf` does): the write, the index purge and the
//! checkpoint that follow it.
//!
//! To compare two builds on the same store, build it once (`MEMTREE_BENCH_STORE=DIR`: created
//! there when missing, else reused); each run replaces notes in a copy of it, so every run
//! starts from the same bytes.
//!
//! | variable | default | effect |
//! |---|---|---|
//! | `MEMTREE_BENCH_NOTES` | `10000` (smoke: `200`) | notes in the store |
//! | `MEMTREE_BENCH_REPLACES` | `21` (smoke: `3`) | replaces timed, each of another note |
//! | `MEMTREE_BENCH_NAMES` | `0` | names (entities) each note has that no other note does (a store with as many entities as notes, or more: what a replace or forget costs the gazetteer); a store built with one value is not one built with another |
//! | `MEMTREE_BENCH_FORGETS` | `21` (smoke: `3`) | one-leaf forgets timed after them (`0`: none) |
//! | `MEMTREE_BENCH_STORE` | a temporary directory | where the store is built, or reused from |
//! | `MEMTREE_BENCH_JSON` | `bench-replace.json` in the target dir | the JSON report, `{"notes","replaces","median_ms","min_ms","max_ms","ms":[…],"forget":{"forgets","median_ms","min_ms","max_ms","ms":[…]}}` |

mod bench_json;
mod synth;

use bench_json::number;
use memtree::{Document, Forget, HashEmbedder, Memory, OpenOptions, SourceId};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use synth::{PEOPLE, Rng, TAGS, TOPICS, VERBS};

/// Content time of the first note; each later note a minute on.
const T0: i64 = 1_672_531_200_000;

fn options() -> OpenOptions {
    OpenOptions { embedder: Some(Arc::new(HashEmbedder::new(384))), ..OpenOptions::default() }
}

/// Note `i`: a title and three short paragraphs about people and topics, seeded by `i`, so
/// that notes share names (the gazetteer and the entity rows a replace touches are shared);
/// then, with `MEMTREE_BENCH_NAMES`, lines with names of its own.
fn note(i: usize, revision: usize) -> Document {
    let mut r = Rng::new(i as u64 * 7919 + 1);
    let mut body = String::new();
    for p in 0..3 {
        let (a, b) = (r.pick(PEOPLE), r.pick(PEOPLE));
        body.push_str(&format!(
            "{a} and {b}: {} {}. {} wrote the notes {}.\n\n",
            r.pick(VERBS),
            r.pick(TOPICS),
            r.pick(PEOPLE),
            r.pick(TAGS)
        ));
        if p == 2 && revision > 0 {
            body.push_str(&format!("Revision {revision}: {} now owns {}.\n", r.pick(PEOPLE), r.pick(TOPICS)));
        }
    }
    let own = env_usize("MEMTREE_BENCH_NAMES", 0);
    for k in 0..own {
        body.push_str(&format!("\nThe review went to {} yesterday.\n", own_name(i * own + k)));
    }
    Document {
        source_id: SourceId::from(format!("doc:notes/note-{i:05}.md").as_str()),
        title: format!("Note {i}"),
        body,
        modified_ms: Some(T0 + i as i64 * 60_000 + revision as i64),
        source_ref: None,
        provider: Some("obsidian".into()),
    }
}

/// A name that no other `n` gives: two capitalised words of syllables spelling `n`.
fn own_name(n: usize) -> String {
    const SYLLABLES: [&str; 16] =
        ["ka", "lo", "mi", "ren", "sa", "tu", "vel", "zo", "bri", "dan", "ev", "fin", "gor", "hal", "ix", "jun"];
    let word = |mut n: usize| {
        let mut w = String::new();
        for _ in 0..3 {
            w.push_str(SYLLABLES[n % 16]);
            n /= 16;
        }
        let mut c = w.chars();
        c.next().map(|f| f.to_uppercase().chain(c).collect::<String>()).unwrap_or_default()
    };
    format!("{} {}", word(n), word(n / 4096 + 7 * (n % 4096) + 1))
}

fn build(dir: &Path, notes: usize) {
    let mut mem = Memory::open_with(dir, options()).expect("open");
    for i in 0..notes {
        mem.ingest_document(note(i, 0)).expect("ingest");
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

fn check_report(v: &Value) -> Result<(), String> {
    for key in ["notes", "replaces", "median_ms", "min_ms", "max_ms"] {
        if number(v, key, "report")? <= 0.0 {
            return Err(format!("report.{key} is not positive"));
        }
    }
    Ok(())
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(default)
}

/// Median, fastest and slowest of `ms`.
fn spread(ms: &[f64]) -> (f64, f64, f64) {
    let mut sorted = ms.to_vec();
    sorted.sort_by(f64::total_cmp);
    (sorted[sorted.len() / 2], sorted[0], sorted[sorted.len() - 1])
}

/// Forget one leaf of `n` distinct notes, picked by `r` among the first `stored`; the time of
/// each `Memory::forget`, in ms.
fn forget_leaves(mem: &mut Memory, stored: usize, n: usize, r: &mut Rng) -> Vec<f64> {
    let mut gone = std::collections::HashSet::new();
    let mut ms = Vec::with_capacity(n);
    while ms.len() < n {
        let i = r.below(stored);
        if !gone.insert(i) {
            continue;
        }
        let source = SourceId::from(format!("doc:notes/note-{i:05}.md").as_str());
        let leaf = first_leaf(mem, &source);
        let t = Instant::now();
        let receipt = mem.forget(&Forget::Leaf(leaf)).expect("forget");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(receipt.leaves.len(), 1, "note {i}: one leaf forgotten");
    }
    ms
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let out = bench_json::out_path_or_exit("bench-replace.json", smoke);
    let notes = env_usize("MEMTREE_BENCH_NOTES", if smoke { 200 } else { 10_000 }).max(1);
    let replaces = env_usize("MEMTREE_BENCH_REPLACES", if smoke { 3 } else { 21 }).max(1);
    let tmp = tempfile::tempdir().expect("temp dir");
    let base = match std::env::var_os("MEMTREE_BENCH_STORE") {
        Some(d) => d.into(),
        None => tmp.path().join("base"),
    };
    if !base.join("memtree.db").exists() {
        let t = Instant::now();
        build(&base, notes);
        eprintln!("built {notes} notes in {:.1} s", t.elapsed().as_secs_f64());
    }
    let work = tmp.path().join("work");
    copy_dir(&base, &work);
    let mut mem = Memory::open_with(&work, options()).expect("open");
    let stored = mem.as_reader().stats().expect("stats").counts.sources as usize;
    let mut r = Rng::new(42);
    let mut ms = Vec::with_capacity(replaces);
    for k in 0..replaces {
        let i = r.below(stored);
        let t = Instant::now();
        let report = mem.ingest_document(note(i, k + 1)).expect("replace");
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(report.removed > 0, "note {i} was not replaced");
    }
    let (median, min, max) = spread(&ms);
    println!("| notes | replaces | median ms | min ms | max ms |");
    println!("|---:|---:|---:|---:|---:|");
    println!("| {stored} | {replaces} | {median:.2} | {min:.2} | {max:.2} |");
    let forgets = env_usize("MEMTREE_BENCH_FORGETS", if smoke { 3 } else { 21 }).min(stored);
    let forget = (forgets > 0).then(|| {
        let fms = forget_leaves(&mut mem, stored, forgets, &mut r);
        let (median, min, max) = spread(&fms);
        println!();
        println!("| notes | one-leaf forgets | median ms | min ms | max ms |");
        println!("|---:|---:|---:|---:|---:|");
        println!("| {stored} | {forgets} | {median:.2} | {min:.2} | {max:.2} |");
        json!({"forgets": forgets, "median_ms": median, "min_ms": min, "max_ms": max, "ms": fms})
    });
    let report = json!({
        "notes": stored, "replaces": replaces, "median_ms": median, "min_ms": min, "max_ms": max, "ms": ms,
        "forget": forget,
    });
    let keys = ["notes", "replaces", "median_ms", "min_ms"].map(|k| format!("/{k}"));
    let shape = bench_json::Shape { check: check_report, keys: keys.to_vec() };
    bench_json::write_or_exit(out.as_ref(), &report, smoke.then_some(&shape));
}

/// A leaf of `source`, found through the public read modes: the source's cover (its topmost
/// nodes), then a summary opened down to its leaves.
fn first_leaf(mem: &Memory, source: &SourceId) -> memtree::NodeId {
    let scope = memtree::Scope::all();
    let cover = memtree::CoverWindowArgs {
        since_ms: i64::MIN,
        until_ms: i64::MAX,
        source_id: Some(source.0.clone()),
        source_kind: None,
        limit: 1,
    };
    let top = memtree::cover_window(mem.as_reader(), &cover, &scope).expect("cover_window").hits;
    let top = top.first().expect("the source has a node");
    if top.node_id.starts_with('L') {
        return memtree::NodeId(top.node_id.clone());
    }
    let open = memtree::DrillDownArgs { node_id: top.node_id.clone(), max_depth: 16, query: None, limit: 500 };
    let hits = memtree::drill_down(mem.as_reader(), &open, &scope).expect("drill_down").hits;
    let leaf = hits.into_iter().find(|h| h.node_id.starts_with('L')).expect("a leaf under the summary");
    memtree::NodeId(leaf.node_id)
}
