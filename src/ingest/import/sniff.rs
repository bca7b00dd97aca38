//! What an input plainly is, from its kind (file or folder), its name and its first bytes, so
//! an import given a file of another format says so instead of reading nothing or failing on
//! a parse error that does not name the mix-up (`--format markdown` on a `.jsonl` file,
//! `--format locomo` on an mbox).

use super::{BOM, Format};
use crate::error::{Error, Result};
use std::io::Read;
use std::path::Path;

/// How much of a file is looked at.
const HEAD: u64 = 64 * 1024;

/// [`Error::WrongFormat`] when `path` is plainly not `format`'s input; `Ok` when it is or
/// when it cannot be told (the reader then has its say).
pub(crate) fn check(format: Format, path: &Path) -> Result<()> {
    let wrong = |found: &str, suggest: Option<Format>| {
        Err(Error::WrongFormat {
            path: path.to_path_buf(),
            format: format.name().to_string(),
            found: found.to_string(),
            suggest: suggest.map(|f| f.name().to_string()),
        })
    };
    if path.is_dir() {
        let export = path.join(super::EXPORT_FILE);
        return match format {
            Format::Markdown | Format::Slack => Ok(()),
            // An unzipped export folder: its conversations.json is the input.
            Format::ChatGpt | Format::Claude if export.is_file() => check(format, &export),
            _ => wrong("a folder", folder_format(path)),
        };
    }
    let head = head(path)?;
    let seen = Seen::of(&head);
    let by_name = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match (format, seen) {
        (Format::Mbox, Seen::Mbox | Seen::Unknown) => Ok(()),
        (Format::Mbox, s) => wrong(s.describe(), s.format()),
        // One JSON document of no known export may be a one-line file of messages (a single
        // long message whose line the head does not reach the end of): the reader decides.
        (Format::ChatJsonl, Seen::JsonLines | Seen::Json(None) | Seen::Unknown) => Ok(()),
        (Format::Markdown, Seen::Unknown) if by_name.as_deref().is_none_or(|e| NOTE_EXTENSIONS.contains(&e)) => Ok(()),
        (Format::Markdown, Seen::Unknown) => {
            wrong(&format!("a `.{}` file, not a Markdown note (.md)", by_name.unwrap_or_default()), None)
        }
        (Format::Slack, s) => wrong(&format!("a file ({}), not an export folder", s.describe()), s.format()),
        (Format::Locomo | Format::ChatGpt | Format::Claude, Seen::Json(found)) => match found {
            Some(f) if f != format => wrong(Seen::Json(Some(f)).describe(), Some(f)),
            _ => Ok(()),
        },
        (Format::Locomo | Format::ChatGpt | Format::Claude, Seen::Unknown) => Ok(()),
        (_, s) => wrong(s.describe(), s.format()),
    }
}

/// File names a notes import reads (`markdown::read_notes` takes these).
const NOTE_EXTENSIONS: [&str; 2] = ["md", "markdown"];

/// What the first bytes of a file say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Mbox,
    /// One JSON object per line.
    JsonLines,
    /// One JSON document, and whose export it looks like when its keys say so.
    Json(Option<Format>),
    Unknown,
}

impl Seen {
    fn of(head: &[u8]) -> Seen {
        let text = String::from_utf8_lossy(head);
        let t = text.trim_start();
        if t.starts_with("From ") {
            return Seen::Mbox;
        }
        if t.starts_with('[') || t.starts_with('{') && !json_lines(t) {
            let has = |k: &str| t.contains(&format!("\"{k}\""));
            let found = if has("mapping") && has("current_node") {
                Some(Format::ChatGpt)
            } else if has("chat_messages") {
                Some(Format::Claude)
            } else if has("conversation") && has("speaker_a") {
                Some(Format::Locomo)
            } else {
                None
            };
            return Seen::Json(found);
        }
        if t.starts_with('{') {
            return Seen::JsonLines;
        }
        Seen::Unknown
    }

    fn describe(self) -> &'static str {
        match self {
            Seen::Mbox => "an mbox mail file",
            Seen::JsonLines => "JSON lines",
            Seen::Json(Some(Format::ChatGpt)) => "a ChatGPT export",
            Seen::Json(Some(Format::Claude)) => "a Claude export",
            Seen::Json(Some(Format::Locomo)) => "LoCoMo JSON",
            Seen::Json(_) => "a JSON document",
            Seen::Unknown => "of another format",
        }
    }

    fn format(self) -> Option<Format> {
        match self {
            Seen::Mbox => Some(Format::Mbox),
            Seen::JsonLines => Some(Format::ChatJsonl),
            Seen::Json(f) => f,
            Seen::Unknown => None,
        }
    }
}

/// Whether the first line is a whole JSON object on its own (JSON lines) rather than the
/// start of a document spread over lines.
fn json_lines(t: &str) -> bool {
    let first = t.lines().next().unwrap_or("");
    serde_json::from_str::<serde_json::Value>(first).is_ok_and(|v| v.is_object())
}

/// The format a folder holds, when it plainly holds one.
fn folder_format(dir: &Path) -> Option<Format> {
    if dir.join("channels.json").is_file() || dir.join("users.json").is_file() {
        return Some(Format::Slack);
    }
    if dir.join(super::EXPORT_FILE).is_file() {
        let head = head(&dir.join(super::EXPORT_FILE)).ok()?;
        return Seen::of(&head).format();
    }
    Some(Format::Markdown)
}

/// The first bytes of a file, without a byte order mark.
fn head(path: &Path) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(HEAD).read_to_end(&mut buf)).map_err(|e| Error::io(path, e))?;
    if buf.starts_with(BOM) {
        buf.drain(..BOM.len());
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_say_what_they_are() {
        assert_eq!(Seen::of(b"\n\nFrom a Tue May  2 09:14:00 2023\n"), Seen::Mbox);
        assert_eq!(Seen::of(b"{\"source_id\":\"a\"}\n{\"source_id\":\"b\"}\n"), Seen::JsonLines);
        assert_eq!(Seen::of(b"{\n  \"conversations\": []\n}"), Seen::Json(None));
        assert_eq!(
            Seen::of(b"[{\"id\":\"1\",\"mapping\":{},\"current_node\":\"x\"}]"),
            Seen::Json(Some(Format::ChatGpt))
        );
        assert_eq!(Seen::of(b"[{\"uuid\":\"1\",\"chat_messages\":[]}]"), Seen::Json(Some(Format::Claude)));
        assert_eq!(Seen::of(b"# A note\n"), Seen::Unknown);
    }

    #[test]
    fn a_file_of_another_format_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("chat.jsonl");
        std::fs::write(&jsonl, "{\"source_id\":\"a\"}\n").unwrap();
        let e = check(Format::Markdown, &jsonl).unwrap_err().to_string();
        assert!(e.contains("JSON lines") && e.contains("chat-jsonl"), "{e}");
        let mbox = dir.path().join("mail");
        std::fs::write(&mbox, "From a Tue May  2 09:14:00 2023\n").unwrap();
        let e = check(Format::Locomo, &mbox).unwrap_err().to_string();
        assert!(e.contains("an mbox mail file") && e.contains("`mbox`"), "{e}");
        assert!(check(Format::Mbox, &mbox).is_ok());
        assert!(check(Format::Markdown, dir.path()).is_ok());
        let e = check(Format::ChatJsonl, dir.path()).unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
    }
}
