//! `--format chatgpt` and `--format claude`: the assistant's own history from the exports
//! ChatGPT and Claude give their users (`conversations.json`). Each conversation is one chat
//! source (`chatgpt:<id>`, `claude:<uuid>`) titled by the conversation's title; the user's
//! messages are the person's (author `User`), the assistant's are the host assistant's
//! (`Role::Assistant`, author `ChatGPT` / `Claude`). System messages, tool calls and tool
//! output, hidden context (custom instructions) and the models' reasoning are left out and
//! counted in the report: they are not what either side said to the other. Attachments are
//! named in the message text (`[attachment: report.pdf]`), as mbox does, not read.
//!
//! Ids are deterministic (source, time and text), so a newer export of the same account adds
//! only the messages that are new.

mod chatgpt;
mod claude;

pub use chatgpt::read_chatgpt_export;
pub use claude::read_claude_export;

use super::ReadReport;
use super::locate::{Spot, element_starts};
use crate::error::{Error, Result};
use crate::ingest::{ChatMessage, Item, Role};
use serde_json::Value;
use std::path::Path;

/// One message as both readers hand it on.
struct Said {
    role: Role,
    author: &'static str,
    ts_ms: i64,
    text: String,
    attachments: Vec<String>,
    /// The message's own id in the export, for `source_ref`.
    id: Option<String>,
}

/// One conversation, its messages in order.
struct Conversation {
    source_id: String,
    title: Option<String>,
    /// Where a message's `source_ref` points: the conversation's address, `#` the message id.
    link: String,
    said: Vec<Said>,
}

/// An export as read: its conversations, and where each starts in the file's text, so that a
/// skipped conversation or message is named by its line.
struct Export {
    conversations: Vec<Value>,
    text: String,
    starts: Vec<Spot>,
}

impl Export {
    /// Where conversation `i` starts (line 0 if the scan found fewer elements than the parse,
    /// which a parsed document does not give).
    fn start(&self, i: usize) -> Spot {
        self.starts.get(i).copied().unwrap_or(Spot { at: self.text.len(), line: 0 })
    }

    /// The line of message `id` in conversation `i`: where `find` finds it from the
    /// conversation's start, else the conversation's own line.
    fn message_line(&self, i: usize, id: Option<&str>, find: fn(Spot, &str, &str) -> Option<usize>) -> usize {
        let start = self.start(i);
        id.and_then(|id| find(start, &self.text, id)).unwrap_or(start.line)
    }
}

/// The export's top-level array (empty for a file of white space only), or an error saying
/// what the file is instead. Bytes that are not UTF-8 are read as U+FFFD and named in `report`.
fn conversations(path: &Path, format: &str, expect: &str, report: &mut ReadReport) -> Result<Export> {
    let bad = |line: usize, reason: String| Error::ImportFormat { path: path.to_path_buf(), line, reason };
    let what = format!("not a {format} export (`conversations.json`, a JSON array)");
    let Some((text, v)) = super::read_json_lossy(path, None, report, &what)? else {
        return Ok(Export { conversations: Vec::new(), text: String::new(), starts: Vec::new() });
    };
    let conversations = match v {
        Value::Array(items) => items,
        Value::Object(mut o) if o.contains_key("conversations") => match o.remove("conversations") {
            Some(Value::Array(items)) => items,
            _ => return Err(bad(1, "`conversations` must be an array".into())),
        },
        _ => {
            return Err(bad(1, format!("not a {format} export: expected a JSON array of conversations with {expect}")));
        }
    };
    let starts = element_starts(&text, "conversations");
    Ok(Export { conversations, text, starts })
}

/// A conversation that cannot be read: one record, skipped and named at its line.
fn unreadable_conversation(report: &mut ReadReport, line: usize, reason: String) {
    report.read += 1;
    report.unreadable("unreadable conversation", line, format!("{reason}: skipped"));
}

/// A message that cannot be read: skipped and named at its line (it was counted as read).
fn unreadable_message(report: &mut ReadReport, line: usize, reason: String) {
    report.unreadable("unreadable message", line, format!("{reason}: skipped"));
}

/// The conversations as chat items, oldest conversation first, each in message order.
fn into_items(mut convs: Vec<Conversation>, report: &mut ReadReport) -> Vec<Item> {
    convs.sort_by_key(|c| (c.said.first().map(|s| s.ts_ms), c.source_id.clone()));
    let mut out = Vec::new();
    for c in convs {
        for s in c.said {
            let mut text = s.text.trim().to_string();
            for name in &s.attachments {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&format!("[attachment: {}]", crate::text::clip(name.trim(), 200)));
            }
            if text.trim().is_empty() {
                report.skip("empty message");
                continue;
            }
            out.push(Item::Chat(ChatMessage {
                source_id: c.source_id.clone().into(),
                author: s.author.to_string(),
                ts_ms: s.ts_ms,
                text,
                source_ref: Some(match &s.id {
                    Some(id) => format!("{}#{id}", c.link),
                    None => c.link.clone(),
                }),
                participants: Vec::new(),
                tags: Vec::new(),
                role: s.role,
                title: c.title.clone(),
            }));
        }
    }
    report.written = out.len() as u64;
    out
}

/// A string field, trimmed, `None` when absent, null or blank.
fn text_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests;
