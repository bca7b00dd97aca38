//! `cover_window`: the minimal node set covering a time window — the topmost summaries whose
//! envelope lies wholly inside it, plus the in-window leaves no such summary covers, plus the
//! leaves said outside it that speak of a time inside it (SPEC §5.1's second clock: the
//! dinner told the next day, the trip planned the week before). Each hit's `explain` says
//! which clock admitted it.

use super::hit::{QueryResponse, Scope, mark_admitted, to_hits};
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{NodeReads, NodeRow, SpokenReads};
use crate::types::{NodeId, SourceKind};
use std::collections::{BTreeMap, HashSet};

/// At most this many leaves speaking of the window are read (the earliest times first): a
/// window of years on a large store is covered from its first this-many, not a scan.
const SPOKEN_CAP: usize = 50_000;

/// Arguments (validated: `since_ms <= until_ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct CoverWindowArgs {
    /// Window start, epoch ms, inclusive.
    pub since_ms: i64,
    /// Window end, epoch ms, inclusive.
    pub until_ms: i64,
    /// Only this source.
    pub source_id: Option<String>,
    /// Only sources of this kind (or platform prefix).
    pub source_kind: Option<SourceKind>,
    /// At most this many nodes.
    pub limit: usize,
}

/// Score is 1.0. Hits are ordered by start time (when said) then id. When the cover has more nodes than
/// `limit`, sources take turns (earliest first within each), so one busy source cannot
/// starve the others.
///
/// A node belongs to the cover when its envelope lies inside the window and its parent's
/// does not (a parent inside would cover it). Since a parent's envelope contains its
/// children's, this picks exactly the topmost inside nodes.
pub fn cover_window(mem: &MemoryReader, args: &CoverWindowArgs, scope: &Scope) -> Result<QueryResponse> {
    let wanted = |n: &NodeRow| {
        let s = n.tree_id.scope();
        scope.allows(s)
            && args.source_id.as_ref().is_none_or(|id| id == s)
            && args.source_kind.is_none_or(|k| source_kind_matches(mem, n, k))
    };
    let store = mem.store();
    let inside: Vec<NodeRow> =
        store.nodes_inside_window(args.since_ms, args.until_ms)?.into_iter().filter(|n| wanted(n)).collect();
    let ids: HashSet<&NodeId> = inside.iter().map(|n| &n.node_id).collect();
    // Said outside the window, speaking of it: no summary inside covers them.
    let speaking = store.leaves_speaking_within(args.since_ms, args.until_ms, SPOKEN_CAP)?;
    let speaking: Vec<NodeRow> =
        store.nodes(&speaking)?.into_iter().filter(|n| !ids.contains(&n.node_id) && wanted(n)).collect();
    let spoken_ids: HashSet<&str> = speaking.iter().map(|n| n.node_id.as_str()).collect();
    let mut cover: Vec<&NodeRow> = inside
        .iter()
        .filter(|n| n.parent_id.as_ref().is_none_or(|p| !ids.contains(p)))
        .chain(speaking.iter())
        .collect();
    cover.sort_by(|a, b| a.time_start_ms.cmp(&b.time_start_ms).then_with(|| a.node_id.cmp(&b.node_id)));
    let total = cover.len();
    let chosen: Vec<&NodeRow> = if total <= args.limit {
        cover
    } else {
        let mut per_source: BTreeMap<&str, std::collections::VecDeque<&NodeRow>> = BTreeMap::new();
        for n in cover {
            per_source.entry(n.tree_id.scope()).or_default().push_back(n);
        }
        let mut out = Vec::with_capacity(args.limit);
        while out.len() < args.limit {
            let mut took = false;
            for q in per_source.values_mut() {
                if out.len() == args.limit {
                    break;
                }
                if let Some(n) = q.pop_front() {
                    out.push(n);
                    took = true;
                }
            }
            if !took {
                break;
            }
        }
        out.sort_by(|a, b| a.time_start_ms.cmp(&b.time_start_ms).then_with(|| a.node_id.cmp(&b.node_id)));
        out
    };
    let mut hits = to_hits(mem, chosen.into_iter().map(|n| (n, 1.0)))?;
    mark_admitted(&mut hits, &spoken_ids);
    Ok(QueryResponse::new(hits, total))
}

fn source_kind_matches(mem: &MemoryReader, n: &NodeRow, k: SourceKind) -> bool {
    let s = n.tree_id.scope();
    if SourceKind::from_platform_prefix(s) == Some(k) {
        return true;
    }
    mem.store().tree(&n.tree_id).ok().flatten().is_some_and(|t| t.source_kind == k)
}
