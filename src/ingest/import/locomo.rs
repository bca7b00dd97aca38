//! The LoCoMo format (`locomo10.json`): each conversation one chat source
//! `locomo:<sample_id>`, one leaf per turn, session date + turn order as timestamps, the
//! speaker as author (a speaker named `Assistant` is the host's assistant: [`role_of`]), a
//! shared photo's caption kept in the text, `dia_id` in `source_ref`.

use super::read_utf8;
use crate::error::{Error, Result};
use crate::ingest::{ChatMessage, Item, Role};
use crate::text::clip;
use serde_json::Value;
use std::path::Path;

/// Seconds between consecutive turns of a session (the corpus has only session times).
const TURN_SPACING_MS: i64 = 30_000;

/// One turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// `D<session>:<n>`.
    pub dia_id: String,
    /// Speaker.
    pub speaker: String,
    /// Text, with `[shares a photo: <caption>]` appended when a photo was shared.
    pub text: String,
    /// Content time, epoch ms.
    pub ts_ms: i64,
    /// Session number.
    pub session: u32,
}

/// One question with its evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The question.
    pub question: String,
    /// The reference answer, when given.
    pub answer: Option<String>,
    /// Evidence turn ids, split on `;`, `,` and white space.
    pub evidence: Vec<String>,
    /// 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    pub category: u32,
    /// The question's `type` when the corpus names one (BEAM's abilities, e.g.
    /// `event_ordering`); the harness reports per type beside the categories.
    pub kind: Option<String>,
}

/// One conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// e.g. `conv-26`.
    pub sample_id: String,
    /// Its turns in order.
    pub turns: Vec<Turn>,
    /// Its questions.
    pub questions: Vec<Question>,
}

impl Conversation {
    /// The chat source id.
    pub fn source_id(&self) -> String {
        format!("locomo:{}", self.sample_id)
    }

    /// The turns as chat items, `source_ref` = `locomo:<sample>#<dia_id>`.
    pub fn items(&self) -> Vec<Item> {
        self.turns
            .iter()
            .map(|t| {
                Item::Chat(ChatMessage {
                    source_id: self.source_id().into(),
                    author: t.speaker.clone(),
                    ts_ms: t.ts_ms,
                    text: t.text.clone(),
                    source_ref: Some(format!("{}#{}", self.source_id(), t.dia_id)),
                    participants: Vec::new(),
                    tags: Vec::new(),
                    role: role_of(&t.speaker),
                    title: None,
                })
            })
            .collect()
    }
}

/// The speaker name that marks the host's own assistant in the LoCoMo shape (compared
/// case-insensitively, trimmed): user–assistant chats written in this shape (BEAM) name their
/// two speakers `User` and `Assistant`. Every other speaker is a person.
pub const ASSISTANT_SPEAKER: &str = "assistant";

/// The role of a LoCoMo speaker: [`Role::Assistant`] for [`ASSISTANT_SPEAKER`].
pub fn role_of(speaker: &str) -> Role {
    if speaker.trim().eq_ignore_ascii_case(ASSISTANT_SPEAKER) { Role::Assistant } else { Role::Person }
}

/// The `dia_id` a LoCoMo leaf's `source_ref` points to.
// Only the harness maps a hit back to its turn.
#[cfg(any(test, feature = "harness"))]
pub fn dia_id_of(source_ref: &str) -> Option<&str> {
    source_ref.rsplit_once('#').map(|(_, d)| d)
}

/// Parse `1:56 pm on 8 May, 2023` as UTC epoch ms.
pub fn parse_session_time(s: &str) -> Option<i64> {
    let (time, date) = s.trim().split_once(" on ")?;
    let (hm, ampm) = time.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let mut h: u32 = h.trim().parse().ok()?;
    let m: u32 = m.trim().parse().ok()?;
    match ampm.trim().to_ascii_lowercase().as_str() {
        "pm" if h < 12 => h += 12,
        "am" if h == 12 => h = 0,
        "am" | "pm" => {}
        _ => return None,
    }
    let date = chrono::NaiveDate::parse_from_str(date.trim(), "%d %B, %Y").ok()?;
    Some(date.and_hms_opt(h, m, 0)?.and_utc().timestamp_millis())
}

/// Parse a LoCoMo JSON file.
pub fn read_locomo(path: &Path) -> Result<Vec<Conversation>> {
    let entries = read_samples(path)?;
    entries.iter().enumerate().map(|(ci, c)| conversation(path, ci, c)).collect()
}

/// The samples of a LoCoMo-shaped JSON file (an array of objects), unparsed: the recall
/// harness reads samples that name files to import in place of a `conversation`.
pub(crate) fn read_samples(path: &Path) -> Result<Vec<Value>> {
    let text = read_utf8(path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| Error::ImportFormat {
        path: path.to_path_buf(),
        line: e.line(),
        reason: e.to_string(),
    })?;
    match v {
        Value::Array(entries) => Ok(entries),
        _ => Err(format_error(path, "expected a JSON array of conversations".into())),
    }
}

fn format_error(path: &Path, reason: String) -> Error {
    Error::ImportFormat { path: path.to_path_buf(), line: 0, reason }
}

/// A sample's `sample_id`.
pub(crate) fn sample_id<'a>(path: &Path, ci: usize, c: &'a Value) -> Result<&'a str> {
    c["sample_id"].as_str().ok_or_else(|| format_error(path, format!("conversation {ci}: no sample_id")))
}

/// Sample `ci` of the file at `path` as a conversation.
pub(crate) fn conversation(path: &Path, ci: usize, c: &Value) -> Result<Conversation> {
    let bad = |reason: String| format_error(path, reason);
    let sample_id = sample_id(path, ci, c)?;
    let shown = clip(sample_id, 60);
    let conv = c["conversation"].as_object().ok_or_else(|| bad(format!("{shown}: no conversation object")))?;
    let mut sessions: Vec<u32> = conv.keys().filter_map(|k| k.strip_prefix("session_")?.parse().ok()).collect();
    sessions.sort_unstable();
    let mut turns = Vec::new();
    for s in sessions {
        let Some(list) = conv[&format!("session_{s}")].as_array() else { continue };
        let when = conv
            .get(&format!("session_{s}_date_time"))
            .and_then(|d| d.as_str())
            .and_then(parse_session_time)
            .ok_or_else(|| bad(format!("{shown}: session_{s} has no readable date_time")))?;
        for (i, t) in list.iter().enumerate() {
            let speaker = t["speaker"].as_str().unwrap_or_default().to_string();
            let dia_id = t["dia_id"].as_str().unwrap_or_default().to_string();
            let mut text = t["text"].as_str().unwrap_or_default().to_string();
            if let Some(cap) = t.get("blip_caption").and_then(|c| c.as_str()) {
                text = format!("{text} [shares a photo: {cap}]");
            }
            if text.trim().is_empty() || dia_id.is_empty() {
                continue;
            }
            turns.push(Turn { dia_id, speaker, text, ts_ms: when + i as i64 * TURN_SPACING_MS, session: s });
        }
    }
    let conv = Conversation { sample_id: sample_id.to_string(), turns, questions: questions(c) };
    // Validate now, as the other importers do: the CLI ingests one conversation at a time,
    // so a turn that ingest refuses (a NUL in the sample id, a date past 9999) must fail
    // the import before the conversations ahead of it are written.
    for (t, item) in conv.turns.iter().zip(conv.items()) {
        item.validate().map_err(|e| bad(format!("{shown}: turn {}: {e}", clip(&t.dia_id, 60))))?;
    }
    Ok(conv)
}

/// A sample's `qa` list.
pub(crate) fn questions(c: &Value) -> Vec<Question> {
    let mut questions = Vec::new();
    for q in c["qa"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let evidence = q["evidence"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|e| e.as_str())
            .flat_map(|e| e.split([';', ',', ' ']).map(str::trim).filter(|x| !x.is_empty()).map(String::from))
            .collect();
        let answer = match &q["answer"] {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        };
        questions.push(Question {
            question: q["question"].as_str().unwrap_or_default().to_string(),
            answer,
            evidence,
            category: q["category"].as_u64().unwrap_or(0) as u32,
            kind: q["type"].as_str().map(str::trim).filter(|t| !t.is_empty()).map(String::from),
        });
    }
    questions
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_times_parse() {
        let t = parse_session_time("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(chrono::DateTime::from_timestamp_millis(t).unwrap().to_rfc3339(), "2023-05-08T13:56:00+00:00");
        let t = parse_session_time("12:05 am on 20 January, 2024").unwrap();
        assert_eq!(chrono::DateTime::from_timestamp_millis(t).unwrap().to_rfc3339(), "2024-01-20T00:05:00+00:00");
        assert!(parse_session_time("noon on Tuesday").is_none());
    }

    #[test]
    fn a_speaker_named_assistant_is_the_hosts_assistant() {
        assert_eq!(role_of("Assistant"), Role::Assistant);
        assert_eq!(role_of(" assistant "), Role::Assistant);
        for person in ["User", "Caroline", "Assistant Manager", ""] {
            assert_eq!(role_of(person), Role::Person, "{person:?}");
        }
    }

    #[test]
    fn dia_ids_round_trip_through_source_ref() {
        assert_eq!(dia_id_of("locomo:conv-26#D1:3"), Some("D1:3"));
    }
}
