//! `--format chat-jsonl`: one message per line, `{"source_id", "author", "ts", "text",
//! "source_ref"?, "role"?}` with `ts` an RFC 3339 time, a date, or epoch seconds or
//! milliseconds (`ts::TS_FORMATS`), and `role` one of
//! `user` (or `person`, the default) and `assistant` (the host's own assistant).

use super::{BOM, ReadReport, json_string, ts};
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

/// Parse a chat JSONL file into items, with the report of what was read; blank lines are not
/// records. The file is read a line at a time: what is held is the items and the line being
/// parsed, never the whole file as well. A line that cannot be read (not JSON, a missing
/// field, a `ts` that is not a time, bytes that are not UTF-8, a message ingest would
/// refuse) is skipped and named (its line, and the byte offset of an invalid byte); the
/// other lines are read.
pub fn read_chat_jsonl(path: &Path) -> Result<(Vec<Item>, ReadReport)> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut report = ReadReport::default();
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
        // A UTF-8 byte order mark (Windows editors write one) is dropped.
        let bytes = if line_no == 1 { buf.strip_prefix(BOM).unwrap_or(&buf) } else { &buf[..] };
        let at = offset;
        offset += bytes.len();
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                report.read += 1;
                report.unreadable(UNREADABLE, line_no, format!("invalid UTF-8 at byte {}", at + e.valid_up_to()));
                continue;
            }
        };
        // As `str::lines` ends a line: at `\n` or `\r\n`.
        let raw = text.strip_suffix('\n').map_or(text, |l| l.strip_suffix('\r').unwrap_or(l));
        match message(raw) {
            Ok(Some(item)) => {
                report.read += 1;
                out.push(item);
            }
            Ok(None) => {}
            Err(reason) => {
                report.read += 1;
                report.unreadable(UNREADABLE, line_no, reason);
            }
        }
    }
    report.written = out.len() as u64;
    Ok((out, report))
}

/// The reason a line that cannot be read is counted under.
const UNREADABLE: &str = "unreadable line";

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
        let (items, report) = read_reported(lines.as_bytes());
        report.strict(Path::new("chat.jsonl"))?;
        Ok(items)
    }

    fn read_reported(bytes: &[u8]) -> (Vec<Item>, ReadReport) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.jsonl");
        std::fs::write(&path, bytes).unwrap();
        read_chat_jsonl(&path).unwrap()
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
    fn a_bad_line_or_invalid_utf8_skips_that_line_only() {
        let mut bytes =
            b"{\"source_id\":\"app:a\",\"author\":\"Me\",\"ts\":1,\"text\":\"plan\"}\nnot json\n\n".to_vec();
        bytes.extend_from_slice(b"{\"source_id\":\"app:a\",\"author\":\"Me\",\"ts\":2,\"text\":\"\xff\"}\n");
        bytes.extend_from_slice(b"{\"source_id\":\"app:a\",\"author\":\"Me\",\"ts\":3,\"text\":\"later\"}\n");
        let (items, report) = read_reported(&bytes);
        assert_eq!(items.len(), 2);
        assert_eq!((report.read, report.written), (4, 2));
        assert_eq!(report.skipped.get(UNREADABLE), Some(&2));
        assert!(report.adds_up());
        let lines: Vec<usize> = report.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, [2, 4]);
        let at = bytes.iter().position(|&b| b == 0xff).unwrap();
        assert_eq!(report.warnings[1].reason, format!("invalid UTF-8 at byte {at}"));
        match report.strict(Path::new("chat.jsonl")).unwrap_err() {
            Error::ImportFormat { line, reason, .. } => {
                assert_eq!(line, 2);
                assert!(reason.contains("expected ident") && reason.contains("first of 2 warnings"), "{reason}");
            }
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
