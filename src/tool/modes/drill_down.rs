//! `drill_down`: open a summary, level by level.

use crate::error::Result;
use crate::retrieval::{DrillDownArgs, Scope, drill_down};
use crate::tool::mode::{Mode, Target};
use crate::tool::args::{Args, limit, with_note};
use crate::tool::field::{FieldSpec, Ty, f, int};
use crate::tool::Response;

/// The mode.
pub(crate) struct DrillDown;

impl Mode for DrillDown {
    const NAME: &'static str = "drill_down";
    const WHEN: &'static str = "A summary hit worth opening: what it summarises, level by level.";
    const DOC: &'static str = "Open a summary: its descendants breadth first, depth by depth; optionally reranked by `query` before truncation. A leaf or unknown id gives no hits.";
    const PRIMARY: Option<&'static str> = Some("node_id");
    const FIELDS: &'static [FieldSpec] = &[
            f("node_id", Ty::Str, true, "The summary to open."),
            FieldSpec {
                name: "max_depth",
                ty: Ty::Int,
                required: false,
                default: Some(1),
                cap: Some(16),
                min: Some(1),
                doc: "Levels to descend (default 1, at least 1, cap 16).",
            },
            f(
                "query",
                Ty::Str,
                false,
                "Rerank the descendants by similarity to this text; hits of long leaves then carry `snippet`, the passage that matches it best.",
            ),
            int("limit", 50, 500, "Maximum hits (default 50, cap 500)."),
        ];
    /// The arguments, and the note of a question cut to the cap.
    type Input = (DrillDownArgs, Option<String>);

    fn parse(a: &Args<'_>) -> Result<(DrillDownArgs, Option<String>)> {
        // 0 means "the default" for every other integer (SPEC), but a depth of 0 is a mistake.
        if a.raw_int("max_depth")? == Some(0) {
            return Err(a.err("`max_depth` must be at least 1, got 0"));
        }
        let (query, cut) = match a.opt_str("query")? {
            Some(q) => {
                let (q, cut) = a.question(q);
                (Some(q), cut)
            }
            None => (None, None),
        };
        let args = DrillDownArgs {
            node_id: a.str("node_id")?,
            max_depth: a.int("max_depth")? as u32,
            query,
            limit: limit(a)?,
        };
        Ok((args, cut))
    }

    fn run((args, cut): (DrillDownArgs, Option<String>), on: Target<'_>, scope: &Scope) -> Result<Response> {
        Ok(Response::Query(with_note(drill_down(on.reader()?, &args, scope)?, cut)))
    }
}
