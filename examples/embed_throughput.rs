//! Embedding throughput of the real model on short conversational sentences (LoCoMo-like,
//! 15-25 words), at several ONNX Runtime batch sizes.
//!
//! ```sh
//! scripts/fetch-models.sh
//! MEMTREE_EMBED_THREADS=2 cargo run --release --example embed_throughput -- [N] [RUNS] [BATCHES]
//! # defaults: N = 2048 sentences, RUNS = 3, BATCHES = 32,256
//! ```
//!
//! Prints sentences/s for each run and the median per batch size.

use memtree::{Embedder, FastEmbedder, ModelPaths};
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map(|a| a.parse()).transpose()?.unwrap_or(2048);
    let runs: usize = args.get(1).map(|a| a.parse()).transpose()?.unwrap_or(3);
    let batches: Vec<usize> =
        args.get(2).map(String::as_str).unwrap_or("32,256").split(',').map(str::parse).collect::<Result<_, _>>()?;

    let paths = ModelPaths::discover().ok_or("no model files: run scripts/fetch-models.sh")?;
    let t = Instant::now();
    let model = FastEmbedder::load(&paths)?;
    let load_s = t.elapsed().as_secs_f64();

    let texts = sentences(n);
    if let Some(path) = std::env::var_os("EMBED_THROUGHPUT_DUMP") {
        // One sentence a line, to run the same input through another implementation.
        std::fs::write(path, texts.join("\n") + "\n")?;
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let words: usize = texts.iter().map(|s| s.split_whitespace().count()).sum();
    println!(
        "model {} ({} dims) from {}, loaded in {load_s:.2}s; threads: {}; {n} sentences, {:.1} words on average; e.g. {:?}",
        model.name(),
        model.dim(),
        model.dir().display(),
        std::env::var("MEMTREE_EMBED_THREADS").unwrap_or_else(|_| "default".into()),
        words as f64 / n as f64,
        texts[0]
    );

    // Warm-up: first runs allocate ORT's arenas.
    model.embed_batched(&refs[..n.min(256)], 32)?;

    // Two ways to call: `calls` hands the embedder `batch` texts per call (what a caller
    // embedding as it goes does; each call is one ONNX batch); `whole` hands it all N texts at
    // once with an ONNX batch of `batch` (the embedder then groups texts by length).
    for &batch in &batches {
        for mode in ["calls", "whole"] {
            let mut rates = Vec::with_capacity(runs);
            let mut cpu = Vec::with_capacity(runs);
            for run in 1..=runs {
                let (t, c) = (Instant::now(), cpu_seconds());
                let mut got = 0;
                if mode == "calls" {
                    for chunk in refs.chunks(batch) {
                        got += model.embed_batched(chunk, batch)?.len();
                    }
                } else {
                    got = model.embed_batched(&refs, batch)?.len();
                }
                let (secs, cpu_s) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
                assert_eq!(got, n);
                let rate = n as f64 / secs;
                println!(
                    "batch {batch:>4} {mode} run {run}: {secs:7.3}s wall, {cpu_s:7.3}s cpu  {rate:8.1} sentences/s"
                );
                rates.push(rate);
                cpu.push(n as f64 / cpu_s);
            }
            println!(
                "batch {batch:>4} {mode} median: {:.1} sentences/s wall-clock, {:.1} sentences per cpu-second",
                median(rates),
                median(cpu)
            );
        }
    }
    Ok(())
}
