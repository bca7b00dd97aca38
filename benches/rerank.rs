//! What the rerank stage costs a walk: p50/p95 of walk alone and of walk + rerank at top 10,
//! 20 and 50 on one and two ONNX Runtime threads (walk asked for 10 hits, 50 for top 50), with
//! the process's peak RSS for each, on the
//! latency bench's LoCoMo store (every conversation of the dev split in one store, vectors
//! from the deterministic `HashEmbedder` at the model's 384 dimensions, the first 500
//! questions) or another LoCoMo-shaped corpus (BEAM's long messages: the stage scores a
//! long leaf's snippet).
//!
//! `MEMTREE_BENCH_RERANKER=DIR cargo bench --bench rerank`; `-- --test` runs a smoke version
//! (the first conversation, 20 questions, the tiny test cross-encoder, whose times mean
//! nothing: it checks the plumbing and the report).
//!
//! | variable | default | effect |
//! |---|---|---|
//! | `MEMTREE_BENCH_RERANKER` | `tests/data/reranker/tiny` | the cross-encoder folder |
//! | `MEMTREE_BENCH_CORPUS` | `../shared/corpora/locomo/locomo-dev.json` | the corpus |
//! | `MEMTREE_BENCH_QUESTIONS` | `500` (smoke: `20`) | questions asked per configuration |
//! | `MEMTREE_BENCH_JSON` | `bench-rerank.json` in the target dir | the JSON report |
//!
//! Peak RSS is the process's `VmHWM` since the configuration's reader opened (reset before
//! each; the cross-encoder is loaded inside it), so each row holds the store reader, the
//! loaded cross-encoder and the queries' working memory. The first row (walk alone) is the
//! baseline without a cross-encoder.

mod bench_json;
mod proc_status;

use memtree::eval::{Sample, read_corpus};
use memtree::{CrossEncoder, HashEmbedder, Memory, MemoryReader, OpenOptions, Reranker, Scope, WalkArgs, walk};
use proc_status::status_mb;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Frees what glibc holds and resets `VmHWM` (Linux ≥ 4.0), so a row's peak is its own.
fn reset_peak_rss() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory at the top of glibc's heaps.
    unsafe {
        libc::malloc_trim(0);
    }
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

struct Row {
    name: String,
    threads: Option<usize>,
    top: Option<usize>,
    limit: usize,
    p50_ms: f64,
    p95_ms: f64,
    peak_rss_mb: u64,
}

fn env_path(name: &str, default: PathBuf) -> PathBuf {
    std::env::var_os(name).filter(|v| !v.is_empty()).map_or(default, PathBuf::from)
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let out = bench_json::out_path_or_exit("bench-rerank.json", smoke);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reranker_dir = env_path("MEMTREE_BENCH_RERANKER", root.join("tests/data/reranker/tiny"));
    let corpus = env_path("MEMTREE_BENCH_CORPUS", root.join("../shared/corpora/locomo/locomo-dev.json"));
    let nq: usize = std::env::var("MEMTREE_BENCH_QUESTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(if smoke {
        20
    } else {
        500
    });
    if !corpus.is_file() {
        println!("<!-- corpus not found at {}: nothing to measure -->", corpus.display());
        return;
    }
    if memtree::ModelPaths::default_in_repo().ort_library().is_none() && std::env::var_os("ORT_DYLIB_PATH").is_none() {
        println!("<!-- no ONNX Runtime (bash scripts/fetch-models.sh): nothing to measure -->");
        return;
    }
    let mut samples = read_corpus(&corpus).expect("the corpus reads");
    if smoke {
        samples.truncate(1);
    }
    let mut items = Vec::new();
    let mut questions = Vec::new();
    for s in &samples {
        if let Sample::Conversation(c) = s {
            items.extend(c.items());
            questions.extend(c.questions.iter().map(|q| q.question.clone()));
        }
    }
    questions.truncate(nq);
    let dir = tempfile::tempdir().expect("tmp");
    let base = OpenOptions { embedder: Some(Arc::new(HashEmbedder::new(384))), ..OpenOptions::default() };
    let t = Instant::now();
    {
        let mut mem = Memory::open_with(dir.path(), base.clone()).expect("open");
        let mut it = items.into_iter().peekable();
        while it.peek().is_some() {
            mem.ingest(it.by_ref().take(5000).collect::<Vec<_>>()).expect("ingest");
        }
        mem.flush().expect("flush");
    }
    println!(
        "<!-- store: {} ({} questions), built in {:.1} s; reranker {} -->",
        corpus.display(),
        questions.len(),
        t.elapsed().as_secs_f64(),
        reranker_dir.display()
    );
    // (threads, top, limit): walk asked for 10 hits, and for 50 where 50 are re-scored — the
    // occurrence-ranked branch keeps 2 × limit candidates, so a walk for 10 has at most 20
    // to re-score there.
    let mut configs: Vec<(Option<usize>, Option<usize>, usize)> = vec![(None, None, 10), (None, None, 50)];
    for threads in [1, 2] {
        for top in [10, 20, 50] {
            configs.push((Some(threads), Some(top), if top > 20 { top } else { 10 }));
        }
    }
    println!("| configuration | p50 ms | p95 ms | peak RSS MB |");
    println!("|---|---:|---:|---:|");
    let mut rows = Vec::new();
    for (threads, top, limit) in configs {
        reset_peak_rss();
        let reranker = match (threads, top) {
            (Some(n), Some(top)) => {
                let ce = CrossEncoder::load_with_threads(&reranker_dir, n).expect("the reranker loads");
                Some(Reranker::new(Arc::new(ce), top))
            }
            _ => None,
        };
        let rerank = reranker.is_some();
        let reader = MemoryReader::open(dir.path(), OpenOptions { reranker, ..base.clone() }).expect("reader");
        let mut ms: Vec<f64> = questions
            .iter()
            .map(|q| {
                let args = WalkArgs { rerank, limit, ..WalkArgs::new(q.as_str()) };
                let t = Instant::now();
                let r = walk(&reader, &args, &Scope::all()).expect("walk");
                std::hint::black_box(r);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        let name = match (threads, top) {
            (Some(n), Some(top)) => {
                format!("walk ({limit} hits) + rerank top {top}, {n} thread{}", if n == 1 { "" } else { "s" })
            }
            _ => format!("walk ({limit} hits)"),
        };
        let row = Row {
            name,
            threads,
            top,
            limit,
            p50_ms: percentile(&ms, 0.5),
            p95_ms: percentile(&ms, 0.95),
            peak_rss_mb: status_mb("VmHWM:"),
        };
        println!("| {} | {:.1} | {:.1} | {} |", row.name, row.p50_ms, row.p95_ms, row.peak_rss_mb);
        rows.push(row);
    }
    let report = json!({
        "corpus": corpus.display().to_string(),
        "reranker": reranker_dir.display().to_string(),
        "questions": questions.len(),
        "rows": rows.iter().map(|r| json!({
            "name": r.name, "threads": r.threads, "top": r.top, "limit": r.limit,
            "p50_ms": r.p50_ms, "p95_ms": r.p95_ms, "peak_rss_mb": r.peak_rss_mb,
        })).collect::<Vec<_>>(),
    });
    let keys = ["/rows/0/p50_ms", "/rows/3/p95_ms", "/rows/7/peak_rss_mb"].map(String::from).to_vec();
    let shape = bench_json::Shape { check: check_report, keys };
    bench_json::write_or_exit(out.as_ref(), &report, smoke.then_some(&shape));
}

/// The smoke run's check of the report read back: eight rows, every figure a number ≥ 0.
fn check_report(v: &serde_json::Value) -> Result<(), String> {
    let rows = bench_json::array(v, "rows", "report")?;
    if rows.len() != 8 {
        return Err(format!("{} rows, expected 8", rows.len()));
    }
    for (i, r) in rows.iter().enumerate() {
        let at = format!("rows[{i}]");
        bench_json::number(r, "p50_ms", &at)?;
        bench_json::number(r, "p95_ms", &at)?;
        bench_json::number(r, "peak_rss_mb", &at)?;
    }
    Ok(())
}
