//! File importers: LoCoMo JSON, chat JSONL, a folder of Markdown notes, an mbox mail file and
//! a Slack export folder. Each parses the whole input before anything is written, so a bad
//! line fails the import with nothing half-written, and names the file and the line.

mod jsonl;
pub mod locomo;
mod markdown;
mod mbox;
mod slack;

pub use jsonl::read_chat_jsonl;
pub use markdown::read_markdown_dir;
pub use mbox::read_mbox;
pub use slack::read_slack_export;

use crate::error::{Error, Result};
use std::path::Path;

/// Read a file as UTF-8, naming the line of the first invalid byte when it is not.
pub fn read_utf8(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        Error::ImportFormat { path: path.to_path_buf(), line, reason: format!("invalid UTF-8 at byte {at}") }
    })
}
