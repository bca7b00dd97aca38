//! The field tables of the tools. Each mode of `memory_tree` (and, in `recall.rs`, each op of
//! `memory_recall`) is one [`ModeSpec`] row carrying its names, docs, fields, primary field
//! and the function that builds its request; a `memory_tree` mode's row sits in the mode's
//! own file and [`MODES`] lists them. The argument checks (`args.rs`), the list of valid
//! names, the published JSON Schema (`schema.rs`), the MCP prompt's check and the REPL's
//! commands are all read off the rows, so they cannot drift apart.

use super::Request;
pub(crate) use super::args::{Args, ECHO};
use crate::error::Result;
use crate::text::clip;
use crate::types::SourceKind;

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
    /// The key in the call's JSON object.
    pub name: &'static str,
    /// Its JSON type.
    pub ty: Ty,
    /// Whether a call must give it.
    pub required: bool,
    /// Default of an integer field (0 in the input means this).
    pub default: Option<i64>,
    /// Largest accepted integer; larger values are clamped.
    pub cap: Option<i64>,
    /// Smallest accepted integer; smaller values are an error.
    pub min: Option<i64>,
    /// What it means, for the JSON Schema.
    pub doc: &'static str,
}

/// One mode (or op) of a tool, whose calls become an `R`.
#[derive(Debug)]
pub struct ModeSpec<R: 'static = Request> {
    /// The mode's name (the `mode` or `op` value).
    pub mode: &'static str,
    /// Other names accepted for it (`smart_walk` for `walk`); listed after every mode.
    pub aliases: &'static [&'static str],
    /// When to use it, in one line: the tool's description lists these, one per mode, for the
    /// host's model to pick by (the MCP prompt `memory_agent` says the same at length).
    pub when: &'static str,
    /// What it does, for the JSON Schema.
    pub doc: &'static str,
    /// Its arguments.
    pub fields: &'static [FieldSpec],
    /// The field bare words fill where a mode is typed rather than sent as JSON (the REPL's
    /// `:walk when is the launch` is `query="when is the launch"`); `None`: every field is
    /// named.
    pub primary: Option<&'static str>,
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

/// The `memory_tree` row of a mode name or alias (`smart_walk` → walk's row).
pub fn mode(name: &str) -> Option<&'static ModeSpec> {
    TREE.find(name)
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

pub(crate) const fn f(name: &'static str, ty: Ty, required: bool, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty, required, default: None, cap: None, min: None, doc }
}

pub(crate) const fn int(name: &'static str, default: i64, cap: i64, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty: Ty::Int, required: false, default: Some(default), cap: Some(cap), min: None, doc }
}

/// The one mode that writes (named again by the dispatcher's messages).
pub const INGEST_DOCUMENT: &str = "ingest_document";

/// Every mode, in SPEC order: each row lives in its mode's own file (`retrieval/<mode>.rs`,
/// `retrieval/walk/spec.rs`, `tool/ingest_document.rs`), beside what it parses into.
pub const MODES: &[ModeSpec] = &[
    crate::retrieval::search_entities::SPEC,
    crate::retrieval::query_source::SPEC,
    crate::retrieval::drill_down::SPEC,
    crate::retrieval::cover_window::SPEC,
    crate::retrieval::fetch_leaves::SPEC,
    super::ingest_document::SPEC,
    crate::retrieval::walk::spec::SPEC,
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

// ---- what several rows' parse functions read alike ------------------------------------------

pub(crate) fn limit(a: &Args<'_>) -> Result<usize> {
    a.int("limit").map(|x| x as usize)
}

/// A non-blank source id, trimmed (a blank one means "any source").
pub(crate) fn source_id(a: &Args<'_>) -> Result<Option<String>> {
    Ok(a.opt_str("source_id")?.filter(|s| !s.trim().is_empty()))
}

pub(crate) fn source_kind(a: &Args<'_>) -> Result<Option<SourceKind>> {
    match a.opt_str("source_kind")? {
        None => Ok(None),
        Some(s) => SourceKind::parse(s.trim())
            .map(Some)
            .ok_or_else(|| a.err(&format!("`source_kind` must be chat, email or document, got `{}`", clip(&s, ECHO)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_rows() {
        // Derived, not repeated: every row's name then every alias, each found again.
        let mut want: Vec<&str> = MODES.iter().map(|m| m.mode).collect();
        want.extend(MODES.iter().flat_map(|m| m.aliases.iter().copied()));
        assert_eq!(MODE_NAMES, want);
        assert!(MODE_NAMES.contains(&"walk") && MODE_NAMES.contains(&INGEST_DOCUMENT));
        for m in MODES {
            assert_eq!(mode(m.mode).map(|r| r.mode), Some(m.mode));
            for a in m.aliases {
                assert_eq!(mode(a).map(|r| r.mode), Some(m.mode));
            }
        }
        assert_eq!(mode("smart_walk").map(|m| m.mode), Some("walk"));
        assert!(mode("WALK").is_none());
    }

    #[test]
    fn a_primary_field_is_one_of_the_rows_fields() {
        let rows = MODES.iter().map(|m| (m.mode, m.primary, m.fields));
        for (mode, primary, fields) in
            rows.chain(super::super::recall::OPS.iter().map(|m| (m.mode, m.primary, m.fields)))
        {
            if let Some(p) = primary {
                assert!(fields.iter().any(|f| f.name == p), "{mode}: primary `{p}` is not a field");
            }
        }
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
