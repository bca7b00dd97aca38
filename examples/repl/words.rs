//! A command line's words into a call: `key=value` pairs typed as the mode's fields want
//! them, bare words into the mode's primary field, row numbers into node ids, `FROM..TO`
//! windows, `:import`'s trailing flags. The field types and primary fields are read off the
//! tool's rows (`memtree::tool::MODES`, `RECALL_OPS`), so a new field or mode needs nothing
//! here.

use crate::render::time;
use anyhow::{Result, anyhow, bail};
use memtree::ImportOptions;
use memtree::tool::{self, FieldSpec, RECALL_OPS};
use serde_json::{Map, Value, json};

/// The first word and the rest, trimmed.
pub fn first(s: &str) -> (&str, &str) {
    match s.split_once(char::is_whitespace) {
        Some((w, rest)) => (w, rest.trim()),
        None => (s, ""),
    }
}

/// A node id from a row number of the last table (`3` or `#3`), a unique prefix of one of its
/// ids, or a full id (an unknown one is the engine's to refuse).
pub fn node_id(rows: &[String], token: &str) -> Result<String> {
    let token = token.trim_start_matches('#');
    if let Ok(n) = token.parse::<usize>() {
        let row = rows.get(n.wrapping_sub(1)).cloned();
        return row.ok_or_else(|| anyhow!("no row {n} in the last result ({} rows)", rows.len()));
    }
    match rows.iter().filter(|id| id.starts_with(token)).collect::<Vec<_>>().as_slice() {
        [one] => Ok(one.to_string()),
        _ => Ok(token.to_string()),
    }
}

/// A `memory_tree` call of `mode` from `key=value ...` (see [`key_values`]).
pub fn call(mode: &str, s: &str) -> Result<Map<String, Value>> {
    let mut args = key_values(mode, s)?;
    args.insert("mode".into(), json!(mode));
    Ok(args)
}

/// Split on white space outside quotes and brackets; double-quoted text keeps its quotes (so it
/// parses as a JSON string), single quotes are removed.
fn tokens(s: &str) -> Result<Vec<String>> {
    let (mut out, mut cur) = (Vec::new(), String::new());
    let (mut quote, mut depth, mut escaped) = (None::<char>, 0i32, false);
    for c in s.chars() {
        match quote {
            Some(q) => {
                if q == '"' && escaped {
                    escaped = false;
                } else if q == '"' && c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                    if q == '\'' {
                        continue;
                    }
                }
                cur.push(c);
                continue;
            }
            None => match c {
                '"' => quote = Some('"'),
                '\'' => {
                    quote = Some('\'');
                    continue;
                }
                '[' | '{' => depth += 1,
                ']' | '}' => depth -= 1,
                c if c.is_whitespace() && depth <= 0 => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    continue;
                }
                _ => {}
            },
        }
        cur.push(c);
    }
    if let Some(q) = quote {
        bail!("unclosed {q} quote");
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

/// The JSON type a mode's field takes, from the dispatcher's field tables (`memory_recall`:
/// any op's field of that name).
fn field_type(mode: &str, key: &str) -> Option<&'static str> {
    let fields: Vec<&FieldSpec> = if mode == "memory_recall" {
        RECALL_OPS.iter().flat_map(|o| o.fields).collect()
    } else {
        tool::mode(mode)?.fields.iter().collect()
    };
    fields.into_iter().find(|f| f.name == key).map(|f| f.ty.json_type())
}

/// The field that bare words fill, from the mode's row: `:walk when is the launch` =
/// `:walk query="when is the launch"` (`:recall` words go to the `search` op's).
fn primary_field(mode: &str) -> Option<&'static str> {
    if mode == "memory_recall" {
        return RECALL_OPS.first()?.primary;
    }
    tool::mode(mode)?.primary
}

/// `key=value ...` into a JSON object: values are JSON when they parse (unless the field is a
/// string), else strings; bare words extend the previous string value or fill the primary
/// field.
pub fn key_values(mode: &str, s: &str) -> Result<Map<String, Value>> {
    let mut out = Map::new();
    let mut last_string: Option<String> = None;
    for tok in tokens(s)? {
        let kv = tok
            .split_once('=')
            .filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if let Some((k, raw)) = kv {
            let parsed = serde_json::from_str::<Value>(raw).ok();
            let v = match (parsed, field_type(mode, k)) {
                (Some(Value::String(s)), _) => Value::String(s),
                (Some(_), Some("string")) | (None, _) => Value::String(raw.to_string()),
                (Some(v), _) => v,
            };
            last_string = v.is_string().then(|| k.to_string());
            out.insert(k.to_string(), v);
            continue;
        }
        let word = tok.trim_matches('"').to_string();
        if let Some(k) = &last_string
            && let Some(Value::String(prev)) = out.get_mut(k)
        {
            prev.push(' ');
            prev.push_str(&word);
            continue;
        }
        match primary_field(mode) {
            Some("chunk_ids") => {
                let ids = out.entry("chunk_ids").or_insert_with(|| json!([]));
                ids.as_array_mut().ok_or_else(|| anyhow!("chunk_ids given twice"))?.push(json!(word));
            }
            Some(p) if !out.contains_key(p) => {
                out.insert(p.to_string(), json!(word));
                last_string = Some(p.to_string());
            }
            _ => bail!("expected key=value, got `{tok}` (fields of {mode}: see :help or the JSON Schema)"),
        }
    }
    Ok(out)
}

/// `2023-05-01..2023-05-08` (whole days, inclusive, UTC), a single day, or RFC 3339 instants
/// (or epoch ms, as the CLI's `--since`/`--until`).
pub fn window(s: &str) -> Result<(i64, i64)> {
    let usage = || anyhow!("usage: :window FROM..TO, e.g. 2023-05-01..2023-05-08 (dates or RFC 3339 times)");
    let (a, b) = s.split_once("..").unwrap_or((s, s));
    if a.trim().is_empty() || b.trim().is_empty() {
        return Err(usage());
    }
    Ok((time::bound(a, false).map_err(|_| usage())?, time::bound(b, true).map_err(|_| usage())?))
}

/// `:import`'s path and its trailing `--prune` (a notes folder) / `--strict` (any format), as
/// the CLI takes them.
pub fn import_flags(path: &str) -> (&str, ImportOptions) {
    let mut path = path.trim();
    let mut opts = ImportOptions::default();
    loop {
        let (p, flag) = if let Some(p) = path.strip_suffix("--prune") {
            (p, &mut opts.prune)
        } else if let Some(p) = path.strip_suffix("--strict") {
            (p, &mut opts.strict)
        } else {
            return (path, opts);
        };
        *flag = true;
        path = p.trim_end();
    }
}
