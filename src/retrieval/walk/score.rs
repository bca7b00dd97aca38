//! The leaf scorer every walk branch shares: BM25 of the question over leaves, scored with
//! their context (the neighbouring turns and the parent summary), fused with the dense
//! signal when a model is loaded, plus a mild boost for leaves written by a named person.
//!
//! Each signal is one of RETRIEVAL-NOTES' measured lessons: score a leaf with its context but
//! return the leaf (§1), drop question stop words and boost a named author (§2), a soft
//! parent score rather than a hard filter (§3), min-max fusion rather than RRF (§4).

use super::query::QueryAnalysis;
use crate::error::Result;
use crate::index::{LevelFilter, SearchFilter};
use crate::reader::MemoryReader;
use crate::retrieval::rerank::min_max;
use crate::store::{BatchReads, NodeBrief};
use crate::types::{NodeId, TreeId};
use std::collections::{BTreeSet, HashMap};

/// Tunable weights of the scorer. `Default` is what the recall harness chose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalkParams {
    /// Leaves taken from each first-stage list (BM25, dense).
    pub candidates: usize,
    /// Weight of the neighbouring turns' BM25 in a leaf's lexical score.
    pub window: f64,
    /// Weight of the parent summary's normalised score.
    pub parent: f64,
    /// Boost for a leaf whose author the question names.
    pub speaker: f64,
    /// Share of the dense signal in the fused score (0 = lexical only).
    pub dense: f64,
    /// Occurrence-ranked global branch reorders its top 2k by query-entity coverage (the
    /// SPEC §5 baseline); off = keep the fused order.
    pub occurrence_reorder: bool,
    /// Local branch ranks intersection hits by coverage before relevance (SPEC §5); off =
    /// intersection hits get `coverage_bonus` per covered entity added to their score.
    pub local_coverage_first: bool,
    /// Score added per covered query entity when `local_coverage_first` is off.
    pub coverage_bonus: f64,
    /// Dense session signal from the mean of the parent's children vectors (true) or from
    /// the parent summary's own vector (false).
    pub parent_centroid: bool,
    /// Multiplier applied once per better-ranked hit from the same parent (1 = off): spreads
    /// the list over sessions, since evidence is spread over them.
    pub session_decay: f64,
    /// Boost for a leaf inside the time window the question names.
    pub time_boost: f64,
    /// Weight of the neighbours' mean cosine in a leaf's dense score.
    pub dense_window: f64,
    /// Weight of the session's (parent's) cosine in a leaf's dense score.
    pub dense_parent: f64,
    /// BM25 sees the question without the names of the people asked about.
    pub lexical_bare: bool,
}

impl WalkParams {
    /// Set one weight by name (`window=0.5`); for experiments from the command line.
    pub fn set(&mut self, kv: &str) -> Result<(), String> {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("expected key=value, got {kv:?}"))?;
        let num = || v.parse::<f64>().map_err(|e| format!("{k}: {e}"));
        let flag = || v.parse::<bool>().map_err(|e| format!("{k}: {e}"));
        match k {
            "candidates" => self.candidates = num()? as usize,
            "window" => self.window = num()?,
            "parent" => self.parent = num()?,
            "speaker" => self.speaker = num()?,
            "dense" => self.dense = num()?,
            "occurrence_reorder" => self.occurrence_reorder = flag()?,
            "local_coverage_first" => self.local_coverage_first = flag()?,
            "coverage_bonus" => self.coverage_bonus = num()?,
            "parent_centroid" => self.parent_centroid = flag()?,
            "session_decay" => self.session_decay = num()?,
            "time_boost" => self.time_boost = num()?,
            "dense_window" => self.dense_window = num()?,
            "dense_parent" => self.dense_parent = num()?,
            "lexical_bare" => self.lexical_bare = flag()?,
            _ => return Err(format!("unknown walk parameter {k:?}")),
        }
        Ok(())
    }
}

impl Default for WalkParams {
    fn default() -> Self {
        // Chosen with the recall harness (BENCHMARKS.md, "walk tuning"): SPEC §5's
        // coverage-first orderings cost recall on LoCoMo, so they are off by default. The
        // dense share (0.65) is what leave-one-conversation-out picked in all seven folds
        // among the 25 settings of run z.
        WalkParams {
            candidates: 300,
            window: 1.0,
            parent: 0.15,
            speaker: 0.3,
            dense: 0.65,
            occurrence_reorder: false,
            local_coverage_first: false,
            coverage_bonus: 0.0,
            parent_centroid: true,
            session_decay: 1.0,
            time_boost: 0.2,
            dense_window: 0.5,
            dense_parent: 0.5,
            lexical_bare: false,
        }
    }
}

/// A scored leaf.
#[derive(Debug, Clone)]
pub struct Scored {
    pub node: NodeBrief,
    pub score: f64,
    pub lexical: f64,
    pub dense: f64,
    pub parent: f64,
    pub speaker: bool,
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
    qa: &QueryAnalysis,
    flt: &SearchFilter,
    params: &WalkParams,
    extra: &[NodeId],
) -> Result<Vec<Scored>> {
    let searcher = mem.index().searcher();
    let text = if params.lexical_bare { qa.lexical_bare.as_str() } else { qa.lexical.as_str() };
    let leaves = SearchFilter { levels: LevelFilter::Leaves, ..flt.clone() };
    let lex = searcher.bm25_top(text, &leaves, params.candidates)?;
    let mut bm25: HashMap<NodeId, f64> = lex.iter().map(|(id, s)| (id.clone(), f64::from(*s))).collect();

    // Dense first stage and query vector.
    let held = match mem.dense() {
        Some(d) if params.dense > 0.0 => {
            let q = d.embedder.embed(&[qa.dense.as_str()])?.pop().unwrap_or_default();
            Some((q, d))
        }
        _ => None,
    };
    let dense = held.as_ref().map(|(q, d)| (q.as_slice(), d.vectors()));
    let mut cand: BTreeSet<NodeId> = bm25.keys().cloned().collect();
    cand.extend(extra.iter().cloned());
    // A named time window brings its own best matches in (they get the time boost below).
    if let Some(w) = qa.window {
        let inside = SearchFilter { window_ms: Some(w), ..leaves.clone() };
        for (id, s) in searcher.bm25_top(text, &inside, params.candidates / 4)? {
            cand.insert(id.clone());
            bm25.entry(id).or_insert(f64::from(s));
        }
    }
    if let Some((q, vectors)) = &dense {
        let allowed = |id: &str| id.starts_with('L');
        for (id, _) in vectors.top_k(q, params.candidates, allowed) {
            cand.insert(NodeId(id));
        }
    }
    // Rows, and the neighbours that give each leaf its context: the turns before and after it
    // among its parent's children (or its tree's open buffer when not sealed yet).
    let rows = mem.store().node_briefs(&cand.into_iter().collect::<Vec<_>>())?;
    let rows: Vec<NodeBrief> = rows.into_iter().filter(|n| n.is_leaf() && passes(n, flt)).collect();
    let mut by_parent: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_buffer: HashMap<&TreeId, Vec<usize>> = HashMap::new();
    for (i, n) in rows.iter().enumerate() {
        match &n.parent_id {
            Some(p) => by_parent.entry(p.as_str()).or_default().push(i),
            None => by_buffer.entry(&n.tree_id).or_default().push(i),
        }
    }
    // Per row: the sibling before it, then the one after it (none when the row is not among
    // its parent's children, or the parent is not in the store).
    let mut neighbours: Vec<Vec<NodeId>> = vec![Vec::new(); rows.len()];
    let mut place = |siblings: &[&str], members: &[usize]| {
        for &i in members {
            let Some(at) = siblings.iter().position(|x| *x == rows[i].node_id.as_str()) else { continue };
            let out = &mut neighbours[i];
            if at > 0 {
                out.push(NodeId(siblings[at - 1].to_string()));
            }
            if at + 1 < siblings.len() {
                out.push(NodeId(siblings[at + 1].to_string()));
            }
        }
    };
    // Session vectors: the mean of each parent's children (or the parent's own vector).
    let want_centroids = dense.is_some() && params.parent_centroid;
    let mut centroids: HashMap<NodeId, Option<Vec<f32>>> = HashMap::new();
    let parent_ids: Vec<NodeId> = by_parent.keys().map(|p| NodeId(p.to_string())).collect();
    mem.store().for_each_child_list(&parent_ids, |parent, children| {
        if let Some(members) = by_parent.get(parent) {
            place(children, members);
        }
        if want_centroids && let Some((_, vectors)) = &dense {
            centroids.insert(NodeId(parent.to_string()), vectors.centroid(children.iter().copied()));
        }
        Ok(())
    })?;
    for (tree, members) in &by_buffer {
        let ids = mem.store().buffer_ids(tree, 0)?;
        place(&ids.iter().map(|x| x.as_str()).collect::<Vec<_>>(), members);
    }
    // Neighbours outside the candidate set have BM25 too: score them among themselves.
    let need: Vec<NodeId> = neighbours
        .iter()
        .flatten()
        .filter(|id| !id.as_str().is_empty() && !bm25.contains_key(*id))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // The neighbours' scores join the candidates' (no id is in both).
    for (id, s) in searcher.bm25_among(text, &need)? {
        bm25.insert(id, f64::from(s));
    }
    // Parent summaries' lexical score (the "session" signal).
    let summaries = SearchFilter { levels: LevelFilter::Summaries, ..flt.clone() };
    let sum_hits = searcher.bm25_top(text, &summaries, 50)?;
    let parent_score = min_max(&sum_hits.into_iter().map(|(id, s)| (id, f64::from(s))).collect());

    let mut lexical: Vec<f64> = Vec::with_capacity(rows.len());
    let mut dense_raw: Vec<f64> = Vec::with_capacity(if dense.is_some() { rows.len() } else { 0 });
    for (n, nbs) in rows.iter().zip(&neighbours) {
        let own = bm25.get(&n.node_id).copied().unwrap_or(0.0);
        let nb: f64 = nbs.iter().map(|x| bm25.get(x).copied().unwrap_or(0.0)).sum();
        lexical.push(own + params.window * nb * 0.5);
        if let Some((q, vectors)) = &dense {
            let own = f64::from(vectors.cosine(q, n.node_id.as_str()).unwrap_or(0.0));
            let nb = if nbs.is_empty() {
                0.0
            } else {
                nbs.iter().map(|x| f64::from(vectors.cosine(q, x.as_str()).unwrap_or(0.0))).sum::<f64>()
                    / nbs.len() as f64
            };
            let par = match &n.parent_id {
                Some(p) if params.parent_centroid => centroids
                    .get(p)
                    .and_then(|c| c.as_ref())
                    .map(|c| c.iter().zip(q.iter()).map(|(a, b)| f64::from(a * b)).sum::<f64>())
                    .unwrap_or(0.0),
                Some(p) => vectors.cosine(q, p.as_str()).map(f64::from).unwrap_or(0.0),
                None => 0.0,
            };
            dense_raw.push(own + params.dense_window * nb + params.dense_parent * par);
        }
    }
    let lexn = min_max_slice(&lexical);
    let densen = min_max_slice(&dense_raw);
    let mut out: Vec<Scored> = rows
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let l = lexn[i];
            let d = densen.get(i).copied().unwrap_or(0.0);
            let base = if dense.is_some() { (1.0 - params.dense) * l + params.dense * d } else { l };
            let p = n.parent_id.as_ref().and_then(|p| parent_score.get(p)).copied().unwrap_or(0.0);
            let speaker = n.author.as_ref().is_some_and(|a| qa.people.iter().any(|x| x.eq_ignore_ascii_case(a)));
            let in_window = qa.window.is_some_and(|(a, b)| n.time_end_ms >= a && n.time_start_ms <= b);
            let score = base
                + params.parent * p
                + if speaker { params.speaker } else { 0.0 }
                + if in_window { params.time_boost } else { 0.0 };
            Scored { node: n, score, lexical: l, dense: d, parent: p, speaker }
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.node.node_id.cmp(&b.node.node_id)));
    if params.session_decay < 1.0 {
        let mut seen: HashMap<Option<NodeId>, i32> = HashMap::new();
        for s in out.iter_mut() {
            let n = seen.entry(s.node.parent_id.clone()).or_default();
            s.score *= params.session_decay.powi(*n);
            *n += 1;
        }
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.node.node_id.cmp(&b.node.node_id)));
    }
    Ok(out)
}

/// [`min_max`] over a slice, position for position (the same arithmetic: min and max do not
/// depend on the order they are taken in).
fn min_max_slice(scores: &[f64]) -> Vec<f64> {
    let (lo, hi) = scores.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &s| (l.min(s), h.max(s)));
    scores
        .iter()
        .map(|&s| {
            if hi > lo {
                (s - lo) / (hi - lo)
            } else if hi > 0.0 {
                1.0
            } else {
                0.0
            }
        })
        .collect()
}

/// The filter's scope, source and window conditions, checked on a row (dense candidates do
/// not come through the index filter).
fn passes(n: &NodeBrief, flt: &SearchFilter) -> bool {
    let scope = n.tree_id.as_str().strip_prefix("source:").unwrap_or(n.tree_id.as_str());
    flt.scopes.as_ref().is_none_or(|s| s.contains(scope))
        && flt.source_id.as_ref().is_none_or(|s| s == scope)
        && flt.window_ms.is_none_or(|(a, b)| n.time_end_ms >= a && n.time_start_ms <= b)
}
