//! `fetch_leaves`: leaves by id, in input order, with full text and `source_ref`.

use super::hit::{RetrievalHit, Scope, to_hits};
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{NodeReads, NodeRow};
use crate::types::NodeId;

/// How many ids are looked at; the rest are ignored (SPEC §3).
pub const MAX_IDS: usize = 20;

/// Arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchLeavesArgs {
    /// Leaf ids; only the first [`MAX_IDS`] are used.
    pub chunk_ids: Vec<String>,
}

/// Score is 1.0. Unknown, malformed, non-leaf and scope-hidden ids are skipped.
pub fn fetch_leaves(mem: &MemoryReader, args: &FetchLeavesArgs, scope: &Scope) -> Result<Vec<RetrievalHit>> {
    let ids: Vec<NodeId> =
        args.chunk_ids.iter().take(MAX_IDS).filter(|s| NodeId::is_well_formed(s)).map(|s| NodeId(s.clone())).collect();
    let rows: Vec<NodeRow> =
        mem.store().nodes(&ids)?.into_iter().filter(|n| n.is_leaf() && scope.allows(n.tree_id.scope())).collect();
    to_hits(mem, rows.iter().map(|n| (n, 1.0)))
}
