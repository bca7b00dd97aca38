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
use crate::store::{NodeReads, NodeRow};
use crate::types::NodeId;
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
            _ => return Err(format!("unknown walk parameter {k:?}")),
        }
        Ok(())
    }
}

impl Default for WalkParams {
    fn default() -> Self {
        // Chosen with the recall harness (BENCHMARKS.md, "walk tuning"): SPEC §5's
        // coverage-first orderings cost recall on LoCoMo, so they are off by default.
        WalkParams {
            candidates: 300,
            window: 1.0,
            parent: 0.15,
            speaker: 0.3,
            dense: 0.5,
            occurrence_reorder: false,
            local_coverage_first: false,
            coverage_bonus: 0.0,
            parent_centroid: true,
            session_decay: 1.0,
            time_boost: 0.2,
        }
    }
}

/// A scored leaf.
#[derive(Debug, Clone)]
pub struct Scored {
    pub node: NodeRow,
    pub score: f64,
    pub lexical: f64,
    pub dense: f64,
    pub parent: f64,
    pub speaker: bool,
}

/// Score leaves for `qa`: the first-stage candidates plus `extra` (e.g. a local branch's
/// intersection). Best first, ties by id.
pub fn score_leaves(
    mem: &MemoryReader,
    qa: &QueryAnalysis,
    flt: &SearchFilter,
    params: &WalkParams,
    extra: &[NodeId],
) -> Result<Vec<Scored>> {
    let searcher = mem.index().searcher();
    let leaves = SearchFilter { levels: LevelFilter::Leaves, ..flt.clone() };
    let (lex, _) = searcher.bm25(&qa.lexical, &leaves, params.candidates)?;
    let bm25: HashMap<NodeId, f64> = lex.iter().map(|(id, s)| (id.clone(), f64::from(*s))).collect();

    // Dense first stage and query vector.
    let held = match mem.dense() {
        Some(d) if params.dense > 0.0 => {
            let q = d.embedder.embed(&[qa.raw.as_str()])?.pop().unwrap_or_default();
            Some((q, d))
        }
        _ => None,
    };
    let dense = held.as_ref().map(|(q, d)| (q.as_slice(), d.vectors()));
    let mut cand: BTreeSet<NodeId> = bm25.keys().cloned().collect();
    cand.extend(extra.iter().cloned());
    // A named time window brings its own best matches in (they get the time boost below).
    let mut bm25 = bm25;
    if let Some(w) = qa.window {
        let inside = SearchFilter { window_ms: Some(w), ..leaves.clone() };
        for (id, s) in searcher.bm25(&qa.lexical, &inside, params.candidates / 4)?.0 {
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
    // Rows, and the neighbours that give each leaf its context.
    let rows = mem.store().nodes(&cand.iter().cloned().collect::<Vec<_>>())?;
    let rows: Vec<NodeRow> = rows.into_iter().filter(|n| n.is_leaf() && passes(n, flt)).collect();
    let mut parents: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
    for n in &rows {
        let key = n.parent_id.clone().unwrap_or_else(|| NodeId(format!("buffer:{}", n.tree_id)));
        if parents.contains_key(&key) {
            continue;
        }
        let siblings = match &n.parent_id {
            Some(p) => mem.store().node(p.as_str())?.map(|p| p.child_ids).unwrap_or_default(),
            None => mem.store().buffer(&n.tree_id, 0)?.into_iter().map(|b| b.node_id).collect(),
        };
        parents.insert(key, siblings);
    }
    let neighbours = |n: &NodeRow| -> Vec<NodeId> {
        let key = n.parent_id.clone().unwrap_or_else(|| NodeId(format!("buffer:{}", n.tree_id)));
        let sib = &parents[&key];
        let Some(i) = sib.iter().position(|x| *x == n.node_id) else { return Vec::new() };
        let mut out = Vec::new();
        if i > 0 {
            out.push(sib[i - 1].clone());
        }
        if i + 1 < sib.len() {
            out.push(sib[i + 1].clone());
        }
        out
    };
    // Neighbours outside the candidate set have BM25 too: score them among themselves.
    let mut need: Vec<NodeId> = rows
        .iter()
        .flat_map(&neighbours)
        .filter(|id| !bm25.contains_key(id))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    need.retain(|id| !id.as_str().is_empty());
    let mut bm25_all = bm25.clone();
    for (id, s) in searcher.bm25_among(&qa.lexical, &need)? {
        bm25_all.insert(id, f64::from(s));
    }
    // Parent summaries' lexical score (the "session" signal).
    let summaries = SearchFilter { levels: LevelFilter::Summaries, ..flt.clone() };
    let (sum_hits, _) = searcher.bm25(&qa.lexical, &summaries, 50)?;
    let parent_score = min_max(&sum_hits.into_iter().map(|(id, s)| (id, f64::from(s))).collect());

    // Session vectors: the mean of each parent's children (or the parent's own vector).
    let mut centroids: HashMap<NodeId, Option<Vec<f32>>> = HashMap::new();
    if let Some((_, vectors)) = &dense
        && params.parent_centroid
    {
        for n in &rows {
            if let Some(p) = &n.parent_id
                && !centroids.contains_key(p)
            {
                let sib = &parents[p];
                centroids.insert(p.clone(), vectors.centroid(sib.iter().map(|x| x.as_str())));
            }
        }
    }
    let mut lexical: HashMap<NodeId, f64> = HashMap::new();
    let mut dense_raw: HashMap<NodeId, f64> = HashMap::new();
    for n in &rows {
        let own = bm25_all.get(&n.node_id).copied().unwrap_or(0.0);
        let nb: f64 = neighbours(n).iter().map(|x| bm25_all.get(x).copied().unwrap_or(0.0)).sum();
        lexical.insert(n.node_id.clone(), own + params.window * nb * 0.5);
        if let Some((q, vectors)) = &dense {
            let own = f64::from(vectors.cosine(q, n.node_id.as_str()).unwrap_or(0.0));
            let nbs = neighbours(n);
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
            dense_raw.insert(n.node_id.clone(), own + 0.5 * nb + 0.5 * par);
        }
    }
    let lexn = min_max(&lexical);
    let densen = min_max(&dense_raw);
    let mut out: Vec<Scored> = rows
        .into_iter()
        .map(|n| {
            let l = lexn.get(&n.node_id).copied().unwrap_or(0.0);
            let d = densen.get(&n.node_id).copied().unwrap_or(0.0);
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

/// The filter's scope, source and window conditions, checked on a row (dense candidates do
/// not come through the index filter).
fn passes(n: &NodeRow, flt: &SearchFilter) -> bool {
    let scope = n.tree_id.as_str().strip_prefix("source:").unwrap_or(n.tree_id.as_str());
    flt.scopes.as_ref().is_none_or(|s| s.contains(scope))
        && flt.source_id.as_ref().is_none_or(|s| s == scope)
        && flt.window_ms.is_none_or(|(a, b)| n.time_end_ms >= a && n.time_start_ms <= b)
}
