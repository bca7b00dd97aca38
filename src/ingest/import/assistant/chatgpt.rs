//! ChatGPT's `conversations.json`: an array of conversations, each a `mapping` of message
//! nodes (`parent`, `children`) with `current_node` the last message of the branch on screen.
//! Only that branch is read, from `current_node` up to the root: an edited question or a
//! regenerated answer leaves its older siblings in the tree, which the user no longer sees.

use super::{Conversation, Said, conversations, into_items, text_field, unreadable_conversation, unreadable_message};
use crate::error::Result;
use crate::ingest::import::locate::Spot;
use crate::ingest::import::{Format, ReadReport, ts};
use crate::ingest::{Item, Role};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// Read a ChatGPT export's `conversations.json` into chat items (see the module above).
///
/// A conversation without an id or a mapping is skipped and named (one record), as is a
/// message without a readable time when its conversation has none either.
///
/// # Errors
/// [`Error::ImportFormat`](crate::Error::ImportFormat) when the file is not such an export.
pub fn read_chatgpt_export(path: &Path) -> Result<(Vec<Item>, ReadReport)> {
    let mut report = ReadReport::default();
    let export = conversations(path, "ChatGPT", "`mapping` and `current_node`", &mut report)?;
    let mut convs = Vec::with_capacity(export.conversations.len());
    for (i, c) in export.conversations.iter().enumerate() {
        let line = export.start(i).line;
        let bad =
            |reason: String| format!("conversation {} ({}): {reason}", i + 1, text_field(c, "id").unwrap_or("no id"));
        let Some(id) = text_field(c, "id").or_else(|| text_field(c, "conversation_id")) else {
            unreadable_conversation(
                &mut report,
                line,
                bad(if c.get("chat_messages").is_some() {
                    format!("no `id`: this looks like a Claude export; import it as format `{}`", Format::Claude)
                } else {
                    "no `id` or `conversation_id`".into()
                }),
            );
            continue;
        };
        let Some(mapping) = c.get("mapping").and_then(Value::as_object) else {
            unreadable_conversation(&mut report, line, bad("no `mapping` of messages".into()));
            continue;
        };
        let conv_ms = c.get("create_time").filter(|v| !v.is_null()).and_then(|v| ts::epoch_ms(v).ok());
        let mut said = Vec::new();
        let mut last_ms = conv_ms;
        for node in branch(mapping, c) {
            let Some(m) = node.get("message").filter(|m| m.is_object()) else { continue };
            report.read += 1;
            // The message's node in `mapping`, by its key (the id also appears as a parent's
            // child and as `current_node`, which are not where the message is written).
            let at = || export.message_line(i, text_field(m, "id"), Spot::line_of_key);
            let ms = match m.get("create_time").filter(|v| !v.is_null()).map(ts::epoch_ms) {
                Some(Ok(ms)) => Some(ms),
                Some(Err(e)) => {
                    unreadable_message(&mut report, at(), bad(format!("message create_time {e}")));
                    continue;
                }
                None => last_ms,
            };
            let Some(ts_ms) = ms else {
                unreadable_message(
                    &mut report,
                    at(),
                    bad("a message without `create_time` in a conversation without one".into()),
                );
                continue;
            };
            last_ms = Some(ts_ms);
            let Some((role, author)) = speaker(m, &mut report) else { continue };
            let (text, images) = content_text(m.get("content").unwrap_or(&Value::Null));
            let mut attachments: Vec<String> = m
                .pointer("/metadata/attachments")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|x| text_field(x, "name").map(str::to_string)).collect())
                .unwrap_or_default();
            if attachments.is_empty() {
                attachments.extend(std::iter::repeat_n("image".to_string(), images));
            }
            said.push(Said { role, author, ts_ms, text, attachments, id: text_field(m, "id").map(str::to_string) });
        }
        convs.push(Conversation {
            source_id: format!("chatgpt:{id}"),
            title: text_field(c, "title").map(str::to_string),
            link: format!("https://chatgpt.com/c/{id}"),
            said,
        });
    }
    let items = into_items(convs, &mut report);
    Ok((items, report))
}

/// The nodes of the branch on screen, root first: from `current_node` up its parents; without
/// `current_node`, from the newest node that has no children.
fn branch<'a>(mapping: &'a serde_json::Map<String, Value>, conv: &Value) -> Vec<&'a Value> {
    let newest_leaf = || {
        mapping
            .iter()
            .filter(|(_, n)| n.get("children").and_then(Value::as_array).is_none_or(|c| c.is_empty()))
            .max_by(|(a_id, a), (b_id, b)| {
                let t = |n: &Value| n.pointer("/message/create_time").and_then(Value::as_f64).unwrap_or(f64::MIN);
                t(a).total_cmp(&t(b)).then_with(|| a_id.cmp(b_id))
            })
            .map(|(id, _)| id.as_str())
    };
    let mut at = text_field(conv, "current_node").filter(|id| mapping.contains_key(*id)).or_else(newest_leaf);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    // A parent link that loops would walk forever: each node is visited once.
    while let Some(id) = at
        && seen.insert(id)
    {
        let Some(node) = mapping.get(id) else { break };
        out.push(node);
        at = text_field(node, "parent");
    }
    out.reverse();
    out
}

/// Who said it, or `None` (counted in the report) for what neither side said to the other:
/// system prompts, tools and the assistant's calls to them, hidden context, reasoning.
fn speaker(m: &Value, report: &mut ReadReport) -> Option<(Role, &'static str)> {
    let role = m.pointer("/author/role").and_then(Value::as_str).unwrap_or("");
    let hidden = m.pointer("/metadata/is_visually_hidden_from_conversation").and_then(Value::as_bool) == Some(true);
    let kind = m.pointer("/content/content_type").and_then(Value::as_str).unwrap_or("text");
    let to_user = text_field(m, "recipient").is_none_or(|r| r == "all");
    let skipped = match role {
        _ if hidden => "hidden message",
        "system" => "system message",
        "tool" => "tool message",
        "user" if kind == "user_editable_context" => "hidden message",
        "user" => return Some((Role::Person, "User")),
        "assistant" if !to_user => "tool call",
        "assistant" if matches!(kind, "thoughts" | "reasoning_recap") => "reasoning",
        "assistant" => return Some((Role::Assistant, "ChatGPT")),
        _ => "message of an unknown role",
    };
    report.skip(skipped);
    None
}

/// A message's text: the string parts of `parts` (or `text`, for code), and how many image
/// parts it holds (named when the message lists no attachments).
fn content_text(content: &Value) -> (String, usize) {
    let mut texts = Vec::new();
    let mut images = 0;
    if let Some(parts) = content.get("parts").and_then(Value::as_array) {
        for p in parts {
            match p {
                Value::String(s) if !s.trim().is_empty() => texts.push(s.trim().to_string()),
                Value::Object(o)
                    if o.get("content_type").and_then(Value::as_str).is_some_and(|t| t.contains("image")) =>
                {
                    images += 1
                }
                _ => {}
            }
        }
    } else if let Some(t) = text_field(content, "text") {
        texts.push(t.to_string());
    }
    (texts.join("\n"), images)
}
