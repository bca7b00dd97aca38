//! `cover_window`: the fewest nodes that cover a span of time.

use crate::error::Result;
use crate::retrieval::{CoverWindowArgs, Scope, cover_window};
use crate::tool::mode::{Mode, Target};
use crate::tool::args::{Args, limit, since_until, source_id, source_kind};
use crate::tool::field::{FieldSpec, Ty, f, int};
use crate::tool::Response;

/// The mode.
pub(crate) struct CoverWindow;

impl Mode for CoverWindow {
    const NAME: &'static str = "cover_window";
    const WHEN: &'static str = "Everything in a span of time (\"the last 24 hours\", \"on May 13\"): since_ms..until_ms.";
    const DOC: &'static str = "The minimal set of nodes covering a time window: the topmost summaries lying wholly inside it plus in-window leaves no such summary covers, plus the leaves said outside it that speak of a time inside it (explain.admitted_by: said or speaks_of); ordered by when said.";
    const FIELDS: &'static [FieldSpec] = &[
            f("since_ms", Ty::Int, true, "Window start, epoch milliseconds, inclusive."),
            f("until_ms", Ty::Int, true, "Window end, epoch milliseconds, inclusive; not before since_ms."),
            f("source_id", Ty::Str, false, "Only this source."),
            f("source_kind", Ty::Str, false, "Only this kind of source (`chat`, `email`, `document`)."),
            int("limit", 200, 1000, "Maximum nodes (default 200, cap 1000); sources take turns so none is starved."),
        ];
    type Input = CoverWindowArgs;

    fn parse(a: &Args<'_>) -> Result<CoverWindowArgs> {
        let (since, until) = since_until(a)?;
        let since = since.ok_or_else(|| a.err("`since_ms` is required"))?;
        let until = until.ok_or_else(|| a.err("`until_ms` is required"))?;
        Ok(CoverWindowArgs {
            since_ms: since,
            until_ms: until,
            source_id: source_id(a)?,
            source_kind: source_kind(a)?,
            limit: limit(a)?,
        })
    }

    fn run(args: CoverWindowArgs, on: Target<'_>, scope: &Scope) -> Result<Response> {
        Ok(Response::Query(cover_window(on.reader()?, &args, scope)?))
    }
}
