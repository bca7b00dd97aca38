//! Ingest throughput on synthetic chat (10k and 100k messages), without embeddings, plus
//! store and index size on disk. `cargo bench --bench ingest` prints a table; `-- --test` runs
//! a 1k smoke version.
//!
//! The JSON report, `{"runs":[{"messages","seconds","leaves_per_s","bytes_per_leaf",
//! "batch","summaries","store_bytes","index_bytes","dir_bytes"}]}`, goes to
//! `$MEMTREE_BENCH_JSON` when set (smoke runs too: they then read the file back and check its
//! shape: every number finite and ≥ 0, and a copy without one of the first four keys, or with
//! it set to `-1`, refused), else to `bench-ingest.json` in `$CARGO_TARGET_DIR`
//! (read at run time) or the crate's `target/` (not in smoke runs). Its parent directory is
//! created; a path that cannot be written ends the bench, before its runs, with an error
//! message and status 1.
//! `bytes_per_leaf` is the whole store directory (`dir_bytes`: SQLite files, index, content)
//! once the writer has closed, over the messages (one leaf each); `store_bytes` and
//! `index_bytes` are `stats()` with the writer still open (its WAL included), as in the table.
//!
//! | variable | default | effect |
//! |---|---|---|
//! | `MEMTREE_BENCH_SIZES` | `10000,100000` (smoke: `1000`) | messages per run, in the order given |
//! | `MEMTREE_BENCH_JSON` | | where the JSON report goes (see above) |

mod bench_json;
mod synth;

use bench_json::{array, dir_bytes, number};
use memtree::Memory;
use serde_json::{Value, json};
use std::time::Instant;

/// The smoke run's check of the report it wrote (see the file's header).
fn check_report(v: &Value) -> Result<(), String> {
    for (i, run) in array(v, "runs", "report")?.iter().enumerate() {
        let at = format!("runs[{i}]");
        for key in ["seconds", "leaves_per_s", "batch", "summaries", "store_bytes", "index_bytes"] {
            number(run, key, &at)?;
        }
        for key in ["messages", "bytes_per_leaf", "dir_bytes"] {
            if number(run, key, &at)? == 0.0 {
                return Err(format!("{at}.{key} is 0"));
            }
        }
    }
    Ok(())
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let out = bench_json::out_path_or_exit("bench-ingest.json", smoke);
    // MEMTREE_BENCH_SIZES=5000,20000 overrides the sizes (for profiling).
    let sizes: Vec<usize> = match std::env::var("MEMTREE_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) if smoke => vec![1_000],
        Err(_) => vec![10_000, 100_000],
    };
    let mut runs = Vec::new();
    println!("| messages | batch | seconds | leaves/s | summaries | store MB | index MB |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for &n in &sizes {
        let items = synth::chat_stream(n, 42);
        let dir = tempfile::tempdir().expect("temp dir");
        let mut mem = Memory::open(dir.path()).expect("open");
        let batch = 5_000;
        let t = Instant::now();
        let mut it = items.into_iter().peekable();
        let mut summaries = 0;
        while it.peek().is_some() {
            let chunk: Vec<_> = it.by_ref().take(batch).collect();
            summaries += mem.ingest(chunk).expect("ingest").summaries;
        }
        summaries += mem.flush().expect("flush").summaries;
        let secs = t.elapsed().as_secs_f64();
        let st = mem.as_reader().stats().expect("stats");
        assert_eq!(st.counts.leaves as usize, n);
        drop(mem);
        let dir_bytes = dir_bytes(dir.path());
        runs.push(json!({
            "messages": n, "seconds": secs, "leaves_per_s": n as f64 / secs,
            "bytes_per_leaf": dir_bytes as f64 / n.max(1) as f64,
            "batch": batch, "summaries": summaries, "store_bytes": st.store_bytes, "index_bytes": st.index_bytes,
            "dir_bytes": dir_bytes,
        }));
        println!(
            "| {n} | {batch} | {secs:.2} | {:.0} | {summaries} | {:.1} | {:.1} |",
            n as f64 / secs,
            st.store_bytes as f64 / 1e6,
            st.index_bytes as f64 / 1e6
        );
    }
    let keys = ["messages", "seconds", "leaves_per_s", "bytes_per_leaf"].map(|k| format!("/runs/0/{k}"));
    let shape = bench_json::Shape { check: check_report, keys: keys.to_vec() };
    bench_json::write_or_exit(out.as_ref(), &json!({ "runs": runs }), smoke.then_some(&shape));
}
