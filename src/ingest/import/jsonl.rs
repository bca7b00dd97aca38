//! `--format chat-jsonl`: one message per line, `{"source_id", "author", "ts", "text",
//! "source_ref"?, "role"?}` with `ts` an RFC 3339 time, a date, or epoch seconds or
//! milliseconds (`ts::TS_FORMATS`), and `role` one of
//! `user` (or `person`, the default) and `assistant` (the host's own assistant).

use super::{read_utf8, ts};
use crate::error::{Error, Result};
use crate::ingest::{ChatMessage, Item, Role};
use crate::text::clip;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    source_id: String,
    author: String,
    ts: serde_json::Value,
    text: String,
    #[serde(default)]
    source_ref: Option<String>,
    #[serde(default)]
    role: Role,
}

/// Parse a chat JSONL file into items; blank lines are skipped.
pub fn read_chat_jsonl(path: &Path) -> Result<Vec<Item>> {
    let text = read_utf8(path)?;
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let bad = |reason: String| Error::ImportFormat { path: path.to_path_buf(), line: line_no, reason };
        if raw.trim().is_empty() {
            continue;
        }
        // serde quotes an unknown field's name in full.
        let l: Line = serde_json::from_str(raw).map_err(|e| bad(clip(&e.to_string(), 240)))?;
        let ts_ms = ts::epoch_ms(&l.ts).map_err(|e| bad(format!("ts: {e}")))?;
        let m = ChatMessage {
            source_id: l.source_id.into(),
            author: l.author,
            ts_ms,
            text: l.text,
            source_ref: l.source_ref,
            participants: Vec::new(),
            tags: Vec::new(),
            role: l.role,
            title: None,
        };
        // Validate now so the error names the line.
        let item = Item::Chat(m);
        item.validate().map_err(|e| bad(e.to_string()))?;
        out.push(item);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &str) -> Result<Vec<Item>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.jsonl");
        std::fs::write(&path, lines).unwrap();
        read_chat_jsonl(&path)
    }

    fn role(item: &Item) -> Role {
        match item {
            Item::Chat(m) => m.role,
            Item::Email(_) => panic!("chat-jsonl yields chat items"),
        }
    }

    #[test]
    fn role_is_optional_and_maps_user_and_assistant() {
        let items = read(concat!(
            r#"{"source_id":"app:a","author":"Me","ts":1,"text":"plan"}"#,
            "\n",
            r#"{"source_id":"app:a","author":"Me","ts":2,"text":"plan","role":"user"}"#,
            "\n",
            r#"{"source_id":"app:a","author":"Bot","ts":3,"text":"reply","role":"assistant"}"#,
            "\n",
        ))
        .unwrap();
        let roles: Vec<Role> = items.iter().map(role).collect();
        assert_eq!(roles, [Role::Person, Role::Person, Role::Assistant]);
    }

    #[test]
    fn an_unknown_role_names_its_line() {
        let e = read(concat!(
            r#"{"source_id":"app:a","author":"Me","ts":1,"text":"plan"}"#,
            "\n",
            r#"{"source_id":"app:a","author":"Sys","ts":2,"text":"x","role":"system"}"#,
            "\n",
        ))
        .unwrap_err();
        match e {
            Error::ImportFormat { line, reason, .. } => {
                assert_eq!(line, 2);
                assert!(reason.contains("system"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
}
