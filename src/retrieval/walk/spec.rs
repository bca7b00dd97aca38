//! walk's row of the `memory_tree` table: its names, docs, fields, primary field and parser.

use super::{WalkArgs, WalkParams};
use crate::error::Result;
use crate::tool::Request;
use crate::tool::spec::{Args, ModeSpec, Ty, f, int, limit};

/// This mode's row.
pub(crate) const SPEC: ModeSpec = ModeSpec {
    mode: "walk",
    when: "A one-shot question in plain words: ranked evidence; the default when no other mode fits.",
    aliases: &["smart_walk"],
    primary: Some("query"),
    parse,
    doc: "Answer a natural-language question with ranked evidence leaves, deterministically (no language model): query entities route between global search and a local intersection of entity posting lists. A hit of a long leaf carries `snippet` {text, start, end}: the passage that best matches the question, `start`/`end` being character (Unicode scalar value) offsets into `content`; read it first to save context.",
    fields: &[
        f("query", Ty::Str, true, "The question (non-blank)."),
        int("limit", 10, 100, "Maximum hits (default 10, cap 100)."),
        int("max_hops", 2, 4, "Hop bound for relating query entities in the co-occurrence graph (default 2, cap 4)."),
        f("time_window_days", Ty::Num, false, "Only content from the last N days."),
    ],
};

fn parse(a: &Args<'_>) -> Result<Request> {
    Ok(Request::Walk(WalkArgs {
        query: a.non_blank("query")?,
        limit: limit(a)?,
        max_hops: a.int("max_hops")? as u32,
        time_window_days: a.opt_positive("time_window_days")?,
        params: WalkParams::default(),
    }))
}
