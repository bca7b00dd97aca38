//! One call's JSON arguments, checked against its tool's field table: the object, the mode
//! key, unknown and missing fields, then typed access to each value with the table's defaults
//! and caps, and error messages that name the tool, the mode and the field.

use super::field::{FieldSpec, Ty};
use crate::error::{Error, Result};
use crate::text::clip;
use crate::types::SourceKind;
use serde_json::{Map, Value};

/// At most this many characters of caller text are echoed in an error.
pub const ECHO: usize = 64;

/// Add the tool and the mode to an [`Error::InvalidArgument`] from below the tool (the write
/// path names only the field): the one place besides [`Args::err`] that says which mode.
pub fn in_mode(e: Error, tool: &str, mode: &str) -> Error {
    match e {
        Error::InvalidArgument { field, reason } => {
            Error::InvalidArgument { field: format!("{tool}: {mode}: {field}"), reason }
        }
        other => other,
    }
}

/// The arguments of one call, for its mode's row.
pub struct Args<'a> {
    tool: &'static str,
    /// The mode as the caller spelled it, when errors name it.
    mode: Option<&'a str>,
    fields: &'static [FieldSpec],
    obj: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// The arguments `obj` of one call of `tool`'s mode whose fields are `fields`; `mode` is
    /// the mode as the caller spelled it, when errors name it.
    pub(super) fn new(
        tool: &'static str,
        mode: Option<&'a str>,
        fields: &'static [FieldSpec],
        obj: &'a Map<String, Value>,
    ) -> Args<'a> {
        Args { tool, mode, fields, obj }
    }

    /// Check that every key is a field of the mode (the mode key aside) and every required
    /// field is present.
    pub(super) fn check_keys(&self, selector: &str) -> Result<()> {
        for k in self.obj.keys() {
            if k != selector && !self.fields.iter().any(|f| f.name == k) {
                let known: Vec<&str> = self.fields.iter().map(|f| f.name).collect();
                return Err(self.err(&format!("unknown field `{}` (fields: {})", clip(k, ECHO), known.join(", "))));
            }
        }
        for f in self.fields.iter().filter(|f| f.required) {
            if self.obj.get(f.name).is_none_or(Value::is_null) {
                return Err(self.err(&format!("`{}` is required", f.name)));
            }
        }
        Ok(())
    }

    /// An error naming the tool (and the mode, for a tool whose errors name it).
    pub fn err(&self, what: &str) -> Error {
        let message = match self.mode {
            Some(mode) => format!("{}: {mode}: {what}", self.tool),
            None => format!("{}: {what}", self.tool),
        };
        Error::InvalidRequest { message }
    }

    fn field(&self, name: &str) -> &'static FieldSpec {
        self.fields.iter().find(|f| f.name == name).expect("a row reads only its own fields")
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.obj.get(name).filter(|v| !v.is_null())
    }

    /// An optional string.
    pub fn opt_str(&self, name: &str) -> Result<Option<String>> {
        debug_assert_eq!(self.field(name).ty, Ty::Str);
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(&format!("`{name}` must be a string, got {}", kind(v)))),
        }
    }

    /// A required string.
    pub fn str(&self, name: &str) -> Result<String> {
        self.opt_str(name)?.ok_or_else(|| self.err(&format!("`{name}` is required")))
    }

    /// A required string that must not be blank; a blank one counts as missing.
    pub fn filled(&self, name: &str) -> Result<String> {
        debug_assert!(self.field(name).required);
        self.opt_str(name)?.filter(|s| !s.trim().is_empty()).ok_or_else(|| self.err(&format!("`{name}` is required")))
    }

    /// A required string that must not be blank.
    pub fn non_blank(&self, name: &str) -> Result<String> {
        let s = self.str(name)?;
        if s.trim().is_empty() {
            return Err(self.err(&format!("`{name}` must not be blank")));
        }
        Ok(s)
    }

    /// A question, read up to the cap (`text::cap_question`) here, before the engine sees it:
    /// the text kept and, when it was cut, the note the response's `explain.notes` carries.
    pub fn question(&self, text: String) -> (String, Option<String>) {
        match crate::text::cap_question(&text) {
            (_, None) => (text, None),
            (kept, Some(note)) => (kept.to_string(), Some(note)),
        }
    }

    /// An optional array of strings.
    pub fn str_array(&self, name: &str) -> Result<Option<Vec<String>>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Array(xs)) => xs
                .iter()
                .enumerate()
                .map(|(i, x)| match x {
                    Value::String(s) => Ok(s.clone()),
                    v => Err(self.err(&format!("`{name}[{i}]` must be a string, got {}", kind(v)))),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(v) => Err(self.err(&format!("`{name}` must be an array of strings, got {}", kind(v)))),
        }
    }

    /// The first `n` strings of an array (the rest are not even looked at).
    pub fn str_array_prefix(&self, name: &str, n: usize) -> Result<Vec<String>> {
        match self.get(name) {
            None => Err(self.err(&format!("`{name}` is required"))),
            Some(Value::Array(xs)) => xs
                .iter()
                .take(n)
                .enumerate()
                .map(|(i, x)| match x {
                    Value::String(s) => Ok(s.clone()),
                    v => Err(self.err(&format!("`{name}[{i}]` must be a string, got {}", kind(v)))),
                })
                .collect(),
            Some(v) => Err(self.err(&format!("`{name}` must be an array of strings, got {}", kind(v)))),
        }
    }

    /// An integer as given (integral floats accepted), or `None` when absent.
    pub fn raw_int(&self, name: &str) -> Result<Option<i64>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                if let Some(i) = n.as_i64() {
                    Ok(Some(i))
                } else if n.as_u64().is_some() {
                    Ok(Some(i64::MAX))
                } else {
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    if f.is_finite() && f.fract() == 0.0 {
                        Ok(Some(f.clamp(i64::MIN as f64, i64::MAX as f64) as i64))
                    } else {
                        Err(self.err(&format!("`{name}` must be an integer, got {n}")))
                    }
                }
            }
            Some(v) => Err(self.err(&format!("`{name}` must be an integer, got {}", kind(v)))),
        }
    }

    /// An integer field with its table default and cap: absent or 0 → the default (SPEC: 0
    /// means the default), above the cap → the cap; below `min` (0 when the table names
    /// none) → error. The published schema says the same (`minimum`), so a caller that
    /// validates against it and this parser agree on every value.
    pub fn int(&self, name: &str) -> Result<i64> {
        let f = self.field(name);
        let v = self.raw_int(name)?;
        let min = f.min.unwrap_or(0);
        if let Some(x) = v
            && x < min
        {
            let zero = if min == 0 { " (0 means the default)" } else { "" };
            return Err(self.err(&format!("`{name}` must be at least {min}{zero}, got {x}")));
        }
        let d = f.default.unwrap_or(0);
        let x = match v {
            None | Some(0) => d,
            Some(x) => x,
        };
        Ok(f.cap.map_or(x, |c| x.min(c)))
    }

    /// An optional boolean: `default` when absent or null. Only JSON `true` and `false` are
    /// booleans: `"false"` or `0` is an error, not a guess.
    pub fn opt_bool(&self, name: &str, default: bool) -> Result<bool> {
        debug_assert_eq!(self.field(name).ty, Ty::Bool);
        match self.get(name) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.err(&format!("`{name}` must be true or false, got {}", kind(v)))),
        }
    }

    /// An optional number ≥ 0 (0 or absent → `None`).
    pub fn opt_positive(&self, name: &str) -> Result<Option<f64>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => {
                let x = n.as_f64().unwrap_or(0.0);
                if x < 0.0 || !x.is_finite() {
                    Err(self.err(&format!("`{name}` must be a positive number, got {n}")))
                } else if x == 0.0 {
                    Ok(None)
                } else {
                    // More than 10,000 years is "everything".
                    Ok(Some(x.min(3_650_000.0)))
                }
            }
            Some(v) => Err(self.err(&format!("`{name}` must be a number, got {}", kind(v)))),
        }
    }
}

/// The JSON type of a value, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// ---- what several modes read alike ----------------------------------------------------------

/// The `limit` field.
pub(crate) fn limit(a: &Args<'_>) -> Result<usize> {
    a.int("limit").map(|x| x as usize)
}

/// A non-blank source id, trimmed (a blank one means "any source").
pub(crate) fn source_id(a: &Args<'_>) -> Result<Option<String>> {
    Ok(a.opt_str("source_id")?.filter(|s| !s.trim().is_empty()))
}

/// The `source_kind` field, parsed.
pub(crate) fn source_kind(a: &Args<'_>) -> Result<Option<SourceKind>> {
    match a.opt_str("source_kind")? {
        None => Ok(None),
        Some(s) => SourceKind::parse(s.trim())
            .map(Some)
            .ok_or_else(|| a.err(&format!("`source_kind` must be chat, email or document, got `{}`", clip(&s, ECHO)))),
    }
}

/// The `since_ms` and `until_ms` fields (epoch ms, inclusive), each when given; `until_ms`
/// before `since_ms` is the error.
pub(crate) fn since_until(a: &Args<'_>) -> Result<(Option<i64>, Option<i64>)> {
    let (since, until) = (a.raw_int("since_ms")?, a.raw_int("until_ms")?);
    if let (Some(s), Some(u)) = (since, until)
        && u < s
    {
        return Err(a.err(&format!("`until_ms` ({u}) is before `since_ms` ({s})")));
    }
    Ok((since, until))
}

/// `r` with `note` (a question cut by [`Args::question`]) first in its `explain.notes`.
pub fn with_note(mut r: crate::retrieval::QueryResponse, note: Option<String>) -> crate::retrieval::QueryResponse {
    let Some(note) = note else { return r };
    let explain = r.explain.get_or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(o) = explain {
        match o.get_mut("notes") {
            Some(Value::Array(notes)) => notes.insert(0, Value::String(note)),
            _ => {
                o.insert("notes".into(), Value::Array(vec![Value::String(note)]));
            }
        }
    }
    r
}
