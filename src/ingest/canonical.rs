//! The three kinds of input and their canonical form: leaf drafts with deterministic ids and
//! the entities their structured fields imply.

use super::chunk::{slice_document, split_oversized};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::types::{EntityKind, NodeId, SourceId, SourceKind};
use serde::{Deserialize, Serialize};

/// Earliest accepted content time (1970-01-01) and latest (9999-12-31), epoch ms.
const MIN_TS: i64 = 0;
const MAX_TS: i64 = 253_402_300_799_999;

/// Who wrote a chat message, as the host knows it. A host knows which messages are its own
/// assistant's: those answer the user rather than say what the user did, planned or prefers,
/// and walk ranks them below the people's own words (ARCHITECTURE.md, "walk, as built").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A person: the user, or someone the user talks to (the default).
    #[default]
    #[serde(alias = "user")]
    Person,
    /// The host's own assistant.
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// The channel or conversation, e.g. `slack:#eng`.
    pub source_id: SourceId,
    /// Who wrote it (becomes a `person:` entity).
    pub author: String,
    /// When, epoch ms.
    pub ts_ms: i64,
    /// The message.
    pub text: String,
    /// Permalink or message id.
    #[serde(default)]
    pub source_ref: Option<String>,
    /// Other people in the conversation, when known.
    #[serde(default)]
    pub participants: Vec<String>,
    /// Free tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Who wrote it: a person (default) or the host's assistant.
    #[serde(default)]
    pub role: Role,
    /// The conversation's title (an assistant export's), kept on the source when known.
    #[serde(default)]
    pub title: Option<String>,
}

/// One e-mail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmailMessage {
    /// The thread, e.g. `gmail:thread-8812`.
    pub source_id: SourceId,
    /// `Message-ID`, when known (makes the leaf id stable across re-imports).
    #[serde(default)]
    pub message_id: Option<String>,
    /// `From`, e.g. `Alice Smith <alice@example.com>`.
    pub from: String,
    /// `To` addresses.
    #[serde(default)]
    pub to: Vec<String>,
    /// `Cc` addresses.
    #[serde(default)]
    pub cc: Vec<String>,
    /// Subject line.
    #[serde(default)]
    pub subject: String,
    /// `Date`, epoch ms.
    pub date_ms: i64,
    /// Plain-text body.
    pub body: String,
    /// Back-pointer (permalink or message id).
    #[serde(default)]
    pub source_ref: Option<String>,
}

/// One document (a note, a page, a file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// e.g. `doc:notes/roadmap.md`, `notion:page-123`.
    pub source_id: SourceId,
    /// Title.
    pub title: String,
    /// Full text.
    pub body: String,
    /// Last modification, epoch ms; `None` when unknown, stored as the time of the write.
    #[serde(default)]
    pub modified_ms: Option<i64>,
    /// Path or URL.
    #[serde(default)]
    pub source_ref: Option<String>,
    /// Where it lives (`notion`, `drive`, `obsidian`…).
    #[serde(default)]
    pub provider: Option<String>,
}

/// A streamed item (documents go through `ingest_document`, which replaces).
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// A chat message.
    Chat(ChatMessage),
    /// An e-mail.
    Email(EmailMessage),
}

/// A leaf ready to append.
#[derive(Debug, Clone, PartialEq)]
pub struct LeafDraft {
    /// Its source.
    pub source_id: SourceId,
    /// Kind of the source.
    pub source_kind: SourceKind,
    /// Deterministic id.
    pub node_id: NodeId,
    /// Text as stored and indexed.
    pub content: String,
    /// Author, when any.
    pub author: Option<String>,
    /// Participants.
    pub participants: Vec<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Back-pointer.
    pub source_ref: Option<String>,
    /// Content time, epoch ms.
    pub ts_ms: i64,
    /// Piece of a split message.
    pub split: bool,
    /// Who wrote it (chat; every other leaf is [`Role::Person`]).
    pub role: Role,
    /// Entities implied by structured fields, as (kind, surface).
    pub structured: Vec<(EntityKind, String)>,
    /// Document title (documents only).
    pub title: Option<String>,
}

fn check_source(source: &SourceId) -> Result<()> {
    if source.0.trim().is_empty() {
        return Err(Error::invalid("source_id", "must not be blank"));
    }
    if source.0.len() > 1024 || source.0.contains('\0') {
        return Err(Error::invalid("source_id", "must be at most 1024 bytes, without NUL"));
    }
    Ok(())
}

fn check_ts(field: &str, ts: i64) -> Result<()> {
    if !(MIN_TS..=MAX_TS).contains(&ts) {
        return Err(Error::invalid(field, format!("timestamp {ts} is outside 1970..9999")));
    }
    Ok(())
}

fn check_text(field: &str, text: &str) -> Result<()> {
    if text.trim().is_empty() {
        return Err(Error::invalid(field, "must not be empty or white space"));
    }
    Ok(())
}

/// Split `"Alice Smith <alice@example.com>"` into name and address (either may be absent).
pub fn parse_address(s: &str) -> (Option<String>, Option<String>) {
    let s = s.trim();
    if let (Some(l), Some(r)) = (s.find('<'), s.rfind('>'))
        && l < r
    {
        let name = s[..l].trim().trim_matches('"').trim();
        let addr = s[l + 1..r].trim();
        return ((!name.is_empty()).then(|| name.to_string()), (!addr.is_empty()).then(|| addr.to_string()));
    }
    if s.contains('@') { (None, Some(s.to_string())) } else { ((!s.is_empty()).then(|| s.to_string()), None) }
}

impl Item {
    /// The item's source.
    pub fn source_id(&self) -> &SourceId {
        match self {
            Item::Chat(m) => &m.source_id,
            Item::Email(m) => &m.source_id,
        }
    }

    /// Refuse an item ingest would refuse, naming the field: a blank or oversized source id,
    /// a time outside 1970..9999, a blank chat text, an e-mail with neither body nor subject.
    /// What an importer checks per item, so that its error names the line, without making
    /// the drafts that ingest makes again.
    pub fn validate(&self) -> Result<()> {
        match self {
            Item::Chat(m) => {
                check_source(&m.source_id)?;
                check_ts("ts", m.ts_ms)?;
                check_text("text", &m.text)
            }
            Item::Email(m) => {
                check_source(&m.source_id)?;
                check_ts("date", m.date_ms)?;
                if m.body.trim().is_empty() && m.subject.trim().is_empty() {
                    return Err(Error::invalid("body", "an e-mail needs a body or a subject"));
                }
                Ok(())
            }
        }
    }

    /// Validate and turn into leaf drafts (more than one when an oversized message is split).
    pub fn into_drafts(self, cfg: &Config) -> Result<Vec<LeafDraft>> {
        self.validate()?;
        match self {
            Item::Chat(m) => chat_drafts(m, cfg),
            Item::Email(m) => email_drafts(m, cfg),
        }
    }
}

/// The drafts of a validated chat message.
fn chat_drafts(m: ChatMessage, cfg: &Config) -> Result<Vec<LeafDraft>> {
    let author = m.author.trim().to_string();
    let pieces = split_oversized(&m.text, cfg.max_leaf_tokens);
    let split = pieces.len() > 1;
    let mut structured: Vec<(EntityKind, String)> = Vec::new();
    if !author.is_empty() {
        structured.push((EntityKind::Person, author.clone()));
    }
    for p in &m.participants {
        structured.push((EntityKind::Person, p.clone()));
    }
    Ok(pieces
        .into_iter()
        .enumerate()
        .map(|(i, piece)| {
            // The author stays in the text: names are retrieval signal (RETRIEVAL-NOTES §2).
            let content = if author.is_empty() { piece } else { format!("{author}: {piece}") };
            let node_id = NodeId::derive(
                'L',
                &[
                    b"chat",
                    m.source_id.0.as_bytes(),
                    &m.ts_ms.to_le_bytes(),
                    &(i as u64).to_le_bytes(),
                    content.as_bytes(),
                ],
            );
            LeafDraft {
                source_id: m.source_id.clone(),
                source_kind: SourceKind::Chat,
                node_id,
                content,
                author: (!author.is_empty()).then(|| author.clone()),
                participants: m.participants.clone(),
                tags: m.tags.clone(),
                source_ref: m.source_ref.clone(),
                ts_ms: m.ts_ms,
                split,
                role: m.role,
                structured: structured.clone(),
                title: m.title.clone(),
            }
        })
        .collect())
}

/// The drafts of a validated e-mail.
fn email_drafts(m: EmailMessage, cfg: &Config) -> Result<Vec<LeafDraft>> {
    let mut structured = Vec::new();
    let (from_name, from_addr) = parse_address(&m.from);
    for (name, addr) in std::iter::once((from_name.clone(), from_addr.clone()))
        .chain(m.to.iter().chain(&m.cc).map(|a| parse_address(a)))
    {
        if let Some(n) = name {
            structured.push((EntityKind::Person, n));
        }
        if let Some(a) = addr {
            structured.push((EntityKind::Email, a));
        }
    }
    let author = from_name.or(from_addr).unwrap_or_default();
    let participants: Vec<String> = m.to.iter().chain(&m.cc).cloned().collect();
    let pieces = split_oversized(&m.body, cfg.max_leaf_tokens);
    let split = pieces.len() > 1;
    let key = m.message_id.clone().unwrap_or_else(|| m.date_ms.to_string());
    Ok(pieces
        .into_iter()
        .enumerate()
        .map(|(i, piece)| {
            let content = format!("Subject: {}\nFrom: {}\n{}", m.subject.trim(), m.from.trim(), piece);
            let node_id = NodeId::derive(
                'L',
                &[b"email", m.source_id.0.as_bytes(), key.as_bytes(), &(i as u64).to_le_bytes(), content.as_bytes()],
            );
            LeafDraft {
                source_id: m.source_id.clone(),
                source_kind: SourceKind::Email,
                node_id,
                content,
                author: (!author.is_empty()).then(|| author.clone()),
                participants: participants.clone(),
                tags: Vec::new(),
                source_ref: m.source_ref.clone().or_else(|| m.message_id.clone()),
                ts_ms: m.date_ms,
                split,
                role: Role::Person,
                structured: structured.clone(),
                // A thread's title is its first message's subject: the store keeps the first
                // title an e-mail source is given (`upsert_source`).
                title: (!m.subject.trim().is_empty()).then(|| m.subject.trim().to_string()),
            }
        })
        .collect())
}

impl Document {
    /// Refuse a document ingest would refuse, naming the field: a blank or oversized source
    /// id, a modification time outside 1970..9999, a blank body.
    pub fn validate(&self) -> Result<()> {
        check_source(&self.source_id)?;
        if let Some(ms) = self.modified_ms {
            check_ts("modified", ms)?;
        }
        check_text("body", &self.body)
    }

    /// Validate and slice into leaf drafts; `now_ms` dates a document without a
    /// modification time.
    pub fn into_drafts(self, cfg: &Config, now_ms: i64) -> Result<Vec<LeafDraft>> {
        self.validate()?;
        let ts_ms = self.modified_ms.unwrap_or(now_ms);
        let title = self.title.trim().to_string();
        let slices = slice_document(&self.body, cfg.chunk_tokens, cfg.chunk_overlap_tokens);
        Ok(slices
            .into_iter()
            .enumerate()
            .map(|(i, slice)| {
                // The title heads every slice so each one is findable by it.
                let content = if title.is_empty() { slice } else { format!("{title}\n{slice}") };
                let node_id = NodeId::derive(
                    'L',
                    &[b"document", self.source_id.0.as_bytes(), &(i as u64).to_le_bytes(), content.as_bytes()],
                );
                LeafDraft {
                    source_id: self.source_id.clone(),
                    source_kind: SourceKind::Document,
                    node_id,
                    content,
                    author: None,
                    participants: Vec::new(),
                    tags: Vec::new(),
                    source_ref: self.source_ref.clone(),
                    ts_ms,
                    split: false,
                    role: Role::Person,
                    structured: Vec::new(),
                    title: (!title.is_empty()).then(|| title.clone()),
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse() {
        assert_eq!(
            parse_address("Alice Smith <alice@example.com>"),
            (Some("Alice Smith".into()), Some("alice@example.com".into()))
        );
        assert_eq!(parse_address("bob@example.com"), (None, Some("bob@example.com".into())));
        assert_eq!(parse_address("Carol"), (Some("Carol".into()), None));
    }

    #[test]
    fn chat_ids_are_deterministic_and_content_addressed() {
        let cfg = Config::default();
        let m = ChatMessage {
            source_id: "slack:#eng".into(),
            author: "Alice".into(),
            ts_ms: 1_700_000_000_000,
            text: "hello".into(),
            source_ref: None,
            participants: vec![],
            tags: vec![],
            role: Role::Person,
            title: None,
        };
        let a = Item::Chat(m.clone()).into_drafts(&cfg).unwrap();
        let b = Item::Chat(m.clone()).into_drafts(&cfg).unwrap();
        assert_eq!(a[0].node_id, b[0].node_id);
        assert_eq!(a[0].content, "Alice: hello");
        let c = Item::Chat(ChatMessage { text: "hello!".into(), ..m }).into_drafts(&cfg).unwrap();
        assert_ne!(a[0].node_id, c[0].node_id);
    }

    #[test]
    fn bad_input_is_refused_with_the_field() {
        let cfg = Config::default();
        let m = ChatMessage {
            source_id: "slack:#eng".into(),
            author: "A".into(),
            ts_ms: -5,
            text: "x".into(),
            source_ref: None,
            participants: vec![],
            tags: vec![],
            role: Role::Person,
            title: None,
        };
        let e = Item::Chat(m.clone()).into_drafts(&cfg).unwrap_err();
        assert!(e.to_string().starts_with("ts:"), "{e}");
        let e = Item::Chat(ChatMessage { ts_ms: 0, text: "  ".into(), ..m }).into_drafts(&cfg).unwrap_err();
        assert!(e.to_string().starts_with("text:"), "{e}");
    }
}
