//! `--format chat-jsonl`: one message per line, `{"source_id", "author", "ts", "text",
//! "source_ref"?, "role"?}` with `ts` an RFC 3339 time, a date, or epoch seconds or
//! milliseconds (`ts::TS_FORMATS`), and `role` one of
//! `user` (or `person`, the default) and `assistant` (the host's own assistant).

use super::{BOM, invalid_utf8, json_string, ts};
use crate::error::{Error, Result};
use crate::ingest::{ChatMessage, Item, Role};
use crate::text::clip;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io::BufRead;
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

/// [`Line`] with its text still the JSON literal in the input, borrowed: unescaped by
/// `json_string`, the text is made once instead of twice (serde_json's scratch buffer, then
/// its `String`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLine<'a> {
    source_id: String,
    author: String,
    ts: serde_json::Value,
    #[serde(borrow)]
    text: &'a RawValue,
    #[serde(default)]
    source_ref: Option<String>,
    #[serde(default)]
    role: Role,
}

/// A line's buffer above this capacity is let go of once its line is read, not kept for the
/// next line: one huge message must not keep its raw bytes alive beside the messages after it.
const KEEP_BUFFER: usize = 1 << 20;

/// Parse a chat JSONL file into items; blank lines are skipped. The file is read a line at a
/// time: what is held is the items and the line being parsed, never the whole file as well.
/// Invalid UTF-8 anywhere is the error, before a bad line earlier in the file (as when the
/// whole file was checked first): after a bad line the rest is only checked for it.
pub fn read_chat_jsonl(path: &Path) -> Result<Vec<Item>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut first_bad: Option<Error> = None;
    // Bytes before this line (after a byte order mark), for an invalid byte's offset.
    let mut offset = 0;
    let mut line_no = 0;
    loop {
        if buf.capacity() > KEEP_BUFFER {
            buf = Vec::new();
        }
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(|e| Error::io(path, e))? == 0 {
            break;
        }
        line_no += 1;
        let bad = |reason: String| Error::ImportFormat { path: path.to_path_buf(), line: line_no, reason };
        // A UTF-8 byte order mark (Windows editors write one) is dropped.
        let bytes = if line_no == 1 { buf.strip_prefix(BOM).unwrap_or(&buf) } else { &buf[..] };
        let text = std::str::from_utf8(bytes).map_err(|e| invalid_utf8(path, line_no, offset + e.valid_up_to()))?;
        offset += bytes.len();
        if first_bad.is_some() {
            continue;
        }
        // As `str::lines` ends a line: at `\n` or `\r\n`.
        let raw = text.strip_suffix('\n').map_or(text, |l| l.strip_suffix('\r').unwrap_or(l));
        match message(raw) {
            Ok(Some(item)) => out.push(item),
            Ok(None) => {}
            Err(reason) => {
                first_bad = Some(bad(reason));
                out = Vec::new();
            }
        }
    }
    match first_bad {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The message of one line (without its line end), `None` for a blank line, or why the line
/// is refused.
fn message(raw: &str) -> std::result::Result<Option<Item>, String> {
    if raw.trim().is_empty() {
        return Ok(None);
    }
    // serde quotes an unknown field's name in full.
    let l = parse_line(raw).map_err(|e| clip(&e.to_string(), 240))?;
    let ts_ms = ts::epoch_ms(&l.ts).map_err(|e| format!("ts: {e}"))?;
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
    item.validate().map_err(|e| e.to_string())?;
    Ok(Some(item))
}

/// One line's message. Its text is unescaped from the borrowed literal; whatever that does
/// not read exactly as serde_json would (or a line that does not parse) is parsed by
/// serde_json whole, for the same message or the same error.
fn parse_line(raw: &str) -> serde_json::Result<Line> {
    if let Ok(l) = serde_json::from_str::<RawLine<'_>>(raw)
        && let Some(text) = json_string::unescape(l.text.get())
    {
        return Ok(Line {
            source_id: l.source_id,
            author: l.author,
            ts: l.ts,
            text,
            source_ref: l.source_ref,
            role: l.role,
        });
    }
    serde_json::from_str(raw)
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
    fn invalid_utf8_is_the_error_even_after_a_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.jsonl");
        let mut bytes = b"{\"source_id\":\"app:a\",\"author\":\"Me\",\"ts\":1,\"text\":\"plan\"}\nnot json\n".to_vec();
        bytes.extend_from_slice(b"{\"source_id\":\"app:a\",\"author\":\"Me\",\"ts\":2,\"text\":\"\xff\"}\n");
        std::fs::write(&path, &bytes).unwrap();
        match read_chat_jsonl(&path).unwrap_err() {
            Error::ImportFormat { line, reason, .. } => {
                assert_eq!(line, 3);
                assert_eq!(reason, format!("invalid UTF-8 at byte {}", bytes.len() - 4));
            }
            other => panic!("{other:?}"),
        }
        // Without it, the bad line is the error.
        std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
        match read_chat_jsonl(&path).unwrap_err() {
            Error::ImportFormat { line, .. } => assert_eq!(line, 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_text_with_escapes_reads_as_serde_json_reads_it() {
        let text = "line one\nline \"two\"\t\u{e9}\u{1f600}\\ end";
        let line = serde_json::json!({"source_id": "app:a", "author": "Me", "ts": 1, "text": text}).to_string();
        let items = read(&format!("\u{feff}{line}\r\n\n")).unwrap();
        match &items[..] {
            [Item::Chat(m)] => assert_eq!(m.text, text),
            other => panic!("{other:?}"),
        }
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
