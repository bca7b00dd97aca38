//! Ingest throughput on synthetic chat (10k and 100k messages), without embeddings, plus
//! store and index size on disk. `cargo bench --bench ingest` prints a table and writes
//! `target/bench-ingest.json`; `-- --test` runs a 1k smoke version.

mod synth;

use memtree::Memory;
use std::time::Instant;

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    // MEMTREE_BENCH_SIZES=5000,20000 overrides the sizes (for profiling).
    let sizes: Vec<usize> = match std::env::var("MEMTREE_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) if smoke => vec![1_000],
        Err(_) => vec![10_000, 100_000],
    };
    let mut rows = Vec::new();
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
        let row = serde_json::json!({
            "messages": n, "batch": batch, "seconds": secs, "leaves_per_s": n as f64 / secs,
            "summaries": summaries, "store_bytes": st.store_bytes, "index_bytes": st.index_bytes,
        });
        println!(
            "| {n} | {batch} | {secs:.2} | {:.0} | {summaries} | {:.1} | {:.1} |",
            n as f64 / secs,
            st.store_bytes as f64 / 1e6,
            st.index_bytes as f64 / 1e6
        );
        rows.push(row);
    }
    if !smoke {
        let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-ingest.json");
        std::fs::write(&out, serde_json::to_string_pretty(&rows).expect("json")).expect("write");
    }
}
