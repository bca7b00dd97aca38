//! `--format slack`: a Slack workspace export folder — `channels.json` (and `groups.json` for
//! private channels when present), `users.json`, and one folder per channel holding one JSON
//! file per day. Each channel is one chat source `slack:#<name>`, one leaf per message, oldest
//! first. Mentions, channel links and URLs in Slack's `<...>` markup become plain text.

use super::read_utf8;
use crate::error::{Error, Result};
use crate::ingest::{ChatMessage, Item, Role};
use crate::text::clip;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Message subtypes that carry no content worth remembering.
const SKIPPED_SUBTYPES: &[&str] = &["channel_join", "channel_leave", "group_join", "group_leave"];

fn parse_json(path: &Path) -> Result<(String, Value)> {
    let text = read_utf8(path)?;
    let v = serde_json::from_str(&text).map_err(|e| Error::ImportFormat {
        path: path.to_path_buf(),
        line: e.line(),
        reason: format!("invalid JSON: {e}"),
    })?;
    Ok((text, v))
}

/// The 1-based line of the first occurrence of `needle` in `text` (0 when absent): Slack
/// files are parsed as values, so a bad message is located by its `ts` string.
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle).map(|at| text[..at].matches('\n').count() + 1).unwrap_or(0)
}

/// User id → display name, from `users.json` (optional).
fn read_users(dir: &Path) -> Result<HashMap<String, String>> {
    let path = dir.join("users.json");
    if !path.is_file() {
        return Ok(HashMap::new());
    }
    let (_, v) = parse_json(&path)?;
    let Value::Array(users) = v else {
        return Err(Error::ImportFormat { path, line: 1, reason: "expected a JSON array of users".into() });
    };
    let nonblank = |v: &Value| v.as_str().map(str::trim).filter(|s| !s.is_empty()).map(String::from);
    Ok(users
        .iter()
        .filter_map(|u| {
            let id = u["id"].as_str()?;
            let name = nonblank(&u["real_name"])
                .or_else(|| nonblank(&u["profile"]["real_name"]))
                .or_else(|| nonblank(&u["profile"]["display_name"]))
                .or_else(|| nonblank(&u["name"]))?;
            Some((id.to_string(), name))
        })
        .collect())
}

/// One channel of the export: its name and id.
struct Channel {
    name: String,
    id: String,
}

fn read_channels(dir: &Path) -> Result<Vec<Channel>> {
    let main = dir.join("channels.json");
    if !main.is_file() {
        return Err(Error::ImportFormat {
            path: main,
            line: 0,
            reason: "not a Slack export folder: channels.json is missing".into(),
        });
    }
    let mut out = Vec::new();
    for path in [main, dir.join("groups.json")] {
        if !path.is_file() {
            continue;
        }
        let (text, v) = parse_json(&path)?;
        let Value::Array(list) = v else {
            return Err(Error::ImportFormat { path, line: 1, reason: "expected a JSON array of channels".into() });
        };
        for (i, c) in list.iter().enumerate() {
            let Some(name) = c["name"].as_str().filter(|n| !n.trim().is_empty()) else {
                let line = c["id"].as_str().map(|id| line_of(&text, id)).unwrap_or(0);
                return Err(Error::ImportFormat { path, line, reason: format!("channel {i} has no `name`") });
            };
            if name.contains(['/', '\\']) || name == "." || name == ".." {
                let line = line_of(&text, name);
                return Err(Error::ImportFormat {
                    path,
                    line,
                    reason: format!("unsafe channel name `{}`", clip(name, 60)),
                });
            }
            out.push(Channel { name: name.to_string(), id: c["id"].as_str().unwrap_or_default().to_string() });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// `1683012345.000200` → epoch ms.
fn parse_ts(ts: &str) -> Option<i64> {
    let (secs, frac) = ts.split_once('.').unwrap_or((ts, "0"));
    let secs: i64 = secs.parse().ok()?;
    let frac = format!("{:0<3}", frac.get(..3).unwrap_or(frac));
    let ms: i64 = frac.parse().ok()?;
    secs.checked_mul(1000)?.checked_add(ms)
}

/// Slack markup to plain text: `<@U1>` → `@Name`, `<#C1|eng>` → `#eng`, `<!here>` →
/// `@here`, `<https://x|label>` → `label (https://x)`, `<mailto:a@b|a@b>` → `a@b`, and the
/// three escaped characters.
fn slack_to_text(text: &str, users: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let inner = &rest[open + 1..open + close];
        let (target, label) = match inner.split_once('|') {
            Some((t, l)) => (t, Some(l)),
            None => (inner, None),
        };
        let rendered = if let Some(id) = target.strip_prefix('@') {
            format!("@{}", users.get(id).map(String::as_str).or(label).unwrap_or(id))
        } else if let Some(id) = target.strip_prefix('#') {
            format!("#{}", label.unwrap_or(id))
        } else if let Some(special) = target.strip_prefix('!') {
            format!("@{}", label.unwrap_or(special.split('^').next().unwrap_or(special)))
        } else if let Some(addr) = target.strip_prefix("mailto:") {
            addr.to_string()
        } else {
            match label {
                Some(l) if l != target => format!("{l} ({target})"),
                _ => target.to_string(),
            }
        };
        out.push_str(&rendered);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

fn day_files(folder: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .map_err(|e| Error::io(folder, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("json")))
        .collect();
    files.sort();
    Ok(files)
}

/// Read a Slack export folder into chat items, channel by channel (sorted by name), each
/// channel's messages by time. Join/leave notices are skipped; shared files are kept as
/// `[file: title]`.
pub fn read_slack_export(dir: &Path) -> Result<Vec<Item>> {
    if !dir.is_dir() {
        return Err(Error::ImportFormat {
            path: dir.to_path_buf(),
            line: 0,
            reason: "a Slack export is a folder (unzip the export first)".into(),
        });
    }
    let users = read_users(dir)?;
    let mut items = Vec::new();
    for ch in read_channels(dir)? {
        let folder = dir.join(&ch.name);
        if !folder.is_dir() {
            continue; // a channel without messages has no folder
        }
        let source: crate::SourceId = format!("slack:#{}", ch.name).into();
        let mut msgs: Vec<(i64, String, Item)> = Vec::new();
        for file in day_files(&folder)? {
            let (text, v) = parse_json(&file)?;
            let bad = |line: usize, reason: String| Error::ImportFormat { path: file.clone(), line, reason };
            let Value::Array(list) = v else {
                return Err(bad(1, "expected a JSON array of messages".into()));
            };
            for (i, m) in list.iter().enumerate() {
                if m["type"].as_str().is_some_and(|t| t != "message") {
                    continue;
                }
                if m["subtype"].as_str().is_some_and(|s| SKIPPED_SUBTYPES.contains(&s)) {
                    continue;
                }
                let Some(ts) = m["ts"].as_str() else {
                    return Err(bad(0, format!("message {i} has no string `ts`")));
                };
                let ts_ms =
                    parse_ts(ts).ok_or_else(|| bad(line_of(&text, ts), format!("unreadable ts `{}`", clip(ts, 60))))?;
                let mut body = slack_to_text(m["text"].as_str().unwrap_or_default(), &users);
                for f in m["files"].as_array().map(Vec::as_slice).unwrap_or_default() {
                    if let Some(t) = f["title"].as_str().or(f["name"].as_str()) {
                        body.push_str(&format!(" [file: {t}]"));
                    }
                }
                if body.trim().is_empty() {
                    continue;
                }
                let user = m["user"].as_str().unwrap_or_default();
                let author = users
                    .get(user)
                    .cloned()
                    .or_else(|| m["user_profile"]["real_name"].as_str().map(String::from))
                    .or_else(|| m["username"].as_str().map(String::from))
                    .unwrap_or_else(|| if user.is_empty() { "unknown".into() } else { user.to_string() });
                let msg = ChatMessage {
                    source_id: source.clone(),
                    author,
                    ts_ms,
                    text: body.trim().to_string(),
                    source_ref: Some(format!("slack:archives/{}/p{}", ch.id, ts.replace('.', ""))),
                    participants: Vec::new(),
                    tags: Vec::new(),
                    role: Role::Person,
                    title: None,
                };
                // Validate now so the error names the file and line.
                let item = Item::Chat(msg);
                item.validate().map_err(|e| bad(line_of(&text, ts), e.to_string()))?;
                msgs.push((ts_ms, ts.to_string(), item));
            }
        }
        msgs.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        items.extend(msgs.into_iter().map(|(_, _, item)| item));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::write(p.join("users.json"), r#"[{"id":"U1","name":"maya","real_name":"Maya Okafor"},{"id":"U2","name":"tomas","profile":{"real_name":"Tomás Reyes"}}]"#).unwrap();
        std::fs::write(p.join("channels.json"), r#"[{"id":"C1","name":"eng"},{"id":"C2","name":"empty"}]"#).unwrap();
        std::fs::create_dir(p.join("eng")).unwrap();
        std::fs::write(
            p.join("eng/2023-05-02.json"),
            r#"[
 {"type":"message","user":"U2","text":"thanks <@U1>, see <https://example.com/doc|the doc> in <#C9|design> &amp; ping <!here>","ts":"1683020000.000200"},
 {"type":"message","subtype":"channel_join","user":"U2","text":"<@U2> has joined the channel","ts":"1683010000.000100"},
 {"type":"message","user":"U1","text":"Atlas migration starts today #atlas","ts":"1683019000.000100"}
]"#,
        )
        .unwrap();
        d
    }

    #[test]
    fn channels_become_chat_sources_in_time_order() {
        let d = export();
        let items = read_slack_export(d.path()).unwrap();
        let msgs: Vec<ChatMessage> = items
            .into_iter()
            .map(|i| match i {
                Item::Chat(c) => c,
                Item::Email(_) => panic!("chat only"),
            })
            .collect();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].source_id.0, "slack:#eng");
        assert_eq!(msgs[0].author, "Maya Okafor");
        assert_eq!(msgs[0].ts_ms, 1_683_019_000_000);
        assert_eq!(msgs[1].author, "Tomás Reyes");
        assert_eq!(msgs[1].text, "thanks @Maya Okafor, see the doc (https://example.com/doc) in #design & ping @here");
        assert_eq!(msgs[1].source_ref.as_deref(), Some("slack:archives/C1/p1683020000000200"));
    }

    #[test]
    fn bad_files_name_file_and_line() {
        let d = export();
        std::fs::write(d.path().join("eng/2023-05-03.json"), "[\n {\"type\":\"message\",\n \"text\": oops}\n]")
            .unwrap();
        let e = read_slack_export(d.path()).unwrap_err().to_string();
        assert!(e.contains("2023-05-03.json:3: invalid JSON"), "{e}");

        std::fs::write(d.path().join("eng/2023-05-03.json"), b"[{\"type\":\"message\",\"text\":\"\xff\"}]").unwrap();
        let e = read_slack_export(d.path()).unwrap_err().to_string();
        assert!(e.contains("2023-05-03.json:1: invalid UTF-8"), "{e}");

        std::fs::write(
            d.path().join("eng/2023-05-03.json"),
            "[\n{\"type\":\"message\",\"text\":\"x\",\n\"ts\":\"soon\"}]",
        )
        .unwrap();
        let e = read_slack_export(d.path()).unwrap_err().to_string();
        assert!(e.contains("2023-05-03.json:3: unreadable ts `soon`"), "{e}");

        let empty = tempfile::tempdir().unwrap();
        let e = read_slack_export(empty.path()).unwrap_err().to_string();
        assert!(e.contains("channels.json is missing"), "{e}");
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_ts("1683012345.000200"), Some(1_683_012_345_000));
        assert_eq!(parse_ts("1683012345.5"), Some(1_683_012_345_500));
        assert_eq!(parse_ts("x"), None);
    }
}
