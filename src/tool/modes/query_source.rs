//! `query_source`: one source or one kind of source, newest first.

use crate::error::Result;
use crate::retrieval::{QuerySourceArgs, Scope, query_source};
use crate::tool::mode::{Mode, Target};
use crate::tool::args::{Args, limit, source_id, source_kind, with_note};
use crate::tool::field::{FieldSpec, Ty, f, int};
use crate::tool::Response;

/// The mode.
pub(crate) struct QuerySource;

impl Mode for QuerySource {
    const NAME: &'static str = "query_source";
    const WHEN: &'static str = "One source or one kind of source, newest first: \"my Slack #eng last week\" is source_id=slack:#eng, time_window_days=7.";
    const DOC: &'static str = "Summaries (and not-yet-summarised newest leaves) of one source or one kind of source, newest first, or reranked by similarity to `query`.";
    const PRIMARY: Option<&'static str> = Some("query");
    const FIELDS: &'static [FieldSpec] = &[
            f("source_id", Ty::Str, false, "Exact source, e.g. `slack:#eng`, `gmail:thread-8812`."),
            f(
                "source_kind",
                Ty::Str,
                false,
                "`chat`, `email` or `document`; also matches platform prefixes (slack:, discord: → chat; gmail:, imap: → email; notion:, drive: → document).",
            ),
            f("time_window_days", Ty::Num, false, "Only content from the last N days."),
            f(
                "query",
                Ty::Str,
                false,
                "Rerank by similarity to this text; hits of long leaves then carry `snippet`, the passage that matches it best.",
            ),
            int("limit", 10, 100, "Maximum hits (default 10, cap 100)."),
        ];
    /// The arguments, and the note of a question cut to the cap.
    type Input = (QuerySourceArgs, Option<String>);

    fn parse(a: &Args<'_>) -> Result<(QuerySourceArgs, Option<String>)> {
        let (query, cut) = match a.opt_str("query")? {
            Some(q) => {
                let (q, cut) = a.question(q);
                (Some(q), cut)
            }
            None => (None, None),
        };
        let args = QuerySourceArgs {
            source_id: source_id(a)?,
            source_kind: source_kind(a)?,
            time_window_days: a.opt_positive("time_window_days")?,
            query,
            limit: limit(a)?,
        };
        Ok((args, cut))
    }

    fn run((args, cut): (QuerySourceArgs, Option<String>), on: Target<'_>, scope: &Scope) -> Result<Response> {
        Ok(Response::Query(with_note(query_source(on.reader()?, &args, scope)?, cut)))
    }
}
