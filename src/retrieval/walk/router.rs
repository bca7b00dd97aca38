//! The deterministic E2GraphRAG-style router (SPEC §5): no query entity → global; entities
//! but no related pair within `max_hops` → occurrence-ranked global; related pairs → local
//! intersection of the pairs' entity posting lists in the full-text index, tightening the hop
//! bound while too many candidates remain.

use super::query::analyse_query;
use super::score::{Scored, WalkParams, score_leaves};
use crate::error::{Error, Result};
use crate::graph::related_pairs;
use crate::index::{LevelFilter, SearchFilter};
use crate::reader::MemoryReader;
use crate::retrieval::hit::{QueryResponse, Scope, to_hit};
use crate::store::{EntityReads, NodeReads, NodeRow};
use crate::types::{EntityId, NodeId};
use serde_json::json;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Arguments (validated by the tool layer).
#[derive(Debug, Clone, PartialEq)]
pub struct WalkArgs {
    /// The question (non-blank).
    pub query: String,
    /// Hits wanted (default 10, cap 100).
    pub limit: usize,
    /// Hop bound for relating query entities (default 2, cap 4).
    pub max_hops: u32,
    /// Only content whose envelope overlaps the last N days (wall clock).
    pub time_window_days: Option<f64>,
    /// Scorer weights.
    pub params: WalkParams,
}

impl WalkArgs {
    /// A walk with SPEC defaults.
    pub fn new(query: impl Into<String>) -> Self {
        WalkArgs { query: query.into(), limit: 10, max_hops: 2, time_window_days: None, params: WalkParams::default() }
    }
}

/// Which branch answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Branch {
    /// No query entity.
    Global,
    /// Entities, but no related pair.
    OccurrenceGlobal,
    /// Related pairs: intersection of posting lists.
    Local,
}

impl Branch {
    fn as_str(self) -> &'static str {
        match self {
            Branch::Global => "global",
            Branch::OccurrenceGlobal => "occurrence_global",
            Branch::Local => "local",
        }
    }
}

/// Answer `args.query`. Hits are leaves; `score` is the scorer's fused relevance (for local
/// hits, the number of query entities covered plus that relevance, so coverage ranks first);
/// every hit carries `explain` with its branch and signals.
pub fn walk(mem: &MemoryReader, args: &WalkArgs, scope: &Scope) -> Result<QueryResponse> {
    if args.query.trim().is_empty() {
        return Err(Error::invalid("walk.query", "must not be blank"));
    }
    let qa = analyse_query(mem, &args.query);
    let flt = SearchFilter {
        levels: LevelFilter::Leaves,
        scopes: scope.0.clone(),
        window_ms: args.time_window_days.map(|d| (mem.now_ms() - (d * 86_400_000.0) as i64, i64::MAX / 2)),
        ..SearchFilter::default()
    };
    let k = args.limit;

    // Route.
    let (branch, local_ids, hops_used) = if qa.entities.is_empty() {
        (Branch::Global, Vec::new(), None)
    } else {
        let pairs = related_pairs(mem.store(), &qa.entities, args.max_hops)?;
        if pairs.is_empty() {
            (Branch::OccurrenceGlobal, Vec::new(), None)
        } else {
            let (ids, h) = local_candidates(mem, &pairs, &flt, k, args.max_hops)?;
            let ids = best_local(mem, &qa.lexical, ids, args.params.candidates)?;
            if ids.is_empty() { (Branch::OccurrenceGlobal, ids, None) } else { (Branch::Local, ids, Some(h)) }
        }
    };

    let scored = score_leaves(mem, &qa, &flt, &args.params, &local_ids)?;
    let eq: BTreeSet<&str> = qa.entities.iter().map(|e| e.as_str()).collect();
    let coverage = |s: &Scored| -> Result<usize> {
        if eq.is_empty() {
            return Ok(0);
        }
        Ok(mem.store().node_entities(&s.node.node_id)?.iter().filter(|e| eq.contains(e.as_str())).count())
    };
    // Coverage (the number of query entities a hit mentions) is one store read per node. It
    // is read for every candidate only when it moves the order; otherwise only for the hits
    // returned, which show it in `explain`.
    let p = &args.params;
    let coverage_orders = match branch {
        Branch::Global => false,
        Branch::OccurrenceGlobal => p.occurrence_reorder,
        Branch::Local => p.local_coverage_first || p.coverage_bonus != 0.0,
    };

    let mut ranked: Vec<(Scored, Option<usize>, &'static str)> = Vec::new();
    match branch {
        Branch::Global => ranked.extend(scored.into_iter().map(|s| (s, Some(0), "global"))),
        Branch::OccurrenceGlobal => {
            // Dense/lexical top 2k, stably reordered by query-entity occurrence, keep k.
            let mut top: Vec<(Scored, Option<usize>, &'static str)> = Vec::new();
            for s in scored.into_iter().take(2 * k) {
                let c = if coverage_orders { Some(coverage(&s)?) } else { None };
                top.push((s, c, "occurrence_global"));
            }
            if args.params.occurrence_reorder {
                top.sort_by_key(|t| std::cmp::Reverse(t.1));
            }
            ranked = top;
        }
        Branch::Local => {
            let local: HashSet<&NodeId> = local_ids.iter().collect();
            if !coverage_orders {
                // Intersection hits earn no bonus: no score moves, and everything competes in
                // `scored`'s order (score, then id).
                ranked = scored
                    .into_iter()
                    .map(|s| if local.contains(&s.node.node_id) { (s, None, "local") } else { (s, Some(0), "global") })
                    .collect();
            } else {
                let (inside, outside): (Vec<Scored>, Vec<Scored>) =
                    scored.into_iter().partition(|s| local.contains(&s.node.node_id));
                let mut loc = Vec::new();
                for s in inside {
                    let c = coverage(&s)?;
                    loc.push((s, Some(c), "local"));
                }
                if args.params.local_coverage_first {
                    // Coverage, then relevance, then recency, then id.
                    loc.sort_by(|a, b| {
                        b.1.cmp(&a.1)
                            .then(b.0.score.total_cmp(&a.0.score))
                            .then(b.0.node.time_end_ms.cmp(&a.0.node.time_end_ms))
                            .then(a.0.node.node_id.cmp(&b.0.node.node_id))
                    });
                    ranked = loc;
                    // Fewer local hits than asked: the global ranking fills the rest.
                    ranked.extend(outside.into_iter().map(|s| (s, Some(0), "global_fill")));
                } else {
                    // Intersection hits earn a bonus per covered entity, then everything competes.
                    for (s, c, _) in loc.iter_mut() {
                        s.score += args.params.coverage_bonus * c.unwrap_or(0) as f64;
                    }
                    ranked = loc;
                    ranked.extend(outside.into_iter().map(|s| (s, Some(0), "global")));
                    ranked.sort_by(|a, b| {
                        b.0.score.total_cmp(&a.0.score).then_with(|| a.0.node.node_id.cmp(&b.0.node.node_id))
                    });
                }
            }
        }
    }
    let total = ranked.len();
    ranked.truncate(k);
    // Full rows (content, children, source) for the hits returned only.
    let ids: Vec<NodeId> = ranked.iter().map(|r| r.0.node.node_id.clone()).collect();
    let mut rows: HashMap<NodeId, NodeRow> =
        mem.store().nodes(&ids)?.into_iter().map(|n| (n.node_id.clone(), n)).collect();
    let mut hits = Vec::with_capacity(ranked.len());
    for (s, cov, from) in ranked {
        let cov = match cov {
            Some(c) => c,
            None => coverage(&s)?,
        };
        let score = if branch == Branch::Local && from == "local" && args.params.local_coverage_first {
            cov as f64 + s.score
        } else {
            s.score
        };
        // Read in the same snapshot as the candidates: a row cannot have gone.
        let node = rows.remove(&s.node.node_id).ok_or_else(|| Error::Corrupt {
            what: format!("node {}", s.node.node_id.as_str()),
            reason: "scored but not readable".into(),
        })?;
        let mut h = to_hit(mem, &node, score)?;
        h.explain = Some(json!({
            "branch": branch.as_str(),
            "from": from,
            "query_entities": qa.entities.iter().map(|e| e.as_str()).collect::<Vec<_>>(),
            "coverage": cov,
            "hops": hops_used,
            "time_window": qa.window.map(|(a, b)| [crate::retrieval::rfc3339(a), crate::retrieval::rfc3339(b)]),
            "signals": {"lexical": s.lexical, "dense": s.dense, "parent": s.parent, "speaker": s.speaker, "fused": s.score},
        }));
        hits.push(h);
    }
    Ok(QueryResponse::new(hits, total))
}

/// Nodes (leaves) mentioning both entities of a related pair, unioned over pairs, from the
/// index's posting lists. While more than `k` remain and the hop bound can tighten, keep
/// only pairs within the tighter bound; keep the last non-empty set.
fn local_candidates(
    mem: &MemoryReader,
    pairs: &[(EntityId, EntityId, u32)],
    flt: &SearchFilter,
    k: usize,
    max_hops: u32,
) -> Result<(Vec<NodeId>, u32)> {
    let searcher = mem.index().searcher();
    let mut per_pair: HashMap<(EntityId, EntityId), Vec<NodeId>> = HashMap::new();
    for (a, b, _) in pairs {
        let ids = searcher.entity_intersection_ids(&[a.clone(), b.clone()], flt, 10_000)?;
        per_pair.insert((a.clone(), b.clone()), ids);
    }
    let union_at = |h: u32| -> BTreeSet<NodeId> {
        pairs
            .iter()
            .filter(|(_, _, d)| *d <= h)
            .flat_map(|(a, b, _)| per_pair[&(a.clone(), b.clone())].iter().cloned())
            .collect()
    };
    let mut h = max_hops;
    let mut best = union_at(h);
    while best.len() > k && h > 1 {
        let tighter = union_at(h - 1);
        if tighter.is_empty() {
            break;
        }
        h -= 1;
        best = tighter;
    }
    Ok((best.into_iter().collect(), h))
}

/// At most `cap` of the local candidates: every one when they fit, else the best by BM25 of
/// the question among them, ties (and candidates matching no term) by id.
///
/// Every candidate handed to the scorer costs store reads (its row, its parent's children,
/// its neighbours' BM25), and on a large store one frequent pair of entities can share
/// thousands of nodes (~10k on the 100k-leaf synthetic store). An intersection node the
/// question's words do not match can only rise through its neighbours, its session or a
/// named author, the same signals every other candidate has; so the cut keeps the ones the
/// words point at, as the first stage does for the whole store.
fn best_local(mem: &MemoryReader, lexical: &str, ids: Vec<NodeId>, cap: usize) -> Result<Vec<NodeId>> {
    if ids.len() <= cap {
        return Ok(ids);
    }
    let scores = mem.index().searcher().bm25_among(lexical, &ids)?;
    let mut ranked: Vec<(f32, NodeId)> =
        ids.into_iter().map(|id| (scores.get(&id).copied().unwrap_or(0.0), id)).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    ranked.truncate(cap);
    Ok(ranked.into_iter().map(|(_, id)| id).collect())
}
