//! File importers: LoCoMo JSON, chat JSONL, a folder of Markdown notes, an mbox mail file, a
//! Slack export folder and ChatGPT and Claude exports, and the one dispatch from a [`Format`] to its reader and to the
//! batched writes ([`Memory::import`]) that the CLI, the REPL and any other front end share.
//! Each reader parses the whole input before anything is written. One record that cannot be
//! read (a line, a message, a conversation, a note) never sinks the file: it is skipped and
//! named in [`ReadReport::warnings`] (file, line, reason) and counted in
//! [`ReadReport::skipped`], and the rest is read; [`ReadReport::strict`] turns the first
//! warning into the error (`--strict`: nothing is written). Only an input that cannot be read
//! at all (not the format, a whole JSON document that does not parse, a missing
//! `channels.json`) is an error. Every record read is counted once: written, duplicate,
//! forgotten or skipped by reason ([`ReadReport::adds_up`]).

mod assistant;
mod frontmatter;
mod json_string;
mod jsonl;
mod locate;
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
use std::path::{Path, PathBuf};
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
    /// nothing is written. The records that could not be read are left out; see
    /// [`Format::read_reported`] for what was left out and why.
    ///
    /// # Errors
    /// Those of [`Format::read_reported`].
    pub fn read(self, path: &Path) -> Result<Parsed> {
        Ok(self.read_reported(path)?.0)
    }

    /// Parse the whole input at `path`, with the report of what was read: each record that
    /// could not be read is skipped and named (a warning), the rest read. `written` counts
    /// the records handed on (the import moves the duplicates out of it once written).
    ///
    /// # Errors
    /// [`Error::PathNotFound`] when nothing is at `path`; [`Error::WrongFormat`] when the input
    /// is plainly of another format; [`Error::ImportFormat`] when the input cannot be read at
    /// all (a JSON document that does not parse, an mbox without a `From ` line first);
    /// [`Error::Io`].
    pub fn read_reported(self, path: &Path) -> Result<(Parsed, ReadReport)> {
        if !path.exists() {
            return Err(Error::PathNotFound { path: path.to_path_buf() });
        }
        sniff::check(self, path)?;
        let items = |(items, report): (Vec<Item>, ReadReport), unit| (Parsed::Items { items, unit }, report);
        Ok(match self {
            Format::Locomo => {
                let (convs, report) = locomo::read_locomo_reported(path)?;
                (Parsed::Conversations(convs), report)
            }
            Format::ChatJsonl => items(read_chat_jsonl(path)?, "messages"),
            Format::Markdown => {
                let docs = read_markdown_dir(path)?;
                let report = ReadReport::all(docs.len());
                (Parsed::Documents(docs), report)
            }
            Format::Mbox => items(read_mbox(path)?, "e-mails"),
            Format::Slack => items(read_slack_export(path)?, "messages"),
            Format::ChatGpt => items(read_chatgpt_export(&export_file(path))?, "messages"),
            Format::Claude => items(read_claude_export(&export_file(path))?, "messages"),
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

/// What a reader found in its input besides the records it hands on: the records it read,
/// those it left out by reason, and the places it was unsure how to read or could not read,
/// each named. The counts add up: `read = written + duplicates + forgotten + Σ skipped`
/// ([`ReadReport::adds_up`]). A record is the format's unit: a message, an e-mail, a turn, a
/// note; a whole conversation (or a Slack day file) that cannot be read counts as one record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReadReport {
    /// Records found in the input.
    pub read: u64,
    /// Records written (each one leaf or more). A reader counts here what it hands on; the
    /// import moves those already stored to `duplicates`.
    pub written: u64,
    /// Records already stored (or repeated in the input): nothing written for them.
    pub duplicates: u64,
    /// Records the store had been told to forget: not brought back.
    pub forgotten: u64,
    /// Records left out, by reason (`"system message": 12`, `"unreadable line": 1`).
    pub skipped: BTreeMap<String, u64>,
    /// Parts of records that were kept, left out by reason (a Claude message's tool or
    /// thinking blocks): not records, so outside the sum.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub left_out: BTreeMap<String, u64>,
    /// Where the reader had doubts (a line that might have separated two e-mails) or skipped
    /// a record it could not read, in input order.
    pub warnings: Vec<ReadWarning>,
}

/// A place in the input the reader was unsure about or could not read, and what it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadWarning {
    /// The file, when the input is a folder (a Slack day file); else the input itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// 1-based line of the file (0 when the place has no line: the reason names it).
    pub line: usize,
    /// What the reader saw and did.
    pub reason: String,
}

impl ReadReport {
    /// `n` records read and all of them handed on.
    pub(crate) fn all(n: usize) -> ReadReport {
        ReadReport { read: n as u64, written: n as u64, ..ReadReport::default() }
    }

    /// One record (or part of one) left out for `reason`.
    pub(crate) fn skip(&mut self, reason: &str) {
        *self.skipped.entry(reason.to_string()).or_default() += 1;
    }

    /// Part of a kept record left out for `reason`.
    pub(crate) fn leave_out(&mut self, reason: &str) {
        *self.left_out.entry(reason.to_string()).or_default() += 1;
    }

    /// A doubt at `line` of the input (the record was read).
    pub(crate) fn warn(&mut self, line: usize, reason: String) {
        self.warnings.push(ReadWarning { file: None, line, reason });
    }

    /// One record that could not be read: skipped as `kind`, named at `line` with `reason`.
    pub(crate) fn unreadable(&mut self, kind: &str, line: usize, reason: String) {
        self.skip(kind);
        self.warn(line, reason);
    }

    /// Whether every record read is counted once: written, duplicate, forgotten or skipped.
    pub fn adds_up(&self) -> bool {
        self.written + self.duplicates + self.forgotten + self.skipped.values().sum::<u64>() == self.read
    }

    /// `--strict`: the first warning as the import's error ([`Error::ImportFormat`] naming the
    /// file, the line and the reason, with how many warnings there were), `Ok` when there
    /// is none.
    ///
    /// # Errors
    /// As said.
    pub fn strict(&self, path: &Path) -> Result<()> {
        let Some(w) = self.warnings.first() else { return Ok(()) };
        let more = match self.warnings.len() {
            1 => String::new(),
            n => format!(" (strict: the first of {n} warnings)"),
        };
        Err(Error::ImportFormat {
            path: w.file.clone().unwrap_or_else(|| path.to_path_buf()),
            line: w.line,
            reason: format!("{}{more}", w.reason),
        })
    }
}

/// A whole-file reader's text: the file as UTF-8, a byte order mark dropped; bytes that are
/// not UTF-8 are read as U+FFFD, each run named in `report` (line, byte offset) so that one
/// bad byte never sinks a file whose records are otherwise whole (`--strict` refuses it). A
/// file of white space only is empty (no records), not malformed.
pub(crate) fn read_text_lossy(path: &Path, file: Option<&Path>, report: &mut ReadReport) -> Result<String> {
    let mut bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let bytes = e.into_bytes();
            let mut at = 0;
            for chunk in bytes.utf8_chunks() {
                at += chunk.valid().len();
                if !chunk.invalid().is_empty() {
                    let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
                    report.warnings.push(ReadWarning {
                        file: file.map(Path::to_path_buf),
                        line,
                        reason: format!("invalid UTF-8 at byte {at}: read as U+FFFD"),
                    });
                    at += chunk.invalid().len();
                }
            }
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
    }
}

/// A whole-file JSON reader's document, read by [`read_text_lossy`]. A file that does not
/// parse cannot be read at all: the error names its line, or the first byte that is not
/// UTF-8 when there is one (a file cut inside a character fails both ways). A file of white
/// space only is `None`: nothing to read.
pub(crate) fn read_json_lossy(
    path: &Path,
    file: Option<&Path>,
    report: &mut ReadReport,
    what: &str,
) -> Result<Option<(String, serde_json::Value)>> {
    let before = report.warnings.len();
    let text = read_text_lossy(path, file, report)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    match serde_json::from_str(&text) {
        Ok(v) => Ok(Some((text, v))),
        Err(e) => {
            let (line, reason) = match report.warnings.get(before) {
                Some(w) => (w.line, w.reason.clone()),
                None => (e.line(), format!("{what}: {e}")),
            };
            report.warnings.truncate(before);
            Err(Error::ImportFormat { path: path.to_path_buf(), line, reason })
        }
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
