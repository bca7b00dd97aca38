//! The recall harness: ingest a corpus's samples (LoCoMo conversations, or files imported as a
//! user would), ask every question with evidence through each system, and measure fractional
//! evidence recall over leaves at several k, plus the share of evidence inside a 2,000-token
//! context budget. Questions that name their evidence sessions (LongMemEval) are also scored
//! at the session level: whether any, and whether all, of those sessions hold one of the top k.

use super::Fts5Baseline;
use super::corpus::{Sample, evidence_key};
use super::spoken_days::{SpokenFigures, aggregate as spoken_aggregate, ask as ask_spoken_day, spoken_days};
use super::time_questions::{
    JUDGED, Phrasing, TimeFigures, TimeOutcome, aggregate as time_aggregate, judge, time_questions,
};
use crate::clock::ManualClock;
use crate::embed::Rows;
use crate::error::Result;
use crate::ingest::import::Format;
use crate::ingest::import::locomo::{dia_id_of, session_of};
use crate::memory::{ImportOptions, Memory};
use crate::options::OpenOptions;
use crate::reader::MemoryReader;
use crate::retrieval::walk::walk_candidates;
/// What `--candidates` holds, and the replay that checks it (`CandidateDetail`).
pub use crate::retrieval::walk::{CandidateSignals, WalkCandidates, replay};
use crate::retrieval::{Fusion, Scope, WalkArgs, WalkParams, walk};
use crate::store::NodeReads;
use crate::types::NodeId;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

/// Category names by LoCoMo number.
pub const CATEGORIES: [(u32, &str); 5] =
    [(1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop"), (5, "adversarial")];

/// Context budget for the budget-recall figure, in approximate tokens.
pub const BUDGET_TOKENS: usize = 2_000;

/// Hits kept per question and system, at least (the per-question `top` shows this many
/// even when the largest cut-off is smaller).
const MIN_TOP: usize = 50;

/// The hybrid baseline fuses the BM25 top and the dense top of this many leaves each.
const HYBRID_POOL: usize = 100;

/// Systems the harness can run.
/// `walk+rerank` is walk with the rerank stage (`OpenOptions::reranker`, which it needs);
/// `walk` is always walk alone.
pub const SYSTEMS: [&str; 6] = ["walk", "walk+rerank", "bm25", "dense", "hybrid", "fts5"];

/// Harness settings.
#[derive(Debug, Clone)]
pub struct RecallConfig {
    /// Cut-offs.
    pub ks: Vec<usize>,
    /// All conversations in one store.
    pub pooled: bool,
    /// Systems to run (dense and hybrid need a model).
    pub systems: Vec<String>,
    /// Walk's scorer weights.
    pub walk: WalkParams,
    /// Reuse the stores an earlier run left in the work directory instead of building them
    /// anew (ingest is idempotent, so only missing content is written): for read-path
    /// experiments, which then skip the embedding of every leaf.
    pub reuse_stores: bool,
    /// Keep what walk scored for each question (`RecallReport::candidates`).
    pub candidates: bool,
    /// The clock questions are asked at, epoch ms (`--now`); `None` = the end of the day
    /// after the store's newest leaf: a user asks about a conversation after it, and "in May"
    /// or "last week" are read from there, not from the day the harness runs. A question that
    /// carries its own date (`Question::asked_ms`) is asked at that date unless this is given.
    pub now_ms: Option<i64>,
    /// Ask the time-question set (`time_questions.rs`) about every day with at least this
    /// many turns (per-conversation setting only; 0 = none).
    pub time_min_turns: usize,
}

/// Per-question outcome of one system.
#[derive(Debug, Clone, Default)]
struct Outcome {
    at_k: Vec<f64>,
    /// Evidence inside the budget, whole hits.
    budget: f64,
    /// Evidence inside the budget when a hit that carries a snippet costs only its snippet.
    /// The evidence unit stays the leaf: a leaf counts whichever of its passages is the
    /// snippet (the corpora mark evidence per message, not per passage), so this figure is
    /// an upper bound on what the snippets themselves hold.
    budget_snippets: f64,
    micros: u128,
    /// Session-level recall, for a question that names its evidence sessions.
    sessions: Option<SessionRecall>,
}

/// Session-level recall at each cut-off (LongMemEval's `recall_any@k` and `recall_all@k`):
/// 1 when any (all) of the question's evidence sessions hold one of the top k leaves, else 0.
#[derive(Debug, Clone, Default, PartialEq)]
struct SessionRecall {
    any: Vec<f64>,
    all: Vec<f64>,
}

/// One question's outcome with what it is grouped by.
struct Asked {
    category: u32,
    kind: Option<String>,
    outcome: Outcome,
}

/// One ranked leaf: its id and what it costs in a context budget (whole, and as the snippet
/// its hit carries, when it carries one), plus what comes with it (`extra_tokens`): the
/// tokens of the summary it came under (charged to a history answer's first evidence leaf of
/// each session), or of the answer it carries.
struct Ranked {
    id: NodeId,
    snippet_tokens: Option<usize>,
    extra_tokens: usize,
    /// `extra_tokens` when the summary is given as its headline (`RetrievalHit::snippet`).
    extra_snippet_tokens: Option<usize>,
    /// The reply a walk hit that asks carries (`RetrievalHit::answer`): given in the same
    /// slot, its tokens charged to the budget with the hit (`extra_tokens`).
    answer: Option<NodeId>,
}

/// What one slot of a ranking names: its leaf's evidence id, and its carried answer's.
type Slot<'a> = [Option<&'a str>; 2];

/// A system's answer to one question: the leaves in order, and whether they are in time
/// order rather than by relevance (walk's answer to a history question), so that the list
/// asked for `k` is not the first `k` of a longer one: then each cut-off is asked on its own.
struct Answer {
    leaves: Vec<Ranked>,
    per_k: bool,
}

/// Aggregated results: system → (bucket → metric → value); buckets are `overall`
/// (categories 1–4, averaged over questions), the category names, and the question types
/// when the corpus gives them (a type bucket holds every question of that type, adversarial
/// ones included).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RecallReport {
    /// `per-conversation` or `pooled`.
    pub setting: String,
    /// Questions with evidence asked.
    pub questions: usize,
    /// Figures by system name.
    pub systems: BTreeMap<String, SystemReport>,
    /// The time-question set's figures by phrasing (`time_questions.rs`), walk only.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub time: BTreeMap<String, TimeFigures>,
    /// The second clock's table by kind of told leaf (`spoken_days.rs`), walk only.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub spoken: BTreeMap<String, SpokenFigures>,
    /// One row per question and system, in the order asked (not in the JSON report; the CLI
    /// writes it as JSON lines on request).
    #[serde(skip)]
    pub per_question: Vec<QuestionDetail>,
    /// With `RecallConfig::candidates`: walk's candidates and their signals, one entry per
    /// question walk answered, in the order asked (the CLI writes them as JSON lines).
    #[serde(skip)]
    pub candidates: Vec<CandidateDetail>,
}

/// What walk scored for one question: its candidates with their signals before any weight
/// (`walk_candidates`), and the turn each candidate is (`null` outside the conversation).
/// Replaying them at other weights (`replay`, `scripts/walk_weights.py`) ranks exactly as
/// walk would, up to the history answer of order and summary questions (their weights, then
/// sessions chosen by their best leaf), which the script replays from `session` and `next`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CandidateDetail {
    /// The conversation's sample id.
    pub conversation: String,
    /// The question.
    pub question: String,
    /// Per row of `walk.rows`: its turn id.
    pub turns: Vec<Option<String>>,
    /// The question's reading and the candidates.
    pub walk: WalkCandidates,
}

/// What one system returned for one question: enough to see why a question was missed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct QuestionDetail {
    /// The system asked.
    pub system: String,
    /// The conversation's sample id.
    pub conversation: String,
    /// The category name.
    pub category: String,
    /// The question's `type`, when the corpus gives one.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The question.
    pub question: String,
    /// Evidence turn ids that exist in the conversation.
    pub evidence: Vec<String>,
    /// Recall at each cut-off, by name (`recall@10`).
    pub recall: BTreeMap<String, f64>,
    /// The sessions that hold its evidence, when the corpus names them (LongMemEval).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence_sessions: Vec<u32>,
    /// Session-level recall at each cut-off, by name (`recall_any@10`, `recall_all@10`), for a
    /// question with `evidence_sessions`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub session_recall: BTreeMap<String, f64>,
    /// The turn ids of the hits, best first, as many as the largest cut-off (at least 50;
    /// `null` for a hit outside the conversation).
    pub top: Vec<Option<String>>,
    /// Per hit of `top`: the turn id of the answer it carries (walk's hits that ask), when
    /// any hit carries one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Option<String>>,
}

/// One system's figures.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SystemReport {
    /// Metric name (`recall@10`, `recall@budget2k`) → value over categories 1–4; in a bucket
    /// with questions that name their evidence sessions, also `recall_any@k` and `recall_all@k`
    /// averaged over those (`session_questions` of them).
    pub overall: BTreeMap<String, f64>,
    /// The same per category name.
    pub by_category: BTreeMap<String, BTreeMap<String, f64>>,
    /// The same per question `type`, when the corpus gives types (BEAM's abilities).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub by_type: BTreeMap<String, BTreeMap<String, f64>>,
    /// Median and p95 latency per question, microseconds.
    pub latency_us: BTreeMap<String, f64>,
}

/// Run the harness over `samples`, opening stores in `work_dir` with `opts`.
pub fn run(
    samples: &[Sample],
    work_dir: &std::path::Path,
    opts: &OpenOptions,
    cfg: &RecallConfig,
    mut progress: impl FnMut(&str),
) -> Result<RecallReport> {
    let kmax = cfg.ks.iter().copied().max().unwrap_or(10).max(MIN_TOP);
    // system → the outcome of every question it answered
    let mut results: HashMap<String, Vec<Asked>> = HashMap::new();
    let groups: Vec<Vec<&Sample>> =
        if cfg.pooled { vec![samples.iter().collect()] } else { samples.iter().map(|c| vec![c]).collect() };
    let mut questions = 0;
    let mut per_question = Vec::new();
    let mut candidates = Vec::new();
    let mut time_outcomes: Vec<(Phrasing, TimeOutcome)> = Vec::new();
    let mut spoken_outcomes = Vec::new();
    for (gi, group) in groups.iter().enumerate() {
        let dir = work_dir.join(format!("store-{gi}"));
        if !cfg.reuse_stores {
            let _ = std::fs::remove_dir_all(&dir);
        }
        // The harness's own clock: the wall clock while writing, then the moment questions
        // are asked (`RecallConfig::now_ms`), moved per time question.
        let clock = ManualClock::new(chrono::Utc::now().timestamp_millis());
        let opts = OpenOptions { clock: Arc::new(clock.clone()), ..opts.clone() };
        let mut mem = Memory::open_with(&dir, opts)?;
        for c in group {
            progress(&format!("ingest {}", c.sample_id()));
            match c {
                Sample::Conversation(c) => {
                    mem.ingest(c.items())?;
                }
                Sample::Files(f) => {
                    for file in &f.files {
                        // Notes named relative to the folder the corpus gives, never to a vault
                        // found above it: the evidence ids (`doc:team.md`) must not depend on
                        // where the corpus sits.
                        let root = (file.format == Format::Markdown).then(|| file.path.clone());
                        let opts = ImportOptions { root, ..ImportOptions::default() };
                        mem.import_with(file.format, &file.path, &opts, |_| {})?;
                    }
                }
            }
        }
        mem.flush()?;
        let mem = mem.as_reader();
        let fts = Fts5Baseline::build(mem)?;
        let (refs, newest) = leaf_refs(mem)?;
        let ask_at = cfg.now_ms.unwrap_or_else(|| day_after(newest));
        clock.set(ask_at);
        for c in group {
            progress(&format!("ask {}", c.sample_id()));
            // The source of a conversation's leaves (`None` for imported files), and the
            // evidence ids that name a leaf at all.
            let (source, known): (Option<String>, HashSet<&str>) = match c {
                Sample::Conversation(c) => (Some(c.source_id()), c.turns.iter().map(|t| t.dia_id.as_str()).collect()),
                Sample::Files(_) => {
                    (None, refs.values().filter(|r| r.dia_id.is_none()).map(|r| r.key.as_str()).collect())
                }
            };
            for q in c.questions() {
                let evidence: Vec<&str> = q.evidence.iter().map(String::as_str).filter(|e| known.contains(e)).collect();
                if evidence.is_empty() || q.question.trim().is_empty() {
                    continue;
                }
                questions += 1;
                // A question dated by the corpus (LongMemEval's `question_date`) is asked on
                // that date: its "how many days ago" and "last month" count from there, and its
                // haystack may end long before. `--now` is the whole run's, set on purpose, so it
                // wins over the corpus's date; without either, the day after the newest leaf.
                clock.set(cfg.now_ms.or(q.asked_ms).unwrap_or(ask_at));
                if cfg.candidates && cfg.systems.iter().any(|s| s == "walk") {
                    let args = WalkArgs { limit: kmax, params: cfg.walk, ..WalkArgs::new(q.question.as_str()) };
                    let walk = walk_candidates(mem, &args, &Scope::all())?;
                    let turns = walk
                        .rows
                        .iter()
                        .map(|r| refs.get(&r.node_id).and_then(|l| l.name_in(source.as_deref())).map(str::to_string))
                        .collect();
                    candidates.push(CandidateDetail {
                        conversation: c.sample_id().to_string(),
                        question: q.question.clone(),
                        turns,
                        walk,
                    });
                }
                for sys in &cfg.systems {
                    let t = Instant::now();
                    let Some(answer) = rank(mem, &fts, sys, &q.question, kmax, &cfg.walk)? else { continue };
                    let micros = t.elapsed().as_micros();
                    // A hit counts only in the question's own sample.
                    let name = |id: &NodeId| refs.get(id).and_then(|l| l.name_in(source.as_deref()));
                    let name = |r: &Ranked| -> Slot<'_> { [name(&r.id), r.answer.as_ref().and_then(name)] };
                    let turns: Vec<Slot<'_>> = answer.leaves.iter().map(name).collect();
                    let cost = costs(mem, &answer.leaves)?;
                    let mut outcome = score(&evidence, &turns, &cost, &cfg.ks, micros);
                    outcome.sessions = session_recall(&q.evidence_sessions, &turns, &cfg.ks);
                    if answer.per_k {
                        // Asked for k, a history answer holds at most k evidence leaves, in time
                        // order: recall at k is what that answer holds.
                        for (i, &k) in cfg.ks.iter().enumerate() {
                            let Some(at) = rank(mem, &fts, sys, &q.question, k, &cfg.walk)? else { continue };
                            let turns: Vec<Slot<'_>> = at.leaves.iter().map(name).collect();
                            outcome.at_k[i] = score(&evidence, &turns, &[], &[turns.len()], 0).at_k[0];
                            if let (Some(s), Some(at)) =
                                (&mut outcome.sessions, session_recall(&q.evidence_sessions, &turns, &[turns.len()]))
                            {
                                (s.any[i], s.all[i]) = (at.any[0], at.all[0]);
                            }
                        }
                        // The budget figures read the answer at walk's own default limit: the
                        // longest one is in time order, and its earliest sessions would fill
                        // any budget.
                        let limit = WalkArgs::new("").limit;
                        if let Some(at) = rank(mem, &fts, sys, &q.question, limit, &cfg.walk)? {
                            let turns: Vec<Slot<'_>> = at.leaves.iter().map(name).collect();
                            let cost = costs(mem, &at.leaves)?;
                            let b = score(&evidence, &turns, &cost, &[], 0);
                            (outcome.budget, outcome.budget_snippets) = (b.budget, b.budget_snippets);
                        }
                    }
                    per_question.push(QuestionDetail {
                        system: sys.clone(),
                        conversation: c.sample_id().to_string(),
                        category: category_name(q.category).to_string(),
                        kind: q.kind.clone(),
                        question: q.question.clone(),
                        evidence: evidence.iter().map(|e| e.to_string()).collect(),
                        recall: cfg.ks.iter().zip(&outcome.at_k).map(|(k, r)| (format!("recall@{k}"), *r)).collect(),
                        evidence_sessions: q.evidence_sessions.clone(),
                        session_recall: outcome.sessions.as_ref().map_or_else(BTreeMap::new, |s| s.named(&cfg.ks)),
                        top: turns.iter().map(|t| t[0].map(str::to_string)).collect(),
                        answers: if turns.iter().any(|t| t[1].is_some()) {
                            turns.iter().map(|t| t[1].map(str::to_string)).collect()
                        } else {
                            Vec::new()
                        },
                    });
                    results.entry(sys.clone()).or_default().push(Asked {
                        category: q.category,
                        kind: q.kind.clone(),
                        outcome,
                    });
                }
                clock.set(ask_at);
            }
            if let Sample::Conversation(c) = c
                && !cfg.pooled
                && cfg.time_min_turns > 0
                && cfg.systems.iter().any(|s| s == "walk")
            {
                for tq in time_questions(c, cfg.time_min_turns) {
                    clock.set(tq.now_ms.unwrap_or(ask_at));
                    let args = WalkArgs { limit: JUDGED, params: cfg.walk, ..WalkArgs::new(tq.question.as_str()) };
                    let hits = walk(mem, &args, &Scope::all())?.hits;
                    // A hit lies inside the day by either clock: said in it, or speaking of it
                    // (a dinner told the next day is an answer about that day).
                    let ms = crate::retrieval::parse_rfc3339;
                    let spans: Vec<(i64, i64)> = hits
                        .iter()
                        .map(|h| {
                            let spoken = h.speaks_of.iter().map(|[a, b]| (ms(a), ms(b)));
                            spoken
                                .into_iter()
                                .find(|t| t.0 >= tq.day.0 && t.1 <= tq.day.1)
                                .unwrap_or((ms(&h.time_range_start), ms(&h.time_range_end)))
                        })
                        .collect();
                    time_outcomes.push((tq.phrasing, judge(&tq, &spans)));
                }
                clock.set(ask_at);
                for d in spoken_days(mem)? {
                    spoken_outcomes.extend(ask_spoken_day(mem, &d, cfg.walk)?);
                }
            }
        }
    }
    let mut report = RecallReport {
        setting: if cfg.pooled { "pooled".into() } else { "per-conversation".into() },
        questions,
        systems: BTreeMap::new(),
        time: time_aggregate(&time_outcomes),
        spoken: spoken_aggregate(&spoken_outcomes),
        per_question,
        candidates,
    };
    for (sys, outs) in results {
        report.systems.insert(sys, aggregate(&outs, &cfg.ks));
    }
    Ok(report)
}

impl RecallReport {
    /// The time-question set's table (Markdown lines, none when it was not asked).
    pub fn time_table(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.time.is_empty() {
            out.extend([
                String::new(),
                "time questions (walk; one day each, three phrasings): precision@10 inside the day, top hit inside it, %"
                    .into(),
                "| phrasing | questions | precision@10 | top hit inside |".into(),
                "|---|---:|---:|---:|".into(),
            ]);
        }
        for (name, f) in &self.time {
            out.push(format!(
                "| {name} | {} | {:.1} | {:.1} |",
                f.questions,
                100.0 * f.precision_at_10,
                100.0 * f.top_inside
            ));
        }
        if !self.spoken.is_empty() {
            out.extend([
                String::new(),
                "told on another day (walk: \"What happened on <day>?\", first 10 hits; cover_window over the day): \
                 share of the leaves said on another day that speak of it, %"
                    .into(),
                "| told | days | leaves | walk | cover_window |".into(),
                "|---|---:|---:|---:|---:|".into(),
            ]);
            for (name, f) in &self.spoken {
                out.push(format!(
                    "| {name} | {} | {} | {:.1} | {:.1} |",
                    f.days,
                    f.leaves,
                    100.0 * f.walk_recall,
                    100.0 * f.cover_recall
                ));
            }
        }
        out
    }
}

/// The name of a LoCoMo category number (`other` for one outside 1–5).
fn category_name(c: u32) -> &'static str {
    CATEGORIES.iter().find(|(n, _)| *n == c).map_or("other", |(_, name)| name)
}

/// What names one leaf as evidence.
struct LeafRef {
    /// The source it belongs to.
    scope: String,
    /// The LoCoMo turn id, for a leaf of a conversation given turn by turn.
    dia_id: Option<String>,
    /// Its [`evidence_key`], for a leaf of imported files.
    key: String,
}

impl LeafRef {
    /// The leaf's evidence id in a sample: its turn id in the conversation `source`, its key
    /// among imported files (`source` = `None`); `None` for a leaf outside the sample.
    fn name_in(&self, source: Option<&str>) -> Option<&str> {
        match source {
            Some(s) if self.scope == s => self.dia_id.as_deref(),
            Some(_) => None,
            None if self.dia_id.is_none() => Some(&self.key),
            None => None,
        }
    }
}

/// The last millisecond of the day after `ms`'s (UTC).
fn day_after(ms: i64) -> i64 {
    const DAY_MS: i64 = 86_400_000;
    (ms.div_euclid(DAY_MS) + 2) * DAY_MS - 1
}

/// What names each leaf as evidence, by leaf id; and the newest leaf's time.
fn leaf_refs(mem: &MemoryReader) -> Result<(HashMap<NodeId, LeafRef>, i64)> {
    let mut out = HashMap::new();
    let mut newest = 0;
    mem.store().for_each_node(|n| {
        if n.is_leaf() {
            newest = newest.max(n.time_end_ms);
            let scope = n.tree_id.scope().to_string();
            // A LoCoMo turn's source_ref is `locomo:<sample>#<dia_id>` under its own source.
            let dia_id = n
                .source_ref
                .as_deref()
                .filter(|r| r.strip_prefix(scope.as_str()).is_some_and(|rest| rest.starts_with('#')))
                .and_then(dia_id_of)
                .map(str::to_string);
            let key = evidence_key(&n);
            out.insert(n.node_id.clone(), LeafRef { scope, dia_id, key });
        }
        Ok(())
    })?;
    Ok((out, newest))
}

/// Walk's hits as the leaves a reader is given, one slot each. A leaf hit is itself, and
/// the answer it carries with it in its slot (its tokens charged with it). A summary hit carrying evidence (a history answer's session) is its evidence leaves in
/// their order, and only those: walk gives at most `limit` of them over the answer, so the
/// credit never exceeds the slots; the summary's own text is charged to the budget with its
/// first leaf (its headline, when it carries one, to the budget with snippets). A summary
/// hit without evidence takes one slot and is credited with nothing.
fn walk_leaves(mem: &MemoryReader, hits: Vec<crate::retrieval::RetrievalHit>) -> Result<Vec<Ranked>> {
    let snippet =
        |h: &crate::retrieval::RetrievalHit| h.snippet.as_ref().map(|s| crate::config::approx_tokens(&s.text));
    let leaf = |h: &crate::retrieval::RetrievalHit, extra_tokens: usize, extra_snippet_tokens: Option<usize>| Ranked {
        snippet_tokens: snippet(h),
        id: NodeId(h.node_id.clone()),
        extra_tokens,
        extra_snippet_tokens,
        answer: None,
    };
    let mut out = Vec::with_capacity(hits.len());
    for h in &hits {
        if let Some(a) = &h.answer {
            // The reply comes with its question, in its slot, and costs what it gives (a long
            // reply is given as its best passage).
            let given = crate::config::approx_tokens(&a.content);
            out.push(Ranked { answer: Some(NodeId(a.node_id.clone())), ..leaf(h, given, None) });
            continue;
        }
        if h.evidence.is_empty() {
            out.push(leaf(h, 0, None));
            continue;
        }
        let own = mem.store().node(&h.node_id)?.map_or(0, |n| n.tokens as usize);
        for (i, e) in h.evidence.iter().enumerate() {
            out.push(if i == 0 { leaf(e, own, snippet(h)) } else { leaf(e, 0, None) });
        }
    }
    Ok(out)
}

/// The ranked leaves of one system, or `None` when it cannot run (no model).
fn rank(
    mem: &MemoryReader,
    fts: &Fts5Baseline,
    sys: &str,
    q: &str,
    k: usize,
    wp: &WalkParams,
) -> Result<Option<Answer>> {
    use crate::index::{LevelFilter, SearchFilter};
    let leaves = SearchFilter { levels: LevelFilter::Leaves, ..SearchFilter::default() };
    let whole = |ids: Vec<NodeId>| {
        ids.into_iter()
            .map(|id| Ranked { id, snippet_tokens: None, extra_tokens: 0, extra_snippet_tokens: None, answer: None })
            .collect()
    };
    Ok(Some(match sys {
        "walk" | "walk+rerank" => {
            let rerank = sys == "walk+rerank";
            if rerank && mem.options().reranker.is_none() {
                return Ok(None);
            }
            let args = WalkArgs { limit: k, params: *wp, rerank, ..WalkArgs::new(q) };
            let r = walk(mem, &args, &Scope::all())?;
            let per_k = r.explain.as_ref().is_some_and(|e| e.get("history").is_some());
            return Ok(Some(Answer { leaves: walk_leaves(mem, r.hits)?, per_k }));
        }
        "bm25" => whole(mem.index().searcher().bm25(q, &leaves, k)?.0.into_iter().map(|h| h.0).collect()),
        "fts5" => whole(fts.search(q, k)?),
        "dense" => {
            let Some(ids) = super::dense_top_k(mem, q, k)? else { return Ok(None) };
            whole(ids)
        }
        "hybrid" => {
            let Some(d) = mem.dense() else { return Ok(None) };
            let (emb, vectors) = (d.embedder, d.vectors());
            let qv = emb.embed(&[q])?.pop().unwrap_or_default();
            let lex: HashMap<NodeId, f64> = mem
                .index()
                .searcher()
                .bm25(q, &leaves, HYBRID_POOL)?
                .0
                .into_iter()
                .map(|(id, s)| (id, f64::from(s)))
                .collect();
            let den: HashMap<NodeId, f64> = vectors
                .top_k(&qv, HYBRID_POOL, Rows::Leaves)
                .into_iter()
                .map(|(id, s)| (NodeId(id), f64::from(s)))
                .collect();
            let all = Fusion::default().rank(&lex, Some(&den), lex.keys().chain(den.keys()));
            whole(all.into_iter().take(k).map(|x| x.0).collect())
        }
        _ => return Ok(None),
    }))
    .map(|o| o.map(|leaves| Answer { leaves, per_k: false }))
}

/// What each ranked leaf costs in the context budget.
fn costs(mem: &MemoryReader, leaves: &[Ranked]) -> Result<Vec<Cost>> {
    let mut cost = Vec::with_capacity(leaves.len());
    for r in leaves {
        let own = mem.store().node(r.id.as_str())?.map_or(0, |n| n.tokens as usize);
        // With snippets, the leaf costs its snippet and the summary charged with it its
        // headline, each when it has one.
        let snippet = (r.snippet_tokens.is_some() || r.extra_snippet_tokens.is_some())
            .then(|| r.snippet_tokens.unwrap_or(own) + r.extra_snippet_tokens.unwrap_or(r.extra_tokens));
        cost.push(Cost { whole: own + r.extra_tokens, snippet });
    }
    Ok(cost)
}

/// What one hit costs in the context budget, in approximate tokens.
#[derive(Debug, Clone, Copy)]
struct Cost {
    whole: usize,
    snippet: Option<usize>,
}

fn score(evidence: &[&str], turns: &[Slot<'_>], cost: &[Cost], ks: &[usize], micros: u128) -> Outcome {
    let ev: HashSet<&str> = evidence.iter().copied().collect();
    let frac = |n: usize| -> f64 {
        let got: HashSet<&str> = turns.iter().take(n).flatten().flatten().copied().filter(|t| ev.contains(t)).collect();
        got.len() as f64 / ev.len() as f64
    };
    // Hits are taken in order while they fit; the first that does not ends the context.
    let within = |each: &dyn Fn(&Cost) -> usize| -> usize {
        let mut used = 0;
        cost.iter()
            .take_while(|c| {
                used += each(c);
                used <= BUDGET_TOKENS
            })
            .count()
    };
    let whole = within(&|c| c.whole);
    let snippets = within(&|c| c.snippet.unwrap_or(c.whole));
    Outcome {
        at_k: ks.iter().map(|&k| frac(k)).collect(),
        budget: frac(whole),
        budget_snippets: frac(snippets),
        micros,
        sessions: None,
    }
}

/// Session-level recall of the ranked `turns` at each of `ks`, for a question whose evidence is
/// in the sessions `evidence`; `None` when it names none. A turn's session is read from its
/// LoCoMo id (`D43:5`); a hit outside the conversation has none.
fn session_recall(evidence: &[u32], turns: &[Slot<'_>], ks: &[usize]) -> Option<SessionRecall> {
    if evidence.is_empty() {
        return None;
    }
    let mut out = SessionRecall::default();
    for &k in ks {
        let got: HashSet<u32> = turns.iter().take(k).flatten().flatten().filter_map(|t| session_of(t)).collect();
        out.any.push(f64::from(u8::from(evidence.iter().any(|s| got.contains(s)))));
        out.all.push(f64::from(u8::from(evidence.iter().all(|s| got.contains(s)))));
    }
    Some(out)
}

impl SessionRecall {
    /// The figures by metric name, `recall_any@k` and `recall_all@k`.
    fn named(&self, ks: &[usize]) -> BTreeMap<String, f64> {
        let any = ks.iter().zip(&self.any).map(|(k, v)| (format!("recall_any@{k}"), *v));
        let all = ks.iter().zip(&self.all).map(|(k, v)| (format!("recall_all@{k}"), *v));
        any.chain(all).collect()
    }
}

fn aggregate(outs: &[Asked], ks: &[usize]) -> SystemReport {
    let summarise = |sel: Vec<&Outcome>| -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        let n = sel.len().max(1) as f64;
        for (i, k) in ks.iter().enumerate() {
            m.insert(format!("recall@{k}"), sel.iter().map(|o| o.at_k[i]).sum::<f64>() / n);
        }
        m.insert("recall@budget2k".into(), sel.iter().map(|o| o.budget).sum::<f64>() / n);
        m.insert("recall@budget2k-snippets".into(), sel.iter().map(|o| o.budget_snippets).sum::<f64>() / n);
        m.insert("questions".into(), sel.len() as f64);
        // Session-level recall averages over the questions that name their sessions only, and
        // is absent from a bucket without any (LoCoMo's, BEAM's).
        let sessions: Vec<&SessionRecall> = sel.iter().filter_map(|o| o.sessions.as_ref()).collect();
        if !sessions.is_empty() {
            let n = sessions.len() as f64;
            for (i, k) in ks.iter().enumerate() {
                m.insert(format!("recall_any@{k}"), sessions.iter().map(|s| s.any[i]).sum::<f64>() / n);
                m.insert(format!("recall_all@{k}"), sessions.iter().map(|s| s.all[i]).sum::<f64>() / n);
            }
            m.insert("session_questions".into(), n);
        }
        m
    };
    let mut rep = SystemReport {
        overall: summarise(outs.iter().filter(|a| (1..=4).contains(&a.category)).map(|a| &a.outcome).collect()),
        ..SystemReport::default()
    };
    for (c, name) in CATEGORIES {
        rep.by_category
            .insert(name.into(), summarise(outs.iter().filter(|a| a.category == c).map(|a| &a.outcome).collect()));
    }
    let kinds: std::collections::BTreeSet<&str> = outs.iter().filter_map(|a| a.kind.as_deref()).collect();
    for kind in kinds {
        let sel = outs.iter().filter(|a| a.kind.as_deref() == Some(kind)).map(|a| &a.outcome).collect();
        rep.by_type.insert(kind.to_string(), summarise(sel));
    }
    let mut lat: Vec<u128> = outs.iter().map(|a| a.outcome.micros).collect();
    lat.sort_unstable();
    if !lat.is_empty() {
        rep.latency_us.insert("p50".into(), lat[lat.len() / 2] as f64);
        rep.latency_us.insert("p95".into(), lat[(lat.len() * 95 / 100).min(lat.len() - 1)] as f64);
    }
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_recall_counts_any_and_all_evidence_sessions() {
        // Ranked: session 1, outside the conversation, session 3, session 2.
        let turns = [[Some("D1:4"), None], [None, None], [Some("D3:1"), None], [Some("D2:9"), None]];
        let at = |ev: &[u32], ks: &[usize]| session_recall(ev, &turns, ks).unwrap();
        assert_eq!(at(&[2, 3], &[1, 3, 4]), SessionRecall { any: vec![0.0, 1.0, 1.0], all: vec![0.0, 0.0, 1.0] });
        assert_eq!(at(&[1], &[1, 10]), SessionRecall { any: vec![1.0, 1.0], all: vec![1.0, 1.0] });
        assert_eq!(at(&[5], &[4]), SessionRecall { any: vec![0.0], all: vec![0.0] });
        assert_eq!(session_recall(&[], &turns, &[4]), None);
    }

    #[test]
    fn a_carried_answer_counts_in_its_hits_slot() {
        // Slot 1 is a question whose reply (the evidence) it carries; slot 2 another leaf.
        let turns = [[Some("D1:3"), Some("D1:4")], [Some("D2:1"), None]];
        let cost = [Cost { whole: 30, snippet: None }, Cost { whole: 30, snippet: None }];
        let o = score(&["D1:4"], &turns, &cost, &[1, 2], 0);
        assert_eq!(o.at_k, vec![1.0, 1.0]);
        // Without it, the reply is nowhere in the ranking.
        let bare = [[Some("D1:3"), None], [Some("D2:1"), None]];
        assert_eq!(score(&["D1:4"], &bare, &cost, &[1, 2], 0).at_k, vec![0.0, 0.0]);
        // The session of a carried answer counts too.
        let at = session_recall(&[1], &[[None, Some("D1:4")]], &[1]).unwrap();
        assert_eq!(at.any, vec![1.0]);
    }

    #[test]
    fn session_recall_averages_only_over_questions_that_name_sessions() {
        let asked = |sessions: Option<SessionRecall>| Asked {
            category: 4,
            kind: Some("multi-session".into()),
            outcome: Outcome { at_k: vec![1.0], sessions, ..Outcome::default() },
        };
        let outs = [
            asked(Some(SessionRecall { any: vec![1.0], all: vec![0.0] })),
            asked(Some(SessionRecall { any: vec![1.0], all: vec![1.0] })),
            asked(None),
        ];
        let rep = aggregate(&outs, &[5]);
        let m = &rep.by_type["multi-session"];
        assert_eq!((m["recall_any@5"], m["recall_all@5"], m["session_questions"]), (1.0, 0.5, 2.0));
        assert_eq!(m["questions"], 3.0);
        assert!(!aggregate(&outs[2..], &[5]).overall.contains_key("recall_any@5"));
    }
}
