//! `memtree bench`: evidence recall on a LoCoMo-shaped corpus, as a table and JSON files.

use crate::Cli;
use crate::open::open_options;
use crate::output::stdout_line;
use anyhow::{Context, Result};
use clap::Subcommand;
use indicatif::ProgressBar;
use memtree::WalkParams;
use memtree::eval::read_corpus;
use memtree::eval::recall::{RecallConfig, RecallReport};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub(crate) enum BenchCmd {
    /// Evidence recall on a LoCoMo-shaped corpus: a table on stdout (and JSON to --out). By
    /// default the demo corpus's labelled questions (examples/demo/questions.json). Questions
    /// are asked the day after the newest leaf, or at a question's own `question_date`
    /// (LongMemEval), or at --now when given (it wins over both).
    Recall {
        /// LoCoMo-shaped JSON: LoCoMo itself (data/locomo10.json of its public repository,
        /// github.com/snap-research/locomo), or samples that import files (the demo's).
        /// Repeatable (or comma-separated): several corpora are run one after the other and
        /// printed as one table with a corpus column.
        #[arg(long, value_delimiter = ',', conflicts_with = "corpora")]
        corpus: Vec<PathBuf>,
        /// A folder of corpora laid out as `../shared/corpora` is: every `<name>/<name>-dev.json`
        /// in it (LoCoMo, BEAM, REALTALK), run as with a repeated `--corpus`.
        #[arg(long)]
        corpora: Option<PathBuf>,
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
        corpora,
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
    let wp = WalkParams::from_settings(walk).context("--walk")?;
    let corpus = match corpora {
        Some(dir) => dev_corpora(dir)?,
        None if corpus.is_empty() => vec![demo_corpus()],
        None => corpus.clone(),
    };
    bench_recall(
        cli,
        &RecallRun {
            corpora: &corpus,
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

/// The dev splits under `dir` (`<name>/<name>-dev.json`): LoCoMo, BEAM and REALTALK first, in
/// that order (the order BENCHMARKS.md quotes them in), then any other, by name.
fn dev_corpora(dir: &Path) -> Result<Vec<PathBuf>> {
    const FIRST: [&str; 3] = ["locomo", "beam", "realtalk"];
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the corpora folder {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| dir.join(n).join(format!("{n}-dev.json")).is_file())
        .collect();
    names.sort_by_key(|n| (FIRST.iter().position(|f| f == n).unwrap_or(FIRST.len()), n.clone()));
    if names.is_empty() {
        anyhow::bail!("no corpus in {}: expected <name>/<name>-dev.json folders", dir.display());
    }
    Ok(names.iter().map(|n| dir.join(n).join(format!("{n}-dev.json"))).collect())
}

/// A corpus's short name in tables and file names: its file stem (`locomo-dev`).
fn corpus_name(path: &Path) -> String {
    path.file_stem().map_or_else(|| "corpus".into(), |s| s.to_string_lossy().into_owned())
}

struct RecallRun<'a> {
    corpora: &'a [PathBuf],
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

/// `items` as JSON lines appended to `lines`, each with a `corpus` field when `corpus` is
/// given (several corpora in one file).
fn push_json_lines<T: serde::Serialize>(lines: &mut String, items: &[T], corpus: Option<&str>) -> Result<()> {
    for d in items {
        let mut v = serde_json::to_value(d)?;
        if let (Some(c), serde_json::Value::Object(m)) = (corpus, &mut v) {
            m.insert("corpus".into(), c.into());
        }
        lines.push_str(&serde_json::to_string(&v)?);
        lines.push('\n');
    }
    Ok(())
}

fn bench_recall(cli: &Cli, r: &RecallRun<'_>) -> Result<()> {
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
        anyhow::bail!(
            "the system walk+rerank needs a reranker: pass --reranker DIR, or --reranker default (README \"Reranking\")"
        );
    }
    // Several corpora: one table with a corpus column, stores and lines kept apart by name.
    let many = r.corpora.len() > 1;
    let mut reports = Vec::with_capacity(r.corpora.len());
    let (mut per_question, mut candidates) = (String::new(), String::new());
    for path in r.corpora {
        let name = corpus_name(path);
        let samples = read_corpus(path)?;
        let temp;
        let work = match r.keep_stores {
            Some(dir) => {
                let dir = if many { dir.join(&name) } else { dir.to_path_buf() };
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
            ks: r.ks.to_vec(),
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
        let report =
            memtree::eval::recall::run(&samples, &work, &opts, &cfg, |m| pb.set_message(format!("{name}: {m}")))?;
        pb.finish_and_clear();
        let tag = many.then_some(name.as_str());
        push_json_lines(&mut per_question, &report.per_question, tag)?;
        push_json_lines(&mut candidates, &report.candidates, tag)?;
        reports.push((name, report, t.elapsed()));
    }
    if let Some(out) = r.out {
        let json = if many {
            let m: serde_json::Map<String, serde_json::Value> =
                reports.iter().map(|(n, rep, _)| Ok((n.clone(), serde_json::to_value(rep)?))).collect::<Result<_>>()?;
            serde_json::json!({ "corpora": m })
        } else {
            serde_json::to_value(&reports[0].1)?
        };
        std::fs::write(out, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", out.display()))?;
    }
    for (path, lines) in [(r.per_question, &per_question), (r.candidates, &candidates)] {
        if let Some(path) = path {
            std::fs::write(path, lines).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    print_tables(r.ks, &reports, many)
}

/// The recall table (one row per corpus, system and bucket; the corpus column only for
/// several), then each corpus's time-question table.
fn print_tables(ks: &[usize], reports: &[(String, RecallReport, std::time::Duration)], many: bool) -> Result<()> {
    for (name, report, took) in reports {
        stdout_line(&format!(
            "recall{} ({}, {} questions with evidence, {:.0} s); fractional evidence recall over leaves, %",
            if many { format!(" {name}") } else { String::new() },
            report.setting,
            report.questions,
            took.as_secs_f64()
        ))?;
    }
    let mut cols: Vec<String> = ks.iter().map(|k| format!("recall@{k}")).collect();
    cols.push("recall@budget2k".into());
    cols.push("recall@budget2k-snippets".into());
    // Session-level recall (LongMemEval's) only when some question named its sessions; a
    // bucket without such questions leaves those cells empty rather than showing 0.
    let sessions = reports
        .iter()
        .flat_map(|(_, rep, _)| rep.systems.values())
        .flat_map(|s| std::iter::once(&s.overall).chain(s.by_category.values()).chain(s.by_type.values()))
        .any(|m| m.contains_key("session_questions"));
    if sessions {
        cols.extend(ks.iter().map(|k| format!("recall_any@{k}")));
        cols.extend(ks.iter().map(|k| format!("recall_all@{k}")));
        stdout_line(
            "recall_any@k / recall_all@k: questions with any / all of their evidence sessions among the top k's, %",
        )?;
    }
    let lead = if many { "| corpus " } else { "" };
    stdout_line(&format!("{lead}| system | bucket | {} | p50 ms |", cols.join(" | ")))?;
    stdout_line(&format!("{}|---|---|{}---:|", if many { "|---" } else { "" }, "---:|".repeat(cols.len())))?;
    for (name, report, _) in reports {
        let lead = if many { format!("| {name} ") } else { String::new() };
        for (sys_name, sys) in &report.systems {
            // Categories without questions (all of BEAM's are single-hop) are left out; the
            // question types follow the categories when the corpus gives them.
            let asked = |m: &BTreeMap<String, f64>| m.get("questions").copied().unwrap_or(0.0) > 0.0;
            let mut buckets: Vec<(&str, &BTreeMap<String, f64>)> = vec![("overall", &sys.overall)];
            for (_, c) in memtree::eval::recall::CATEGORIES {
                if asked(&sys.by_category[c]) {
                    buckets.push((c, &sys.by_category[c]));
                }
            }
            for (t, m) in &sys.by_type {
                buckets.push((t.as_str(), m));
            }
            for (b, m) in buckets {
                let vals: Vec<String> = cols
                    .iter()
                    .map(|c| match m.get(c) {
                        Some(v) => format!("{:.1}", 100.0 * v),
                        None if c.starts_with("recall_any@") || c.starts_with("recall_all@") => String::new(),
                        None => format!("{:.1}", 0.0),
                    })
                    .collect();
                let p50 = if b == "overall" {
                    format!("{:.2}", sys.latency_us.get("p50").copied().unwrap_or(0.0) / 1000.0)
                } else {
                    String::new()
                };
                stdout_line(&format!("{lead}| {sys_name} | {b} | {} | {p50} |", vals.join(" | ")))?;
            }
        }
    }
    for (name, report, _) in reports {
        let table = report.time_table();
        if many && !table.is_empty() {
            stdout_line("")?;
            stdout_line(&format!("{name}:"))?;
        }
        for line in table {
            stdout_line(&line)?;
        }
    }
    Ok(())
}
