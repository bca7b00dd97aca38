//! `memtree bench`: evidence recall on a LoCoMo-shaped corpus, as a table and JSON files.

use crate::Cli;
use crate::open::open_options;
use crate::output::stdout_line;
use anyhow::{Context, Result};
use clap::Subcommand;
use indicatif::ProgressBar;
use memtree::WalkParams;
use memtree::eval::read_corpus;
use memtree::eval::recall::RecallConfig;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub(crate) enum BenchCmd {
    /// Evidence recall on a LoCoMo-shaped corpus: a table on stdout (and JSON to --out). By
    /// default the demo corpus's labelled questions (examples/demo/questions.json).
    Recall {
        /// LoCoMo-shaped JSON: LoCoMo itself (data/locomo10.json of its public repository,
        /// github.com/snap-research/locomo), or samples that import files (the demo's).
        #[arg(long, default_value_os_t = demo_corpus())]
        corpus: PathBuf,
        /// Cut-offs, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "5,10,25")]
        k: Vec<usize>,
        /// All conversations in one store (default: one store per conversation).
        #[arg(long)]
        pooled: bool,
        /// Systems to run, comma-separated: walk, walk+rerank (with --reranker), bm25, dense,
        /// hybrid, fts5.
        #[arg(long, value_delimiter = ',', default_value = "walk,bm25,dense,hybrid,fts5")]
        systems: Vec<String>,
        /// Also write the JSON report here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Walk scorer weights: a preset (`default`, `spec_baseline`) and/or overrides by
        /// field name, e.g. `--walk spec_baseline --walk dense=0.6,window=0.4` (repeatable).
        #[arg(long = "walk", value_delimiter = ',')]
        walk: Vec<String>,
        /// Write one JSON line per question and system (evidence, recall, ranked turns).
        #[arg(long)]
        per_question: Option<PathBuf>,
        /// Write one JSON line per question walk answered: its candidates with their signals
        /// before any weight, to try other weights offline (scripts/walk_weights.py).
        #[arg(long)]
        candidates: Option<PathBuf>,
        /// Keep the harness stores in this folder and reuse them on the next run (ingest is
        /// idempotent): read-path experiments then skip embedding every leaf.
        #[arg(long)]
        keep_stores: Option<PathBuf>,
        /// Ask the time-question set about every conversation day with at least this many
        /// turns (0: not at all); its table follows the recall table.
        #[arg(long, default_value_t = 10)]
        time_min_turns: usize,
    },
}

/// The demo corpus's question set in this source tree.
fn demo_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(memtree::eval::DEMO_QUESTIONS)
}

/// `memtree bench …`: no store of the user's is opened.
pub(crate) fn run_bench(cli: &Cli, what: &BenchCmd) -> Result<()> {
    let BenchCmd::Recall {
        corpus,
        k,
        pooled,
        systems,
        out,
        walk,
        per_question,
        candidates,
        keep_stores,
        time_min_turns,
    } = what;
    let wp = WalkParams::from_cli(walk)?;
    bench_recall(
        cli,
        &RecallRun {
            corpus,
            ks: k,
            pooled: *pooled,
            systems,
            out: out.as_deref(),
            walk: wp,
            per_question: per_question.as_deref(),
            candidates: candidates.as_deref(),
            keep_stores: keep_stores.as_deref(),
            time_min_turns: *time_min_turns,
        },
    )
}

struct RecallRun<'a> {
    corpus: &'a Path,
    ks: &'a [usize],
    pooled: bool,
    systems: &'a [String],
    out: Option<&'a Path>,
    walk: WalkParams,
    per_question: Option<&'a Path>,
    candidates: Option<&'a Path>,
    keep_stores: Option<&'a Path>,
    time_min_turns: usize,
}

/// `items` as JSON lines in `path`.
fn write_json_lines<T: serde::Serialize>(path: &Path, items: &[T]) -> Result<()> {
    let mut lines = String::new();
    for d in items {
        lines.push_str(&serde_json::to_string(d)?);
        lines.push('\n');
    }
    std::fs::write(path, lines).with_context(|| format!("writing {}", path.display()))
}

fn bench_recall(cli: &Cli, r: &RecallRun<'_>) -> Result<()> {
    let (ks, out) = (r.ks, r.out);
    let samples = read_corpus(r.corpus)?;
    let opts = open_options(cli)?;
    // Figures without the dense signal are not comparable with any recorded run: a missing
    // model (a copied binary, a clone without the fetch) must not pass for a result.
    let dense: Vec<&str> = r.systems.iter().map(String::as_str).filter(|s| !matches!(*s, "bm25" | "fts5")).collect();
    if opts.embedder.is_none() && !cli.no_model && !dense.is_empty() {
        anyhow::bail!(
            "no embedding model found, and {} use(s) the dense signal: run scripts/fetch-models.sh, pass --model DIR, or --no-model to measure lexical only",
            dense.join(", ")
        );
    }
    if opts.reranker.is_none() && r.systems.iter().any(|s| s == "walk+rerank") {
        anyhow::bail!("the system walk+rerank needs a reranker: pass --reranker DIR (README \"Reranking\")");
    }
    let temp;
    let work = match r.keep_stores {
        Some(dir) => {
            // Pooled and per-conversation stores must not be mistaken for each other.
            let dir = dir.join(if r.pooled { "pooled" } else { "per-conversation" });
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            dir
        }
        None => {
            temp = tempfile::tempdir().context("temp dir for the harness stores")?;
            temp.path().to_path_buf()
        }
    };
    let cfg = RecallConfig {
        ks: ks.to_vec(),
        pooled: r.pooled,
        systems: r.systems.to_vec(),
        walk: r.walk,
        reuse_stores: r.keep_stores.is_some(),
        candidates: r.candidates.is_some(),
        now_ms: cli.now,
        time_min_turns: r.time_min_turns,
    };
    let pb = if cli.quiet { ProgressBar::hidden() } else { ProgressBar::new_spinner() };
    let t = std::time::Instant::now();
    let report = memtree::eval::recall::run(&samples, &work, &opts, &cfg, |m| pb.set_message(m.to_string()))?;
    pb.finish_and_clear();
    if let Some(out) = out {
        std::fs::write(out, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    if let Some(path) = r.per_question {
        write_json_lines(path, &report.per_question)?;
    }
    if let Some(path) = r.candidates {
        write_json_lines(path, &report.candidates)?;
    }
    stdout_line(&format!(
        "recall ({}, {} questions with evidence, {:.0} s); fractional evidence recall over leaves, %",
        report.setting,
        report.questions,
        t.elapsed().as_secs_f64()
    ))?;
    let mut cols: Vec<String> = ks.iter().map(|k| format!("recall@{k}")).collect();
    cols.push("recall@budget2k".into());
    cols.push("recall@budget2k-snippets".into());
    stdout_line(&format!("| system | bucket | {} | p50 ms |", cols.join(" | ")))?;
    stdout_line(&format!("|---|---|{}---:|", "---:|".repeat(cols.len())))?;
    for (name, sys) in &report.systems {
        // Categories without questions (all of BEAM's are single-hop) are left out; the
        // question types follow the categories when the corpus gives them.
        let asked = |m: &std::collections::BTreeMap<String, f64>| m.get("questions").copied().unwrap_or(0.0) > 0.0;
        let mut buckets: Vec<(&str, &std::collections::BTreeMap<String, f64>)> = vec![("overall", &sys.overall)];
        for (_, c) in memtree::eval::recall::CATEGORIES {
            if asked(&sys.by_category[c]) {
                buckets.push((c, &sys.by_category[c]));
            }
        }
        for (t, m) in &sys.by_type {
            buckets.push((t.as_str(), m));
        }
        for (b, m) in buckets {
            let vals: Vec<String> =
                cols.iter().map(|c| format!("{:.1}", 100.0 * m.get(c).copied().unwrap_or(0.0))).collect();
            let p50 = if b == "overall" {
                format!("{:.2}", sys.latency_us.get("p50").copied().unwrap_or(0.0) / 1000.0)
            } else {
                String::new()
            };
            stdout_line(&format!("| {name} | {b} | {} | {p50} |", vals.join(" | ")))?;
        }
    }
    for line in report.time_table() {
        stdout_line(&line)?;
    }
    Ok(())
}
