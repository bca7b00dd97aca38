//! `--format mbox`: a Unix mailbox in any dialect (mboxo, mboxrd, mboxcl, mboxcl2; the
//! exports of Thunderbird, Apple Mail and Gmail Takeout), one e-mail leaf per message. Messages are
//! grouped into threads by `References`/`In-Reply-To` (else the message itself), each thread one
//! e-mail source `mbox:<root message-id>`. The file is read as a stream, one message in memory
//! at a time (`split`, over `lines`); each message is read by mail-parser (`message`): MIME, transfer
//! encodings, RFC 2047 words, charsets (windows-1252, ISO-8859-x, multi-byte through
//! encoding_rs), the `text/plain` alternative else the HTML as text, attachments named.

mod lines;
mod message;
mod split;
mod thread;

use super::{ReadReport, ReadWarning};
use crate::error::{Error, Result};
use crate::ingest::{EmailMessage, Item};
use split::{Messages, SplitError};
use std::io::BufReader;
use std::path::Path;

/// Parse an mbox file into e-mail items, oldest first, with the report of what was read: the
/// messages found, and each line the splitter kept as text although it might have separated
/// two messages (named, so nothing is glued silently). Fails on a file that does not start
/// with a `From ` line, a message cut off inside its headers or inside a multipart body, and a
/// message with no readable date, naming the file and the line. Bytes that are not UTF-8 are
/// not an error: mail declares its charsets, and each text is decoded by its own.
pub fn read_mbox(path: &Path) -> Result<(Vec<Item>, ReadReport)> {
    let bad = |line: usize, reason: String| Error::ImportFormat { path: path.to_path_buf(), line, reason };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut threads = thread::Threads::default();
    let mut out = Vec::new();
    let mut report = ReadReport::default();
    let mut messages = Messages::new(BufReader::with_capacity(1 << 16, file)).peekable();
    while let Some(raw) = messages.next() {
        let raw = raw.map_err(|e| match e {
            SplitError::Io(e) => Error::io(path, e),
            SplitError::NotMbox(line) => {
                bad(line, "not an mbox file: expected a `From ` separator line before any message".into())
            }
        })?;
        report.read += 1;
        let mut notes = raw.notes.clone();
        let at_end = messages.peek().is_none();
        let p = message::parse(raw, at_end, &mut notes).map_err(|(line, reason)| bad(line, reason))?;
        notes.sort();
        report.warnings.extend(notes.into_iter().map(|(line, reason)| ReadWarning { line, reason }));
        let root = threads.root(&p);
        let item = Item::Email(EmailMessage {
            source_id: format!("mbox:{root}").into(),
            source_ref: p.message_id.as_ref().map(|id| format!("mid:{id}")),
            message_id: p.message_id,
            from: p.from,
            to: p.to,
            cc: p.cc,
            subject: p.subject,
            date_ms: p.date_ms,
            body: p.body,
        });
        // Validate now so the error names the message.
        item.validate().map_err(|e| bad(p.start, e.to_string()))?;
        out.push((p.date_ms, p.start, item));
    }
    out.sort_by_key(|(date, start, _)| (*date, *start));
    report.written = out.len() as u64;
    Ok((out.into_iter().map(|(_, _, item)| item).collect(), report))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mail.mbox");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    fn emails((items, _): (Vec<Item>, ReadReport)) -> Vec<EmailMessage> {
        items
            .into_iter()
            .map(|i| match i {
                Item::Email(e) => e,
                Item::Chat(_) => panic!("mbox gives e-mails"),
            })
            .collect()
    }

    const TWO: &str = "From alice@example.com Tue May  2 09:14:00 2023\n\
From: Alice Smith <alice@example.com>\n\
To: \"Reyes, Tomás\" <tomas@example.com>, bob@example.com\n\
Subject: =?utf-8?Q?Caf=C3=A9?= plan\n\
Date: Tue, 2 May 2023 09:14:00 +0000\n\
Message-ID: <m1@example.com>\n\
\n\
Hello Tomás,\n\
>From the top: lunch at noon.\n\
\n\
From bob@example.com Tue May  2 10:00:00 2023\n\
From: bob@example.com\n\
Subject: Re: Café plan\n\
Date: Tue, 2 May 2023 10:00:00 +0000 (UTC)\n\
Message-ID: <m2@example.com>\n\
In-Reply-To: <m1@example.com>\n\
Content-Type: multipart/alternative; boundary=\"XX\"\n\
\n\
--XX\n\
Content-Type: text/html\n\
\n\
<p>html version</p>\n\
--XX\n\
Content-Type: text/plain; charset=utf-8\n\
Content-Transfer-Encoding: quoted-printable\n\
\n\
Sounds good, see you at the caf=C3=A9 =\n\
at noon.\n\
--XX--\n";

    #[test]
    fn messages_threads_mime_and_escapes() {
        let (_d, p) = write(TWO.as_bytes());
        let m = emails(read_mbox(&p).unwrap());
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].subject, "Café plan");
        assert_eq!(m[0].to, vec!["Reyes, Tomás <tomas@example.com>", "bob@example.com"]);
        assert_eq!(m[0].body, "Hello Tomás,\nFrom the top: lunch at noon.");
        assert_eq!(m[0].source_id.0, "mbox:m1@example.com");
        assert_eq!(m[1].source_id.0, "mbox:m1@example.com", "a reply joins its parent's thread");
        assert_eq!(m[1].body, "Sounds good, see you at the café at noon.");
        assert_eq!(m[1].source_ref.as_deref(), Some("mid:m2@example.com"));
        assert_eq!(m[1].date_ms - m[0].date_ms, 46 * 60 * 1000);
    }

    #[test]
    fn bad_files_name_the_line() {
        let (_d, p) = write(b"hello\n");
        let e = read_mbox(&p).unwrap_err().to_string();
        assert!(e.ends_with(":1: not an mbox file: expected a `From ` separator line before any message"), "{e}");

        let (_d, p) = write(b"From a Tue May  2 09:14:00 2023\nFrom: a@example.com\nSubject: x");
        let e = read_mbox(&p).unwrap_err().to_string();
        assert!(e.contains(":3: truncated message (starts at line 1)"), "{e}");

        let cut = TWO.split("--XX--").next().unwrap();
        let (_d, p) = write(cut.as_bytes());
        let e = read_mbox(&p).unwrap_err().to_string();
        assert!(e.contains("truncated multipart body (starts at line 19)"), "{e}");

        // Bytes that are not UTF-8 are text in some charset, not a broken file.
        let mut bytes = TWO.as_bytes().to_vec();
        bytes.splice(200..200, [0xff, 0xfe]);
        let (_d, p) = write(&bytes);
        assert_eq!(read_mbox(&p).unwrap().0.len(), 2);

        let (_d, p) = write(b"From a@example.com\nFrom: a@example.com\nSubject: x\n\nbody\n");
        let e = read_mbox(&p).unwrap_err().to_string();
        assert!(e.contains(":1: message has no Date header"), "{e}");
    }

    #[test]
    fn an_unclosed_multipart_before_another_message_is_read_and_named() {
        let cut = TWO.split("--XX--").next().unwrap();
        let third = "\nFrom c@example.com Tue May  2 11:00:00 2023\nFrom: c@example.com\nSubject: later\n\
                     Date: Tue, 2 May 2023 11:00:00 +0000\n\nstill here\n";
        let (_d, p) = write(format!("{cut}{third}").as_bytes());
        let (items, report) = read_mbox(&p).unwrap();
        assert_eq!((items.len(), report.read), (3, 3));
        assert_eq!(report.warnings.len(), 1, "{report:?}");
        assert!(report.warnings[0].reason.contains("truncated multipart body (starts at line 19)"), "{report:?}");
        assert!(report.warnings[0].reason.contains("another message follows"), "{report:?}");
    }

    #[test]
    fn separator_dates() {
        use message::separator_date;
        assert_eq!(separator_date("From x Tue May  2 09:14:00 2023"), Some(1_683_018_840_000));
        assert_eq!(separator_date("From 17644@xxx Tue May 02 09:14:00 +0000 2023"), Some(1_683_018_840_000));
        assert_eq!(separator_date("From x yesterday"), None);
    }

    #[test]
    fn an_unescaped_from_line_in_a_body_is_text() {
        let text = "From a@example.com Tue May  2 09:14:00 2023\nFrom: a@example.com\nSubject: s\n\
                    Date: Tue, 2 May 2023 09:14:00 +0000\n\nHello,\n\nFrom what I hear, all good.\n";
        let (_d, p) = write(text.as_bytes());
        let m = emails(read_mbox(&p).unwrap());
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].body, "Hello,\n\nFrom what I hear, all good.");
    }
}
