//! One Slack message's author and words: people's posts, bot and integration posts (whose
//! words are in `attachments[]`), link previews, shared files and file comments.

use super::markup::slack_to_text;
use serde_json::Value;
use std::collections::HashMap;

/// A message's author and text, before the export's bots are all known.
pub(super) struct Posted {
    /// Who wrote it, as far as the message itself tells.
    pub author: String,
    /// The bot id the author still stands for: an integration post names its bot only by id,
    /// and the export may name that bot in a `bot_add` notice read later.
    pub unnamed_bot: Option<String>,
    /// The words: the message's text, its attachments' and its files' names.
    pub body: String,
}

/// A string field, trimmed, when it holds something.
fn nonblank(v: &Value) -> Option<&str> {
    v.as_str().map(str::trim).filter(|s| !s.is_empty())
}

/// What an attachment shows: its pretext, title, text and fields (`title: value`), or its
/// fallback when it has none of them. Bots (GitHub, CI, webhooks) post nothing but this;
/// a person's post carries it as a link's preview.
fn attachment_text(a: &Value, users: &HashMap<String, String>) -> String {
    let mut parts: Vec<String> =
        ["pretext", "title", "text"].iter().filter_map(|k| nonblank(&a[*k])).map(|s| slack_to_text(s, users)).collect();
    for f in a["fields"].as_array().map(Vec::as_slice).unwrap_or_default() {
        match (nonblank(&f["title"]), nonblank(&f["value"])) {
            (Some(t), Some(v)) => parts.push(format!("{}: {}", slack_to_text(t, users), slack_to_text(v, users))),
            (None, Some(v)) => parts.push(slack_to_text(v, users)),
            _ => {}
        }
    }
    if parts.is_empty()
        && let Some(fallback) = nonblank(&a["fallback"])
    {
        parts.push(slack_to_text(fallback, users));
    }
    parts.join("\n")
}

/// The author and words of message `m`. A file comment is its comment's, by the comment's
/// user (the message itself carries no `user`); a bot's post is by its `username`, its
/// `bot_profile`'s name, else (for now) its bot id.
pub(super) fn read_message(m: &Value, users: &HashMap<String, String>) -> Posted {
    let comment = &m["comment"];
    let is_comment = m["subtype"].as_str() == Some("file_comment") && nonblank(&comment["comment"]).is_some();
    let mut body = if is_comment {
        slack_to_text(nonblank(&comment["comment"]).unwrap_or_default(), users)
    } else {
        slack_to_text(m["text"].as_str().unwrap_or_default(), users)
    };
    for a in m["attachments"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let shown = attachment_text(a, users);
        // Some integrations repeat the message's text as the attachment's fallback.
        if !shown.trim().is_empty() && !body.contains(shown.trim()) {
            body.push('\n');
            body.push_str(&shown);
        }
    }
    let files = m["files"].as_array().map(Vec::as_slice).unwrap_or_default();
    for f in files.iter().chain(m["file"].is_object().then_some(&m["file"])) {
        if let Some(t) = nonblank(&f["title"]).or(nonblank(&f["name"]))
            && (is_comment || !body.contains(t))
        {
            let label = if is_comment { "comment on file" } else { "file" };
            body.push_str(&format!(" [{label}: {t}]"));
        }
    }

    let user = if is_comment { nonblank(&comment["user"]) } else { nonblank(&m["user"]) };
    let named = user
        .and_then(|u| users.get(u).cloned())
        .or_else(|| nonblank(&m["user_profile"]["real_name"]).map(String::from))
        .or_else(|| nonblank(&m["username"]).map(String::from))
        .or_else(|| nonblank(&m["bot_profile"]["name"]).map(String::from));
    let bot = nonblank(&m["bot_id"]).filter(|_| user.is_none() && named.is_none());
    let author =
        named.or_else(|| user.map(String::from)).or_else(|| bot.map(String::from)).unwrap_or_else(|| "unknown".into());
    Posted { author, unnamed_bot: bot.map(String::from), body: body.trim().to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn users() -> HashMap<String, String> {
        HashMap::from([("U1".to_string(), "Hamza Faran".to_string())])
    }

    #[test]
    fn a_bot_post_is_its_attachments() {
        // A GitHub (legacy) notice, as in hfaran/slack-export-viewer's test archive.
        let m = json!({"text": "", "bot_id": "B0JL6RASU", "subtype": "bot_message", "attachments": [{
            "fallback": "[enrique:master] <https://github.com/x/enrique/commit/ed1acbe|1 new commit> by Anthony Bilinski",
            "text": "<https://github.com/x/enrique/commit/ed1acbe|ed1acbe>: executor with simulated annealing rough draft - Anthony Bilinski",
            "pretext": "[enrique:master] 1 new commit by Anthony Bilinski:"}]});
        let p = read_message(&m, &users());
        assert_eq!(
            p.body,
            "[enrique:master] 1 new commit by Anthony Bilinski:\ned1acbe (https://github.com/x/enrique/commit/ed1acbe): executor with simulated annealing rough draft - Anthony Bilinski"
        );
        assert_eq!((p.author.as_str(), p.unnamed_bot.as_deref()), ("B0JL6RASU", Some("B0JL6RASU")));
    }

    #[test]
    fn a_bot_with_a_name_and_fields() {
        let m = json!({"subtype": "bot_message", "bot_id": "B2", "username": "Travis CI", "text": "",
            "attachments": [{"fallback": "Build #12 passed", "fields": [{"title": "Branch", "value": "master"}, {"value": "2 min"}]}]});
        let p = read_message(&m, &users());
        assert_eq!((p.author.as_str(), p.unnamed_bot), ("Travis CI", None));
        assert_eq!(p.body, "Branch: master\n2 min", "fields are shown, the fallback only when nothing else is");
        let m = json!({"subtype": "bot_message", "bot_id": "B3", "bot_profile": {"name": "jira"}, "text": "",
            "attachments": [{"fallback": "PROJ-7 moved to Done"}]});
        let p = read_message(&m, &users());
        assert_eq!((p.author.as_str(), p.body.as_str()), ("jira", "PROJ-7 moved to Done"));
    }

    #[test]
    fn a_file_comment_is_by_its_commenter() {
        let m = json!({"subtype": "file_comment", "text": "<@U1> commented on <@U1>’s file <https://x/10_cities.js|10 cities>: looks right",
            "file": {"title": "10 cities", "name": "10_cities.js"},
            "comment": {"user": "U1", "comment": "looks right"}});
        let p = read_message(&m, &users());
        assert_eq!((p.author.as_str(), p.body.as_str()), ("Hamza Faran", "looks right [comment on file: 10 cities]"));
    }

    #[test]
    fn a_link_preview_joins_a_persons_post_once() {
        let m = json!({"user": "U1", "text": "<https://www.maxmind.com/x>",
            "attachments": [{"title": "Free World Cities Database | MaxMind", "text": "Download our free world cities database.",
                "fallback": "Free World Cities Database | MaxMind"}]});
        let p = read_message(&m, &users());
        assert_eq!(
            p.body,
            "https://www.maxmind.com/x\nFree World Cities Database | MaxMind\nDownload our free world cities database."
        );
        let echo = json!({"user": "U1", "text": "deploy done", "attachments": [{"fallback": "deploy done"}]});
        assert_eq!(read_message(&echo, &users()).body, "deploy done");
    }
}
