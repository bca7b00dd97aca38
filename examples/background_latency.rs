//! What background embedding buys a long-running host (issue #14, item 5), with the real model:
//! 1. the latency of an `ingest_document` with the vectors made in the write (`WithEachWrite`)
//!    against a deferred write that nudges a `BackgroundEmbedder` (and how long until that
//!    worker has made the vectors), alternated round by round;
//! 2. the latency of `walk` (which embeds its query) while a backlog is embedded in the
//!    background by the worker (the model called 32 texts at a time), with the reader's model
//!    calls going first (`host_options`) or not, against a plain `embed_pending` on another
//!    thread (256 texts a call), and with nothing running.
//!
//! ```sh
//! cargo run --release --example background_latency -- MODEL_DIR [ROUNDS] [CONVERSATIONS]
//! # defaults: ROUNDS = 5, CONVERSATIONS = 1 (LoCoMo dev conversations in the backlog)
//! ```

use memtree::{BackgroundEmbedder, Document, Embedding, Format, Memory, MemoryReader, OpenOptions, Parsed, Scope};
use std::path::{Path, PathBuf};
use std::time::Instant;

const QUESTIONS: &[&str] = &[
    "When did Caroline go to the LGBTQ support group?",
    "What did Melanie paint recently?",
    "What is Caroline's identity?",
    "When did Melanie run a charity race?",
    "What activities does Melanie partake in?",
    "Where did Caroline move from 4 years ago?",
    "What career path has Caroline decided to pursue?",
    "Would Caroline still want to pursue counseling as a career if she hadn't received support growing up?",
];

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn notes() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/notes");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect();
    out.sort();
    out
}

fn doc(round: usize, name: &str, body: &str) -> Document {
    Document {
        source_id: format!("doc:r{round}/{name}").as_str().into(),
        title: name.to_string(),
        body: body.to_string(),
        modified_ms: None,
        source_ref: None,
        provider: None,
    }
}

fn walk_ms(reader: &MemoryReader, q: &str) -> f64 {
    let t = Instant::now();
    let call = serde_json::json!({"mode": "walk", "query": q}).to_string();
    memtree::tool::call_read_json(reader, &call, &Scope::all()).unwrap();
    ms(t)
}

/// A store with `conversations` LoCoMo dev conversations written deferred: the backlog.
fn backlog(dir: &Path, opts: &OpenOptions, conversations: usize) -> (Memory, u64) {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora/locomo/locomo-dev.json");
    let corpus = if corpus.is_file() { corpus } else { PathBuf::from("/work/shared/corpora/locomo/locomo-dev.json") };
    let mut parsed = Format::Locomo.read(&corpus).unwrap();
    if let Parsed::Conversations(c) = &mut parsed {
        c.truncate(conversations);
    }
    let mut mem = Memory::open_with(dir, OpenOptions { embedding: Embedding::Deferred, ..opts.clone() }).unwrap();
    mem.write_parsed(parsed, |_| {}).unwrap();
    mem.flush().unwrap();
    let pending = mem.as_reader().stats().unwrap().vectors_pending;
    (mem, pending)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model = PathBuf::from(args.first().expect("usage: background_latency MODEL_DIR [ROUNDS] [CONVERSATIONS]"));
    let rounds: usize = args.get(1).map_or(5, |s| s.parse().unwrap());
    let conversations: usize = args.get(2).map_or(1, |s| s.parse().unwrap());
    let (opts, found) = OpenOptions::with_model(Some(&model)).unwrap();
    assert!(found, "no model in {}", model.display());
    let tmp = tempfile::tempdir().unwrap();

    // 1. Write latency.
    let notes = notes();
    let inline_dir = tmp.path().join("inline");
    let bg_dir = tmp.path().join("background");
    let mut inline = Memory::open_with(&inline_dir, opts.clone()).unwrap();
    let worker = BackgroundEmbedder::start(&bg_dir, opts.clone(), None).unwrap();
    let host = worker.host_options(OpenOptions { embedding: Embedding::Deferred, ..opts.clone() });
    let mut deferred = Memory::open_with(&bg_dir, host).unwrap();
    worker.wait_idle().unwrap();
    let (mut inline_ms, mut bg_ms, mut settle_ms) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let run_inline = |mem: &mut Memory, out: &mut Vec<f64>| {
            for (name, body) in &notes {
                let t = Instant::now();
                mem.ingest_document(doc(round, name, body)).unwrap();
                out.push(ms(t));
            }
        };
        let mut run_bg = |mem: &mut Memory, out: &mut Vec<f64>| {
            let all = Instant::now();
            for (name, body) in &notes {
                let t = Instant::now();
                mem.ingest_document(doc(round, name, body)).unwrap();
                worker.nudge();
                out.push(ms(t));
            }
            worker.wait_idle().unwrap();
            settle_ms.push(ms(all));
        };
        // Alternate which goes first: the machine is shared and noisy.
        if round % 2 == 0 {
            run_inline(&mut inline, &mut inline_ms);
            run_bg(&mut deferred, &mut bg_ms);
        } else {
            run_bg(&mut deferred, &mut bg_ms);
            run_inline(&mut inline, &mut inline_ms);
        }
    }
    let n = inline_ms.len();
    let (a, b) = (median(&mut inline_ms), median(&mut bg_ms));
    println!("ingest_document, {n} calls each ({} notes x {rounds} rounds), median ms per call:", notes.len());
    println!("  vectors in the write (WithEachWrite)  {a:8.1}");
    println!("  deferred + BackgroundEmbedder         {b:8.1}   ({:.1}x faster to return)", a / b);
    println!(
        "  ... until the worker had made all of a round's vectors: median {:.1} ms per round of {} notes",
        median(&mut settle_ms),
        notes.len()
    );
    drop(worker);

    // 2. walk latency during a background backlog.
    let (mem_idle, _) = backlog(&tmp.path().join("idle"), &opts, conversations);
    // Embed the idle store fully, so its walks have the dense signal as the others' end with.
    let mut idle_writer = Memory::open_with(tmp.path().join("idle"), opts.clone()).unwrap();
    idle_writer.embed_pending(|_| {}).unwrap();
    drop(idle_writer);
    // The first read catches up with the other writer's vectors: not timed.
    walk_ms(mem_idle.as_reader(), QUESTIONS[0]);
    let mut idle = Vec::new();
    for q in QUESTIONS.iter().cycle().take(40) {
        idle.push(walk_ms(mem_idle.as_reader(), q));
    }
    let deferred = OpenOptions { embedding: Embedding::Deferred, ..opts.clone() };
    // Three ways to make a backlog's vectors while walks run, each on a fresh copy of the
    // backlog, in rotated order round after round (the machine is shared and noisy):
    // 0 = the worker, the reader's model calls going first (`host_options`); 1 = the worker,
    // a reader without them; 2 = a plain `embed_pending` on another thread.
    let mut samples: [Vec<f64>; 3] = Default::default();
    let mut totals: [Vec<f64>; 3] = Default::default();
    let mut pending = 0;
    for round in 0..rounds.min(3) {
        for k in 0..3 {
            let mode = (round + k) % 3;
            let dir = tmp.path().join(format!("walk-{round}-{mode}"));
            pending = backlog(&dir, &opts, conversations).1;
            let t = Instant::now();
            let out = &mut samples[mode];
            if mode < 2 {
                let worker = BackgroundEmbedder::start(&dir, opts.clone(), None).unwrap();
                let reader_opts = if mode == 0 { worker.host_options(deferred.clone()) } else { deferred.clone() };
                let reader = Memory::open_with(&dir, reader_opts).unwrap();
                for q in QUESTIONS.iter().cycle() {
                    if !worker.status().busy {
                        break;
                    }
                    out.push(walk_ms(reader.as_reader(), q));
                }
            } else {
                let reader = Memory::open_with(&dir, deferred.clone()).unwrap();
                let plain_opts = deferred.clone();
                let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
                let flag = done.clone();
                let plain = std::thread::spawn(move || {
                    let mut m = Memory::open_with(&dir, plain_opts).unwrap();
                    m.embed_pending(|_| {}).unwrap();
                    flag.store(true, std::sync::atomic::Ordering::SeqCst);
                });
                for q in QUESTIONS.iter().cycle() {
                    if done.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    out.push(walk_ms(reader.as_reader(), q));
                }
                plain.join().unwrap();
            }
            totals[mode].push(ms(t));
        }
    }
    let [mut with_worker, mut unprioritised, mut with_plain] = samples;
    println!(
        "walk while {pending} vectors are made ({conversations} LoCoMo conversation(s), {} rounds), ms per query:",
        rounds.min(3)
    );
    for (label, v) in [
        ("nothing running (all embedded)", &mut idle),
        ("worker, host_options (host goes first)", &mut with_worker),
        ("worker, reader without host_options", &mut unprioritised),
        ("embed_pending thread (256 texts a call)", &mut with_plain),
    ] {
        let n = v.len();
        let med = median(v);
        let max = v.last().copied().unwrap_or(f64::NAN);
        let p90 = v.get(n * 9 / 10).copied().unwrap_or(f64::NAN);
        println!("  {label:40} n={n:4}  median {med:8.1}  p90 {p90:8.1}  max {max:8.1}");
    }
    let [mut t0, mut t1, mut t2] = totals;
    println!(
        "  backlog done in (median s): worker {:.1}, worker unprioritised {:.1}, embed_pending thread {:.1}",
        median(&mut t0) / 1e3,
        median(&mut t1) / 1e3,
        median(&mut t2) / 1e3
    );
}
