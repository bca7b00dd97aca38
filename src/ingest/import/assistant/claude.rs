//! Claude's `conversations.json`: an array of conversations (`uuid`, `name`, `created_at`),
//! each with its `chat_messages` in order (`sender` human/assistant, `text` or `content`
//! blocks, `created_at`, `attachments` and `files`). When messages carry
//! `parent_message_uuid` and the conversation `current_leaf_message_uuid`, only that branch is
//! read, as ChatGPT's; otherwise every message, in the order the export lists them.

use super::{Conversation, Said, conversations, into_items, text_field, unreadable_conversation, unreadable_message};
use crate::error::Result;
use crate::ingest::import::{Format, ReadReport, ts};
use crate::ingest::{Item, Role};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Read a Claude export's `conversations.json` into chat items (see the module above).
///
/// A conversation without a `uuid` or `chat_messages` is skipped and named (one record), as
/// is a message without a readable time when its conversation has none either. Tool and
/// thinking blocks of a kept message are counted in [`ReadReport::left_out`].
///
/// # Errors
/// [`Error::ImportFormat`](crate::Error::ImportFormat) when the file is not such an export.
pub fn read_claude_export(path: &Path) -> Result<(Vec<Item>, ReadReport)> {
    let mut report = ReadReport::default();
    let export = conversations(path, "Claude", "`uuid` and `chat_messages`", &mut report)?;
    let mut convs = Vec::with_capacity(export.conversations.len());
    for (i, c) in export.conversations.iter().enumerate() {
        let line = export.start(i).line;
        let bad = |reason: String| {
            format!("conversation {} ({}): {reason}", i + 1, text_field(c, "uuid").unwrap_or("no uuid"))
        };
        let Some(uuid) = text_field(c, "uuid") else {
            unreadable_conversation(
                &mut report,
                line,
                bad(if c.get("mapping").is_some() {
                    format!("no `uuid`: this looks like a ChatGPT export; import it as format `{}`", Format::ChatGpt)
                } else {
                    "no `uuid`".into()
                }),
            );
            continue;
        };
        let Some(messages) = c.get("chat_messages").and_then(Value::as_array) else {
            unreadable_conversation(&mut report, line, bad("no `chat_messages` array".into()));
            continue;
        };
        let time = |v: &Value| text_field(v, "created_at").and_then(ts::from_text);
        let mut last_ms = time(c);
        let mut said = Vec::new();
        for m in branch(messages, c) {
            report.read += 1;
            let Some(ts_ms) = time(m).or(last_ms) else {
                unreadable_message(
                    &mut report,
                    // The message's own `"uuid": "…"`, its first mention in the conversation
                    // unless `current_leaf_message_uuid` comes before the messages.
                    export
                        .message_line(i, text_field(m, "uuid"), |at, text, id| at.line_of(text, &format!("\"{id}\""))),
                    bad(format!(
                        "message {}: no readable `created_at` (and none on the conversation)",
                        text_field(m, "uuid").unwrap_or("without uuid")
                    )),
                );
                continue;
            };
            last_ms = Some(ts_ms);
            let (role, author) = match text_field(m, "sender") {
                Some("human" | "user") => (Role::Person, "User"),
                Some("assistant") => (Role::Assistant, "Claude"),
                _ => {
                    report.skip("message of an unknown sender");
                    continue;
                }
            };
            let text = message_text(m, &mut report);
            let mut attachments: Vec<String> = Vec::new();
            for list in ["attachments", "files"] {
                for a in m.get(list).and_then(Value::as_array).into_iter().flatten() {
                    if let Some(name) = text_field(a, "file_name")
                        && !attachments.iter().any(|n| n == name)
                    {
                        attachments.push(name.to_string());
                    }
                }
            }
            said.push(Said { role, author, ts_ms, text, attachments, id: text_field(m, "uuid").map(str::to_string) });
        }
        convs.push(Conversation {
            source_id: format!("claude:{uuid}"),
            title: text_field(c, "name").map(str::to_string),
            link: format!("https://claude.ai/chat/{uuid}"),
            said,
        });
    }
    let items = into_items(convs, &mut report);
    Ok((items, report))
}

/// The messages of the branch on screen when the export says which it is, else all of them.
fn branch<'a>(messages: &'a [Value], conv: &Value) -> Vec<&'a Value> {
    let by_id: HashMap<&str, &Value> = messages.iter().filter_map(|m| Some((text_field(m, "uuid")?, m))).collect();
    let linked = messages.iter().any(|m| text_field(m, "parent_message_uuid").is_some());
    let Some(leaf) = text_field(conv, "current_leaf_message_uuid").filter(|id| linked && by_id.contains_key(id)) else {
        return messages.iter().collect();
    };
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut at = Some(leaf);
    while let Some(id) = at
        && seen.insert(id)
    {
        let Some(m) = by_id.get(id) else { break };
        out.push(*m);
        at = text_field(m, "parent_message_uuid");
    }
    out.reverse();
    out
}

/// The text blocks of `content` when it has any (tool calls, tool results and thinking are
/// left out, counted), else `text`.
fn message_text(m: &Value, report: &mut ReadReport) -> String {
    let mut texts = Vec::new();
    let mut blocks = false;
    for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
        blocks = true;
        match b.get("type").and_then(Value::as_str) {
            Some("text") => texts.extend(text_field(b, "text").map(str::to_string)),
            Some("tool_use" | "tool_result") => report.leave_out("tool block"),
            Some("thinking" | "redacted_thinking") => report.leave_out("reasoning"),
            _ => {}
        }
    }
    if !blocks || texts.is_empty() {
        texts = text_field(m, "text").map(str::to_string).into_iter().collect();
    }
    texts.join("\n\n")
}
