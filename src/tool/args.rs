//! Typed access to one mode's JSON arguments, driven by the field table: type checks, the
//! defaults and caps, and error messages that name the mode and the field.

use super::spec::{FieldSpec, ModeSpec, Ty};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// The arguments of one call.
pub struct Args<'a> {
    tool: &'static str,
    spec: &'static ModeSpec,
    mode: &'a str,
    obj: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// Check that every key is known to the mode (`mode` itself aside) and every required
    /// field is present.
    pub fn new(
        tool: &'static str,
        spec: &'static ModeSpec,
        mode: &'a str,
        obj: &'a Map<String, Value>,
    ) -> Result<Self> {
        let a = Args { tool, spec, mode, obj };
        for k in obj.keys() {
            if k != "mode" && !spec.fields.iter().any(|f| f.name == k) {
                let known: Vec<&str> = spec.fields.iter().map(|f| f.name).collect();
                return Err(a.err(&format!("unknown field `{}` (fields: {})", truncate(k), known.join(", "))));
            }
        }
        for f in spec.fields.iter().filter(|f| f.required) {
            if obj.get(f.name).is_none_or(Value::is_null) {
                return Err(a.err(&format!("`{}` is required", f.name)));
            }
        }
        Ok(a)
    }

    /// An error naming the tool and mode.
    pub fn err(&self, what: &str) -> Error {
        Error::InvalidRequest { message: format!("{}: {}: {what}", self.tool, self.mode) }
    }

    fn field(&self, name: &str) -> &'static FieldSpec {
        self.spec.fields.iter().find(|f| f.name == name).expect("field names come from the same table")
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

    /// A required string that must not be blank.
    pub fn non_blank(&self, name: &str) -> Result<String> {
        let s = self.str(name)?;
        if s.trim().is_empty() {
            return Err(self.err(&format!("`{name}` must not be blank")));
        }
        Ok(s)
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

    /// An integer field with its table default and cap: absent, 0 or negative → the default
    /// (SPEC: 0 means the default), above the cap → the cap; below `min` → error.
    pub fn int(&self, name: &str) -> Result<i64> {
        let f = self.field(name);
        let v = self.raw_int(name)?;
        if let (Some(min), Some(x)) = (f.min, v)
            && x < min
        {
            return Err(self.err(&format!("`{name}` must be at least {min}, got {x}")));
        }
        let d = f.default.unwrap_or(0);
        let x = match v {
            None => d,
            Some(x) if x <= 0 => d,
            Some(x) => x,
        };
        Ok(f.cap.map_or(x, |c| x.min(c)))
    }

    /// An optional positive number (0 or absent → `None`).
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

/// Echo at most 64 characters of caller text in an error.
pub fn truncate(s: &str) -> String {
    if s.chars().count() <= 64 { s.to_string() } else { format!("{}…", s.chars().take(64).collect::<String>()) }
}
