//! `search_entities`: case-insensitive substring search over entity ids and surfaces.

use super::hit::{EntityMatch, Scope};
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::EntityReads;
use crate::types::EntityKind;

/// Arguments (already validated and clamped by the tool layer).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchEntitiesArgs {
    /// Substring to find; `%`, `_` and `\` are literal. Blank → no matches.
    pub query: String,
    /// Only these kinds (empty = all).
    pub kinds: Vec<EntityKind>,
    /// At most this many.
    pub limit: usize,
}

/// Most-mentioned first, then most recent, then id. Under a scope gate, counts and recency
/// come from the allowed sources' leaves only, and entities seen only elsewhere are hidden.
pub fn search_entities(mem: &MemoryReader, args: &SearchEntitiesArgs, scope: &Scope) -> Result<Vec<EntityMatch>> {
    let q = args.query.trim();
    if q.is_empty() || args.limit == 0 {
        return Ok(Vec::new());
    }
    let rows = match &scope.0 {
        None => mem.store().search_entities(q, &args.kinds, args.limit)?,
        Some(s) if s.is_empty() => Vec::new(),
        Some(s) => {
            let scopes: Vec<String> = s.iter().cloned().collect();
            mem.store().search_entities_scoped(q, &args.kinds, &scopes, args.limit)?
        }
    };
    Ok(rows
        .into_iter()
        .map(|e| EntityMatch {
            canonical_id: e.entity_id.0,
            kind: e.kind.as_str().into(),
            surface: e.surface,
            mention_count: e.mention_count,
            last_seen_ms: e.last_seen_ms,
        })
        .collect())
}

// ---- its row of the `memory_tree` table (`tool::spec::MODES`) --------------------------------

use crate::text::clip;
use crate::tool::Request;
use crate::tool::spec::{Args, ECHO, ModeSpec, Ty, f, int, limit};

/// This mode's row: its names, docs, fields, primary field and parser.
pub(crate) const SPEC: ModeSpec = ModeSpec {
    mode: "search_entities",
    when: "A named person, organisation, project, hashtag or address: resolve it here first, then ask with its canonical id and spelling.",
    aliases: &[],
    primary: Some("query"),
    parse,
    doc: "Find entities (people, organisations, e-mails, handles, hashtags, topics…) whose id or surface contains `query`, case-insensitively; most-mentioned first, then most recent.",
    fields: &[
        f("query", Ty::Str, true, "Substring to look for; `%`, `_` and `\\` are literal. Blank returns []."),
        f(
            "kinds",
            Ty::StrArray,
            false,
            "Only these entity kinds: email url handle hashtag person organization location event product datetime technology artifact quantity misc topic.",
        ),
        int("limit", 5, 100, "Maximum matches (default 5, cap 100)."),
    ],
};

fn parse(a: &Args<'_>) -> Result<Request> {
    let kinds = a
        .str_array("kinds")?
        .unwrap_or_default()
        .iter()
        .map(|k| {
            EntityKind::parse(k.trim().to_ascii_lowercase().as_str())
                .ok_or_else(|| a.err(&format!("`kinds`: unknown entity kind `{}`", clip(k, ECHO))))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Request::SearchEntities(SearchEntitiesArgs { query: a.str("query")?, kinds, limit: limit(a)? }))
}
