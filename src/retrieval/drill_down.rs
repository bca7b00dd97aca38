//! `drill_down`: a node's descendants, breadth first, depth by depth.

use super::hit::{QueryResponse, Scope, to_hits};
use super::rerank::{Fusion, rerank, with_cut_note};
use super::snippet::attach_snippets;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{NodeReads, NodeRow};
use crate::types::NodeId;

/// Arguments (validated by the tool layer: `max_depth` ≥ 1).
#[derive(Debug, Clone, PartialEq)]
pub struct DrillDownArgs {
    /// The node to open.
    pub node_id: String,
    /// How many levels down (1 = the children).
    pub max_depth: u32,
    /// Rerank the descendants by similarity to this text before truncating; leaf hits longer
    /// than one passage then carry the `snippet` that matches it best.
    pub query: Option<String>,
    /// At most this many hits.
    pub limit: usize,
}

/// Score: with `query`, the fused similarity in [0, 1]; without, `1 / depth` (children 1.0,
/// grandchildren 0.5, …), the order being breadth first. A leaf, an unknown or malformed id,
/// or a node hidden by the scope gate gives an empty response.
pub fn drill_down(mem: &MemoryReader, args: &DrillDownArgs, scope: &Scope) -> Result<QueryResponse> {
    if !NodeId::is_well_formed(&args.node_id) {
        return Ok(QueryResponse::default());
    }
    let Some(root) = mem.store().node(&args.node_id)? else { return Ok(QueryResponse::default()) };
    if !scope.allows(root.tree_id.scope()) {
        return Ok(QueryResponse::default());
    }
    let mut found: Vec<(NodeRow, u32)> = Vec::new();
    let mut frontier = vec![root];
    for depth in 1..=args.max_depth {
        let ids: Vec<NodeId> = frontier.iter().flat_map(|n| n.child_ids.iter().cloned()).collect();
        if ids.is_empty() {
            break;
        }
        frontier = mem.store().nodes(&ids)?;
        found.extend(frontier.iter().cloned().map(|n| (n, depth)));
    }
    let total = found.len();
    // Read up to the question cap (`text::cap_question`), as walk reads one.
    let query = args.query.as_deref().map(|q| crate::text::cap_question(q.trim()).0).filter(|q| !q.is_empty());
    let ranked: Vec<(NodeRow, f64)> = match query {
        Some(q) => {
            let ids: Vec<NodeId> = found.iter().map(|(n, _)| n.node_id.clone()).collect();
            let scores = rerank(mem, q, &ids, Fusion::default())?;
            let mut by_id: std::collections::HashMap<NodeId, NodeRow> =
                found.into_iter().map(|(n, _)| (n.node_id.clone(), n)).collect();
            scores.into_iter().take(args.limit).filter_map(|(id, s)| by_id.remove(&id).map(|n| (n, s))).collect()
        }
        None => found.into_iter().take(args.limit).map(|(n, d)| (n, 1.0 / f64::from(d))).collect(),
    };
    let mut hits = to_hits(mem, ranked.iter().map(|(n, s)| (n, *s)))?;
    if let Some(q) = query {
        attach_snippets(&mem.index().searcher(), q, &mut hits)?;
    }
    Ok(with_cut_note(QueryResponse::new(hits, total), args.query.as_deref()))
}
