//! `walk`: a question in plain words, ranked evidence out (the default mode).

use crate::error::Result;
use crate::retrieval::{Scope, WalkArgs, WalkParams, walk};
use crate::tool::Response;
use crate::tool::mode::{Mode, Target};
use crate::tool::args::{Args, limit, since_until, with_note};
use crate::tool::field::{FieldSpec, Ty, f, int};

/// The mode.
pub(crate) struct Walk;

impl Mode for Walk {
    const NAME: &'static str = "walk";
    const ALIASES: &'static [&'static str] = &["smart_walk"];
    const WHEN: &'static str = "A one-shot question in plain words: ranked evidence; the default when no other mode fits.";
    const DOC: &'static str = "Answer a natural-language question with ranked evidence leaves, deterministically (no language model): query entities route between global search and a local intersection of entity posting lists (the memories naming two of the question's entities together), read from the index: no graph is walked. A hit of a long leaf carries `snippet` {text, start, end}: the passage that best matches the question, `start`/`end` being character (Unicode scalar value) offsets into `content`; read it first to save context. A question that names a time (\"yesterday\", \"last week\", \"on May 13\", \"in spring 2023\", \"between May 1 and 10\"; relative times read against the engine's clock) is answered from inside that window only: no hit from other dates. A question about a time and nothing else (\"what happened yesterday?\") returns the window's topmost summaries first (one per source a round), then its most salient leaves, then the rest in time order. The response's `explain` {time_window, time_only, notes} says how the time was read; an empty `hits` with a note means nothing lies inside the window (or a date that is not one, e.g. February 30, 2018-06-31). Dates in digits: year first (2018-05-03), else dots are day.month.year and slashes month/day/year; a reading that could have been the other order, or date-like text that is not read, is said in `notes`. A question about a history (\"in what order did I bring up…\", \"summarise how my project went\") returns the sessions that speak of it in time order: summary hits whose `evidence` holds the leaves each stands for (the best message; for a summary, the message and the assistant's reply), at most `limit` leaves in all; `explain.history` says so. A session's `snippet` is a headline from its summary that states its evidence; a summary that states none of it is left out and its leaves come alone. When the host runs a reranker (a cross-encoder), walk's top hits are re-scored by it and reordered by both ranks; each such hit's `explain.rerank` {model, score, rank, walk_rank} says so (history and time-only answers keep their order).";
    const PRIMARY: Option<&'static str> = Some("query");
    const FIELDS: &'static [FieldSpec] = &[
        f("query", Ty::Str, true, "The question (non-blank)."),
        int("limit", 10, 100, "Maximum hits (default 10, cap 100); for a history question, evidence leaves."),
        int(
            "max_hops",
            2,
            4,
            "Hop bound for relating query entities (default 2, cap 4; kept for compatibility: only entities named together in one memory share its evidence, so every bound gives the same answer).",
        ),
        f("time_window_days", Ty::Num, false, "Only content from the last N days."),
        f(
            "since_ms",
            Ty::Int,
            false,
            "Only content inside a window from this time, epoch milliseconds, inclusive (said in it, or speaking of a time in it).",
        ),
        f("until_ms", Ty::Int, false, "Only content inside a window up to this time, epoch milliseconds, inclusive; not before since_ms."),
        f(
            "rerank",
            Ty::Bool,
            false,
            "Whether the host's reranker (a cross-encoder), when it runs one, re-scores this walk's top hits (default true). false: walk's own order, and no reranker cost.",
        ),
    ];
    /// The arguments, and the note of a question cut to the cap.
    type Input = (WalkArgs, Option<String>);

    fn parse(a: &Args<'_>) -> Result<(WalkArgs, Option<String>)> {
        let (query, cut) = a.question(a.non_blank("query")?);
        let args = WalkArgs {
            query,
            limit: limit(a)?,
            max_hops: a.int("max_hops")? as u32,
            time_window_days: a.opt_positive("time_window_days")?,
            between_ms: between(a)?,
            params: WalkParams::default(),
            rerank: a.opt_bool("rerank", true)?,
        };
        Ok((args, cut))
    }

    fn run((args, cut): (WalkArgs, Option<String>), on: Target<'_>, scope: &Scope) -> Result<Response> {
        Ok(Response::Query(with_note(walk(on.reader()?, &args, scope)?, cut)))
    }
}

/// `since_ms`..`until_ms`, either open-ended when absent; `None` when neither is given.
fn between(a: &Args<'_>) -> Result<Option<(i64, i64)>> {
    let (since, until) = since_until(a)?;
    Ok((since.is_some() || until.is_some()).then(|| (since.unwrap_or(i64::MIN / 2), until.unwrap_or(i64::MAX / 2))))
}
