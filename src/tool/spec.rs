//! The field table of every `memory_tree` mode: names, JSON types, defaults, caps and docs.
//! One table drives both the argument parser (`args.rs`) and the published JSON Schema
//! (`schema.rs`), so the two cannot drift apart.

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

/// One mode.
#[derive(Debug, Clone, Copy)]
pub struct ModeSpec {
    pub mode: &'static str,
    pub doc: &'static str,
    pub fields: &'static [FieldSpec],
}

const fn f(name: &'static str, ty: Ty, required: bool, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty, required, default: None, cap: None, min: None, doc }
}

const fn int(name: &'static str, default: i64, cap: i64, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty: Ty::Int, required: false, default: Some(default), cap: Some(cap), min: None, doc }
}

/// Every mode, in SPEC order. `smart_walk` is an alias of `walk` and shares its table.
pub const MODES: &[ModeSpec] = &[
    ModeSpec {
        mode: "search_entities",
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
            f("query", Ty::Str, false, "Rerank by similarity to this text."),
            int("limit", 10, 100, "Maximum hits (default 10, cap 100)."),
        ],
    },
    ModeSpec {
        mode: "drill_down",
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
            f("query", Ty::Str, false, "Rerank the descendants by similarity to this text."),
            int("limit", 50, 500, "Maximum hits (default 50, cap 500)."),
        ],
    },
    ModeSpec {
        mode: "cover_window",
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
        doc: "Full text and source_ref of leaves by id, in input order; unknown ids are skipped.",
        fields: &[f("chunk_ids", Ty::StrArray, true, "Leaf ids; only the first 20 are used.")],
    },
    ModeSpec {
        mode: "ingest_document",
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
        doc: "Answer a natural-language question with ranked evidence leaves, deterministically (no language model): query entities route between global search and a local intersection of entity posting lists.",
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
pub const MODE_NAMES: &[&str] = &[
    "search_entities",
    "query_source",
    "drill_down",
    "cover_window",
    "fetch_leaves",
    "ingest_document",
    "walk",
    "smart_walk",
];

/// The table of a mode (the alias resolves to `walk`).
pub fn mode_spec(mode: &str) -> Option<&'static ModeSpec> {
    let mode = if mode == "smart_walk" { "walk" } else { mode };
    MODES.iter().find(|m| m.mode == mode)
}
