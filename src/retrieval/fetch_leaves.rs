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

// ---- its row of the `memory_tree` table (`tool::spec::MODES`) --------------------------------

use crate::tool::Request;
use crate::tool::spec::{Args, ModeSpec, Ty, f};

/// This mode's row: its names, docs, fields, primary field and parser.
pub(crate) const SPEC: ModeSpec = ModeSpec {
    mode: "fetch_leaves",
    when: "Before quoting or citing: the full text and source_ref of leaf ids from any hit list.",
    aliases: &[],
    primary: Some("chunk_ids"),
    parse,
    doc: "Full text and source_ref of leaves by id, in input order; unknown ids are skipped.",
    fields: &[f("chunk_ids", Ty::StrArray, true, "Leaf ids; only the first 20 are used.")],
};

fn parse(a: &Args<'_>) -> Result<Request> {
    Ok(Request::FetchLeaves(FetchLeavesArgs { chunk_ids: a.str_array_prefix("chunk_ids", MAX_IDS)? }))
}
