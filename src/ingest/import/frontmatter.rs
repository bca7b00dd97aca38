//! A note's YAML front matter (`---` … `---` at the top, as Obsidian writes it): metadata, not
//! body text. Read here into the note's dates, tags and aliases; the body is what follows.

use crate::entities::split_front_matter;
use chrono::{DateTime, NaiveDate, NaiveDateTime};
use serde_norway::Value;

/// What a note's front matter says, and the body after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FrontMatter<'a> {
    /// The text after the front matter (the whole note when it has none or it is malformed).
    pub body: &'a str,
    /// `date`, else `created`: when the note happened, epoch ms.
    pub date_ms: Option<i64>,
    /// `updated` (also `modified`): when it was last edited, epoch ms.
    pub updated_ms: Option<i64>,
    /// `tags`: a list or a comma/space-separated string, `#` dropped.
    pub tags: Vec<String>,
    /// `aliases` (also `alias`): other names of the note.
    pub aliases: Vec<String>,
    /// `title`: the note's title, ahead of its first heading and its file name.
    pub title: Option<String>,
    /// Why the front matter was not read (then `body` is the whole note).
    pub warning: Option<String>,
}

/// Split `text` into front matter and body. A note without front matter is all body; a
/// front matter that is not YAML or not a mapping leaves the note all body with a warning
/// (a malformed header never fails an import).
pub(crate) fn parse(text: &str) -> FrontMatter<'_> {
    let Some((yaml, body)) = split_front_matter(text) else {
        return FrontMatter { body: text, ..FrontMatter::default() };
    };
    let map = match serde_norway::from_str::<Value>(yaml) {
        Ok(Value::Mapping(m)) => m,
        // `---\n---`: an empty header is no header.
        Ok(Value::Null) => return FrontMatter { body, ..FrontMatter::default() },
        Ok(_) => return malformed(text, "front matter is not a mapping of keys to values".into()),
        Err(e) => return malformed(text, format!("front matter is not YAML: {e}")),
    };
    let get = |keys: &[&str]| keys.iter().find_map(|k| map.get(*k)).filter(|v| !v.is_null());
    let mut fm = FrontMatter { body, ..FrontMatter::default() };
    let mut bad_date = |key: &str, v: &Value| {
        let ms = value_time(v);
        if ms.is_none() {
            fm.warning.get_or_insert_with(|| format!("`{key}` is not a date: {}", value_text(v).unwrap_or_default()));
        }
        ms
    };
    let date =
        get(&["date"]).map(|v| bad_date("date", v)).or_else(|| get(&["created"]).map(|v| bad_date("created", v)));
    let updated = get(&["updated", "modified"]).map(|v| bad_date("updated", v));
    fm.date_ms = date.flatten();
    fm.updated_ms = updated.flatten();
    fm.tags = get(&["tags", "tag"]).map(|v| words(v, true)).unwrap_or_default();
    fm.aliases = get(&["aliases", "alias"]).map(|v| words(v, false)).unwrap_or_default();
    fm.title = get(&["title"]).and_then(value_text).filter(|t| !t.is_empty());
    fm
}

/// The text of a note's first level-1 heading (`# Title`, ATX) that lies outside fenced code
/// blocks (```` ``` ```` or `~~~`, closed by a fence of the same character at least as long):
/// a `# comment` in a shell snippet is not the note's title.
pub(crate) fn first_heading(body: &str) -> Option<String> {
    let mut fence: Option<(char, usize)> = None;
    for line in body.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let run = |c: char| t.chars().take_while(|&x| x == c).count();
        match fence {
            Some((c, n)) => {
                if indent < 4 && run(c) >= n && t[run(c) * c.len_utf8()..].trim().is_empty() {
                    fence = None;
                }
            }
            None => {
                if indent < 4 {
                    for c in ['`', '~'] {
                        if run(c) >= 3 {
                            fence = Some((c, run(c)));
                        }
                    }
                }
                if fence.is_none()
                    && indent < 4
                    && let Some(rest) = t.strip_prefix('#')
                    && (rest.is_empty() || rest.starts_with([' ', '\t']))
                {
                    let title = rest.trim().trim_end_matches('#').trim();
                    if !title.is_empty() {
                        return Some(title.to_string());
                    }
                }
            }
        }
    }
    None
}

fn malformed(text: &str, reason: String) -> FrontMatter<'_> {
    FrontMatter { body: text, warning: Some(reason), ..FrontMatter::default() }
}

/// A scalar as text (YAML reads `2023` as a number, `true` as a bool).
fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Tagged(t) => value_text(&t.value),
        _ => None,
    }
}

/// The entries of a list, or of a string split at commas (tags also at white space, as
/// Obsidian reads `tags: a b`); tags lose a leading `#`. Blank entries and repeats are dropped.
fn words(v: &Value, is_tag: bool) -> Vec<String> {
    let raw: Vec<String> = match v {
        Value::Sequence(items) => items.iter().filter_map(value_text).collect(),
        other => value_text(other)
            .map(|s| {
                let parts: Vec<&str> = if is_tag {
                    s.split(|c: char| c == ',' || c.is_whitespace()).collect()
                } else {
                    s.split(',').collect()
                };
                parts.into_iter().map(str::to_string).collect()
            })
            .unwrap_or_default(),
    };
    let mut out: Vec<String> = Vec::new();
    for w in raw {
        let w = w.trim();
        let w = if is_tag { w.trim_start_matches('#') } else { w };
        if !w.is_empty() && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// A front-matter date: `2023-05-13` (midnight UTC), `2023-05-13T09:30[:00]` or
/// `2023-05-13 09:30[:00]` (UTC), or RFC 3339 with an offset.
fn value_time(v: &Value) -> Option<i64> {
    parse_time(&value_text(v)?)
}

pub(crate) fn parse_time(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    for f in ["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(t.and_utc().timestamp_millis());
        }
    }
    day_ms(s)
}

/// `YYYY-MM-DD` as midnight UTC, epoch ms.
fn day_ms(s: &str) -> Option<i64> {
    let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis())
}

/// The date a file name opens with, as Obsidian daily notes are named (`2023-05-13.md`,
/// `2023-05-13 Standup.md`): ten characters `YYYY-MM-DD` followed by the end or a non-digit.
pub(crate) fn file_name_date(stem: &str) -> Option<i64> {
    let head = stem.get(..10)?;
    if stem[10..].chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    day_ms(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAY_13: i64 = 1_683_936_000_000;

    #[test]
    fn front_matter_is_metadata() {
        let fm = parse(
            "---\ndate: 2023-05-13\ntags: [ops, \"#atlas\"]\naliases: Cutover\n---\n# Cutover\nJonas Berg ran it.\n",
        );
        assert_eq!(fm.body, "# Cutover\nJonas Berg ran it.\n");
        assert_eq!(fm.date_ms, Some(MAY_13));
        assert_eq!(fm.tags, vec!["ops", "atlas"]);
        assert_eq!(fm.aliases, vec!["Cutover"]);
        assert_eq!(fm.warning, None);
    }

    #[test]
    fn date_wins_over_created_and_updated_is_kept_apart() {
        let fm = parse("---\ncreated: 2023-05-01\ndate: 2023-05-13\nupdated: 2023-06-01T10:00:00Z\n---\nx");
        assert_eq!(fm.date_ms, Some(MAY_13));
        assert_eq!(fm.updated_ms, Some(1_685_613_600_000));
        let fm = parse("---\ncreated: 2023-05-13 00:00\ntags: \"#a, b c\"\n---\nx");
        assert_eq!(fm.date_ms, Some(MAY_13));
        assert_eq!(fm.tags, vec!["a", "b", "c"]);
    }

    #[test]
    fn malformed_front_matter_is_body_with_a_warning() {
        let text = "---\ndate: [unclosed\n---\nbody";
        let fm = parse(text);
        assert_eq!(fm.body, text);
        assert!(fm.warning.as_deref().is_some_and(|w| w.contains("not YAML")), "{:?}", fm.warning);
        let fm = parse("---\n- a list\n---\nbody");
        assert_eq!(fm.body, "---\n- a list\n---\nbody");
        assert!(fm.warning.is_some());
        let fm = parse("---\ndate: someday\n---\nbody");
        assert_eq!((fm.body, fm.date_ms), ("body", None));
        assert!(fm.warning.as_deref().is_some_and(|w| w.contains("`date`")));
        assert_eq!(parse("no header").body, "no header");
    }

    #[test]
    fn titles_come_from_front_matter_else_the_first_heading_outside_code() {
        assert_eq!(parse("---\ntitle: Boiler log\n---\n# Other\n").title.as_deref(), Some("Boiler log"));
        assert_eq!(parse("---\ntitle: 2023\n---\nx").title.as_deref(), Some("2023"));
        assert_eq!(parse("---\ntitle: \"\"\n---\nx").title, None);
        let body =
            "Intro\n```sh\n# install it\n```\n~~~~\n# not either\n~~~\n~~~~\n#hashtag\n## Section\n# Real title #\n";
        assert_eq!(first_heading(body).as_deref(), Some("Real title"));
        assert_eq!(first_heading("```\n# inside an unclosed fence\n"), None);
        assert_eq!(first_heading("    # indented code\n"), None);
    }

    #[test]
    fn daily_note_names_carry_their_date() {
        assert_eq!(file_name_date("2023-05-13"), Some(MAY_13));
        assert_eq!(file_name_date("2023-05-13 Standup"), Some(MAY_13));
        assert_eq!(file_name_date("2023-05-131"), None);
        assert_eq!(file_name_date("2023-13-01"), None);
        assert_eq!(file_name_date("Standup"), None);
        assert_eq!(file_name_date("2023-05-1é"), None);
    }
}
