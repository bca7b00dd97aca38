//! File importers: LoCoMo JSON, chat JSONL, a folder of Markdown notes, an mbox mail file, a
//! Slack export folder and ChatGPT and Claude exports, and the one dispatch from a [`Format`] to its reader and to the
//! batched writes ([`Memory::import`]) that the CLI, the REPL and any other front end share.
//! Each reader parses the whole input before anything is written, so a bad line fails the
//! import with nothing half-written, and names the file and the line.

mod assistant;
mod frontmatter;
mod json_string;
mod jsonl;
pub mod locomo;
mod markdown;
mod mbox;
mod rebase;
mod slack;
pub(crate) mod sniff;
pub(crate) mod ts;

pub use assistant::{read_chatgpt_export, read_claude_export};
pub use jsonl::read_chat_jsonl;
pub use markdown::{FileIssue, Note, NoteFolder, NoteOptions, read_markdown_dir, read_notes};
pub use mbox::read_mbox;
pub use rebase::last_week_shift;
pub use slack::read_slack_export;

use crate::error::{Error, Result};
use crate::ingest::{Document, Item};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// Chat messages and e-mails go to the writer this many at a time: one transaction each, and
/// a progress step each.
pub(crate) const ITEM_BATCH: usize = 2000;

/// An input format: the CLI's `--format` values and the REPL's `:import FORMAT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// LoCoMo JSON (each conversation one chat source).
    Locomo,
    /// One chat message per line: `{"source_id","author","ts","text","source_ref"?}`.
    ChatJsonl,
    /// A folder of Markdown notes, one document each.
    Markdown,
    /// An mbox mail file: one e-mail per message, each thread one source `mbox:<root id>`.
    Mbox,
    /// A Slack export folder (`channels.json`, `users.json`, `<channel>/<day>.json`): each
    /// channel one chat source `slack:#<name>`.
    Slack,
    /// A ChatGPT export's `conversations.json`: each conversation one chat source
    /// `chatgpt:<id>`, the branch on screen only.
    ChatGpt,
    /// A Claude export's `conversations.json`: each conversation one chat source
    /// `claude:<uuid>`.
    Claude,
}

impl Format {
    /// Every format, in the order help texts list them.
    pub const ALL: [Format; 7] = [
        Format::Locomo,
        Format::ChatJsonl,
        Format::Markdown,
        Format::Mbox,
        Format::Slack,
        Format::ChatGpt,
        Format::Claude,
    ];

    /// The name the CLI and the REPL take (`chat-jsonl`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Locomo => "locomo",
            Format::ChatJsonl => "chat-jsonl",
            Format::Markdown => "markdown",
            Format::Mbox => "mbox",
            Format::Slack => "slack",
            Format::ChatGpt => "chatgpt",
            Format::Claude => "claude",
        }
    }

    /// One line saying what the format is, for help texts.
    pub fn about(self) -> &'static str {
        match self {
            Format::Locomo => "LoCoMo JSON (each conversation one chat source)",
            Format::ChatJsonl => r#"One chat message per line: {"source_id","author","ts","text","source_ref"?}"#,
            Format::Markdown => "A folder of Markdown notes, one document each",
            Format::Mbox => "An mbox mail file: one e-mail per message, each thread one source `mbox:<root id>`",
            Format::Slack => {
                "A Slack export folder (channels.json, users.json, <channel>/<day>.json): each channel one chat \
                 source `slack:#<name>`"
            }
            Format::ChatGpt => {
                "A ChatGPT export's conversations.json: each conversation one chat source `chatgpt:<id>` (the branch \
                 on screen)"
            }
            Format::Claude => "A Claude export's conversations.json: each conversation one chat source `claude:<uuid>`",
        }
    }

    /// Parse the whole input at `path` (a file, or a folder for `markdown` and `slack`);
    /// nothing is written.
    ///
    /// # Errors
    /// [`Error::PathNotFound`] when nothing is at `path`; [`Error::WrongFormat`] when the input
    /// is plainly of another format; the reader's errors otherwise ([`Error::ImportFormat`]
    /// naming the file and the line, [`Error::Io`]).
    pub fn read(self, path: &Path) -> Result<Parsed> {
        if !path.exists() {
            return Err(Error::PathNotFound { path: path.to_path_buf() });
        }
        sniff::check(self, path)?;
        let items = |items: Vec<Item>, unit| {
            let report = ReadReport::all(items.len());
            Parsed::Items { items, unit, report }
        };
        Ok(match self {
            Format::Locomo => Parsed::Conversations(locomo::read_locomo(path)?),
            Format::ChatJsonl => items(read_chat_jsonl(path)?, "messages"),
            Format::Markdown => Parsed::Documents(read_markdown_dir(path)?),
            Format::Mbox => {
                let (items, report) = read_mbox(path)?;
                Parsed::Items { items, unit: "e-mails", report }
            }
            Format::Slack => items(read_slack_export(path)?, "messages"),
            Format::ChatGpt => {
                let (items, report) = read_chatgpt_export(&export_file(path))?;
                Parsed::Items { items, unit: "messages", report }
            }
            Format::Claude => {
                let (items, report) = read_claude_export(&export_file(path))?;
                Parsed::Items { items, unit: "messages", report }
            }
        })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = Error;

    /// A format by its [`Format::name`]; [`Error::InvalidArgument`] naming the valid ones
    /// otherwise.
    fn from_str(s: &str) -> Result<Format> {
        Format::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            Error::invalid("format", format!("unknown format `{s}`; use one of {}", names.join(", ")))
        })
    }
}

/// A whole input, parsed and not yet written, in the shape its format is written in.
#[derive(Debug, Clone)]
pub enum Parsed {
    /// Chat messages or e-mails, written in batches; `unit` names them in progress reports.
    Items {
        /// The items, in file order.
        items: Vec<Item>,
        /// `messages`, `e-mails`.
        unit: &'static str,
        /// What the reader found in the input and left out.
        report: ReadReport,
    },
    /// LoCoMo conversations, one write each.
    Conversations(Vec<locomo::Conversation>),
    /// Markdown notes, one write (a replace) each.
    Documents(Vec<Document>),
}

/// How far the writes of an import have got: `done` of `total` `unit`s. Reported once before
/// the first write (`done` = 0) and after each write; `done` = `total` at the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// What is counted: `turns`, `messages`, `e-mails`, `documents`.
    pub unit: &'static str,
    /// Written so far.
    pub done: u64,
    /// In the whole input.
    pub total: u64,
}

/// An assistant export's `conversations.json`: the file itself, or the unzipped export
/// folder that holds it.
fn export_file(path: &Path) -> std::path::PathBuf {
    if path.is_dir() { path.join(EXPORT_FILE) } else { path.to_path_buf() }
}

/// The file of a ChatGPT or Claude export that holds the conversations.
pub(crate) const EXPORT_FILE: &str = "conversations.json";

/// What a reader found in its input besides the items it hands on: the messages it read,
/// those it left out by reason, and the places it was unsure how to read, each named.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReadReport {
    /// Messages found in the input.
    pub read: u64,
    /// Messages handed to the writer (each one leaf or more, or a duplicate of a stored one).
    pub written: u64,
    /// What was left out, by reason (`"system message": 12`).
    pub skipped: BTreeMap<String, u64>,
    /// Where the reader had doubts (a line that might have separated two e-mails), in file
    /// order.
    pub warnings: Vec<ReadWarning>,
}

/// A place in the input the reader was unsure about, and what it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadWarning {
    /// 1-based line of the file.
    pub line: usize,
    /// What the reader saw and did.
    pub reason: String,
}

impl ReadReport {
    /// `n` messages read and all of them written.
    pub(crate) fn all(n: usize) -> ReadReport {
        ReadReport { read: n as u64, written: n as u64, ..ReadReport::default() }
    }

    /// One message (or part of one) left out for `reason`.
    pub(crate) fn skip(&mut self, reason: &str) {
        *self.skipped.entry(reason.to_string()).or_default() += 1;
    }
}

/// Read a file as UTF-8, naming the line of the first invalid byte when it is not. A UTF-8
/// byte order mark (Windows editors write one) is dropped.
pub fn read_utf8(path: &Path) -> Result<String> {
    let mut bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        invalid_utf8(path, line, at)
    })
}

/// The error for an input that is not UTF-8: its first invalid byte, `at` bytes into the file
/// after any byte order mark, on line `line`. One wording for every reader (`read_utf8`, and
/// `chat-jsonl`, which reads a line at a time).
pub(crate) fn invalid_utf8(path: &Path, line: usize, at: usize) -> Error {
    Error::ImportFormat { path: path.to_path_buf(), line, reason: format!("invalid UTF-8 at byte {at}") }
}

/// The UTF-8 byte order mark.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";
