//! `query_source`: the summaries (and not-yet-sealed leaves) of the selected sources, newest
//! first or reranked by similarity to a query; within `time_window_days`, also the leaves
//! said before it that speak of a time inside it (SPEC §5.1's second clock).

use super::hit::{QueryResponse, Scope, mark_admitted, to_hits};
use super::rerank::{Fusion, rerank, with_cut_note};
use super::snippet::attach_snippets;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{BatchReads, NodeReads, NodeRow, SpokenReads};
use crate::types::{NodeId, SourceKind, TreeId};
use std::collections::{HashMap, HashSet};

/// Arguments (validated by the tool layer).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QuerySourceArgs {
    /// Exactly this source.
    pub source_id: Option<String>,
    /// Sources of this kind, or whose platform prefix implies it (`slack:` → chat).
    pub source_kind: Option<SourceKind>,
    /// Only nodes whose envelope overlaps the last N days (wall clock).
    pub time_window_days: Option<f64>,
    /// Rerank by similarity to this text; leaf hits longer than one passage then carry the
    /// `snippet` that matches it best.
    pub query: Option<String>,
    /// At most this many hits.
    pub limit: usize,
}

/// At most this many leaves speaking of the window are read (the earliest times first).
const SPOKEN_CAP: usize = 50_000;

/// Score: with `query`, the fused lexical+dense similarity in [0, 1]; without, 1.0 for every
/// hit (the order is recency).
///
/// Beside the sealed summaries, the open level-0 buffer's leaves are returned too: they are
/// the newest content of the source and no summary covers them yet.
pub fn query_source(mem: &MemoryReader, args: &QuerySourceArgs, scope: &Scope) -> Result<QueryResponse> {
    let since = args.time_window_days.map(|d| mem.now_ms() - (d * 86_400_000.0) as i64);
    // Candidates as (id, envelope end): the order and the window need no more, and reading
    // whole rows (content, children) of every summary of a large store is what this mode
    // spent its time on. Full rows are read for the hits returned only.
    let mut cands: Vec<(NodeId, i64)> = Vec::new();
    let mut allowed: HashSet<TreeId> = HashSet::new();
    for t in mem.store().trees()? {
        if !scope.allows(&t.tree_scope) {
            continue;
        }
        if args.source_id.as_ref().is_some_and(|s| *s != t.tree_scope) {
            continue;
        }
        if let Some(k) = args.source_kind
            && t.source_kind != k
            && SourceKind::from_platform_prefix(&t.tree_scope) != Some(k)
        {
            continue;
        }
        cands.extend(mem.store().summary_ends(&t.tree_id)?);
        cands.extend(mem.store().buffer_ends(&t.tree_id, 0)?);
        allowed.insert(t.tree_id);
    }
    // The window admits by either clock (SPEC §5.1): beside what was said in it, the leaves
    // said before it that speak of a time inside it, ordered by that time.
    let mut spoken: HashSet<NodeId> = HashSet::new();
    if let Some(since) = since {
        cands.retain(|n| n.1 >= since);
        let have: HashSet<NodeId> = cands.iter().map(|n| n.0.clone()).collect();
        let window = (since, mem.now_ms());
        let ids = mem.store().leaves_speaking_within(window.0, window.1, SPOKEN_CAP)?;
        for b in mem.store().node_briefs(&ids)? {
            if have.contains(&b.node_id) || !allowed.contains(&b.tree_id) {
                continue;
            }
            let Some(when) = b.spoken.iter().filter(|t| t.inside(window)).map(|t| t.until_ms).max() else { continue };
            spoken.insert(b.node_id.clone());
            cands.push((b.node_id, when));
        }
    }
    let total = cands.len();
    // Read up to the question cap (`text::cap_question`), as walk reads one.
    let query = args.query.as_deref().map(|q| crate::text::cap_question(q.trim()).0).filter(|q| !q.is_empty());
    let ranked: Vec<(NodeId, f64)> = match query {
        Some(q) => {
            let ids: Vec<NodeId> = cands.into_iter().map(|n| n.0).collect();
            rerank(mem, q, &ids, Fusion::default())?.into_iter().take(args.limit).collect()
        }
        None => {
            cands.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            cands.into_iter().take(args.limit).map(|n| (n.0, 1.0)).collect()
        }
    };
    let ids: Vec<NodeId> = ranked.iter().map(|r| r.0.clone()).collect();
    let rows: HashMap<NodeId, NodeRow> = mem.store().nodes(&ids)?.into_iter().map(|n| (n.node_id.clone(), n)).collect();
    let mut hits = to_hits(mem, ranked.iter().filter_map(|(id, s)| rows.get(id).map(|n| (n, *s))))?;
    if since.is_some() {
        mark_admitted(&mut hits, &spoken.iter().map(NodeId::as_str).collect());
    }
    if let Some(q) = query {
        attach_snippets(&mem.index().searcher(), q, &mut hits)?;
    }
    Ok(with_cut_note(QueryResponse::new(hits, total), args.query.as_deref()))
}
