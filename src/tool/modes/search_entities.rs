//! `search_entities`: named things whose id or surface contains the query.

use crate::error::Result;
use crate::retrieval::{SearchEntitiesArgs, Scope, search_entities};
use crate::text::clip;
use crate::tool::mode::{Mode, Target};
use crate::tool::args::{Args, ECHO, limit};
use crate::tool::field::{FieldSpec, Ty, f, int};
use crate::tool::Response;
use crate::types::EntityKind;

/// The mode.
pub(crate) struct SearchEntities;

impl Mode for SearchEntities {
    const NAME: &'static str = "search_entities";
    const WHEN: &'static str = "A named person, organisation, project, hashtag or address: resolve it here first, then ask with its canonical id and spelling.";
    const DOC: &'static str = "Find entities (people, organisations, e-mails, handles, hashtags, topics…) whose id or surface contains `query`, case-insensitively; most-mentioned first, then most recent.";
    const PRIMARY: Option<&'static str> = Some("query");
    const FIELDS: &'static [FieldSpec] = &[
            f("query", Ty::Str, true, "Substring to look for; `%`, `_` and `\\` are literal. Blank returns []."),
            f(
                "kinds",
                Ty::StrArray,
                false,
                "Only these entity kinds: email url handle hashtag person organization location event product datetime technology artifact quantity misc topic.",
            ),
            int("limit", 5, 100, "Maximum matches (default 5, cap 100)."),
        ];
    type Input = SearchEntitiesArgs;

    fn parse(a: &Args<'_>) -> Result<SearchEntitiesArgs> {
        let kinds = a
            .str_array("kinds")?
            .unwrap_or_default()
            .iter()
            .map(|k| {
                EntityKind::parse(k.trim().to_ascii_lowercase().as_str())
                    .ok_or_else(|| a.err(&format!("`kinds`: unknown entity kind `{}`", clip(k, ECHO))))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SearchEntitiesArgs { query: a.str("query")?, kinds, limit: limit(a)? })
    }

    fn run(args: SearchEntitiesArgs, on: Target<'_>, scope: &Scope) -> Result<Response> {
        Ok(Response::Entities(search_entities(on.reader()?, &args, scope)?))
    }
}
