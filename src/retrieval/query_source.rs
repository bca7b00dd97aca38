//! `query_source`: the summaries (and not-yet-sealed leaves) of the selected sources, newest
//! first or reranked by similarity to a query.

use super::hit::{QueryResponse, Scope, to_hit};
use super::rerank::{Fusion, rerank};
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{NodeReads, NodeRow};
use crate::types::{NodeId, SourceKind};

/// Arguments (validated by the tool layer).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QuerySourceArgs {
    /// Exactly this source.
    pub source_id: Option<String>,
    /// Sources of this kind, or whose platform prefix implies it (`slack:` → chat).
    pub source_kind: Option<SourceKind>,
    /// Only nodes whose envelope overlaps the last N days (wall clock).
    pub time_window_days: Option<f64>,
    /// Rerank by similarity to this text.
    pub query: Option<String>,
    /// At most this many hits.
    pub limit: usize,
}

/// Score: with `query`, the fused lexical+dense similarity in [0, 1]; without, 1.0 for every
/// hit (the order is recency).
///
/// Beside the sealed summaries, the open level-0 buffer's leaves are returned too: they are
/// the newest content of the source and no summary covers them yet.
pub fn query_source(mem: &MemoryReader, args: &QuerySourceArgs, scope: &Scope) -> Result<QueryResponse> {
    let since = args.time_window_days.map(|d| mem.now_ms() - (d * 86_400_000.0) as i64);
    let mut cands: Vec<NodeRow> = Vec::new();
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
        cands.extend(mem.store().tree_summaries(&t.tree_id)?);
        cands.extend(mem.store().buffer(&t.tree_id, 0)?);
    }
    if let Some(since) = since {
        cands.retain(|n| n.time_end_ms >= since);
    }
    let total = cands.len();
    let ranked: Vec<(NodeRow, f64)> = match args.query.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
        Some(q) => {
            let ids: Vec<NodeId> = cands.iter().map(|n| n.node_id.clone()).collect();
            let scores = rerank(mem, q, &ids, Fusion::default())?;
            let mut by_id: std::collections::HashMap<NodeId, NodeRow> =
                cands.into_iter().map(|n| (n.node_id.clone(), n)).collect();
            scores.into_iter().take(args.limit).filter_map(|(id, s)| by_id.remove(&id).map(|n| (n, s))).collect()
        }
        None => {
            cands.sort_by(|a, b| b.time_end_ms.cmp(&a.time_end_ms).then_with(|| a.node_id.cmp(&b.node_id)));
            cands.into_iter().take(args.limit).map(|n| (n, 1.0)).collect()
        }
    };
    let hits = ranked.iter().map(|(n, s)| to_hit(mem, n, *s)).collect::<Result<Vec<_>>>()?;
    Ok(QueryResponse::new(hits, total))
}
