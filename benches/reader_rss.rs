//! Peak memory of a fresh reader process: what a desktop assistant's process holds when it
//! loads the query model, opens a large store and answers questions, without what a bench
//! that built the store in the same process keeps (the latency bench's "reads + query model"
//! column includes the build's heap, which glibc cannot always give back).
//!
//! `cargo bench --bench reader_rss`: per size (`MEMTREE_BENCH_SIZES`, default 100000), build a
//! synthetic store (the latency bench's stream and questions; hashing vectors for the nodes),
//! then run this binary again as a child that loads the real model, opens the store, runs
//! `MEMTREE_BENCH_QUESTIONS` (default 100) walks and query_source calls with the query
//! embedding, and reports its own `VmHWM` (peak RSS) and, after those reads, its anonymous and
//! file-backed resident memory; then it asks a hostile question (1 MB, 100,000 distinct
//! words: issue 33) five times, and reports the median time and the peak RSS after it.
//! `MEMTREE_BENCH_STORE_DIR=<dir>` keeps the stores there (`<dir>/synthetic-<n>`) and reuses
//! one that is complete, so a million-leaf store is built once. `-- --test` is a smoke run (2,000 messages, 10 questions). Linux only (reads
//! `/proc/self/status`); without the model files the child reads lexically and says so.

mod proc_status;
mod query_model;
mod synth;

use memtree::tool::{Request, call_read};
use memtree::{Embedder, FastEmbedder, HashEmbedder, Memory, ModelPaths, OpenOptions, Scope};
use proc_status::status_mb;
use query_model::QueryModel;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

/// Marks a store whose build and vectors finished (a killed build is rebuilt).
const COMPLETE: &str = "bench-complete";

fn questions(n: usize) -> Vec<String> {
    let mut r = synth::Rng::new(9);
    (0..n).map(|_| format!("what did {} say about {}", r.pick(synth::PEOPLE), r.pick(synth::TOPICS))).collect()
}

/// Build the store in `dir` unless a complete one is there: the stream, then a vector for
/// every node from the hashing embedder at the model's dimension (384).
fn build(dir: &Path, n: usize) -> f64 {
    if dir.join(COMPLETE).exists() {
        return 0.0;
    }
    let _ = std::fs::remove_dir_all(dir);
    let t = Instant::now();
    {
        let mut mem = Memory::open(dir).expect("open");
        let mut it = synth::chat_stream(n, 7).into_iter().peekable();
        while it.peek().is_some() {
            mem.ingest(it.by_ref().take(5000).collect::<Vec<_>>()).expect("ingest");
        }
        mem.flush().expect("flush");
    }
    let opts = OpenOptions { embedder: Some(Arc::new(HashEmbedder::new(384))), ..OpenOptions::default() };
    drop(Memory::open_with(dir, opts).expect("vectors"));
    std::fs::write(dir.join(COMPLETE), b"").expect("marker");
    t.elapsed().as_secs_f64()
}

/// The child: model, open, reads; prints one JSON line.
fn child(dir: &Path, nq: usize) {
    let start = status_mb("VmHWM:");
    let model = ModelPaths::discover().and_then(|p| FastEmbedder::load(&p).ok());
    let dense = model.is_some();
    let opts = match model {
        // The real model under the hashing vectors' name: the stored vectors are compared
        // with real query embeddings, as in the latency bench.
        Some(m) => OpenOptions {
            embedder: Some(Arc::new(QueryModel::new(Arc::new(m), HashEmbedder::new(384).name()))),
            ..OpenOptions::default()
        },
        None => OpenOptions::default(),
    };
    let t = Instant::now();
    let mem = Memory::open_with(dir, opts).expect("open the store");
    let open_s = t.elapsed().as_secs_f64();
    let after_open = status_mb("VmHWM:");
    let qs = questions(nq);
    let t = Instant::now();
    for q in &qs {
        for r in
            [json!({"mode": "walk", "query": q}), json!({"mode": "query_source", "source_kind": "chat", "query": q})]
        {
            call_read(mem.as_reader(), Request::from_json(&r).expect("valid"), &Scope::all()).expect("read");
        }
    }
    let reads_ms = t.elapsed().as_secs_f64() * 1e3 / (2 * nq.max(1)) as f64;
    let reads_peak = status_mb("VmHWM:");
    let (anon, file) = (status_mb("RssAnon:"), status_mb("RssFile:"));
    // A hostile question (issue 33): a megabyte of distinct words, asked as a caller would.
    let hostile = json!({"mode": "walk", "query": hostile_question()});
    let mut times: Vec<f64> = (0..HOSTILE_RUNS)
        .map(|_| {
            let t = Instant::now();
            call_read(mem.as_reader(), Request::from_json(&hostile).expect("valid"), &Scope::all()).expect("read");
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "{}",
        json!({"dense": dense, "start_mb": start, "open_mb": after_open, "peak_mb": reads_peak,
               "anon_mb": anon, "file_mb": file, "open_s": open_s, "mean_read_ms": reads_ms,
               "hostile_ms": times[times.len() / 2], "hostile_peak_mb": status_mb("VmHWM:")})
    );
}

/// How often the hostile question is asked (its median is reported).
const HOSTILE_RUNS: usize = 5;

/// 100,000 distinct words of nine letters and a space: a 1 MB question.
fn hostile_question() -> String {
    let mut q = String::with_capacity(1_000_000);
    for i in 0..100_000u32 {
        let mut n = i;
        for _ in 0..9 {
            q.push(char::from(b'a' + (n % 26) as u8));
            n /= 26;
        }
        q.push(' ');
    }
    q
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--reader-child") {
        child(Path::new(&args[i + 1]), args[i + 2].parse().expect("question count"));
        return;
    }
    let smoke = args.iter().any(|a| a == "--test");
    let sizes: Vec<usize> = match std::env::var("MEMTREE_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) if smoke => vec![2_000],
        Err(_) => vec![100_000],
    };
    let nq: usize = std::env::var("MEMTREE_BENCH_QUESTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(if smoke {
        10
    } else {
        100
    });
    let tmp = tempfile::tempdir().expect("tmp");
    let root = std::env::var("MEMTREE_BENCH_STORE_DIR").map_or(tmp.path().to_path_buf(), Into::into);
    println!(
        "| store | built s | open s | mean read ms | peak RSS MB: start / after open / reads | anon / file MB after the reads | 1 MB question: median ms / peak RSS MB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        let dir = root.join(format!("synthetic-{n}"));
        let built = build(&dir, n);
        let out = Command::new(std::env::current_exe().expect("own path"))
            .args(["--reader-child", &dir.to_string_lossy(), &nq.to_string()])
            .output()
            .expect("run the reader child");
        assert!(out.status.success(), "reader child failed: {}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value = serde_json::from_str(line.lines().last().unwrap_or("")).expect("child's report");
        if v["dense"] != json!(true) {
            println!("<!-- model files not found (bash scripts/fetch-models.sh): the child read lexically -->");
        }
        let built = if built > 0.0 { format!("{built:.1}") } else { "reused".into() };
        println!(
            "| synthetic {n} | {built} | {:.2} | {:.2} | {} / {} / {} | {} / {} | {:.1} / {} |",
            v["open_s"].as_f64().unwrap_or(0.0),
            v["mean_read_ms"].as_f64().unwrap_or(0.0),
            v["start_mb"],
            v["open_mb"],
            v["peak_mb"],
            v["anon_mb"],
            v["file_mb"],
            v["hostile_ms"].as_f64().unwrap_or(0.0),
            v["hostile_peak_mb"]
        );
        if smoke {
            assert!(v["peak_mb"].as_u64().unwrap_or(0) > 0 || !cfg!(target_os = "linux"), "a peak was read");
            assert!(v["hostile_ms"].as_f64().is_some_and(|ms| ms > 0.0), "the 1 MB question was timed");
        }
    }
}
