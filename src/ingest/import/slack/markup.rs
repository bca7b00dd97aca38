//! Slack's message markup to plain text.

use std::collections::HashMap;

/// Slack markup to plain text: `<@U1>` → `@Name`, `<#C1|eng>` → `#eng`, `<!here>` →
/// `@here`, `<https://x|label>` → `label (https://x)`, `<mailto:a@b|a@b>` → `a@b`, and the
/// three escaped characters.
pub(super) fn slack_to_text(text: &str, users: &HashMap<String, String>) -> String {
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

/// The id of the integration a `bot_add` notice names, with its label: "added an integration
/// to this channel: <https://team.slack.com/services/B0JL6RASU|github>" → (`B0JL6RASU`,
/// `github`). Old exports name a bot nowhere else (no `username`, no `bot_profile`).
pub(super) fn added_integration(text: &str) -> Option<(&str, &str)> {
    let link = &text[text.find("/services/")? + "/services/".len()..];
    let (id, rest) = link.split_once('|')?;
    let label = rest.split_once('>')?.0.trim();
    let id = id.trim_end_matches('/');
    (!id.is_empty() && !label.is_empty() && !id.contains(['/', ' '])).then_some((id, label))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_integration_notice_names_its_bot() {
        let t = "added an integration to this channel: <https://mesos-magellan.slack.com/services/B0JL6RASU|github>";
        assert_eq!(added_integration(t), Some(("B0JL6RASU", "github")));
        assert_eq!(added_integration("added an integration to this channel"), None);
        assert_eq!(added_integration("<https://x.slack.com/services/|github>"), None);
    }
}
