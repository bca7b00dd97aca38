//! Latency of every memory_tree mode (p50/p95/p99) on the LoCoMo dev store, on an assistant's
//! own memory (the BEAM dev chats pooled in one store, and copied to ≥ 50k leaves) and on
//! synthetic stores, beside SQLite FTS5 over the same leaves, without and with the query
//! embedding; plus build time, size on disk, the graph's size and peak RSS per store. `cargo
//! bench --bench latency`; `-- --test` runs a small smoke version (two BEAM chats when the
//! corpus is beside the checkout, one 2,000-leaf synthetic store, no LoCoMo).
//!
//! The BEAM stores are the shape issue 43 found slow: long user–assistant chats (Markdown,
//! code) in one store. The second one copies the chats `MEMTREE_BENCH_BEAM_COPIES` times under
//! other source ids, 400 days apart each; with `MEMTREE_BENCH_MODEL=1` its vectors are the real
//! model's, each distinct text embedded once (`MemoEmbedder`: the copies repeat every text).
//!
//! Each store goes through four steps, each in a freshly opened `Memory` over one store
//! directory (peak RSS is reset between steps, so each step reports its own):
//!
//! 1. **build** — ingest without a model (lexical store), flush. Timed; size and RSS.
//! 2. **vectors** — reopen with an embedder: open embeds every node that has no vector.
//!    Synthetic stores (and LoCoMo by default) get the deterministic `HashEmbedder` at the real
//!    model's dimension (384): embedding 100k leaves with the real model would take ~15 min
//!    on two cores, a million is out of reach. With `MEMTREE_BENCH_MODEL=1` the LoCoMo store
//!    gets all-MiniLM-L6-v2 vectors instead (~1–3 min).
//! 3. **reads without the query embedding** — reopen without a model: FTS5 baseline, then
//!    every mode (lexical walk and query_source).
//! 4. **reads with the query embedding** — reopen with a `QueryModel`: an `Embedder` whose
//!    `name()` is the name the vectors were stored under (so the store sees no model swap and
//!    re-embeds nothing — the bench asserts `vectors_added == 0`) but whose `embed()` runs the
//!    real model. Rows: the query embedding alone; dense top-10 (the recall harness's `dense`:
//!    the question embedded, cosine over every stored vector); walk (split into the embedding measured
//!    inside walk and the rest: dense top-k over every vector, parent centroids, scoring);
//!    query_source with a query (dense rerank). Over hashing vectors the *values* of the dense
//!    scores mean nothing, but the work per question (one real query embedding, one cosine
//!    pass over every stored vector, top 300 dense candidates, centroids) is the real cost;
//!    the dense candidates overlap the lexical ones less than real vectors would, so walk's
//!    candidate set is, if anything, larger than with real vectors.
//!
//! Environment:
//!
//! | variable | default | effect |
//! |---|---|---|
//! | `MEMTREE_BENCH_SIZES` | `10000,100000` (smoke: `2000`) | synthetic store sizes in leaves, run in the order given |
//! | `MEMTREE_BENCH_QUESTIONS` | `300` (smoke: `50`) | synthetic questions per store (use 50 at 1M) |
//! | `MEMTREE_BENCH_LOCOMO` | `1` (smoke: `0`) | `0` skips the LoCoMo store |
//! | `MEMTREE_BENCH_EMBED` | `1` | `0` skips steps 2 and 4 (no model loaded) |
//! | `MEMTREE_BENCH_MODEL` | `0` | `1`: the LoCoMo and BEAM stores' vectors come from the real model |
//! | `MEMTREE_BENCH_BEAM_ON` | `1` | `0` skips the BEAM stores |
//! | `MEMTREE_BENCH_BEAM` | `../shared/corpora/beam/beam-dev.json` | the BEAM corpus (LoCoMo shape) |
//! | `MEMTREE_BENCH_BEAM_COPIES` | `21` (smoke: `0`) | copies of the BEAM chats in the second BEAM store |
//! | `MEMTREE_BENCH_BEAM_QUESTIONS` | all (179) | BEAM questions asked per BEAM store |
//! | `MEMTREE_BENCH_KEEP_DIR` | | keep each store in `<dir>/<name>` (default: a temporary folder) |
//! | `MEMTREE_BENCH_JSON` | | where the JSON report goes (see below) |
//! | `MEMTREE_MODEL_DIR`, `MEMTREE_EMBED_THREADS` | | where the model is, ONNX Runtime threads (see `embed`) |
//!
//! Without the model files (`bash scripts/fetch-models.sh`) steps 2 and 4 are skipped with a
//! printed note. A million-leaf run: `MEMTREE_BENCH_LOCOMO=0 MEMTREE_BENCH_SIZES=1000000
//! MEMTREE_BENCH_QUESTIONS=50 cargo bench --bench latency` took 6.5 min on two cores at load ~1
//! (build 2.4 min, vectors 1.5 min; 2026-12-02, 100k and 1M in one run), 1.5 GB in a tempdir (0.9 GB without vectors)
//! and 0.95 GB peak RSS. The default run (LoCoMo, 10k, 100k) takes ~7 min; the smoke run ~15 s.
//!
//! **Peak RSS** is the whole bench process's `VmHWM` over a step, so it includes what the
//! process holds besides the store: the model when loaded (once, for the whole run, so it is in
//! every step's starting RSS, `peak_rss_mb.start` below: 136 MB with it, 5 MB without, in one
//! smoke run each), the questions and, for the LoCoMo store, the corpus as read. The generated
//! messages are not held by the reads steps: the build step consumes them, and they are freed
//! (and trimmed back to the OS) before the next step.
//!
//! **The JSON report** goes to `$MEMTREE_BENCH_JSON` when set (smoke runs too: they then read
//! the file back and check its shape), else to `bench-latency.json` in `$CARGO_TARGET_DIR`
//! (read at run time) or the crate's `target/` (not in smoke runs). Its parent directory is
//! created; a path that cannot be written ends the bench, before any store is built, with an
//! error message and status 1. One object per store:
//!
//! ```text
//! {"stores":[{"name","leaves","nodes","build_s","vectors_s",
//!   "graph":{"entities","edges","edges_per_leaf"},
//!   "modes":{<mode>:{"p50_ms","p95_ms","p99_ms"} | null},
//!   "bytes":{"sqlite","index","vectors","total"},
//!   "peak_rss_mb":{"start","build","vectors","reads","reads_model"}}]}
//! ```
//!
//! - `modes`: `fts5` (the baseline), `walk`, `smart_walk`, `query_source`, `cover_window`, `drill_down`,
//!   `fetch_leaves`, `search_entities` from step 3 (no query embedding); from step 4 `dense`,
//!   `walk_embed` (walk with the query embedding), `query_source_embed`, `query_embedding`
//!   (alone), `walk_embed_embedding` and `walk_embed_rest` (walk_embed's split) and
//!   `walk_embed_control` (the hashing query vector). Every key is always present: a mode a run
//!   did not measure (no model, or `MEMTREE_BENCH_EMBED=0`: every step-4 mode) is `null`, and
//!   so are `vectors_s`, `bytes.vectors`, `peak_rss_mb.vectors` and `peak_rss_mb.reads_model`.
//! - `bytes`, measured once the vectors step's writer has closed (after the build step when
//!   there are no vectors): `sqlite` = the SQLite files (database, `-wal`, `-shm`), `index` =
//!   the tantivy directory, `total` = the whole store directory; `vectors` = `total` minus the
//!   store directory's size after the build step, so it holds wherever the vectors live.
//! - `peak_rss_mb`: `build`, `vectors`, `reads` (step 3, without the FTS5 baseline) and
//!   `reads_model` (step 4) as in the summary table; `start` is the RSS the build step began from.
//!
//! The smoke run's check: every key present, every number finite and ≥ 0, each step-3 mode
//! measured, the step-4 fields all `null` or all measured, `total ≥ sqlite + index`; and a
//! copy of the report without any one of the issue's keys, or with it set to `-1`, is refused.

mod bench_json;
mod proc_status;
mod query_model;
#[path = "latency/report.rs"] // beside this bench, not a bench target of its own
mod report;
mod synth;

use bench_json::dir_bytes;
use proc_status::status_mb;
use query_model::QueryModel;
use report::{DENSE_MODES, LEXICAL_MODES, Modes, Pct, check_report, report_keys};

use memtree::Scope;
use memtree::eval::read_locomo;
use memtree::eval::{Fts5Baseline, dense_query_text, dense_top_k};
use memtree::tool::{Request, call_read};
use memtree::{Embedder, FastEmbedder, HashEmbedder, ModelPaths};
use memtree::{Item, Memory, OpenOptions};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// p50, p95 and p99 of `t`.
fn percentiles(mut t: Vec<f64>) -> Pct {
    t.sort_by(f64::total_cmp);
    (percentile(&t, 0.5), percentile(&t, 0.95), percentile(&t, 0.99))
}

/// Time `f` over every input (after a warm-up on the first five), in microseconds.
fn time<T>(inputs: &[T], mut f: impl FnMut(&T)) -> Pct {
    for x in inputs.iter().take(5) {
        f(x);
    }
    percentiles(
        inputs
            .iter()
            .map(|x| {
                let s = Instant::now();
                f(x);
                s.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    )
}

/// Peak resident set of this process since the last `reset_peak_rss` (Linux `VmHWM`), MB.
fn peak_rss_mb() -> u64 {
    status_mb("VmHWM:")
}

/// Current resident set (Linux `VmRSS`), MB; 0 elsewhere.
fn rss_mb() -> u64 {
    status_mb("VmRSS:")
}

/// `dir_bytes` in MB.
fn dir_mb(dir: &Path) -> f64 {
    dir_bytes(dir) as f64 / 1e6
}

/// The tantivy directory and the SQLite file inside a store (ARCHITECTURE.md's store layout;
/// the engine does not lend its constants).
const INDEX_DIR: &str = "index";
const DB_FILE: &str = "memtree.db";

/// A store directory's size on disk, for the report's `bytes`.
struct Bytes {
    sqlite: u64,
    index: u64,
    /// The directory's growth from the build step to now; `None` without a vectors step.
    vectors: Option<i64>,
    total: u64,
}

impl Bytes {
    /// Sizes of `dir` now; `built_total` is the directory's size after the build step when a
    /// vectors step has run since.
    fn of(dir: &Path, built_total: Option<u64>) -> Bytes {
        let file = |name: String| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len());
        let db = DB_FILE;
        let total = dir_bytes(dir);
        Bytes {
            sqlite: file(db.to_string()) + file(format!("{db}-wal")) + file(format!("{db}-shm")),
            index: dir_bytes(&dir.join(INDEX_DIR)),
            vectors: built_total.map(|b| total as i64 - b as i64),
            total,
        }
    }
}

/// `name size MB` for each top-level entry of `dir`, largest first.
fn dir_breakdown(dir: &Path) -> String {
    let mut parts: Vec<(String, f64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let p = e.path();
            let mb = if p.is_dir() { dir_mb(&p) } else { e.metadata().map_or(0.0, |m| m.len() as f64 / 1e6) };
            (e.file_name().to_string_lossy().into_owned(), mb)
        })
        .collect();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    parts.iter().map(|(n, mb)| format!("{n} {mb:.1}")).collect::<Vec<_>>().join(", ")
}

/// Give freed heap back to the OS (glibc keeps it otherwise), then reset `VmHWM` to the
/// current RSS, so the next step's peak is its own. Returns the RSS the step starts from.
fn reset_peak_rss() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory at the top of glibc's heaps.
    unsafe {
        libc::malloc_trim(0);
    }
    // Linux ≥ 4.0: writing 5 to clear_refs resets the peak RSS. Ignored where unsupported.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    rss_mb()
}

fn env_flag(name: &str, default: bool) -> bool {
    std::env::var(name).map_or(default, |v| v.trim() == "1")
}

/// Prints a table row and keeps the figures under the report's key `mode`.
fn row(modes: &mut Modes, store: &str, mode: &'static str, label: &str, p: Pct) {
    assert!(LEXICAL_MODES.contains(&mode) || DENSE_MODES.contains(&mode), "{mode} is not a report key");
    println!("| {store} | {label} | {:.3} | {:.3} | {:.3} |", p.0 / 1000.0, p.1 / 1000.0, p.2 / 1000.0);
    modes.insert(mode, p);
}

/// With `MEMTREE_BENCH_DUMP=<path>`: every walk and query_source response of `modes` (the
/// JSON the tool returns), one per line, appended to `path` (compare two builds with `cmp`).
/// The reads with the query model are dumped too (`walk_embed`, `query_source_embed`).
fn dump_responses(store: &str, mem: &Memory, modes: &[(&str, Vec<Request>)]) {
    let Ok(path) = std::env::var("MEMTREE_BENCH_DUMP") else { return };
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("dump file");
    for (mode, rq) in modes.iter().filter(|m| m.0.starts_with("walk") || m.0.starts_with("query_source")) {
        for r in rq {
            let v = serde_json::to_value(call_read(mem.as_reader(), r.clone(), &Scope::all()).expect("call"))
                .expect("json");
            writeln!(f, "{}", json!({"store": store, "mode": mode, "response": v})).expect("dump write");
        }
    }
}

/// Step 3: FTS5 over the same leaves, then every mode without a query embedding. Returns the
/// FTS5 p50 (µs) and the peak RSS of the memtree reads (the FTS5 database is dropped first).
fn bench_lexical(name: &str, mem: &Memory, questions: &[String], modes: &mut Modes) -> (f64, u64) {
    let fts_p50 = {
        let fts = Fts5Baseline::build(mem.as_reader()).expect("fts5");
        let p = time(questions, |q| {
            fts.search(q, 10).expect("fts5");
        });
        row(modes, name, "fts5", "fts5 (baseline)", p);
        p.0
    };
    reset_peak_rss();
    let scope = Scope::all();
    let reqs = |mk: &dyn Fn(&String) -> serde_json::Value| -> Vec<Request> {
        questions.iter().map(|q| Request::from_json(&mk(q)).expect("valid request")).collect()
    };
    // A summary to drill into and a window to cover, taken from the store itself.
    let some_summary = call_read(
        mem.as_reader(),
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
                mem.as_reader(),
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
    // The store's first week (its earliest source's first leaf + 7 days): a window that holds
    // something on every store (the synthetic stores start on 2023-01-01).
    let first_ms = mem.as_reader().sources().expect("sources").iter().filter_map(|s| s.first_ms).min().unwrap_or(0);
    let week = (first_ms, first_ms + 7 * 86_400_000);
    let requests: Vec<(&'static str, Vec<Request>)> = vec![
        ("walk", reqs(&|q| json!({"mode": "walk", "query": q}))),
        ("smart_walk", reqs(&|q| json!({"mode": "smart_walk", "query": q}))),
        (
            "search_entities",
            reqs(&|q| json!({"mode": "search_entities", "query": q.split_whitespace().nth(2).unwrap_or("a")})),
        ),
        ("query_source", reqs(&|q| json!({"mode": "query_source", "source_kind": "chat", "query": q}))),
        ("drill_down", reqs(&|_| json!({"mode": "drill_down", "node_id": some_summary}))),
        (
            "cover_window",
            reqs(&|_| json!({"mode": "cover_window", "since_ms": week.0, "until_ms": week.1, "limit": 200})),
        ),
        ("fetch_leaves", reqs(&|_| json!({"mode": "fetch_leaves", "chunk_ids": leaf_ids}))),
    ];
    dump_responses(name, mem, &requests);
    for (mode, rq) in requests {
        let p = time(&rq, |r| {
            call_read(mem.as_reader(), r.clone(), &scope).expect("call");
        });
        let label = if mode == "walk" { format!("walk (walk/fts5 = {:.2})", p.0 / fts_p50) } else { mode.to_string() };
        row(modes, name, mode, &label, p);
    }
    (fts_p50, peak_rss_mb())
}

/// Walk every request (after a warm-up on the first five); per walk: total µs, µs inside
/// the query model's `embed`, and the difference.
fn walk_split(mem: &Memory, qm: &QueryModel, walks: &[Request]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let scope = Scope::all();
    for r in walks.iter().take(5) {
        call_read(mem.as_reader(), r.clone(), &scope).expect("walk");
    }
    let (mut total, mut embed, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for r in walks {
        let e0 = qm.embed_nanos();
        let s = Instant::now();
        call_read(mem.as_reader(), r.clone(), &scope).expect("walk");
        let us = s.elapsed().as_secs_f64() * 1e6;
        let e = (qm.embed_nanos() - e0) as f64 / 1e3;
        total.push(us);
        embed.push(e);
        rest.push(us - e);
    }
    (total, embed, rest)
}

/// Step 4: the query embedding alone, walk (with its split) and query_source with a query,
/// on a store opened with `qm`.
fn bench_dense(name: &str, mem: &Memory, qm: &QueryModel, questions: &[String], fts_p50: f64, modes: &mut Modes) {
    let scope = Scope::all();
    // What walk embeds: the question without the names of the people it asks about.
    let dense_texts: Vec<String> = questions.iter().map(|q| dense_query_text(mem.as_reader(), q)).collect();
    let p = time(&dense_texts, |t| {
        qm.model.embed(&[t.as_str()]).expect("embed");
    });
    row(modes, name, "query_embedding", "query embedding only", p);
    // Dense top-10 on the same store (the recall harness's `dense`): the floor walk is held to.
    let p = time(questions, |q| {
        dense_top_k(mem.as_reader(), q, 10).expect("dense").expect("a model is loaded");
    });
    row(modes, name, "dense", "dense top-10 (query embedding + cosine over every vector)", p);

    let walks: Vec<Request> =
        questions.iter().map(|q| Request::from_json(&json!({"mode": "walk", "query": q})).expect("valid")).collect();
    // Control: the stored vectors in play, the query embedded by the hashing embedder.
    qm.control.store(true, Ordering::Relaxed);
    let (total, _, _) = walk_split(mem, qm, &walks);
    qm.control.store(false, Ordering::Relaxed);
    let p = percentiles(total);
    row(modes, name, "walk_embed_control", "walk + hashing query vector (control: dense work, no ONNX)", p);
    let (total, embed, rest) = walk_split(mem, qm, &walks);
    let p = percentiles(total);
    row(modes, name, "walk_embed", &format!("walk + query embedding (walk/fts5 = {:.2})", p.0 / fts_p50), p);
    row(modes, name, "walk_embed_embedding", "… of which the query embedding", percentiles(embed));
    row(modes, name, "walk_embed_rest", "… of which the rest (dense top-k, centroids, scoring)", percentiles(rest));

    let qs: Vec<Request> = questions
        .iter()
        .map(|q| {
            Request::from_json(&json!({"mode": "query_source", "source_kind": "chat", "query": q})).expect("valid")
        })
        .collect();
    dump_responses(name, mem, &[("walk_embed", walks.clone()), ("query_source_embed", qs.clone())]);
    let p = time(&qs, |r| {
        call_read(mem.as_reader(), r.clone(), &scope).expect("query_source");
    });
    row(modes, name, "query_source_embed", "query_source + query embedding", p);
}

/// `items` and `copies` more copies of them, each under its own source ids (`…~k`) and
/// `k × 400` days later: the shape of a long-lived assistant's memory (many long chats), with
/// the dev chats' text.
fn copied(items: &[Item], copies: usize) -> Vec<Item> {
    const SHIFT_MS: i64 = 400 * 86_400_000;
    let mut out = items.to_vec();
    for k in 1..=copies {
        out.extend(items.iter().map(|it| match it {
            Item::Chat(m) => {
                let mut m = m.clone();
                m.source_id = memtree::SourceId(format!("{}~{k}", m.source_id.0));
                m.ts_ms += SHIFT_MS * k as i64;
                m.source_ref = m.source_ref.map(|r| format!("{r}~{k}"));
                Item::Chat(m)
            }
            other => other.clone(),
        }));
    }
    out
}

/// An embedder that embeds each distinct text once (the copies of [`copied`] repeat every
/// text), under its model's name and manifest.
struct MemoEmbedder {
    inner: Arc<dyn Embedder>,
    seen: std::sync::Mutex<std::collections::HashMap<String, Vec<f32>>>,
}

impl MemoEmbedder {
    fn new(inner: Arc<dyn Embedder>) -> Self {
        MemoEmbedder { inner, seen: Default::default() }
    }
}

impl Embedder for MemoEmbedder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn manifest(&self) -> &str {
        self.inner.manifest()
    }

    fn embed(&self, texts: &[&str]) -> memtree::Result<Vec<Vec<f32>>> {
        let mut seen = self.seen.lock().expect("memo lock");
        let mut distinct: Vec<&str> = texts.iter().copied().filter(|t| !seen.contains_key(*t)).collect();
        distinct.sort_unstable();
        distinct.dedup();
        if !distinct.is_empty() {
            for (t, v) in distinct.iter().zip(self.inner.embed(&distinct)?) {
                seen.insert(t.to_string(), v);
            }
        }
        Ok(texts.iter().map(|t| seen[*t].clone()).collect())
    }

    /// The model's window, so that long leaves get their passage vectors as in a real store.
    fn reads(&self, text: &str) -> memtree::Result<usize> {
        self.inner.reads(text)
    }
}

/// A store's directory: a temporary one, or with `MEMTREE_BENCH_KEEP_DIR=<dir>` the folder
/// `<dir>/<store name, slugged>` (emptied first, kept afterwards: a reader process, the REPL or
/// `memtree mcp`, can then be measured on it).
enum StoreDir {
    Temp(tempfile::TempDir),
    Kept(std::path::PathBuf),
}

impl StoreDir {
    fn new(name: &str) -> StoreDir {
        let Ok(root) = std::env::var("MEMTREE_BENCH_KEEP_DIR") else {
            return StoreDir::Temp(tempfile::tempdir().expect("tmp"));
        };
        let slug: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let dir = Path::new(&root).join(slug);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("MEMTREE_BENCH_KEEP_DIR is writable");
        println!("<!-- {name}: kept in {} -->", dir.display());
        StoreDir::Kept(dir)
    }

    fn path(&self) -> &Path {
        match self {
            StoreDir::Temp(t) => t.path(),
            StoreDir::Kept(p) => p,
        }
    }
}

/// Where a store's vectors come from.
enum Vectors {
    /// No vectors, no rows with the query embedding.
    None,
    /// The hashing embedder at the real model's dimension; queries embedded by the model.
    Hashing(Arc<dyn Embedder>),
    /// The real model: `nodes` embeds the store's nodes (the model, or a memo of it for
    /// copied chats), `queries` the questions (always the model itself: a memo would answer a
    /// repeated question from its cache and time nothing).
    Model { nodes: Arc<dyn Embedder>, queries: Arc<dyn Embedder> },
}

impl Vectors {
    /// A corpus store's vectors: none without a model; the model's own with `real` (through
    /// a [`MemoEmbedder`] with `memo`); else hashing vectors, queries embedded by the model.
    fn of(model: Option<&Arc<dyn Embedder>>, real: bool, memo: bool) -> Vectors {
        match model {
            None => Vectors::None,
            Some(m) if real => {
                let nodes = if memo { Arc::new(MemoEmbedder::new(m.clone())) as Arc<dyn Embedder> } else { m.clone() };
                Vectors::Model { nodes, queries: m.clone() }
            }
            Some(m) => Vectors::Hashing(m.clone()),
        }
    }
}

/// Build time, sizes and peak RSS of one store, for the summary table.
struct StoreLine {
    name: String,
    leaves: u64,
    nodes: u64,
    /// The co-occurrence graph's size after the build: entities and edges.
    entities: u64,
    edges: u64,
    built_s: f64,
    store_mb: f64,
    index_mb: f64,
    dir_mb: f64,
    rss_start: u64,
    build_rss: u64,
    vectors_s: Option<f64>,
    vectors_store_mb: Option<f64>,
    vectors_dir_mb: Option<f64>,
    vectors_rss: Option<u64>,
    lexical_rss: u64,
    dense_rss: Option<u64>,
    modes: Modes,
    bytes: Bytes,
}

fn opts_with(e: Arc<dyn Embedder>) -> OpenOptions {
    OpenOptions { embedder: Some(e), ..OpenOptions::default() }
}

/// The four steps for one store (see the file's header).
fn run_store(name: &str, items: Vec<Item>, questions: &[String], vectors: Vectors) -> StoreLine {
    let dir = StoreDir::new(name);
    // 1. Build, lexical.
    let rss_start = reset_peak_rss();
    let t = Instant::now();
    {
        let mut mem = Memory::open(dir.path()).expect("open");
        let mut it = items.into_iter().peekable();
        while it.peek().is_some() {
            mem.ingest(it.by_ref().take(5000).collect::<Vec<_>>()).expect("ingest");
        }
        mem.flush().expect("flush");
    }
    let built_s = t.elapsed().as_secs_f64();
    let build_rss = peak_rss_mb();
    let st = Memory::open(dir.path()).expect("open").as_reader().stats().expect("stats");
    let built_total = dir_bytes(dir.path());
    let mut line = StoreLine {
        name: name.to_string(),
        leaves: st.counts.leaves,
        nodes: st.counts.leaves + st.counts.summaries_per_level.iter().sum::<u64>(),
        entities: st.counts.entities,
        edges: st.counts.edges,
        built_s,
        store_mb: st.store_bytes as f64 / 1e6,
        index_mb: st.index_bytes as f64 / 1e6,
        dir_mb: built_total as f64 / 1e6,
        rss_start,
        build_rss,
        vectors_s: None,
        vectors_store_mb: None,
        vectors_dir_mb: None,
        vectors_rss: None,
        lexical_rss: 0,
        dense_rss: None,
        modes: Modes::new(),
        bytes: Bytes::of(dir.path(), None),
    };
    // 2. Vectors for every node.
    let (node_model, query_model) = match vectors {
        Vectors::None => (None, None),
        Vectors::Hashing(m) => (Some(Arc::new(HashEmbedder::new(m.dim())) as Arc<dyn Embedder>), Some(m)),
        Vectors::Model { nodes, queries } => (Some(nodes), Some(queries)),
    };
    if let Some(nm) = &node_model {
        reset_peak_rss();
        let t = Instant::now();
        let mem = Memory::open_with(dir.path(), opts_with(nm.clone())).expect("open with vectors");
        line.vectors_s = Some(t.elapsed().as_secs_f64());
        line.vectors_rss = Some(peak_rss_mb());
        assert_eq!(mem.open_report().vectors_added as u64, line.nodes, "every node embedded once");
        drop(mem);
        line.bytes = Bytes::of(dir.path(), Some(built_total));
        line.vectors_dir_mb = Some(line.bytes.total as f64 / 1e6);
        println!("<!-- {name}: store directory with vectors, MB: {} -->", dir_breakdown(dir.path()));
    }
    // The node embedder goes before the reads (a memo holds every distinct text and vector):
    // only its name is needed to reopen the store.
    let node_model = node_model.map(|m| m.name().to_string());
    // 3. Reads without the query embedding.
    let (fts_p50, lexical_rss) = {
        let mem = Memory::open(dir.path()).expect("reopen");
        if node_model.is_some() {
            // Sizes with vectors once the vectorising writer has closed (its WAL checkpointed).
            let st = mem.as_reader().stats().expect("stats");
            assert_eq!(st.counts.vectors, line.nodes, "every node has a vector");
            line.vectors_store_mb = Some(st.store_bytes as f64 / 1e6);
        }
        bench_lexical(name, &mem, questions, &mut line.modes)
    };
    line.lexical_rss = lexical_rss;
    // 4. Reads with the query embedding.
    if let (Some(nm), Some(model)) = (&node_model, query_model) {
        reset_peak_rss();
        let qm = Arc::new(QueryModel::new(model, nm));
        let t = Instant::now();
        let mem = Memory::open_with(dir.path(), opts_with(qm.clone())).expect("reopen with the query model");
        let reopen_s = t.elapsed().as_secs_f64();
        let report = mem.open_report();
        assert_eq!(report.vectors_added, 0, "reopening with the query model must embed no node");
        assert!(!report.index_rebuilt);
        println!(
            "<!-- {name}: reopened with the query model in {reopen_s:.2} s ({} stored vectors loaded, none embedded) -->",
            line.nodes
        );
        bench_dense(name, &mem, &qm, questions, fts_p50, &mut line.modes);
        line.dense_rss = Some(peak_rss_mb());
    }
    let opt_s = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.1} s"));
    println!(
        "<!-- {name}: graph {} entities, {} edges, {:.1} edges per leaf -->",
        line.entities,
        line.edges,
        line.edges as f64 / line.leaves.max(1) as f64
    );
    println!(
        "<!-- {name}: {} leaves, {} nodes; built in {built_s:.1} s; store {:.0} MB + index {:.1} MB, directory \
         {:.0} MB (with vectors: store {}, directory {}); vectors in {}; peak RSS MB: build {} (from {} at start), \
         vectors {}, reads {}, reads with query model {} -->",
        line.leaves,
        line.nodes,
        line.store_mb,
        line.index_mb,
        line.dir_mb,
        line.vectors_store_mb.map_or("—".into(), |v| format!("{v:.0} MB")),
        line.vectors_dir_mb.map_or("—".into(), |v| format!("{v:.0} MB")),
        opt_s(line.vectors_s),
        line.build_rss,
        line.rss_start,
        line.vectors_rss.map_or("—".into(), |v| v.to_string()),
        line.lexical_rss,
        line.dense_rss.map_or("—".into(), |v| v.to_string()),
    );
    line
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--test");
    let out = bench_json::out_path_or_exit("bench-latency.json", smoke);
    let sizes: Vec<usize> = match std::env::var("MEMTREE_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) if smoke => vec![2_000],
        Err(_) => vec![10_000, 100_000],
    };
    let nq: usize = std::env::var("MEMTREE_BENCH_QUESTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(if smoke {
        50
    } else {
        300
    });
    let with_locomo = env_flag("MEMTREE_BENCH_LOCOMO", !smoke);
    // The LoCoMo and BEAM stores' node vectors come from the real model (else hashing vectors).
    let real_vectors = env_flag("MEMTREE_BENCH_MODEL", false);
    let model: Option<Arc<dyn Embedder>> = if !env_flag("MEMTREE_BENCH_EMBED", true) {
        println!("<!-- MEMTREE_BENCH_EMBED=0: rows with the query embedding skipped -->");
        None
    } else if let Some(p) = ModelPaths::discover() {
        let m = FastEmbedder::load(&p).expect("model loads");
        let hash = HashEmbedder::new(m.dim());
        assert_eq!(hash.dim(), m.dim(), "hashing vectors must have the model's dimension");
        // The embedder's own rule (embed::model): the variable, else min(cores, 4).
        let threads = std::env::var("MEMTREE_EMBED_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()).min(4));
        println!(
            "<!-- query model: {} ({} dims) from {}, ONNX Runtime intra-op threads {threads}; {} cores -->",
            m.name(),
            m.dim(),
            p.dir.display(),
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );
        Some(Arc::new(m))
    } else {
        println!(
            "<!-- model files not found (bash scripts/fetch-models.sh, or MEMTREE_MODEL_DIR): rows with the query \
             embedding skipped -->"
        );
        None
    };
    let mut lines = Vec::new();
    println!("| store | mode | p50 ms | p95 ms | p99 ms |");
    println!("|---|---|---:|---:|---:|");
    // LoCoMo: every question of the corpus (first 500), all conversations pooled into one store.
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/locomo/locomo-dev.json");
    if with_locomo && corpus.exists() {
        let convs = read_locomo(&corpus).expect("corpus");
        let items: Vec<Item> = convs.iter().flat_map(|c| c.items()).collect();
        let qs: Vec<String> =
            convs.iter().flat_map(|c| c.questions.iter().map(|q| q.question.clone())).take(500).collect();
        let name = format!("locomo ({} leaves)", items.len());
        lines.push(run_store(&name, items, &qs, Vectors::of(model.as_ref(), real_vectors, false)));
    } else if with_locomo {
        println!("<!-- LoCoMo corpus not found at {}: skipped -->", corpus.display());
    }
    // BEAM: long user–assistant chats, an assistant's own memory, pooled in one store; then
    // the same chats copied under other source ids and later dates to ≥ 50k leaves.
    let beam = std::env::var("MEMTREE_BENCH_BEAM").map_or_else(
        |_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora/beam/beam-dev.json"),
        std::path::PathBuf::from,
    );
    let copies: usize = std::env::var("MEMTREE_BENCH_BEAM_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if smoke { 0 } else { 21 });
    if env_flag("MEMTREE_BENCH_BEAM_ON", true) && beam.exists() {
        let mut convs = read_locomo(&beam).expect("BEAM corpus");
        if smoke {
            convs.truncate(2); // two long chats: the shape, in seconds
        }
        let once: Vec<Item> = convs.iter().flat_map(|c| c.items()).collect();
        let nq_beam: usize =
            std::env::var("MEMTREE_BENCH_BEAM_QUESTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
        let qs: Vec<String> =
            convs.iter().flat_map(|c| c.questions.iter().map(|q| q.question.clone())).take(nq_beam).collect();
        let name = format!("beam pooled ({} chats, {} messages)", convs.len(), once.len());
        lines.push(run_store(&name, once.clone(), &qs, Vectors::of(model.as_ref(), real_vectors, false)));
        if copies > 0 {
            let items = copied(&once, copies);
            // The copies' node texts are the chats' own, so the memo embeds each text once: the
            // real model's vectors at 50k leaves for the cost of one copy. Its "+ vectors s"
            // says so in the store's name.
            let vectors = Vectors::of(model.as_ref(), real_vectors, true);
            let memo = if matches!(vectors, Vectors::Model { .. }) { ", texts embedded once" } else { "" };
            let name = format!("beam pooled x{} ({} messages{memo})", copies + 1, items.len());
            lines.push(run_store(&name, items, &qs, vectors));
        }
    } else if env_flag("MEMTREE_BENCH_BEAM_ON", true) {
        println!("<!-- BEAM corpus not found at {}: skipped -->", beam.display());
    }
    for n in sizes {
        let items = synth::chat_stream(n, 7);
        let mut r = synth::Rng::new(9);
        let qs: Vec<String> = (0..nq)
            .map(|_| format!("what did {} say about {}", r.pick(synth::PEOPLE), r.pick(synth::TOPICS)))
            .collect();
        let vectors = model.as_ref().map_or(Vectors::None, |m| Vectors::Hashing(m.clone()));
        lines.push(run_store(&format!("synthetic {n}"), items, &qs, vectors));
    }
    println!();
    println!(
        "| store | leaves | nodes | build s | store MB | index MB | directory MB | + vectors s | directory MB with \
         vectors | peak RSS MB: build | vectors | reads | reads + query model |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let dash = || "—".to_string();
    for l in &lines {
        println!(
            "| {} | {} | {} | {:.1} | {:.0} | {:.1} | {:.0} | {} | {} | {} | {} | {} | {} |",
            l.name,
            l.leaves,
            l.nodes,
            l.built_s,
            l.store_mb,
            l.index_mb,
            l.dir_mb,
            l.vectors_s.map_or_else(dash, |v| format!("{v:.1}")),
            l.vectors_dir_mb.map_or_else(dash, |v| format!("{v:.0}")),
            l.build_rss,
            l.vectors_rss.map_or_else(dash, |v| v.to_string()),
            l.lexical_rss,
            l.dense_rss.map_or_else(dash, |v| v.to_string()),
        );
    }
    let report = json!({"stores": lines.iter().map(StoreLine::to_json).collect::<Vec<_>>()});
    let shape = bench_json::Shape { check: check_report, keys: report_keys(&report) };
    bench_json::write_or_exit(out.as_ref(), &report, smoke.then_some(&shape));
}
