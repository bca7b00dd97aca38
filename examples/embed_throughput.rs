//! The engine's embedding rate on one core against the physical reference: the same model
//! and tokenizer run by plain onnxruntime (Python, one thread, one text per call, so no
//! padding at all), on the same texts, side by side in one run (issue 28, item 2).
//!
//! ```sh
//! scripts/fetch-models.sh
//! python3 -m venv target/ort-venv && target/ort-venv/bin/pip install onnxruntime==1.31.1 tokenizers==0.23.2 numpy
//! cargo run --release --example embed_throughput -- [N_LONG] [N_SHORT] [ROUNDS]
//! # defaults: 256 long messages (~160 tokens), 1024 short turns (~33 tokens), 3 rounds
//! ```
//!
//! The model is `MEMTREE_MODEL_DIR`'s, else the in-repo default; the reference reads the same
//! folder and truncates at the same `max_tokens`.
//!
//! The engine runs with one intra-op thread (`MEMTREE_EMBED_THREADS=1`, set here). Rates are
//! vectors per CPU-second of each process (user + system: per core, whatever else the machine
//! runs) and per wall-second; rounds alternate engine and reference so both see the same
//! load; the median round is reported. Also the cosine of every engine vector to the
//! reference's (the vectors must agree). Without the venv the reference column is empty.

use memtree::{Batching, Embedder, FastEmbedder, ModelPaths};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const NAMES: &[&str] = &["Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew", "Nate", "Joanna", "Tim", "John"];
const OPENERS: &[&str] = &[
    "told me that she",
    "mentioned that he",
    "said yesterday that they",
    "was so excited because she",
    "shared on Tuesday that he",
    "texted the group that she",
    "admitted over dinner that he",
];
const ACTS: &[&str] = &[
    "went to the LGBTQ support group and felt inspired by the stories",
    "signed up for a pottery class at the community center downtown",
    "finally finished painting the sunrise over the lake for her mom",
    "is thinking about adopting a second dog from the local shelter",
    "started training for a half marathon with friends from work",
    "lost his job at the bank and wants to open a dance studio",
    "visited the museum with the kids and loved the dinosaur exhibit",
    "is researching counseling programs to help trans youth find support",
    "camped by the beach last weekend and saw the meteor shower",
    "bought a vintage guitar and is learning songs by ear",
];
const TAILS: &[&str] = &[
    "last week",
    "on 8 May 2023",
    "after a really long month",
    "and wants to do it again soon",
    "because it reminded her of home",
    "which made everyone laugh a lot",
    "before the summer trip",
    "",
];

/// Deterministic pseudo-random sentences, 15-25 words each.
fn sentences(n: usize) -> Vec<String> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m as u64) as usize
    };
    (0..n)
        .map(|i| {
            let mut s = format!(
                "{} {} {} {}",
                NAMES[next(NAMES.len())],
                OPENERS[next(OPENERS.len())],
                ACTS[next(ACTS.len())],
                TAILS[next(TAILS.len())]
            );
            let mut words = s.split_whitespace().count();
            while words < 15 {
                s.push_str(" with ");
                s.push_str(NAMES[next(NAMES.len())]);
                words += 2;
            }
            let mut s: String = s.split_whitespace().take(24).collect::<Vec<_>>().join(" ");
            s.push_str(&format!(" ({i})."));
            s
        })
        .collect()
}

/// User + system CPU time of this process so far (Linux `/proc/self/stat`), 0 elsewhere.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of stat (indices 11 and 12 after the name), in
    // clock ticks of 1/100 s.
    (ticks(11) + ticks(12)) / 100.0
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// One measured pass: (vectors per CPU-second, vectors per wall-second).
type Rate = (f64, f64);

/// The Python reference on `texts_file`; `None` when the venv is missing.
fn reference(python: &Path, model: &FastEmbedder, texts_file: &Path, vectors: Option<&Path>) -> Option<(Rate, u64)> {
    let mut cmd = Command::new(python);
    cmd.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/ort_reference.py"))
        .arg(model.dir())
        .arg(texts_file)
        // The model's own limit (MiniLM 256, MPNet 384), so both truncate alike.
        .arg(model.max_tokens().to_string());
    if let Some(v) = vectors {
        cmd.arg(v);
    }
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let n = v["texts"].as_f64()?;
    Some(((n / v["cpu_s"].as_f64()?, n / v["wall_s"].as_f64()?), v["tokens"].as_u64()?))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // SAFETY: set before any other thread exists (first thing in main).
    unsafe { std::env::set_var("MEMTREE_EMBED_THREADS", "1") };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n_long: usize = args.first().map(|a| a.parse()).transpose()?.unwrap_or(256);
    let n_short: usize = args.get(1).map(|a| a.parse()).transpose()?.unwrap_or(1024);
    let rounds: usize = args.get(2).map(|a| a.parse()).transpose()?.unwrap_or(3).max(1);

    let paths = ModelPaths::discover().ok_or("no model files: run scripts/fetch-models.sh")?;
    let model = FastEmbedder::load(&paths)?;
    // `EMBED_TOKEN_BUDGET=N` measures another token budget per model call (default: the engine's).
    let mut batching = Batching::default();
    if let Some(b) = std::env::var("EMBED_TOKEN_BUDGET").ok().and_then(|v| v.parse().ok()) {
        batching.token_budget = b;
    }
    let short = sentences(n_short);
    // A long message: five sentences in one paragraph (~160 tokens, like a long chat turn).
    let long: Vec<String> = sentences(n_long * 5).chunks(5).map(|c| c.join(" ")).collect();
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ort-venv/bin/python");
    let tmp = tempfile::tempdir()?;
    println!(
        "model {} ({} dims, {} tokens at most), engine on 1 intra-op thread, {} padded tokens per call; reference: {}",
        model.name(),
        model.dim(),
        model.max_tokens(),
        batching.token_budget,
        python.display()
    );
    println!();
    println!(
        "| texts | n | tokens/text | engine vec/CPU-s | reference vec/CPU-s | engine/reference | engine vec/s wall | reference vec/s wall | min cosine |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (label, texts) in [("long messages", &long), ("short turns", &short)] {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let file = tmp.path().join("texts.jsonl");
        let lines: Vec<String> = texts.iter().map(serde_json::to_string).collect::<Result<_, _>>()?;
        std::fs::write(&file, lines.join("\n") + "\n")?;
        model.embed_with(&refs[..refs.len().min(64)], batching)?; // warm-up
        let (mut engine, mut reference_rates, mut tokens) = (Vec::new(), Vec::new(), 0);
        let mut vectors = Vec::new();
        for _ in 0..rounds {
            let (t, c) = (Instant::now(), cpu_seconds());
            vectors = model.embed_with(&refs, batching)?;
            let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
            engine.push((refs.len() as f64 / cpu, refs.len() as f64 / wall));
            if let Some((rate, tok)) = reference(&python, &model, &file, None) {
                reference_rates.push(rate);
                tokens = tok;
            }
        }
        // The vectors themselves, once: every engine vector against the reference's.
        let vec_file = tmp.path().join("vectors.f32");
        let min_cos = reference(&python, &model, &file, Some(&vec_file)).and_then(|_| {
            let bytes = std::fs::read(&vec_file).ok()?;
            let floats: Vec<f32> =
                bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            let dim = model.dim();
            Some(
                vectors
                    .iter()
                    .zip(floats.chunks_exact(dim))
                    .map(|(a, b)| a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum::<f64>())
                    .fold(f64::INFINITY, f64::min),
            )
        });
        let (e_cpu, e_wall) =
            (median(engine.iter().map(|r| r.0).collect()), median(engine.iter().map(|r| r.1).collect()));
        let fmt = |x: Option<f64>, p: usize| x.map_or("–".to_string(), |x| format!("{x:.p$}"));
        let (r_cpu, r_wall) = if reference_rates.is_empty() {
            (None, None)
        } else {
            (
                Some(median(reference_rates.iter().map(|r| r.0).collect())),
                Some(median(reference_rates.iter().map(|r| r.1).collect())),
            )
        };
        let per_text = (tokens > 0).then(|| tokens as f64 / texts.len() as f64);
        println!(
            "| {label} | {} | {} | {e_cpu:.1} | {} | {} | {e_wall:.1} | {} | {} |",
            texts.len(),
            fmt(per_text, 1),
            fmt(r_cpu, 1),
            r_cpu.map_or("–".to_string(), |r| format!("{:.0} %", 100.0 * e_cpu / r)),
            fmt(r_wall, 1),
            fmt(min_cos, 6),
        );
    }
    Ok(())
}
