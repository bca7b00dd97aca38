//! `fetch_leaves`: leaves by id, with full text, for quoting.

use crate::error::Result;
use crate::retrieval::fetch_leaves::MAX_IDS;
use crate::retrieval::{FetchLeavesArgs, Scope, fetch_leaves};
use crate::tool::mode::{Mode, Target};
use crate::tool::args::{Args};
use crate::tool::field::{FieldSpec, Ty, f};
use crate::tool::Response;

/// The mode.
pub(crate) struct FetchLeaves;

impl Mode for FetchLeaves {
    const NAME: &'static str = "fetch_leaves";
    const WHEN: &'static str = "Before quoting or citing: the full text and source_ref of leaf ids from any hit list.";
    const DOC: &'static str = "Full text and source_ref of leaves by id, in input order; unknown ids are skipped.";
    const PRIMARY: Option<&'static str> = Some("chunk_ids");
    const FIELDS: &'static [FieldSpec] = &[f("chunk_ids", Ty::StrArray, true, "Leaf ids; only the first 20 are used.")];
    type Input = FetchLeavesArgs;

    fn parse(a: &Args<'_>) -> Result<FetchLeavesArgs> {
        Ok(FetchLeavesArgs { chunk_ids: a.str_array_prefix("chunk_ids", MAX_IDS)? })
    }

    fn run(args: FetchLeavesArgs, on: Target<'_>, scope: &Scope) -> Result<Response> {
        Ok(Response::Leaves(fetch_leaves(on.reader()?, &args, scope)?))
    }
}
