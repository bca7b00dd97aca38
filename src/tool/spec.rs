//! The field tables of the tools. Each mode of `memory_tree` (and, in `recall.rs`, each op of
//! `memory_recall`) is one [`ModeSpec`] row carrying its names, docs, fields and the function
//! that builds its request; the argument checks (`args.rs`), the list of valid names and the
//! published JSON Schema (`schema.rs`) are all read off the rows, so they cannot drift apart.

use super::Request;
use super::args::{Args, ECHO};
use crate::error::Result;
use crate::ingest::Document;
use crate::retrieval::{
    CoverWindowArgs, DrillDownArgs, FETCH_LEAVES_MAX, FetchLeavesArgs, QuerySourceArgs, SearchEntitiesArgs, WalkArgs,
    WalkParams,
};
use crate::text::clip;
use crate::types::{EntityKind, SourceKind};

/// JSON type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A string.
    Str,
    /// An integer (integral floats accepted; clamped to the cap).
    Int,
    /// A number.
    Num,
    /// An array of strings.
    StrArray,
}

impl Ty {
    /// The JSON Schema type name.
    pub fn json_type(self) -> &'static str {
        match self {
            Ty::Str => "string",
            Ty::Int => "integer",
            Ty::Num => "number",
            Ty::StrArray => "array",
        }
    }
}

/// One argument of a mode.
#[derive(Debug, Clone, Copy)]
pub struct FieldSpec {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
    /// Default of an integer field (0 in the input means this).
    pub default: Option<i64>,
    /// Largest accepted integer; larger values are clamped.
    pub cap: Option<i64>,
    /// Smallest accepted integer; smaller values are an error.
    pub min: Option<i64>,
    pub doc: &'static str,
}

/// One mode (or op) of a tool, whose calls become an `R`.
#[derive(Debug)]
pub struct ModeSpec<R: 'static = Request> {
    pub mode: &'static str,
    /// Other names accepted for it (`smart_walk` for `walk`); listed after every mode.
    pub aliases: &'static [&'static str],
    /// When to use it, in one line: the tool's description lists these, one per mode, for the
    /// host's model to pick by (the MCP prompt `memory_agent` says the same at length).
    pub when: &'static str,
    pub doc: &'static str,
    pub fields: &'static [FieldSpec],
    /// Build the request from arguments whose keys (and, for `memory_tree`, required fields)
    /// are already checked; values are read, and refused, through [`Args`].
    pub parse: fn(&Args<'_>) -> Result<R>,
}

// By hand: a derive would ask `R: Copy` although only a function pointer holds an `R`.
impl<R> Clone for ModeSpec<R> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<R> Copy for ModeSpec<R> {}

/// How a tool checks the keys of a call before its row reads the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checks {
    /// `memory_tree`: once the mode is known, a key outside its fields is refused (listing
    /// them) and every required field must be present; errors name the tool and the mode.
    PerMode,
    /// `memory_recall`: a key outside every op's fields is refused before the op is read;
    /// the row enforces its required fields as it reads them (a blank string counts as
    /// missing); errors name the tool only.
    Shared,
}

/// A tool: its name, the key that picks the mode, and one row per mode.
#[derive(Debug)]
pub struct ToolSpec<R: 'static> {
    pub name: &'static str,
    pub doc: &'static str,
    /// The key naming the mode: `mode` (`memory_tree`), `op` (`memory_recall`).
    pub selector: &'static str,
    /// The mode when the selector is absent or null; `None` makes the selector required.
    pub default: Option<&'static str>,
    pub checks: Checks,
    pub modes: &'static [ModeSpec<R>],
    /// Every accepted name: the modes in table order, then the aliases (see [`mode_names`]).
    pub names: &'static [&'static str],
}

impl<R> ToolSpec<R> {
    /// The row of a mode name or alias.
    pub fn find(&self, name: &str) -> Option<&'static ModeSpec<R>> {
        self.modes.iter().find(|m| m.mode == name || m.aliases.contains(&name))
    }
}

/// How many names [`mode_names`] lists for `modes`.
pub const fn name_count<R>(modes: &[ModeSpec<R>]) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < modes.len() {
        n += 1 + modes[i].aliases.len();
        i += 1;
    }
    n
}

/// Every name of `modes` (`N` from [`name_count`]): the modes in table order, then every
/// alias. A `const fn` so that the public [`MODE_NAMES`] stays a plain slice.
pub const fn mode_names<R, const N: usize>(modes: &[ModeSpec<R>]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut k) = (0, 0);
    while i < modes.len() {
        out[k] = modes[i].mode;
        k += 1;
        i += 1;
    }
    i = 0;
    while i < modes.len() {
        let mut j = 0;
        while j < modes[i].aliases.len() {
            out[k] = modes[i].aliases[j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(k == N, "N must be name_count(modes)");
    out
}

pub(super) const fn f(name: &'static str, ty: Ty, required: bool, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty, required, default: None, cap: None, min: None, doc }
}

pub(super) const fn int(name: &'static str, default: i64, cap: i64, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty: Ty::Int, required: false, default: Some(default), cap: Some(cap), min: None, doc }
}

/// The one mode that writes (named again by the dispatcher's messages).
pub const INGEST_DOCUMENT: &str = "ingest_document";

/// Every mode, in SPEC order.
pub const MODES: &[ModeSpec] = &[
    ModeSpec {
        mode: "search_entities",
        when: "A named person, organisation, project, hashtag or address: resolve it here first, then ask with its canonical id and spelling.",
        aliases: &[],
        parse: search_entities,
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
    },
    ModeSpec {
        mode: "query_source",
        when: "One source or one kind of source, newest first: \"my Slack #eng last week\" is source_id=slack:#eng, time_window_days=7.",
        aliases: &[],
        parse: query_source,
        doc: "Summaries (and not-yet-summarised newest leaves) of one source or one kind of source, newest first, or reranked by similarity to `query`.",
        fields: &[
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
        ],
    },
    ModeSpec {
        mode: "drill_down",
        when: "A summary hit worth opening: what it summarises, level by level.",
        aliases: &[],
        parse: drill_down,
        doc: "Open a summary: its descendants breadth first, depth by depth; optionally reranked by `query` before truncation. A leaf or unknown id gives no hits.",
        fields: &[
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
        ],
    },
    ModeSpec {
        mode: "cover_window",
        when: "Everything in a span of time (\"the last 24 hours\", \"on May 13\"): since_ms..until_ms.",
        aliases: &[],
        parse: cover_window,
        doc: "The minimal set of nodes covering a time window: the topmost summaries lying wholly inside it plus in-window leaves no such summary covers; ordered by time.",
        fields: &[
            FieldSpec {
                name: "since_ms",
                ty: Ty::Int,
                required: true,
                default: None,
                cap: None,
                min: None,
                doc: "Window start, epoch milliseconds, inclusive.",
            },
            FieldSpec {
                name: "until_ms",
                ty: Ty::Int,
                required: true,
                default: None,
                cap: None,
                min: None,
                doc: "Window end, epoch milliseconds, inclusive; not before since_ms.",
            },
            f("source_id", Ty::Str, false, "Only this source."),
            f("source_kind", Ty::Str, false, "Only this kind of source (`chat`, `email`, `document`)."),
            int("limit", 200, 1000, "Maximum nodes (default 200, cap 1000); sources take turns so none is starved."),
        ],
    },
    ModeSpec {
        mode: "fetch_leaves",
        when: "Before quoting or citing: the full text and source_ref of leaf ids from any hit list.",
        aliases: &[],
        parse: fetch_leaves,
        doc: "Full text and source_ref of leaves by id, in input order; unknown ids are skipped.",
        fields: &[f("chunk_ids", Ty::StrArray, true, "Leaf ids; only the first 20 are used.")],
    },
    ModeSpec {
        mode: INGEST_DOCUMENT,
        when: "Store a note or document the user hands over (the one mode that writes).",
        aliases: &[],
        parse: ingest_document,
        doc: "Store a document (note, page, file), replacing any earlier version with the same source_id atomically.",
        fields: &[
            f("title", Ty::Str, true, "Title (non-blank)."),
            f("body", Ty::Str, true, "Full text (non-blank)."),
            f("source_id", Ty::Str, true, "Stable id, e.g. `doc:notes/roadmap.md`, `notion:page-123` (non-blank)."),
            f("provider", Ty::Str, false, "Where it lives: notion, drive, obsidian…"),
            f("source_ref", Ty::Str, false, "Path or URL back to the original."),
        ],
    },
    ModeSpec {
        mode: "walk",
        when: "A one-shot question in plain words: ranked evidence; the default when no other mode fits.",
        aliases: &["smart_walk"],
        parse: walk,
        doc: "Answer a natural-language question with ranked evidence leaves, deterministically (no language model): query entities route between global search and a local intersection of entity posting lists. A hit of a long leaf carries `snippet` {text, start, end}: the passage that best matches the question, `start`/`end` being character (Unicode scalar value) offsets into `content`; read it first to save context. A question that names a time (\"yesterday\", \"last week\", \"on May 13\", \"in spring 2023\", \"between May 1 and 10\"; relative times read against the engine's clock) is answered from inside that window only: no hit from other dates. A question about a time and nothing else (\"what happened yesterday?\") returns the window's topmost summaries first (one per source a round), then its most salient leaves, then the rest in time order. The response's `explain` {time_window, time_only, notes} says how the time was read; an empty `hits` with a note means nothing lies inside the window (or a date that is not one, e.g. February 30).",
        fields: &[
            f("query", Ty::Str, true, "The question (non-blank)."),
            int("limit", 10, 100, "Maximum hits (default 10, cap 100)."),
            int(
                "max_hops",
                2,
                4,
                "Hop bound for relating query entities in the co-occurrence graph (default 2, cap 4).",
            ),
            f("time_window_days", Ty::Num, false, "Only content from the last N days."),
        ],
    },
];

/// Every accepted mode string, in SPEC order (walk's alias last).
pub const MODE_NAMES: &[&str] = &mode_names::<Request, { name_count(MODES) }>(MODES);

/// The `memory_tree` tool.
pub static TREE: ToolSpec<Request> = ToolSpec {
    name: "memory_tree",
    doc: "Deterministic retrieval over the user's long-term memory (chat, e-mail, documents): pick a `mode`. No language model runs behind it; answers come in milliseconds.",
    selector: "mode",
    default: None,
    checks: Checks::PerMode,
    modes: MODES,
    names: MODE_NAMES,
};

// ---- the rows' parse functions, in table order ----------------------------------------------

fn limit(a: &Args<'_>) -> Result<usize> {
    a.int("limit").map(|x| x as usize)
}

/// A non-blank source id, trimmed (a blank one means "any source").
fn source_id(a: &Args<'_>) -> Result<Option<String>> {
    Ok(a.opt_str("source_id")?.filter(|s| !s.trim().is_empty()))
}

fn source_kind(a: &Args<'_>) -> Result<Option<SourceKind>> {
    match a.opt_str("source_kind")? {
        None => Ok(None),
        Some(s) => SourceKind::parse(s.trim())
            .map(Some)
            .ok_or_else(|| a.err(&format!("`source_kind` must be chat, email or document, got `{}`", clip(&s, ECHO)))),
    }
}

fn search_entities(a: &Args<'_>) -> Result<Request> {
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

fn query_source(a: &Args<'_>) -> Result<Request> {
    Ok(Request::QuerySource(QuerySourceArgs {
        source_id: source_id(a)?,
        source_kind: source_kind(a)?,
        time_window_days: a.opt_positive("time_window_days")?,
        query: a.opt_str("query")?,
        limit: limit(a)?,
    }))
}

fn drill_down(a: &Args<'_>) -> Result<Request> {
    // 0 means "the default" for every other integer (SPEC), but a depth of 0 is a mistake.
    if a.raw_int("max_depth")? == Some(0) {
        return Err(a.err("`max_depth` must be at least 1, got 0"));
    }
    Ok(Request::DrillDown(DrillDownArgs {
        node_id: a.str("node_id")?,
        max_depth: a.int("max_depth")? as u32,
        query: a.opt_str("query")?,
        limit: limit(a)?,
    }))
}

fn cover_window(a: &Args<'_>) -> Result<Request> {
    let since = a.raw_int("since_ms")?.ok_or_else(|| a.err("`since_ms` is required"))?;
    let until = a.raw_int("until_ms")?.ok_or_else(|| a.err("`until_ms` is required"))?;
    if until < since {
        return Err(a.err(&format!("`until_ms` ({until}) is before `since_ms` ({since})")));
    }
    Ok(Request::CoverWindow(CoverWindowArgs {
        since_ms: since,
        until_ms: until,
        source_id: source_id(a)?,
        source_kind: source_kind(a)?,
        limit: limit(a)?,
    }))
}

fn fetch_leaves(a: &Args<'_>) -> Result<Request> {
    Ok(Request::FetchLeaves(FetchLeavesArgs { chunk_ids: a.str_array_prefix("chunk_ids", FETCH_LEAVES_MAX)? }))
}

fn ingest_document(a: &Args<'_>) -> Result<Request> {
    // The write path checks the rest (a source id's length, NUL) and names the field; the
    // dispatcher adds the mode (`tool::call`).
    Ok(Request::IngestDocument(Document {
        source_id: a.non_blank("source_id")?.trim().into(),
        title: a.non_blank("title")?,
        body: a.non_blank("body")?,
        modified_ms: None,
        source_ref: a.opt_str("source_ref")?,
        provider: a.opt_str("provider")?,
    }))
}

fn walk(a: &Args<'_>) -> Result<Request> {
    Ok(Request::Walk(WalkArgs {
        query: a.non_blank("query")?,
        limit: limit(a)?,
        max_hops: a.int("max_hops")? as u32,
        time_window_days: a.opt_positive("time_window_days")?,
        params: WalkParams::default(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_rows() {
        let want = [
            "search_entities",
            "query_source",
            "drill_down",
            "cover_window",
            "fetch_leaves",
            "ingest_document",
            "walk",
            "smart_walk",
        ];
        assert_eq!(MODE_NAMES, want);
        assert_eq!(TREE.find("smart_walk").map(|m| m.mode), Some("walk"));
        assert!(TREE.find("WALK").is_none());
    }

    #[test]
    fn every_mode_says_in_one_line_when_to_use_it_and_the_description_lists_them() {
        let tools = [
            (crate::tool::memory_tree_schema(), MODES.iter().map(|m| (m.mode, m.when)).collect::<Vec<_>>()),
            (crate::tool::memory_recall_schema(), super::super::recall::OPS.iter().map(|m| (m.mode, m.when)).collect()),
        ];
        for (def, rows) in tools {
            let description = def["description"].as_str().unwrap();
            for (mode, when) in rows {
                assert!(!when.trim().is_empty() && !when.contains('\n') && when.len() <= 160, "{mode}: {when:?}");
                let line = description.lines().find(|l| l.starts_with(&format!("- {mode}")));
                assert!(line.is_some_and(|l| l.ends_with(&format!(": {when}"))), "{mode} in:\n{description}");
            }
        }
        assert!(
            crate::tool::memory_tree_schema()["description"].as_str().unwrap().contains("- walk (also smart_walk): ")
        );
    }

    #[test]
    fn every_row_has_distinct_fields_and_integer_rules_only_on_integers() {
        for m in MODES {
            for (i, f) in m.fields.iter().enumerate() {
                assert!(m.fields[..i].iter().all(|g| g.name != f.name), "{}.{} twice", m.mode, f.name);
                if f.default.is_some() || f.cap.is_some() || f.min.is_some() {
                    assert_eq!(f.ty, Ty::Int, "{}.{}", m.mode, f.name);
                }
            }
        }
    }
}
