//! The LoCoMo format (`locomo10.json`): each conversation one chat source
//! `locomo:<sample_id>`, one leaf per turn, session date + turn order as timestamps, the
//! speaker as author (a speaker named `Assistant` is the host's assistant: [`role_of`]), a
//! shared photo's caption kept in the text, `dia_id` in `source_ref`.

use super::{ReadReport, read_json_lossy};
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
    /// The moment the question is asked, epoch ms, from its `question_date` when the corpus
    /// gives one (LongMemEval's, [`parse_question_date`]): the harness asks it at that moment.
    pub asked_ms: Option<i64>,
    /// The sessions that hold its evidence (`evidence_sessions`, LongMemEval's answer
    /// sessions as LoCoMo session numbers), for session-level recall; empty when not given.
    pub evidence_sessions: Vec<u32>,
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

/// The session number of a LoCoMo turn id (`D43:5` → 43).
#[cfg(any(test, feature = "harness"))]
pub fn session_of(dia_id: &str) -> Option<u32> {
    dia_id.strip_prefix('D')?.split_once(':')?.0.parse().ok()
}

/// Parse LongMemEval's `question_date`, `2023/05/30 (Tue) 10:18`, as UTC epoch ms (the corpus
/// gives no zone, and its session dates are read as UTC too). The weekday may be left out;
/// when given it must be the date's, so a date that contradicts itself is not read.
pub fn parse_question_date(s: &str) -> Option<i64> {
    let s = s.trim();
    chrono::NaiveDateTime::parse_from_str(s, "%Y/%m/%d (%a) %H:%M")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(s, "%Y/%m/%d %H:%M"))
        .ok()
        .map(|t| t.and_utc().timestamp_millis())
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

/// Parse a LoCoMo JSON file, all or nothing: the first record that cannot be read is the
/// error (the recall harness reads its corpora so). See [`read_locomo_reported`].
///
/// # Errors
/// Those of [`read_locomo_reported`], and the first of its warnings.
#[cfg(any(feature = "harness", test))]
pub fn read_locomo(path: &Path) -> Result<Vec<Conversation>> {
    let (convs, report) = read_locomo_reported(path)?;
    report.strict(path)?;
    Ok(convs)
}

/// Parse a LoCoMo JSON file, with the report of what was read: the records are the turns. A
/// conversation without a `sample_id` or a `conversation` object is skipped and named (one
/// record); the turns of a session without a readable `date_time` are skipped, the session
/// named; a turn ingest would refuse is skipped and named; a turn without text or `dia_id`
/// is skipped (`empty turn`). Bytes that are not UTF-8 are read as U+FFFD and named.
///
/// # Errors
/// [`Error::ImportFormat`] when the file is not a JSON array; [`Error::Io`].
pub fn read_locomo_reported(path: &Path) -> Result<(Vec<Conversation>, ReadReport)> {
    let mut report = ReadReport::default();
    let entries = samples(path, &mut report)?;
    let convs: Vec<Conversation> =
        entries.iter().enumerate().filter_map(|(ci, c)| conversation_reported(ci, c, &mut report)).collect();
    report.written = convs.iter().map(|c| c.turns.len() as u64).sum();
    Ok((convs, report))
}

/// The samples of a LoCoMo-shaped JSON file (an array of objects), unparsed: the recall
/// harness reads samples that name files to import in place of a `conversation`.
#[cfg(any(feature = "harness", test))]
pub(crate) fn read_samples(path: &Path) -> Result<Vec<Value>> {
    let mut report = ReadReport::default();
    let entries = samples(path, &mut report)?;
    report.strict(path)?;
    Ok(entries)
}

fn samples(path: &Path, report: &mut ReadReport) -> Result<Vec<Value>> {
    match read_json_lossy(path, None, report, "not LoCoMo JSON")? {
        None => Ok(Vec::new()),
        Some((_, Value::Array(entries))) => Ok(entries),
        Some(_) => Err(format_error(path, "expected a JSON array of conversations".into())),
    }
}

fn format_error(path: &Path, reason: String) -> Error {
    Error::ImportFormat { path: path.to_path_buf(), line: 0, reason }
}

/// A sample's `sample_id`.
#[cfg(any(feature = "harness", test))]
pub(crate) fn sample_id<'a>(path: &Path, ci: usize, c: &'a Value) -> Result<&'a str> {
    c["sample_id"].as_str().ok_or_else(|| format_error(path, format!("conversation {ci}: no sample_id")))
}

/// Sample `ci` of the file at `path` as a conversation, all or nothing (the harness's).
#[cfg(any(feature = "harness", test))]
pub(crate) fn conversation(path: &Path, ci: usize, c: &Value) -> Result<Conversation> {
    let mut report = ReadReport::default();
    let conv = conversation_reported(ci, c, &mut report);
    report.strict(path)?;
    conv.ok_or_else(|| format_error(path, format!("conversation {ci}: nothing readable")))
}

/// Sample `ci` as a conversation, its unreadable parts skipped and named in `report` (see
/// [`read_locomo_reported`]); `None` when the sample itself cannot be read.
fn conversation_reported(ci: usize, c: &Value, report: &mut ReadReport) -> Option<Conversation> {
    let Some(sample_id) = c["sample_id"].as_str() else {
        report.read += 1;
        report.unreadable(UNREADABLE_CONVERSATION, 0, format!("conversation {ci}: no sample_id: skipped"));
        return None;
    };
    let shown = clip(sample_id, 60);
    let Some(conv) = c["conversation"].as_object() else {
        report.read += 1;
        report.unreadable(UNREADABLE_CONVERSATION, 0, format!("{shown}: no conversation object: skipped"));
        return None;
    };
    let mut sessions: Vec<u32> = conv.keys().filter_map(|k| k.strip_prefix("session_")?.parse().ok()).collect();
    sessions.sort_unstable();
    let mut turns = Vec::new();
    for s in sessions {
        let Some(list) = conv[&format!("session_{s}")].as_array() else { continue };
        let when = conv.get(&format!("session_{s}_date_time")).and_then(|d| d.as_str()).and_then(parse_session_time);
        let Some(when) = when else {
            report.read += list.len() as u64;
            *report.skipped.entry("turn of a session without a date".into()).or_default() += list.len() as u64;
            report.warn(0, format!("{shown}: session_{s} has no readable date_time: its {} turns skipped", list.len()));
            continue;
        };
        for (i, t) in list.iter().enumerate() {
            report.read += 1;
            let speaker = t["speaker"].as_str().unwrap_or_default().to_string();
            let dia_id = t["dia_id"].as_str().unwrap_or_default().to_string();
            let mut text = t["text"].as_str().unwrap_or_default().to_string();
            if let Some(cap) = t.get("blip_caption").and_then(|c| c.as_str()) {
                text = format!("{text} [shares a photo: {cap}]");
            }
            if text.trim().is_empty() || dia_id.is_empty() {
                report.skip("empty turn");
                continue;
            }
            turns.push(Turn { dia_id, speaker, text, ts_ms: when + i as i64 * TURN_SPACING_MS, session: s });
        }
    }
    let mut conv = Conversation { sample_id: sample_id.to_string(), turns, questions: questions(c) };
    // Validate now, as the other importers do: a turn that ingest refuses (a NUL in the
    // sample id, a date past 9999) is skipped and named before anything is written.
    let items = conv.items();
    let mut keep = Vec::with_capacity(conv.turns.len());
    for (t, item) in conv.turns.drain(..).zip(items) {
        match item.validate() {
            Ok(()) => keep.push(t),
            Err(e) => {
                report.unreadable("unreadable turn", 0, format!("{shown}: turn {}: {e}: skipped", clip(&t.dia_id, 60)))
            }
        }
    }
    conv.turns = keep;
    Some(conv)
}

/// The reason a conversation that cannot be read is counted under.
const UNREADABLE_CONVERSATION: &str = "unreadable conversation";

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
        let mut evidence_sessions: Vec<u32> = q["evidence_sessions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|n| u32::try_from(n.as_u64()?).ok())
            .collect();
        evidence_sessions.sort_unstable();
        evidence_sessions.dedup();
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
            asked_ms: q["question_date"].as_str().and_then(parse_question_date),
            evidence_sessions,
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
        assert_eq!(session_of("D43:5"), Some(43));
        for not_a_turn in ["43:5", "D43", "Dx:5", "doc:team.md", ""] {
            assert_eq!(session_of(not_a_turn), None, "{not_a_turn:?}");
        }
    }

    #[test]
    fn question_dates_parse() {
        let t = parse_question_date("2023/05/30 (Tue) 10:18").unwrap();
        assert_eq!(chrono::DateTime::from_timestamp_millis(t).unwrap().to_rfc3339(), "2023-05-30T10:18:00+00:00");
        assert_eq!(parse_question_date(" 2023/05/30 10:18 "), Some(t));
        // A weekday that is not the date's (30 May 2023 is a Tuesday), a day past the month's
        // end, another layout, nothing.
        for bad in ["2023/05/30 (Wed) 10:18", "2023/02/30 (Thu) 10:18", "30 May 2023 10:18", "2023/05/30", ""] {
            assert_eq!(parse_question_date(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn question_date_and_evidence_sessions_are_read() {
        let c: Value = serde_json::from_str(
            r#"{"qa":[{"question":"q?","evidence":["D43:5"],"category":4,
                "question_date":"2023/05/30 (Tue) 10:18","evidence_sessions":[43,7,43]},
               {"question":"r?","evidence":["D1:1"],"category":4,"question_date":"soon"}]}"#,
        )
        .unwrap();
        let qs = questions(&c);
        assert_eq!(qs[0].asked_ms, parse_question_date("2023/05/30 (Tue) 10:18"));
        assert_eq!(qs[0].evidence_sessions, vec![7, 43]);
        assert_eq!((qs[1].asked_ms, qs[1].evidence_sessions.is_empty()), (None, true));
    }
}
