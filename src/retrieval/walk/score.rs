//! The leaf scorer every walk branch shares: BM25 of the question over leaves, scored with
//! their context (the neighbouring turns and the parent summary), fused with the dense
//! signal when a model is loaded, plus a mild boost for leaves written by a named person.
//!
//! Each signal is one of RETRIEVAL-NOTES' measured lessons: score a leaf with its context but
//! return the leaf (§1), drop question stop words and boost a named author (§2), a soft
//! parent score rather than a hard filter (§3), min-max fusion rather than RRF (§4).
//!
//! [`score_leaves`] runs in steps: the first stage gathers candidates ([`first_stage`]), each
//! candidate gets its context ([`context`]: its row, its neighbouring turns), the neighbours
//! get their BM25, the parent summaries theirs, then each leaf's raw lexical and dense signals
//! ([`raw_signals`], the dense one with its session's vector) are normalised and fused
//! ([`fuse`]). [`candidate_signals`] stops before the weights: the recall harness writes what
//! it returns, and [`replay`] ranks it again at any weights.
//!
//! Each leaf's coverage (`coverage.rs`) is the share of the question's terms it holds,
//! weighted by their IDF: what lets a memory holding every word of a short question rank
//! above ones holding none, whatever the BM25 spread and the dense signal say.

use super::coverage::QuestionTerms;
use super::params::WalkParams;
use super::query::{QueryAnalysis, person_key};
use super::siblings::{Leaf, among_siblings};
use crate::embed::{PassageScores, Rows, VectorMatrix};
use crate::error::Result;
use crate::index::{IndexSearcher, LevelFilter, SearchFilter};
use crate::reader::MemoryReader;
use crate::retrieval::rerank::{Fusion, min_max, min_max_at_least, min_max_map};
use crate::store::{BatchReads, NodeBrief};
use crate::types::NodeId;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// A window that holds at most this many leaves is searched densely inside it (each leaf's
/// cosine read): the store-wide dense top would mostly lie outside a narrow window. A wider
/// window takes the store-wide dense top, filtered.
const WINDOW_SCAN: usize = 20_000;

/// The dense signal's min-max range is at least this (in raw dense units: own cosine plus
/// the weighted neighbours' and session's): among a few candidates whose best cosine is weak,
/// the best gets a fraction of the dense share, not all of it. Hundreds of candidates span
/// more than this (walk's answers on the recall corpora do not change).
const DENSE_RANGE_FLOOR: f64 = 0.3;

/// Parent summaries scored for the session signal (the BM25 top this many summaries; a
/// leaf whose parent is not among them gets 0).
const SUMMARY_CANDIDATES: usize = 50;

/// A leaf's neighbours' BM25 counts at this share each, times `window`: with one turn on
/// each side, "half its neighbours'".
const NEIGHBOUR_SHARE: f64 = 0.5;

/// A scored leaf.
#[derive(Debug, Clone)]
pub struct Scored {
    pub node: NodeBrief,
    /// The leaf after it under its parent summary (none in an open buffer): what a summary
    /// question brings as the reply to it (`history.rs`), found with its neighbours.
    pub next: Option<NodeId>,
    pub score: f64,
    pub lexical: f64,
    pub dense: f64,
    pub parent: f64,
    pub speaker: bool,
    /// The IDF-weighted share of the question's terms it holds (`coverage.rs`), when read
    /// (only where it can move the ranking).
    pub coverage: Option<f64>,
    /// The passage (1 or more) whose vector gave its cosine, when not its own vector's.
    pub passage: Option<u16>,
}

/// The question's vector and the stored vectors it is compared with (the dense signal on).
#[derive(Clone, Copy)]
struct DenseQuery<'a> {
    q: &'a [f32],
    vectors: &'a VectorMatrix,
    /// The long leaves' best passages for the question (`WalkParams::passages`,
    /// `passage_discount`): a leaf is scored by the best of its own vector and its best
    /// passage; `None`: by its own vector.
    passages: Option<&'a PassageScores>,
}

impl DenseQuery<'_> {
    /// Cosine of the question with `id`'s vector, or its best passage's (`None` while it has
    /// none: just written, its vector still being made).
    fn cosine(&self, id: &str) -> Option<f64> {
        self.best(id).map(|(c, _)| c)
    }

    /// [`DenseQuery::cosine`] and the slot that gave it (0: the leaf's own vector).
    fn best(&self, id: &str) -> Option<(f64, u16)> {
        if let Some(scores) = self.passages {
            self.vectors.best_cosine_among(scores, self.q, id).map(|(c, slot)| (f64::from(c), slot))
        } else {
            self.vectors.cosine(self.q, id).map(|c| (f64::from(c), 0))
        }
    }

    /// The `k` leaves nearest the question, by the same score as [`DenseQuery::cosine`].
    fn top_k(&self, k: usize) -> Vec<(String, f32)> {
        if let Some(scores) = self.passages {
            self.vectors.top_k_by_passage_among(scores, self.q, k)
        } else {
            self.vectors.top_k(self.q, k, Rows::Leaves)
        }
    }
}

/// The candidate leaves that pass the filter, with the context each is scored with.
struct Context {
    rows: Vec<NodeBrief>,
    /// Per row: the sibling before it, then the one after it (none when the row is not among
    /// its parent's children, or the parent is not in the store).
    neighbours: Vec<Vec<NodeId>>,
    /// Per row: the sibling after it under its parent (none in an open buffer).
    next: Vec<Option<NodeId>>,
}

/// One row's signals before normalisation.
struct Raw {
    lexical: Vec<f64>,
    /// Empty without the dense signal; `None` for a row without its vector yet.
    dense: Vec<Option<f64>>,
    /// The words found nothing distinctive ([`words_flat`]): the dense signal leads.
    flat: bool,
    /// The question is short enough that holding all of its words is decisive
    /// ([`SHORT_QUESTION_TERMS`]): a leaf that does is never ranked below one holding none.
    short: bool,
}

/// A question of at most this many distinct terms is short: a memory holding every one of
/// them is ranked above every memory holding none (issue 44: a three-word question whose
/// every word one long mail held returned first records that held none of them). Longer
/// questions are phrased around their point, and holding all their words is rare and
/// not decisive.
pub const SHORT_QUESTION_TERMS: usize = 4;

/// Share of the question's weight a leaf must hold to count as holding all of it (the
/// shares are sums of floats).
const WHOLE: f64 = 1.0 - 1e-9;

/// Fewer leaves than this matching the question's words: too few to tell a distinctive best
/// match from a flat spread (and min-max already gives the dense signal the lead among the
/// rest, which score 0).
const FLAT_MIN_MATCHES: usize = 5;

/// The first-stage lexical matches read for [`lexically_flat`]: the best BM25 compared with
/// the mean of this many best.
const FLAT_TOP: usize = 50;

/// True when the question's words find nothing distinctive among `bm25` (the candidates' own
/// scores): the best match scores less than `ratio` times the mean of the best
/// [`FLAT_TOP`]. Words shared by many turns ("stressed", "project", "now") match a crowd
/// evenly; a memory that answers a message by meaning shares none of them, and the lexical
/// crowd would push it out (issue 36, item g).
fn lexically_flat(bm25: impl Iterator<Item = f64>, ratio: f64) -> bool {
    let mut b: Vec<f64> = bm25.filter(|s| *s > 0.0).collect();
    if b.len() < FLAT_MIN_MATCHES {
        return false;
    }
    b.sort_by(|x, y| y.total_cmp(x));
    let top = &b[..b.len().min(FLAT_TOP)];
    let mean = top.iter().sum::<f64>() / top.len() as f64;
    top[0] < ratio * mean
}

/// True when the question's words are flat ([`lexically_flat`]) and no few leaves hold all of
/// them: when fewer than [`FLAT_MIN_MATCHES`] candidates hold every term of a question of two
/// or more, those memories are what the words point at, however evenly BM25 spreads its
/// scores (a long mail holding all three words scores below short lines holding one).
fn words_flat(parts: &[Parts], terms: usize, params: &WalkParams) -> bool {
    let whole = parts.iter().filter(|p| p.coverage >= WHOLE).count();
    let distinctive = params.whole_coverage && terms >= 2 && (1..FLAT_MIN_MATCHES).contains(&whole);
    !distinctive && lexically_flat(parts.iter().map(|p| p.bm25), params.flat_ratio)
}

/// Score leaves for `qa`: the first-stage candidates plus `extra` (e.g. a local branch's
/// intersection). Best first, ties by id.
///
/// Every candidate is scored (min-max normalisation and `total` depend on all of them), so
/// the cost is kept per candidate: rows come from the store in batches with only the columns
/// scoring needs, each leaf's neighbours are found once, and the neighbours' BM25 comes from
/// one filtered query over their docs.
pub fn score_leaves(
    mem: &MemoryReader,
    searcher: &IndexSearcher,
    qa: &QueryAnalysis,
    flt: &SearchFilter,
    params: &WalkParams,
    extra: &[NodeId],
) -> Result<Vec<Scored>> {
    let g = gather(mem, searcher, qa, flt, params, extra)?;
    let raw = raw_signals(&g.parts, params, g.has_dense, g.terms);
    Ok(fuse(qa, params, g, &raw))
}

/// The candidates [`score_leaves`] would score, each with its signals before normalisation
/// (in the scorer's row order, not ranked): the recall harness writes them (`--candidates`)
/// so that other weights can be tried offline on exactly what walk saw. Also returns whether
/// the dense signal was on (a model loaded and a positive `dense` share).
pub fn candidate_signals(
    mem: &MemoryReader,
    searcher: &IndexSearcher,
    qa: &QueryAnalysis,
    flt: &SearchFilter,
    params: &WalkParams,
    extra: &[NodeId],
) -> Result<(Vec<CandidateSignals>, QuestionSignals)> {
    let g = gather(mem, searcher, qa, flt, params, extra)?;
    let question = QuestionSignals { asks_assistant: qa.asks_assistant, dense: g.has_dense, coverage_terms: g.terms };
    let rows = g.ctx.rows.into_iter().zip(g.ctx.next).zip(g.parts);
    let rows = rows
        .map(|((n, next), p)| {
            let (speaker, in_window, speaks_of) = boosts(qa, &n);
            CandidateSignals {
                parent: n.parent_id.as_ref().and_then(|id| g.parent_score.get(id)).copied().unwrap_or(0.0),
                session: n.parent_id,
                next,
                bm25: p.bm25,
                neighbours_bm25: p.neighbours_bm25,
                cosine: p.cosine,
                neighbours_cosine: p.neighbours_cosine,
                session_cosine: p.session_cosine,
                pending: p.pending,
                coverage: p.coverage,
                speaker,
                in_window,
                speaks_of,
                assistant: n.assistant,
                instruction: n.instruction,
                node_id: n.node_id,
            }
        })
        .collect();
    Ok((rows, question))
}

/// What [`replay`] needs of the question besides its candidates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QuestionSignals {
    /// The question asks what the assistant said (`asked_assistant` replaces `assistant`).
    pub asks_assistant: bool,
    /// The dense signal was on (a model loaded and a positive `dense` share).
    pub dense: bool,
    /// How many distinct terms the question's coverage is counted over (a short question's
    /// whole coverage ranks above none: [`SHORT_QUESTION_TERMS`]).
    pub coverage_terms: usize,
}

/// One candidate leaf's signals before normalisation, as [`score_leaves`] combines them:
/// lexical = `bm25` + `window` × ½ `neighbours_bm25`; dense = `cosine` + `dense_window` ×
/// `neighbours_cosine` + `dense_parent` × `session_cosine` (all 0 without the model); each
/// min-max normalised over the candidates and fused at the `dense` share, then `parent` ×
/// `parent` and the boosts added.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateSignals {
    /// The leaf.
    pub node_id: NodeId,
    /// Its parent summary (the session), if sealed.
    pub session: Option<NodeId>,
    /// The leaf after it under the same parent (what a summary question brings as its reply).
    pub next: Option<NodeId>,
    /// Its own BM25 (0 when the question's words miss it).
    pub bm25: f64,
    /// The sum of its neighbouring turns' BM25.
    pub neighbours_bm25: f64,
    /// Its cosine with the question.
    pub cosine: f64,
    /// The mean cosine of its neighbouring turns.
    pub neighbours_cosine: f64,
    /// The cosine with its session's vector.
    pub session_cosine: f64,
    /// It has no vector yet (written a moment ago): scored by its lexical signal alone.
    #[serde(default)]
    pub pending: bool,
    /// The IDF-weighted share of the question's terms it holds (a named person's name held by
    /// that person's own leaves too), 0 to 1.
    #[serde(default)]
    pub coverage: f64,
    /// Its parent summary's normalised BM25 (0 outside the top summaries).
    pub parent: f64,
    /// Written by a person the question names.
    pub speaker: bool,
    /// Inside the time window the question names.
    pub in_window: bool,
    /// Speaks of the time the question names when that window bounds nothing
    /// (`QueryAnalysis::soft_window`).
    #[serde(default)]
    pub speaks_of: bool,
    /// The host assistant's own message.
    pub assistant: bool,
    /// Holds a standing instruction.
    pub instruction: bool,
}

/// What scoring needs of the candidates, gathered once.
struct Gathered {
    ctx: Context,
    parts: Vec<Parts>,
    parent_score: HashMap<NodeId, f64>,
    has_dense: bool,
    /// How many terms coverage is counted over.
    terms: usize,
    /// Coverage was read (else every row's is 0 and unknown).
    coverage_known: bool,
}

/// One row's signals before they are combined.
struct Parts {
    bm25: f64,
    neighbours_bm25: f64,
    cosine: f64,
    neighbours_cosine: f64,
    session_cosine: f64,
    /// No vector of its own yet: the dense signal abstains for it.
    pending: bool,
    /// The slot whose vector gave `cosine` (0: its own).
    passage: u16,
    /// The IDF-weighted share of the question's terms it holds.
    coverage: f64,
}

/// The candidates, their context, their own and their neighbours' BM25, their cosines and
/// their parent summaries' scores.
fn gather(
    mem: &MemoryReader,
    searcher: &IndexSearcher,
    qa: &QueryAnalysis,
    flt: &SearchFilter,
    params: &WalkParams,
    extra: &[NodeId],
) -> Result<Gathered> {
    let held = match mem.dense() {
        Some(d) if params.dense > 0.0 => {
            let q = d.embedder.embed(&[qa.dense.as_str()])?.pop().unwrap_or_default();
            Some((q, d))
        }
        _ => None,
    };
    // Every long leaf's best passage, scanned once: the dense candidates and every
    // candidate's and neighbour's cosine read it.
    let scores = match &held {
        Some((q, d)) if params.passages => Some(d.vectors().passage_scores(q, params.passage_discount as f32)),
        _ => None,
    };
    let dense =
        held.as_ref().map(|(q, d)| DenseQuery { q: q.as_slice(), vectors: d.vectors(), passages: scores.as_ref() });
    let (cand, mut bm25) = first_stage(searcher, qa, flt, params, extra, dense)?;
    let ctx = context(mem, flt, cand)?;
    // Neighbours outside the candidate set have BM25 too: score them among themselves.
    let need: Vec<NodeId> = ctx
        .neighbours
        .iter()
        .flatten()
        .filter(|id| !id.as_str().is_empty() && !bm25.contains_key(*id))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // The neighbours' scores join the candidates' (no id is in both).
    for (id, s) in searcher.bm25_among(&qa.lexical, &need)? {
        bm25.insert(id, f64::from(s));
    }
    // Parent summaries' lexical score (the "session" signal).
    let summaries = SearchFilter { levels: LevelFilter::Summaries, ..flt.clone() };
    let sum_hits = searcher.bm25_top(&qa.lexical, &summaries, SUMMARY_CANDIDATES)?;
    let parent_score = min_max_map(&sum_hits.into_iter().map(|(id, s)| (id, f64::from(s))).collect());
    let mut parts = parts(&ctx, &bm25, dense);
    let terms = QuestionTerms::of(searcher, qa)?;
    // Coverage costs a posting walk per term over the candidates: it is read only where it
    // can move the ranking (a short question's rule, a flat spread the few whole holders
    // overrule, a first mention, a coverage weight).
    let known = params.coverage != 0.0
        || qa.asks_first
        || (params.whole_coverage
            && (terms.len() <= SHORT_QUESTION_TERMS
                || lexically_flat(parts.iter().map(|p| p.bm25), params.flat_ratio)));
    if known {
        for (p, c) in parts.iter_mut().zip(terms.coverage(searcher, qa, &ctx.rows)?) {
            p.coverage = c;
        }
    }
    Ok(Gathered { ctx, parts, parent_score, has_dense: dense.is_some(), terms: terms.len(), coverage_known: known })
}

/// The candidates: the BM25 top `candidates` leaves, `extra`, and the dense top `candidates`
/// leaves (inside the window when one bounds the walk: every in-window leaf when they are
/// few). Returns them with the BM25 scores known so far.
fn first_stage(
    searcher: &IndexSearcher,
    qa: &QueryAnalysis,
    flt: &SearchFilter,
    params: &WalkParams,
    extra: &[NodeId],
    dense: Option<DenseQuery<'_>>,
) -> Result<(BTreeSet<NodeId>, HashMap<NodeId, f64>)> {
    let text = qa.lexical.as_str();
    let leaves = SearchFilter { levels: LevelFilter::Leaves, ..flt.clone() };
    let lex = searcher.bm25_top(text, &leaves, params.candidates)?;
    let bm25: HashMap<NodeId, f64> = lex.iter().map(|(id, s)| (id.clone(), f64::from(*s))).collect();
    let mut cand: BTreeSet<NodeId> = bm25.keys().cloned().collect();
    cand.extend(extra.iter().cloned());
    // A window bounds every candidate (`flt.window_ms`): its leaves are searched densely
    // inside it, and when few, every one of them is a candidate.
    let inside = match flt.window_ms {
        Some(_) => Some(searcher.filtered(&leaves, WINDOW_SCAN)?),
        None => None,
    };
    match (inside, dense) {
        // Without the model, the words alone rank: a leaf they miss has nothing to offer,
        // unless the question has no words to search (its names and speakers then rank).
        (Some((ids, total)), _) if total <= params.candidates && (dense.is_some() || text.trim().is_empty()) => {
            cand.extend(ids)
        }
        (Some((ids, total)), Some(d)) if total <= WINDOW_SCAN => {
            let mut by_cosine: Vec<(f64, NodeId)> =
                ids.into_iter().map(|id| (d.cosine(id.as_str()).unwrap_or(0.0), id)).collect();
            by_cosine.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            cand.extend(by_cosine.into_iter().take(params.candidates).map(|(_, id)| id));
        }
        (Some((ids, _)), None) if text.trim().is_empty() => cand.extend(ids.into_iter().take(params.candidates)),
        (_, Some(d)) => {
            for (id, _) in d.top_k(params.candidates) {
                cand.insert(NodeId(id));
            }
        }
        (_, None) => {}
    }
    Ok((cand, bm25))
}

/// The rows of the candidates that are leaves passing `flt`, and the neighbours that give
/// each its context: the turns before and after it among its parent's children (or its
/// tree's open buffer when not sealed yet).
fn context(mem: &MemoryReader, flt: &SearchFilter, cand: BTreeSet<NodeId>) -> Result<Context> {
    let rows = mem.store().node_briefs(&cand.into_iter().collect::<Vec<_>>())?;
    let rows: Vec<NodeBrief> = rows.into_iter().filter(|n| n.is_leaf() && passes(n, flt)).collect();
    let mut neighbours: Vec<Vec<NodeId>> = vec![Vec::new(); rows.len()];
    let mut next: Vec<Option<NodeId>> = vec![None; rows.len()];
    let leaves: Vec<Leaf<'_>> =
        rows.iter().map(|n| Leaf { id: &n.node_id, parent: n.parent_id.as_ref(), tree: &n.tree_id }).collect();
    among_siblings(mem, &leaves, |i, siblings, at, sealed| {
        let out = &mut neighbours[i];
        if at > 0 {
            out.push(NodeId(siblings[at - 1].to_string()));
        }
        if at + 1 < siblings.len() {
            let after = NodeId(siblings[at + 1].to_string());
            if sealed {
                next[i] = Some(after.clone());
            }
            out.push(after);
        }
    })?;
    Ok(Context { rows, neighbours, next })
}

/// Per row: its own and its neighbours' BM25 and, with the model, its own cosine, its
/// neighbours' mean cosine and the cosine with its session vector.
fn parts(ctx: &Context, bm25: &HashMap<NodeId, f64>, dense: Option<DenseQuery<'_>>) -> Vec<Parts> {
    ctx.rows
        .iter()
        .zip(&ctx.neighbours)
        .map(|(row, nbs)| {
            let own = bm25.get(&row.node_id).copied().unwrap_or(0.0);
            let nb: f64 = nbs.iter().map(|x| bm25.get(x).copied().unwrap_or(0.0)).sum();
            let mut p = Parts {
                bm25: own,
                neighbours_bm25: nb,
                cosine: 0.0,
                neighbours_cosine: 0.0,
                session_cosine: 0.0,
                pending: false,
                passage: 0,
                coverage: 0.0,
            };
            if let Some(d) = dense {
                match d.best(row.node_id.as_str()) {
                    Some((c, slot)) => (p.cosine, p.passage) = (c, slot),
                    None => p.pending = true,
                }
                // The neighbours that have their vector (all of them, but just after a write).
                let nb: Vec<f64> = nbs.iter().filter_map(|x| d.cosine(x.as_str())).collect();
                if !nb.is_empty() {
                    p.neighbours_cosine = nb.iter().sum::<f64>() / nb.len() as f64;
                }
                // The session vector is kept with the summary (computed when it or its
                // children's vectors arrived), not summed here per query.
                if let Some(parent) = &row.parent_id {
                    p.session_cosine = d.vectors.session_cosine(d.q, parent.as_str()).map_or(0.0, f64::from);
                }
            }
            p
        })
        .collect()
}

/// Per row, before normalisation: lexical = own BM25 + `window` × the neighbours' share;
/// dense (with the model) = own cosine + `dense_window` × the neighbours' mean cosine +
/// `dense_parent` × the cosine with the session vector.
fn raw_signals(parts: &[Parts], params: &WalkParams, has_dense: bool, terms: usize) -> Raw {
    let lexical = parts.iter().map(|p| p.bm25 + params.window * p.neighbours_bm25 * NEIGHBOUR_SHARE).collect();
    let dense = if has_dense {
        parts
            .iter()
            .map(|p| {
                (!p.pending).then_some(
                    p.cosine + params.dense_window * p.neighbours_cosine + params.dense_parent * p.session_cosine,
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    let flat = words_flat(parts, terms, params);
    Raw { lexical, dense, flat, short: (1..=SHORT_QUESTION_TERMS).contains(&terms) }
}

/// Whether `n` is written by a person the question names, whether it lies inside the time
/// window the question names, and whether it speaks of the time of a window that bounds
/// nothing (its stored spoken times, `NodeBrief::spoken`).
fn boosts(qa: &QueryAnalysis, n: &NodeBrief) -> (bool, bool, bool) {
    // `people` are folded (`QueryAnalysis::people`): "Fernandez" asks about "Fernández".
    let speaker = n.author.as_ref().is_some_and(|a| {
        let a = person_key(a);
        qa.people.contains(&a)
    });
    // Every candidate of a question that names a time lies in its window by one clock or
    // the other (`SearchFilter::admits`): the boost is the same for all of them, kept for
    // the dumps' replay. A soft window bounds nothing: the leaves that speak of it get their
    // own boost.
    let in_window = qa.window.is_some();
    let spoken = qa.soft_window.is_some_and(|w| n.spoken.iter().any(|t| t.inside(w)));
    (speaker, in_window, spoken)
}

/// The fused score of every row: the normalised lexical and dense signals fused at the
/// `dense` share, + `parent` × the parent summary's normalised BM25, + the speaker and
/// time-window boosts. Best first, ties by id.
fn fuse(qa: &QueryAnalysis, params: &WalkParams, g: Gathered, raw: &Raw) -> Vec<Scored> {
    let Gathered { ctx: Context { rows, next, .. }, parent_score, has_dense, parts, coverage_known, .. } = g;
    let boosts: Vec<Boosts> = rows
        .iter()
        .zip(&parts)
        .map(|(n, p)| {
            let (speaker, in_window, spoken) = boosts(qa, n);
            let parent = n.parent_id.as_ref().and_then(|p| parent_score.get(p)).copied().unwrap_or(0.0);
            Boosts {
                parent,
                speaker,
                in_window,
                speaks_of: spoken,
                assistant: n.assistant,
                instruction: n.instruction,
                coverage: p.coverage,
            }
        })
        .collect();
    let fused = fused_scores(raw, &boosts, params, qa.asks_assistant, has_dense);
    let mut out: Vec<Scored> = rows
        .into_iter()
        .zip(next)
        .zip(boosts)
        .zip(fused)
        .zip(&parts)
        .map(|((((n, next), b), (score, l, d)), p)| Scored {
            node: n,
            next,
            score,
            lexical: l,
            dense: d,
            parent: b.parent,
            speaker: b.speaker,
            coverage: coverage_known.then_some(b.coverage),
            passage: (p.passage > 0).then_some(p.passage),
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.node.node_id.cmp(&b.node.node_id)));
    out
}

/// Per row: the fused score (the normalised lexical and dense signals fused at the `dense`
/// share, plus the boosts), and the normalised lexical and dense signals. The one
/// arithmetic both [`fuse`] and [`replay`] rank by.
fn fused_scores(
    raw: &Raw,
    boosts: &[Boosts],
    params: &WalkParams,
    asks_assistant: bool,
    has_dense: bool,
) -> Vec<(f64, f64, f64)> {
    let lexn = min_max(&raw.lexical);
    // Rows with a vector are scaled among themselves; the range has a floor, so that among
    // few, weak dense matches the best is not handed the whole dense share.
    let present: Vec<f64> = raw.dense.iter().flatten().copied().collect();
    let scaled = min_max_at_least(&present, DENSE_RANGE_FLOOR);
    let mut scaled = scaled.into_iter();
    let densen: Vec<Option<f64>> = raw.dense.iter().map(|d| d.and_then(|_| scaled.next())).collect();
    let fusion = Fusion::dense_share(if raw.flat { params.flat_dense } else { params.dense });
    let assistant = if asks_assistant { params.asked_assistant } else { params.assistant };
    let mut out: Vec<(f64, f64, f64)> = boosts
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let l = lexn[i];
            // A row without its vector yet: the dense signal abstains (its lexical signal
            // alone, as with no model), rather than counting as the worst cosine.
            let d = densen.get(i).copied().flatten();
            let base = fusion.fuse(l, if has_dense { d.or(Some(l)) } else { None });
            (boosted(base, b, params, assistant), l, d.unwrap_or(0.0))
        })
        .collect();
    if raw.short && params.whole_coverage {
        whole_above_none(&mut out, boosts);
    }
    out
}

/// A short question's rule: every row holding all of its terms scores above every row
/// holding none. A row of whole coverage scoring at or below the best row of none is raised
/// to just above it, order among such rows kept (the raise is monotone in the score); rows
/// already above keep their score, and no other row moves.
fn whole_above_none(scores: &mut [(f64, f64, f64)], boosts: &[Boosts]) {
    let best_none = scores
        .iter()
        .zip(boosts)
        .filter(|(_, b)| b.coverage <= 0.0)
        .map(|(s, _)| s.0)
        .fold(f64::NEG_INFINITY, f64::max);
    if best_none == f64::NEG_INFINITY {
        return;
    }
    for (s, b) in scores.iter_mut().zip(boosts) {
        if b.coverage >= WHOLE && s.0 <= best_none {
            // Scores lie within a few units of 0: 1e-9 × score keeps their order and stays
            // below the 1e-6 step.
            s.0 = best_none + 1e-6 + 1e-9 * s.0;
        }
    }
}

/// A row's additive signals besides the fused lexical and dense ones.
struct Boosts {
    parent: f64,
    speaker: bool,
    in_window: bool,
    speaks_of: bool,
    assistant: bool,
    instruction: bool,
    /// The IDF-weighted share of the question's terms the row holds.
    coverage: f64,
}

/// `base` (the fused lexical and dense signals) plus the row's boosts at `params`' weights;
/// `assistant` is the weight this question gives the assistant's own messages.
fn boosted(base: f64, b: &Boosts, params: &WalkParams, assistant: f64) -> f64 {
    base + params.parent * b.parent
        + if b.speaker { params.speaker } else { 0.0 }
        + if b.in_window { params.time_boost } else { 0.0 }
        + if b.speaks_of { params.speaks_of_boost } else { 0.0 }
        + if b.assistant { assistant } else { 0.0 }
        + if b.instruction { params.instruction } else { 0.0 }
        + params.coverage * b.coverage
}

/// The scorer's order (best first, ties by id) rebuilt from dumped candidates at `params`:
/// the scorer's own arithmetic over [`candidate_signals`]' rows, so the dump is checked to
/// hold every input of the ranking (`src/tests/demo_questions.rs`), and other weights can be
/// tried on it without a store (`scripts/walk_weights.py` does the same in numpy, for the
/// weights before coverage: it knows neither `whole_coverage` nor `coverage`). What
/// follows the scorer is not replayed: the occurrence-ranked branch's cut to its pool, the
/// history answer of order and summary questions (`history.rs`), a first mention moved to
/// the front (`first.rs`) and the replies given with their questions (`answer.rs`).
pub fn replay(rows: &[CandidateSignals], question: &QuestionSignals, params: &WalkParams) -> Vec<NodeId> {
    let parts: Vec<Parts> = rows
        .iter()
        .map(|r| Parts {
            bm25: r.bm25,
            neighbours_bm25: r.neighbours_bm25,
            cosine: r.cosine,
            neighbours_cosine: r.neighbours_cosine,
            session_cosine: r.session_cosine,
            pending: r.pending,
            passage: 0,
            coverage: r.coverage,
        })
        .collect();
    let boosts: Vec<Boosts> = rows
        .iter()
        .map(|r| Boosts {
            parent: r.parent,
            speaker: r.speaker,
            in_window: r.in_window,
            speaks_of: r.speaks_of,
            assistant: r.assistant,
            instruction: r.instruction,
            coverage: r.coverage,
        })
        .collect();
    let raw = raw_signals(&parts, params, question.dense, question.coverage_terms);
    let fused = fused_scores(&raw, &boosts, params, question.asks_assistant, question.dense);
    let mut scored: Vec<(f64, &NodeId)> = fused.iter().zip(rows).map(|((s, _, _), r)| (*s, &r.node_id)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().map(|(_, id)| id.clone()).collect()
}

/// Whether a row passes the filter's scope, source and window ([`SearchFilter::admits`]).
pub(super) fn passes(n: &NodeBrief, flt: &SearchFilter) -> bool {
    flt.admits(n.tree_id.scope(), n.time_start_ms, n.time_end_ms, &n.spoken)
}

#[cfg(test)]
mod tests {
    use super::lexically_flat;

    #[test]
    fn words_that_match_a_crowd_evenly_are_flat() {
        // One strong match above a crowd: distinctive.
        let peaked = [9.0, 3.0, 2.5, 2.0, 2.0, 1.5, 1.0];
        assert!(!lexically_flat(peaked.into_iter(), 1.4));
        // Everyone matches about as well: nothing distinctive.
        let even = [3.1, 3.0, 2.9, 2.9, 2.8, 2.7, 2.7];
        assert!(lexically_flat(even.into_iter(), 1.4));
        // Too few matches to tell (and zeros are no matches).
        assert!(!lexically_flat([3.0, 3.0, 3.0, 0.0, 0.0, 0.0].into_iter(), 1.4));
        // A ratio of 0 turns the rule off.
        assert!(!lexically_flat(even.into_iter(), 0.0));
    }
}
