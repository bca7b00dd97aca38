//! `--format chat-jsonl`: one message per line, `{"source_id", "author", "ts", "text",
//! "source_ref"?}` with `ts` as epoch ms or an RFC 3339 string.

use super::read_utf8;
use crate::error::{Error, Result};
use crate::ingest::{ChatMessage, Item};
use crate::text::clip;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    source_id: String,
    author: String,
    ts: Ts,
    text: String,
    #[serde(default)]
    source_ref: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Ts {
    Ms(i64),
    Rfc3339(String),
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
        let ts_ms = match l.ts {
            Ts::Ms(ms) => ms,
            Ts::Rfc3339(s) => chrono::DateTime::parse_from_rfc3339(&s)
                .map_err(|e| bad(format!("ts {:?}: {e}", clip(&s, 60))))?
                .timestamp_millis(),
        };
        let m = ChatMessage {
            source_id: l.source_id.into(),
            author: l.author,
            ts_ms,
            text: l.text,
            source_ref: l.source_ref,
            participants: Vec::new(),
            tags: Vec::new(),
        };
        // Validate now so the error names the line.
        Item::Chat(m.clone()).into_drafts(&crate::Config::default()).map_err(|e| bad(e.to_string()))?;
        out.push(Item::Chat(m));
    }
    Ok(out)
}
