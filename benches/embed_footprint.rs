//! Peak memory of an import with the real model, per input shape: what a user's laptop feels
//! when it imports one long user–assistant chat, a notes folder, many short chat lines, or
//! one huge chat line (issue 28: at most 400 MB each).
//!
//! `cargo bench --bench embed_footprint`: writes each shape's input under a temporary folder,
//! then runs this binary again as a child per shape that loads the model, imports the input
//! into a fresh store (vectors with each write, as `memtree import` does) and reports its own
//! `VmHWM` (peak RSS), the vectors made and the seconds taken; the parent prints one table.
//! `MEMTREE_BENCH_SHAPES=long-chat,notes` picks shapes (default: all four: `long-chat`,
//! `notes`, `short-chat`, `huge-line`). `-- --test` is a smoke run (small inputs; it checks
//! that each child reports and made vectors, not the bound). `MEMTREE_BENCH_NO_MODEL=1`
//! imports the same inputs without the model (no vectors): what the text alone costs, in
//! seconds rather than minutes. Linux only (reads `/proc/self/status`); without the model
//! files (and without that variable) it says so and measures nothing.

mod proc_status;
mod synth;

use memtree::{Format, Memory, ModelPaths, OpenOptions};
use proc_status::status_mb;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The variable a child reads its job from: `shape|input path|store dir`.
const CHILD_ENV: &str = "MEMTREE_FOOTPRINT_CHILD";
/// Set (to anything but `0` or empty): import without the model.
const NO_MODEL_ENV: &str = "MEMTREE_BENCH_NO_MODEL";
const SHAPES: [&str; 4] = ["long-chat", "notes", "short-chat", "huge-line"];
const WORDS: &[&str] = &[
    "the",
    "budget",
    "plan",
    "review",
    "we",
    "should",
    "migrate",
    "database",
    "because",
    "latency",
    "grew",
    "after",
    "release",
    "customer",
    "asked",
    "about",
    "pricing",
    "model",
    "training",
    "schedule",
    "and",
    "then",
    "notes",
    "from",
    "meeting",
    "Lisbon",
    "office",
    "Osprey",
    "prototype",
    "weekly",
    "report",
    "numbers",
    "look",
    "better",
    "than",
    "expected",
    "although",
    "risk",
    "remains",
    "high",
    "for",
    "Q3",
    "roadmap",
    "hiring",
    "engineers",
    "design",
    "doc",
    "explains",
    "tradeoffs",
    "between",
    "speed",
    "memory",
    "cost",
    "team",
    "agreed",
    "to",
];

/// Whether `MEMTREE_BENCH_NO_MODEL` asks for an import without the model.
fn no_model() -> bool {
    std::env::var(NO_MODEL_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// `n` words of seeded prose, a full stop every 9–20 words.
fn prose(r: &mut synth::Rng, n: usize) -> String {
    let mut s = String::with_capacity(n * 7);
    let mut until_stop = 9 + r.below(12);
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(r.pick(WORDS));
        until_stop -= 1;
        if until_stop == 0 {
            s.push('.');
            until_stop = 9 + r.below(12);
        }
    }
    s.push('.');
    s
}

fn chat_line(source: &str, author: &str, ts: i64, text: &str) -> String {
    serde_json::json!({ "source_id": source, "author": author, "ts": ts, "text": text }).to_string() + "\n"
}

/// Sizes of each shape: (long-chat messages, notes, short-chat lines, huge-line bytes).
struct Sizes {
    long_chat: usize,
    notes: usize,
    short_chat: usize,
    huge_line: usize,
}

/// Writes the input of `shape` under `dir`; returns its path and format.
fn write_input(shape: &str, dir: &Path, sizes: &Sizes) -> (std::path::PathBuf, Format) {
    let t0 = 1_683_504_000_000i64;
    let mut r = synth::Rng::new(28);
    match shape {
        // A user asks (30–120 words), an assistant answers at length (150–600 words, in
        // paragraphs): a BEAM-like chat, most answers past the model's 256-token window.
        "long-chat" => {
            let path = dir.join("long-chat.jsonl");
            let mut out = String::new();
            for i in 0..sizes.long_chat {
                let (author, words) =
                    if i % 2 == 0 { ("user", 30 + r.below(90)) } else { ("assistant", 150 + r.below(450)) };
                let mut text = String::new();
                let mut left = words;
                while left > 0 {
                    let n = left.min(60 + r.below(60));
                    if !text.is_empty() {
                        text.push_str("\n\n");
                    }
                    text.push_str(&prose(&mut r, n));
                    left -= n;
                }
                out.push_str(&chat_line("chat:long", author, t0 + i as i64 * 60_000, &text));
            }
            std::fs::write(&path, out).expect("write long chat");
            (path, Format::ChatJsonl)
        }
        // Notes of 50–2,000 words with headings, in ten folders.
        "notes" => {
            let root = dir.join("notes");
            for i in 0..sizes.notes {
                let sub = root.join(format!("folder-{}", i % 10));
                std::fs::create_dir_all(&sub).expect("mkdir notes");
                let words = 50 + r.below(if i % 7 == 0 { 2000 } else { 500 });
                let mut body = format!("# Note {i}\n\n");
                let mut left = words;
                let mut h = 0;
                while left > 0 {
                    let n = left.min(40 + r.below(120));
                    if n > 100 {
                        h += 1;
                        body.push_str(&format!("## Section {h}\n\n"));
                    }
                    body.push_str(&prose(&mut r, n));
                    body.push_str("\n\n");
                    left -= n;
                }
                std::fs::write(sub.join(format!("note-{i:04}.md")), body).expect("write note");
            }
            (root, Format::Markdown)
        }
        // Short human chat turns of 4–25 words.
        "short-chat" => {
            let path = dir.join("short-chat.jsonl");
            let mut out = String::new();
            for i in 0..sizes.short_chat {
                let author = synth::PEOPLE[i % 4];
                let words = 4 + r.below(22);
                let text = prose(&mut r, words);
                out.push_str(&chat_line("chat:short", author, t0 + i as i64 * 30_000, &text));
            }
            std::fs::write(&path, out).expect("write short chat");
            (path, Format::ChatJsonl)
        }
        // One chat message of `huge_line` bytes.
        "huge-line" => {
            let path = dir.join("huge-line.jsonl");
            let mut text = String::with_capacity(sizes.huge_line + 64);
            let mut i = 0u64;
            while text.len() < sizes.huge_line {
                text.push_str(&format!(
                    "Paragraph {i} mentions Osprey and budget line {} for Kestrel. ",
                    i * 7919 % 100_003
                ));
                if i % 20 == 19 {
                    text.push_str("\n\n");
                }
                i += 1;
            }
            std::fs::write(&path, chat_line("chat:huge", "user", t0, &text)).expect("write huge line");
            (path, Format::ChatJsonl)
        }
        other => panic!("unknown shape {other} (known: {})", SHAPES.join(", ")),
    }
}

/// The child: import `input` into a fresh store at `store` with the model; print one JSON line.
fn child(job: &str) {
    // As the `memtree` binary does: freed memory goes back to the system.
    memtree::tune_malloc();
    let mut parts = job.split('|');
    let (shape, input, store) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let format = if shape == "notes" { Format::Markdown } else { Format::ChatJsonl };
    let loaded_at = Instant::now();
    let opts = if no_model() {
        OpenOptions::default()
    } else {
        let (opts, found) = OpenOptions::with_model(None).expect("load the model");
        assert!(found, "no model files");
        opts
    };
    let after_load = status_mb("VmHWM:");
    let mut mem = Memory::open_with(store, opts).expect("open");
    let t = Instant::now();
    mem.import(format, Path::new(input), |_| {}).expect("import");
    let secs = t.elapsed().as_secs_f64();
    let stats = mem.as_reader().stats().expect("stats");
    println!(
        "{}",
        serde_json::json!({
            "shape": shape,
            "leaves": stats.counts.leaves,
            "vectors": stats.counts.vectors,
            "import_s": secs,
            "load_s": t.duration_since(loaded_at).as_secs_f64(),
            "model_loaded_hwm_mb": after_load,
            "peak_rss_mb": status_mb("VmHWM:"),
        })
    );
}

fn main() {
    if let Ok(job) = std::env::var(CHILD_ENV) {
        child(&job);
        return;
    }
    let smoke = std::env::args().any(|a| a == "--test");
    if !cfg!(target_os = "linux") {
        eprintln!("embed_footprint: Linux only (reads /proc/self/status)");
        return;
    }
    if !no_model() && ModelPaths::discover().is_none() {
        eprintln!("embed_footprint: no model files (run scripts/fetch-models.sh): nothing measured");
        return;
    }
    let sizes = if smoke {
        Sizes { long_chat: 12, notes: 6, short_chat: 60, huge_line: 64 * 1024 }
    } else {
        Sizes { long_chat: 262, notes: 173, short_chat: 2000, huge_line: 50 * 1024 * 1024 }
    };
    let shapes: Vec<String> = match std::env::var("MEMTREE_BENCH_SHAPES") {
        Ok(s) if !s.trim().is_empty() => s.split(',').map(|x| x.trim().to_string()).collect(),
        _ => SHAPES.iter().map(|s| s.to_string()).collect(),
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    // `MEMTREE_BENCH_INPUT_DIR=<dir>` writes the inputs there and keeps them (to import the
    // same files with another build: `/usr/bin/time -v memtree import …`).
    let inputs = std::env::var_os("MEMTREE_BENCH_INPUT_DIR").map(std::path::PathBuf::from);
    let input_dir = inputs.as_deref().unwrap_or(tmp.path());
    std::fs::create_dir_all(input_dir).expect("input dir");
    let exe = std::env::current_exe().expect("current exe");
    println!("| shape | leaves | vectors | import s | model loaded MB | peak RSS MB |");
    println!("|---|---:|---:|---:|---:|---:|");
    for shape in &shapes {
        let (input, _) = write_input(shape, input_dir, &sizes);
        let store = tmp.path().join(format!("store-{shape}"));
        let job = format!("{shape}|{}|{}", input.display(), store.display());
        let out = Command::new(&exe).env(CHILD_ENV, job).output().expect("run child");
        assert!(out.status.success(), "{shape}: child failed: {}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value = serde_json::from_str(line.trim()).expect("child JSON");
        assert!(no_model() || v["vectors"].as_u64().unwrap_or(0) > 0, "{shape}: no vectors: {v}");
        println!(
            "| {shape} | {} | {} | {:.1} | {} | {} |",
            v["leaves"],
            v["vectors"],
            v["import_s"].as_f64().unwrap_or(0.0),
            v["model_loaded_hwm_mb"],
            v["peak_rss_mb"]
        );
    }
}
