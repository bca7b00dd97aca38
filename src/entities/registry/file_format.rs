//! The entity file format: YAML front matter between `---` lines (the identity, in a fixed
//! key order, then keys this module does not own, kept as they were), then the notes body,
//! byte for byte. Parsing is lenient where Obsidian users are, strict about `id` and `kind`.

use super::slug::{check_kind, quote};
use super::{EntityRecord, Handle};
use crate::error::{Error, Result};
use crate::types::{EntityId, EntityKind};
use serde_norway::{Mapping, Value};
use std::path::Path;

/// A parsed entity file: the record and the front-matter keys this module does not own.
pub(super) struct Parsed {
    pub(super) record: EntityRecord,
    pub(super) extras: Mapping,
}

/// Split a file into its YAML front matter and its body: the file opens with a `---` line
/// (after an optional byte-order mark) and the front matter ends at the next `---` or `...`
/// line; the body is every byte after that line. Tolerates CRLF line ends.
pub(crate) fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, mut rest) = next_line(text)?;
    if first.trim_end() != "---" {
        return None;
    }
    let yaml_start = text.len() - rest.len();
    loop {
        let line_start = text.len() - rest.len();
        let (line, after) = next_line(rest)?;
        if matches!(line.trim_end(), "---" | "...") {
            return Some((&text[yaml_start..line_start], after));
        }
        rest = after;
    }
}

/// The first line of `s` without its `\n`, and what follows it; `None` when `s` is empty.
fn next_line(s: &str) -> Option<(&str, &str)> {
    if s.is_empty() {
        return None;
    }
    Some(match s.find('\n') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    })
}

/// Parse an entity file. Lenient where Obsidian users are (a single alias written as a plain
/// string, an empty list left as `aliases:`, a number as a display name); strict about `id`
/// and `kind`, which decide where the file belongs.
pub(super) fn parse_file(bytes: &[u8]) -> std::result::Result<Parsed, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let (yaml, body) = split_front_matter(text).ok_or("no front matter between `---` lines")?;
    let mut map = match serde_norway::from_str::<Value>(yaml) {
        Ok(Value::Mapping(map)) => map,
        Ok(Value::Null) => return Err("empty front matter".into()),
        Ok(_) => return Err("front matter is not a mapping of keys to values".into()),
        Err(e) => return Err(format!("front matter: {e}")),
    };
    let id = scalar(map.shift_remove("id"), "id")?;
    if id.is_empty() {
        return Err("front matter has no `id`".into());
    }
    let kind_text = scalar(map.shift_remove("kind"), "kind")?;
    let kind = EntityKind::parse(kind_text.trim()).ok_or_else(|| format!("unknown `kind` {kind_text:?}"))?;
    let id = EntityId(id);
    check_kind(&id, kind).map_err(|e| e.to_string())?;
    let record = EntityRecord {
        id,
        kind,
        display_name: scalar(map.shift_remove("display_name"), "display_name")?,
        aliases: string_list(map.shift_remove("aliases"), "aliases")?,
        emails: string_list(map.shift_remove("emails"), "emails")?,
        handles: handle_list(map.shift_remove("handles"))?,
        created_at: scalar(map.shift_remove("created_at"), "created_at")?,
        updated_at: scalar(map.shift_remove("updated_at"), "updated_at")?,
        notes: body.to_string(),
    };
    Ok(Parsed { record, extras: map })
}

/// A plain YAML value as text; missing and `null` are empty.
fn scalar(v: Option<Value>, field: &str) -> std::result::Result<String, String> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(Value::Tagged(t)) => scalar(Some(t.value), field),
        Some(_) => Err(format!("`{field}` must be a plain value, not a list or mapping")),
    }
}

/// A list of plain values (a single plain value counts as a one-item list); blank items are
/// dropped.
fn string_list(v: Option<Value>, field: &str) -> std::result::Result<Vec<String>, String> {
    let items = match v {
        Some(Value::Sequence(items)) => items,
        Some(Value::Tagged(t)) => return string_list(Some(t.value), field),
        other => vec![other.unwrap_or(Value::Null)],
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let s = scalar(Some(item), field)?;
        if !s.trim().is_empty() {
            out.push(s);
        }
    }
    Ok(out)
}

/// `handles`: a list of `{kind, value}` mappings; a plain item is a value of no stated kind.
fn handle_list(v: Option<Value>) -> std::result::Result<Vec<Handle>, String> {
    let items = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Sequence(items)) => items,
        Some(other) => vec![other],
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let handle = match item {
            Value::Mapping(mut m) => Handle {
                kind: scalar(m.shift_remove("kind"), "handles.kind")?,
                value: scalar(m.shift_remove("value"), "handles.value")?,
            },
            other => Handle { kind: String::new(), value: scalar(Some(other), "handles")? },
        };
        if !handle.value.trim().is_empty() {
            out.push(handle);
        }
    }
    Ok(out)
}

/// The file text of `rec`: front matter in a fixed key order, then `extras` (keys kept from the
/// file on disk), then the notes body; always ending with a newline.
pub(super) fn render(rec: &EntityRecord, extras: &Mapping) -> Result<String> {
    let s = |v: &str| Value::String(v.to_string());
    let list = |vs: &[String]| Value::Sequence(vs.iter().map(|v| s(v)).collect());
    let mut m = Mapping::new();
    m.insert(s("id"), s(rec.id.as_str()));
    m.insert(s("kind"), s(rec.kind.as_str()));
    m.insert(s("display_name"), s(&rec.display_name));
    m.insert(s("aliases"), list(&rec.aliases));
    m.insert(s("emails"), list(&rec.emails));
    let handles = rec
        .handles
        .iter()
        .map(|h| {
            let mut hm = Mapping::new();
            hm.insert(s("kind"), s(&h.kind));
            hm.insert(s("value"), s(&h.value));
            Value::Mapping(hm)
        })
        .collect();
    m.insert(s("handles"), Value::Sequence(handles));
    m.insert(s("created_at"), s(&rec.created_at));
    m.insert(s("updated_at"), s(&rec.updated_at));
    for (k, v) in extras {
        if !m.contains_key(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    let yaml = serde_norway::to_string(&Value::Mapping(m))
        .map_err(|e| Error::Corrupt { what: format!("entity {}", quote(rec.id.as_str())), reason: e.to_string() })?;
    let mut text = String::with_capacity(yaml.len() + rec.notes.len() + 10);
    text.push_str("---\n");
    text.push_str(&yaml);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("---\n");
    text.push_str(&rec.notes);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// [`Error::Corrupt`] naming the entity file at `path`.
pub(super) fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { what: format!("entity file {}", path.display()), reason: reason.into() }
}

/// Epoch milliseconds as RFC 3339 UTC, to the second (what a person reads in the front
/// matter).
pub(super) fn rfc3339_ms(ms: i64) -> Result<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .ok_or_else(|| Error::invalid("now_ms", format!("{ms} is outside the representable time range")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_front_matter_split_tolerates_bom_crlf_and_dashes_in_body() {
        let (yaml, body) = split_front_matter("\u{feff}---\r\nid: person:a\r\n---\r\nbody\n---\nmore").unwrap();
        assert_eq!((yaml, body), ("id: person:a\r\n", "body\n---\nmore"));
        assert_eq!(split_front_matter("---\nid: x\n...\n"), Some(("id: x\n", "")));
        assert_eq!(split_front_matter("---\nid: x\n---"), Some(("id: x\n", "")));
        assert_eq!(split_front_matter("id: x\n---\n"), None);
        assert_eq!(split_front_matter("---\nid: x\n"), None);
    }

    #[test]
    fn registry_parse_is_lenient_about_lists_and_strict_about_identity() {
        let p = parse_file(b"---\nid: person:a\nkind: person\ndisplay_name: 2024\naliases: Ally\nemails:\nhandles:\n  - alice\ntags: [friend]\n---\n").unwrap();
        assert_eq!(p.record.display_name, "2024");
        assert_eq!(p.record.aliases, vec!["Ally".to_string()]);
        assert!(p.record.emails.is_empty());
        assert_eq!(p.record.handles, vec![Handle::new("", "alice")]);
        assert!(p.extras.contains_key("tags"));
        assert!(parse_file(b"---\nid: person:a\nkind: organization\n---\n").is_err(), "kind must match the id");
        assert!(parse_file(b"---\nkind: person\n---\n").is_err(), "id is required");
        assert!(parse_file(b"---\nid: person:a\nkind: person\naliases: {x: 1}\n---\n").is_err());
    }

    #[test]
    fn registry_render_round_trips_through_parse() {
        let mut rec = EntityRecord::new(EntityId::from("person:a"), EntityKind::Person, "yes");
        rec.aliases = ["null", "true", "1.0", "0x1F", "~", "  padded ", "multi\nline", "---", "# not", "a\0b", "'q\""]
            .map(String::from)
            .to_vec();
        rec.handles = vec![Handle::new("slack", "@a: b")];
        rec.notes = "body\n".into();
        let text = render(&rec, &Mapping::new()).unwrap();
        assert!(text.starts_with("---\nid: person:a\n"), "{text}");
        assert_eq!(parse_file(text.as_bytes()).unwrap().record, rec);
    }
}
