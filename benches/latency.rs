//! Latency of every memory_tree mode (p50/p95) on the LoCoMo dev store and on synthetic
//! stores, beside SQLite FTS5 over the same leaves, without the dense model (set
//! MEMTREE_BENCH_MODEL=1 to load it when fetched). `cargo bench --bench latency`; sizes with
//! MEMTREE_BENCH_SIZES=10000,100000 (a million-leaf store: MEMTREE_BENCH_SIZES=1000000 with
//! MEMTREE_BENCH_QUESTIONS=50, the number of synthetic questions, default 300); `-- --test`
//! runs a small smoke version. After each store it prints the build time, the store's size
//! on disk and the process's peak RSS so far (sizes run in the order given).

mod synth;

use memtree::embed::{FastEmbedder, ModelPaths};
use memtree::ingest::import::locomo;
use memtree::retrieval::Scope;
use memtree::store::Fts5Baseline;
use memtree::tool::{Request, call_read};
use memtree::{Memory, OpenOptions};
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Time `f` over every input (after one warm-up pass), in microseconds.
fn time<T>(inputs: &[T], mut f: impl FnMut(&T)) -> (f64, f64) {
    for x in inputs.iter().take(5) {
        f(x);
    }
    let mut t: Vec<f64> = inputs
        .iter()
        .map(|x| {
            let s = Instant::now();
            f(x);
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (percentile(&t, 0.5), percentile(&t, 0.95))
}

/// Peak resident set of this process so far (Linux `VmHWM`), MB; 0 elsewhere.
fn peak_rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

fn options() -> OpenOptions {
    let mut o = OpenOptions::default();
    if std::env::var("MEMTREE_BENCH_MODEL").is_ok_and(|v| v == "1")
        && let Some(p) = ModelPaths::discover()
    {
        o.embedder = Some(Arc::new(FastEmbedder::load(&p).expect("model loads")));
    }
    o
}

fn bench_store(name: &str, mem: &Memory, questions: &[String], rows: &mut Vec<serde_json::Value>) {
    let fts = Fts5Baseline::build(mem.store()).expect("fts5");
    let scope = Scope::all();
    let reqs = |mk: &dyn Fn(&String) -> serde_json::Value| -> Vec<Request> {
        questions.iter().map(|q| Request::from_json(&mk(q)).expect("valid request")).collect()
    };
    // A summary to drill into and a window to cover, taken from the store itself.
    let some_summary = memtree::tool::call_read(
        mem,
        Request::from_json(&json!({"mode": "query_source", "limit": 1})).expect("valid"),
        &scope,
    )
    .ok()
    .and_then(|r| serde_json::to_value(r).ok())
    .and_then(|v| v["hits"][0]["node_id"].as_str().map(String::from))
    .unwrap_or_default();
    let leaf_ids: Vec<String> = {
        let v = serde_json::to_value(
            call_read(
                mem,
                Request::from_json(&json!({"mode": "drill_down", "node_id": some_summary})).expect("valid"),
                &scope,
            )
            .expect("drill"),
        )
        .expect("json");
        v["hits"]
            .as_array()
            .map(|a| a.iter().filter_map(|h| h["node_id"].as_str().map(String::from)).collect())
            .unwrap_or_default()
    };
    let modes: Vec<(&str, Vec<Request>)> = vec![
        ("walk", reqs(&|q| json!({"mode": "walk", "query": q}))),
        (
            "search_entities",
            reqs(&|q| json!({"mode": "search_entities", "query": q.split_whitespace().nth(2).unwrap_or("a")})),
        ),
        ("query_source", reqs(&|q| json!({"mode": "query_source", "source_kind": "chat", "query": q}))),
        ("drill_down", reqs(&|_| json!({"mode": "drill_down", "node_id": some_summary}))),
        (
            "cover_window",
            reqs(
                &|_| json!({"mode": "cover_window", "since_ms": 1_672_531_200_000i64, "until_ms": 1_673_136_000_000i64, "limit": 200}),
            ),
        ),
        ("fetch_leaves", reqs(&|_| json!({"mode": "fetch_leaves", "chunk_ids": leaf_ids}))),
    ];
    let (p50, p95) = time(questions, |q| {
        fts.search(q, 10).expect("fts5");
    });
    let fts_p50 = p50;
    println!("| {name} | fts5 (baseline) | {:.3} | {:.3} |", p50 / 1000.0, p95 / 1000.0);
    rows.push(json!({"store": name, "mode": "fts5", "p50_ms": p50 / 1000.0, "p95_ms": p95 / 1000.0}));
    for (mode, rq) in modes {
        let (p50, p95) = time(&rq, |r| {
            call_read(mem, r.clone(), &scope).expect("call");
        });
        let ratio = if mode == "walk" { format!(" (walk/fts5 = {:.2})", p50 / fts_p50) } else { String::new() };
        println!("| {name} | {mode}{ratio} | {:.3} | {:.3} |", p50 / 1000.0, p95 / 1000.0);
        rows.push(json!({"store": name, "mode": mode, "p50_ms": p50 / 1000.0, "p95_ms": p95 / 1000.0}));
    }
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let sizes: Vec<usize> = match std::env::var("MEMTREE_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) if smoke => vec![2_000],
        Err(_) => vec![10_000, 100_000],
    };
    let mut rows = Vec::new();
    println!("| store | mode | p50 ms | p95 ms |");
    println!("|---|---|---:|---:|");
    // LoCoMo: every question of the corpus, one store per conversation pooled into one.
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/locomo/locomo-dev.json");
    if !smoke && corpus.exists() {
        let convs = locomo::read_locomo(&corpus).expect("corpus");
        let dir = tempfile::tempdir().expect("tmp");
        let mut mem = Memory::open_with(dir.path(), options()).expect("open");
        for c in &convs {
            mem.ingest(c.items()).expect("ingest");
        }
        mem.flush().expect("flush");
        let qs: Vec<String> =
            convs.iter().flat_map(|c| c.questions.iter().map(|q| q.question.clone())).take(500).collect();
        bench_store("locomo (4,124 leaves)", &mem, &qs, &mut rows);
    }
    for n in sizes {
        let t = Instant::now();
        let dir = tempfile::tempdir().expect("tmp");
        let mut mem = Memory::open_with(dir.path(), options()).expect("open");
        let items = synth::chat_stream(n, 7);
        let mut it = items.into_iter().peekable();
        while it.peek().is_some() {
            mem.ingest(it.by_ref().take(5000).collect::<Vec<_>>()).expect("ingest");
        }
        mem.flush().expect("flush");
        let built = t.elapsed().as_secs_f64();
        let mut r = synth::Rng::new(9);
        let nq: usize = std::env::var("MEMTREE_BENCH_QUESTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
        let qs: Vec<String> = (0..nq)
            .map(|_| format!("what did {} say about {}", r.pick(synth::PEOPLE), r.pick(synth::TOPICS)))
            .collect();
        bench_store(&format!("synthetic {n}"), &mem, &qs, &mut rows);
        let stats = mem.stats().expect("stats");
        println!(
            "<!-- synthetic {n}: built in {built:.0} s; store {:.0} MB + index {:.0} MB; peak RSS so far {} MB -->",
            stats.store_bytes as f64 / 1e6,
            stats.index_bytes as f64 / 1e6,
            peak_rss_mb()
        );
    }
    if !smoke {
        let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-latency.json");
        std::fs::write(out, serde_json::to_string_pretty(&rows).expect("json")).expect("write");
    }
}
