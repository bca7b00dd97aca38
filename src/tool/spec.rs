//! The field tables of the tools. Each mode of `memory_tree` (and, in `recall.rs`, each op of
//! `memory_recall`) is one [`ModeSpec`] row carrying its names, docs, fields, primary field
//! and the function that builds its request; a `memory_tree` mode's row is built from its
//! [`Mode`](super::mode::Mode) in `modes/` and [`MODES`] lists them. The argument checks (`args.rs`), the list of valid
//! names, the published JSON Schema (`schema.rs`), the MCP prompt's check and the REPL's
//! commands are all read off the rows, so they cannot drift apart.

use super::Request;
use super::args::{Args, ECHO, kind};
use super::field::FieldSpec;
use crate::error::{Error, Result};
use crate::text::clip;
use serde_json::Value;

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

/// Parse one call of `tool`: the input must be an object naming a known mode (or op); its
/// keys are checked as `tool.checks` says, then the mode's row builds the request.
pub fn parse<R>(tool: &ToolSpec<R>, v: &Value) -> Result<R> {
    let t = tool.name;
    let invalid = |what: String| Error::InvalidRequest { message: format!("{t}: {what}") };
    let Value::Object(obj) = v else {
        return Err(invalid(format!("the input must be a JSON object, got {}", kind(v))));
    };
    let sel = tool.selector;
    if tool.checks == Checks::Shared {
        for k in obj.keys() {
            if k != sel && !tool.modes.iter().any(|m| m.fields.iter().any(|f| f.name == k)) {
                return Err(invalid(format!("unknown field `{}`", clip(k, ECHO))));
            }
        }
    }
    let mode = match (obj.get(sel), tool.default) {
        (Some(Value::String(s)), _) => s.as_str(),
        (None | Some(Value::Null), Some(d)) => d,
        (Some(v), Some(_)) => return Err(invalid(format!("`{sel}` must be a string, got {}", kind(v)))),
        (_, None) => return Err(invalid(format!("`{sel}` is required"))),
    };
    let Some(spec) = tool.find(mode) else {
        return Err(invalid(format!("unknown {sel} `{}`. Valid: {}", clip(mode, ECHO), tool.names.join(", "))));
    };
    let a = Args::new(t, (tool.checks == Checks::PerMode).then_some(mode), spec.fields, obj);
    if tool.checks == Checks::PerMode {
        a.check_keys(sel)?;
    }
    (spec.parse)(&a)
}
