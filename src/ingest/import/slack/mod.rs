//! `--format slack`: a Slack workspace export folder — `channels.json` (and `groups.json` for
//! private channels when present), `users.json`, and one folder per channel holding one JSON
//! file per day. Each channel is one chat source `slack:#<name>`, one leaf per message, oldest
//! first. Mentions, channel links and URLs in Slack's `<...>` markup become plain text; bot and
//! integration posts are messages, by the bot, with their attachments' words.

mod markup;
mod message;

use super::locate::Spot;
use super::{ReadReport, ReadWarning, read_json_lossy};
use crate::error::{Error, Result};
use crate::ingest::{ChatMessage, Item, Role};
use crate::text::clip;
use message::{Posted, read_message};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Message subtypes that carry no content worth remembering.
const SKIPPED_SUBTYPES: &[&str] = &["channel_join", "channel_leave", "group_join", "group_leave"];

/// The reason a message that cannot be read is counted under.
const UNREADABLE: &str = "unreadable message";

/// One of the export's files, read: its text and value, or `None` when it is empty.
fn parse_json(path: &Path, report: &mut ReadReport) -> Result<Option<(String, Value)>> {
    read_json_lossy(path, Some(path), report, "invalid JSON")
}

/// A warning about `file` at `line`.
fn warn(report: &mut ReadReport, file: &Path, line: usize, reason: String) {
    report.warnings.push(ReadWarning { file: Some(file.to_path_buf()), line, reason });
}

/// The 1-based line of the first occurrence of `needle` in `text` (0 when absent): Slack
/// files are parsed as values, so a bad message is located by its `ts` string.
fn line_of(text: &str, needle: &str) -> usize {
    Spot::START.line_of(text, needle).unwrap_or(0)
}

/// User id → display name, from `users.json` (optional): a file that cannot be read is named
/// in `report`, and authors are then shown by their ids.
fn read_users(dir: &Path, report: &mut ReadReport) -> Result<HashMap<String, String>> {
    let path = dir.join("users.json");
    if !path.is_file() {
        return Ok(HashMap::new());
    }
    let users = match parse_json(&path, report) {
        Ok(Some((_, Value::Array(users)))) => users,
        Ok(None) => return Ok(HashMap::new()),
        Ok(Some(_)) => {
            warn(report, &path, 1, "expected a JSON array of users: names not read".into());
            return Ok(HashMap::new());
        }
        Err(Error::ImportFormat { line, reason, .. }) => {
            warn(report, &path, line, format!("{reason}: names not read"));
            return Ok(HashMap::new());
        }
        Err(e) => return Err(e),
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

/// The channels of `channels.json` (which must be read) and `groups.json` (when present and
/// readable). A channel without a usable name is skipped and named, counted as one record.
fn read_channels(dir: &Path, report: &mut ReadReport) -> Result<Vec<Channel>> {
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
        let required = out.is_empty() && path.ends_with("channels.json");
        let parsed = match parse_json(&path, report) {
            Err(Error::ImportFormat { line, reason, .. }) if !required => {
                warn(report, &path, line, format!("{reason}: its channels not read"));
                continue;
            }
            other => other?,
        };
        let Some((text, v)) = parsed else { continue };
        let Value::Array(list) = v else {
            if required {
                return Err(Error::ImportFormat { path, line: 1, reason: "expected a JSON array of channels".into() });
            }
            warn(report, &path, 1, "expected a JSON array of channels: its channels not read".into());
            continue;
        };
        for (i, c) in list.iter().enumerate() {
            let Some(name) = c["name"].as_str().filter(|n| !n.trim().is_empty()) else {
                let line = c["id"].as_str().map(|id| line_of(&text, id)).unwrap_or(0);
                report.read += 1;
                report.skip("unreadable channel");
                warn(report, &path, line, format!("channel {i} has no `name`: skipped"));
                continue;
            };
            if name.contains(['/', '\\']) || name == "." || name == ".." {
                let line = line_of(&text, name);
                report.read += 1;
                report.skip("unreadable channel");
                warn(report, &path, line, format!("unsafe channel name `{}`: skipped", clip(name, 60)));
                continue;
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
/// channel's messages by time, with the report of what was read. Join/leave notices, entries
/// that are not messages and empty messages are skipped and counted; a bot's or integration's
/// post is a message by the bot (its `username`, `bot_profile` name, the name a `bot_add`
/// notice gives its id, else the id) with its attachments' words; a link preview's title and
/// text join the post; shared files are kept as `[file: title]`; a file comment is its
/// commenter's. A message that cannot be read (no `ts`, an unreadable one, one ingest
/// refuses) is skipped and named by its file and line, and a day file that is not a JSON
/// array is skipped whole (one record) and named; bytes that are not UTF-8 are read as
/// U+FFFD and named.
///
/// # Errors
/// [`Error::ImportFormat`] when the folder is not a Slack export (no readable
/// `channels.json`); [`Error::Io`].
pub fn read_slack_export(dir: &Path) -> Result<(Vec<Item>, ReadReport)> {
    if !dir.is_dir() {
        return Err(Error::ImportFormat {
            path: dir.to_path_buf(),
            line: 0,
            reason: "a Slack export is a folder (unzip the export first)".into(),
        });
    }
    let mut report = ReadReport::default();
    let users = read_users(dir, &mut report)?;
    let mut items = Vec::new();
    let mut bot_names: HashMap<String, String> = HashMap::new();
    for ch in read_channels(dir, &mut report)? {
        let folder = dir.join(&ch.name);
        if !folder.is_dir() {
            continue; // a channel without messages has no folder
        }
        let source: crate::SourceId = format!("slack:#{}", ch.name).into();
        let mut msgs: Vec<(i64, String, Item, Option<String>)> = Vec::new();
        for file in day_files(&folder)? {
            let (text, list) = match parse_json(&file, &mut report) {
                Ok(Some((text, Value::Array(list)))) => (text, list),
                Ok(None) => continue,
                Ok(Some(_)) => {
                    report.read += 1;
                    report.skip("unreadable day file");
                    warn(&mut report, &file, 1, "expected a JSON array of messages: the file is skipped".into());
                    continue;
                }
                Err(Error::ImportFormat { line, reason, .. }) => {
                    report.read += 1;
                    report.skip("unreadable day file");
                    warn(&mut report, &file, line, format!("{reason}: the file is skipped"));
                    continue;
                }
                Err(e) => return Err(e),
            };
            for (i, m) in list.iter().enumerate() {
                report.read += 1;
                if m["type"].as_str().is_some_and(|t| t != "message") {
                    report.skip("not a message");
                    continue;
                }
                if m["subtype"].as_str().is_some_and(|s| SKIPPED_SUBTYPES.contains(&s)) {
                    report.skip("join or leave notice");
                    continue;
                }
                let Some(ts) = m["ts"].as_str() else {
                    report.skip(UNREADABLE);
                    warn(&mut report, &file, 0, format!("message {i} has no string `ts`: skipped"));
                    continue;
                };
                let Some(ts_ms) = parse_ts(ts) else {
                    report.skip(UNREADABLE);
                    warn(&mut report, &file, line_of(&text, ts), format!("unreadable ts `{}`: skipped", clip(ts, 60)));
                    continue;
                };
                if let Some((bot, name)) = (m["subtype"].as_str() == Some("bot_add"))
                    .then(|| m["text"].as_str().and_then(markup::added_integration))
                    .flatten()
                {
                    bot_names.insert(bot.to_string(), name.to_string());
                }
                let Posted { author, unnamed_bot, body } = read_message(m, &users);
                if body.is_empty() {
                    report.skip("empty message");
                    continue;
                }
                let msg = ChatMessage {
                    source_id: source.clone(),
                    author,
                    ts_ms,
                    text: body,
                    source_ref: Some(format!("slack:archives/{}/p{}", ch.id, ts.replace('.', ""))),
                    participants: Vec::new(),
                    tags: Vec::new(),
                    role: Role::Person,
                    title: None,
                };
                // Validate now so the warning names the file and line.
                let item = Item::Chat(msg);
                if let Err(e) = item.validate() {
                    report.skip(UNREADABLE);
                    warn(&mut report, &file, line_of(&text, ts), format!("{e}: skipped"));
                    continue;
                }
                msgs.push((ts_ms, ts.to_string(), item, unnamed_bot));
            }
        }
        msgs.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        items.extend(msgs.into_iter().map(|(_, _, item, bot)| (item, bot)));
    }
    // A bot's posts may come before (or in another channel than) the notice that names it.
    let items: Vec<Item> = items
        .into_iter()
        .map(|(mut item, bot)| {
            if let (Item::Chat(c), Some(name)) = (&mut item, bot.and_then(|b| bot_names.get(&b))) {
                c.author = name.clone();
            }
            item
        })
        .collect();
    report.written = items.len() as u64;
    Ok((items, report))
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
        let (items, report) = read_slack_export(d.path()).unwrap();
        assert_eq!((report.read, report.written), (3, 2));
        assert_eq!(report.skipped.get("join or leave notice"), Some(&1), "{report:?}");
        assert!(report.adds_up());
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

    /// The first warning, as `--strict` makes it the error.
    fn strict_error(dir: &Path) -> String {
        let (_, report) = read_slack_export(dir).unwrap();
        report.strict(dir).unwrap_err().to_string()
    }

    #[test]
    fn bad_files_and_messages_are_skipped_and_named() {
        let d = export();
        std::fs::write(d.path().join("eng/2023-05-03.json"), "[\n {\"type\":\"message\",\n \"text\": oops}\n]")
            .unwrap();
        let (items, report) = read_slack_export(d.path()).unwrap();
        assert_eq!(items.len(), 2, "the other day is read");
        assert_eq!(report.skipped.get("unreadable day file"), Some(&1), "{report:?}");
        assert!(report.adds_up());
        let e = strict_error(d.path());
        assert!(e.contains("2023-05-03.json:3: invalid JSON"), "{e}");

        std::fs::write(
            d.path().join("eng/2023-05-03.json"),
            b"[{\"type\":\"message\",\"text\":\"\xff\",\"ts\":\"1683100000.1\"}]",
        )
        .unwrap();
        let (items, report) = read_slack_export(d.path()).unwrap();
        assert_eq!(items.len(), 3, "a bad byte is read as U+FFFD");
        assert!(report.warnings[0].reason.starts_with("invalid UTF-8 at byte 27"), "{report:?}");
        let e = strict_error(d.path());
        assert!(e.contains("2023-05-03.json:1: invalid UTF-8"), "{e}");

        std::fs::write(
            d.path().join("eng/2023-05-03.json"),
            "[\n{\"type\":\"message\",\"text\":\"x\",\n\"ts\":\"soon\"},{\"type\":\"message\",\"text\":\"y\",\"ts\":\"1683100000.1\"}]",
        )
        .unwrap();
        let (items, report) = read_slack_export(d.path()).unwrap();
        assert_eq!((items.len(), report.skipped.get(UNREADABLE)), (3, Some(&1)));
        let e = strict_error(d.path());
        assert!(e.contains("2023-05-03.json:3: unreadable ts `soon`"), "{e}");

        let empty = tempfile::tempdir().unwrap();
        let e = read_slack_export(empty.path()).unwrap_err().to_string();
        assert!(e.contains("channels.json is missing"), "{e}");
    }

    /// hfaran/slack-export-viewer's test archive (tests/data/slack/README.md): before bot posts
    /// were read, 94 of its 158 records were skipped as empty.
    #[test]
    fn a_real_export_keeps_its_bot_posts() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/slack/mesos-magellan");
        let (items, report) = read_slack_export(&dir).unwrap();
        assert_eq!((report.read, report.written), (158, 150), "{report:?}");
        assert_eq!(report.skipped.get("join or leave notice"), Some(&8), "only the joins are left out: {report:?}");
        assert!(report.adds_up());
        let msgs: Vec<&ChatMessage> = items
            .iter()
            .filter_map(|i| match i {
                Item::Chat(c) => Some(c),
                Item::Email(_) => None,
            })
            .collect();
        let by = |author: &str| msgs.iter().filter(|m| m.author == author).count();
        assert_eq!(by("github"), 94, "every commit notice is the bot's, named by its bot_add notice");
        assert_eq!(by("unknown"), 0);
        let commit = msgs.iter().find(|m| m.text.contains("executor with simulated annealing rough draft")).unwrap();
        assert!(commit.text.starts_with("[enrique:master] 1 new commit by Anthony Bilinski:"), "{}", commit.text);
        let comment = msgs.iter().find(|m| m.text.contains("[comment on file: 10 cities]")).unwrap();
        assert_eq!(comment.author, "Hermione Granger", "the comment's user, not `unknown`");
        assert!(comment.text.starts_with("```'cities': {"), "{}", comment.text);
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_ts("1683012345.000200"), Some(1_683_012_345_000));
        assert_eq!(parse_ts("1683012345.5"), Some(1_683_012_345_500));
        assert_eq!(parse_ts("x"), None);
    }
}
