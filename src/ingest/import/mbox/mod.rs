//! `--format mbox`: a Unix mailbox in any dialect (mboxo, mboxrd, mboxcl, mboxcl2; the
//! exports of Thunderbird, Apple Mail and Gmail Takeout), one e-mail leaf per message. Messages are
//! grouped into threads by `References`/`In-Reply-To` (else the message itself), each thread one
//! e-mail source `mbox:<root message-id>`. The file is read as a stream, one message in memory
//! at a time (`split`, over `lines`); each message is read by mail-parser (`message`): MIME, transfer
//! encodings, RFC 2047 words, charsets (windows-1252, ISO-8859-x, multi-byte through
//! encoding_rs), the `text/plain` alternative else the HTML as text, attachments named; each
//! message is dated among its clocks (`dating`).

mod dating;
mod lines;
mod message;
mod split;
mod thread;

use super::{ReadReport, ReadWarning};
use crate::error::{Error, Result};
use crate::ingest::{EmailMessage, Item};
use split::{Messages, SplitError};
use std::collections::HashMap;
use std::io::BufReader;
use std::path::Path;

/// Parse an mbox file into e-mail items, oldest first, with the report of what was read: the
/// messages found, each line the splitter kept as text although it might have separated two
/// messages (named, so nothing is glued silently), each date taken from a fallback, and each
/// message skipped. A message is skipped, and named by its line, when it cannot be read: cut
/// off inside its headers, the file's last message cut off inside a multipart body (an
/// interrupted download: the complete messages before it are read), no date anywhere, or one
/// ingest refuses. Fails only on a file that does not start with a `From ` line, and on I/O.
/// Bytes that are not UTF-8 are not an error: mail declares its charsets, and each text is
/// decoded by its own.
pub fn read_mbox(path: &Path) -> Result<(Vec<Item>, ReadReport)> {
    let bad = |line: usize, reason: String| Error::ImportFormat { path: path.to_path_buf(), line, reason };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut threads = thread::Threads::default();
    let mut out = Vec::new();
    let mut report = ReadReport::default();
    let mut prev_ms = None;
    let mut date_of: HashMap<String, i64> = HashMap::new();
    let mut trust = dating::SeparatorTrust::default();
    // Messages dated by their `From ` line, with the date of the message before each: redated
    // by it when the file's `From ` lines turn out to be a converter's clock.
    let mut by_separator: Vec<(usize, Option<i64>)> = Vec::new();
    // Which of the warnings said so.
    let mut stream_said_separator: std::collections::HashSet<usize> = std::collections::HashSet::new();
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
        let mut dated_by_separator = false;
        let at_end = messages.peek().is_none();
        let parsed = message::parse(raw, at_end, &mut notes);
        let item = parsed.and_then(|p| {
            trust.check(&p.clocks);
            let parent = p.in_reply_to.iter().chain(p.references.iter().rev()).find_map(|id| date_of.get(id)).copied();
            let (date_ms, by) = dating::decide(&p.clocks, &dating::Around { parent, prev: prev_ms }, &mut notes)?;
            let root = threads.root(&p);
            let item = Item::Email(EmailMessage {
                source_id: format!("mbox:{root}").into(),
                source_ref: p.message_id.as_ref().map(|id| format!("mid:{id}")),
                message_id: p.message_id,
                from: p.from,
                to: p.to,
                cc: p.cc,
                subject: p.subject,
                date_ms,
                body: p.body,
            });
            // Validate now so the warning names the message.
            match item.validate() {
                Ok(()) => Ok((date_ms, p.start, item, by)),
                Err(e) => Err((p.start, format!("message at line {}: {e}: skipped", p.start))),
            }
        });
        match item {
            Ok((date_ms, start, item, by)) => {
                if let Item::Email(EmailMessage { message_id: Some(id), .. }) = &item {
                    date_of.insert(id.clone(), date_ms);
                }
                if by == dating::By::Separator {
                    by_separator.push((out.len(), prev_ms));
                    dated_by_separator = true;
                }
                prev_ms = Some(date_ms);
                out.push((date_ms, start, item));
            }
            Err((line, reason)) => {
                report.skip(SKIPPED);
                let reason = if reason.ends_with("skipped") { reason } else { format!("{reason}: skipped") };
                notes.push((line, reason));
            }
        }
        notes.sort();
        if dated_by_separator && let Some(i) = notes.iter().position(|(_, r)| r.ends_with(dating::SEPARATOR_NOTE)) {
            stream_said_separator.insert(report.warnings.len() + i);
        }
        report.warnings.extend(notes.into_iter().map(|(line, reason)| ReadWarning { file: None, line, reason }));
    }
    if let Some((wrong, checked)) = trust.distrusted() {
        // The stream's "dated by its `From ` line" for these messages is what the warning
        // below now says otherwise.
        let mut at = 0;
        report.warnings.retain(|_| {
            at += 1;
            !stream_said_separator.contains(&(at - 1))
        });
        for (i, prev) in by_separator {
            let (date, start, item) = &mut out[i];
            let reason = format!(
                "its `From ` line's date ({}) is not trusted: {wrong} of this file's {checked} `From ` lines checked against a Date header are years from it (a converter's clock)",
                dating::day(*date)
            );
            let reason = match prev {
                Some(p) => {
                    *date = p;
                    if let Item::Email(e) = item {
                        e.date_ms = p;
                    }
                    format!("{reason}: dated by the time of the message before it")
                }
                None => format!("{reason}, and no other clock: kept"),
            };
            report.warnings.push(ReadWarning { file: None, line: *start, reason });
        }
    }
    out.sort_by_key(|(date, start, _)| (*date, *start));
    report.written = out.len() as u64;
    Ok((out.into_iter().map(|(_, _, item)| item).collect(), report))
}

/// The reason a message that cannot be read is counted under.
const SKIPPED: &str = "unreadable message";

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

    /// The first warning, as `--strict` makes it the error.
    fn strict_error(p: &std::path::Path) -> String {
        let (_, report) = read_mbox(p).unwrap();
        report.strict(p).unwrap_err().to_string()
    }

    #[test]
    fn bad_messages_are_skipped_and_named() {
        let (_d, p) = write(b"hello\n");
        let e = read_mbox(&p).unwrap_err().to_string();
        assert!(e.ends_with(":1: not an mbox file: expected a `From ` separator line before any message"), "{e}");

        let (_d, p) = write(b"From a Tue May  2 09:14:00 2023\nFrom: a@example.com\nSubject: x");
        let e = strict_error(&p);
        assert!(e.contains(":3: truncated message (starts at line 1)"), "{e}");

        // A download cut inside the last message's multipart body: the complete message
        // before it is read, the cut one named and skipped.
        let cut = TWO.split("--XX--").next().unwrap();
        let (_d, p) = write(cut.as_bytes());
        let (items, report) = read_mbox(&p).unwrap();
        assert_eq!((items.len(), report.read, report.skipped.get(SKIPPED)), (1, 2, Some(&1)));
        assert!(report.adds_up());
        assert!(report.warnings[0].reason.contains("truncated multipart body (starts at line 19)"), "{report:?}");
        assert!(report.warnings[0].reason.ends_with(": skipped"), "{report:?}");

        // Bytes that are not UTF-8 are text in some charset, not a broken file.
        let mut bytes = TWO.as_bytes().to_vec();
        bytes.splice(200..200, [0xff, 0xfe]);
        let (_d, p) = write(&bytes);
        assert_eq!(read_mbox(&p).unwrap().0.len(), 2);

        let (_d, p) = write(b"From a@example.com\nFrom: a@example.com\nSubject: x\n\nbody\n");
        let (items, report) = read_mbox(&p).unwrap();
        assert!(items.is_empty());
        assert!(report.warnings[0].reason.contains("no Date header, no date on its `From ` line"), "{report:?}");
    }

    /// `In-Reply-To: <yes>` (a broken git-send-email; notmuch's lkml test corpus holds 47
    /// such mails, 2009 patches and a 2010 series, which became one thread `mbox:yes`) links
    /// nothing: each message keeps its own thread, and the message says why.
    #[test]
    fn a_thread_header_that_is_no_message_id_links_nothing() {
        let text = "From a Sun Nov 22 00:11:00 2009\nFrom: carl@example.com\nSubject: [PATCH 1/2] maildir flags\n\
                    Date: Sun, 22 Nov 2009 00:11:00 +0000\nMessage-ID: <p1@example.com>\nIn-Reply-To: <yes>\n\
                    References: <yes>\n\nthe patch\n\n\
                    From b Sun Jun 27 18:22:29 2010\nFrom: dirk@example.com\nSubject: [PATCH] cifs: fix\n\
                    Date: Sun, 27 Jun 2010 18:22:29 +0000\nMessage-ID: <p2@example.com>\nIn-Reply-To: <yes>\n\
                    \nanother patch\n\n\
                    From c Mon Jun 28 08:00:00 2010\nFrom: carl@example.com\nSubject: Re: [PATCH] cifs: fix\n\
                    Date: Mon, 28 Jun 2010 08:00:00 +0000\nMessage-ID: <p3@example.com>\n\
                    In-Reply-To: <p2@example.com>\n\nlooks good\n";
        let (_d, p) = write(text.as_bytes());
        let (items, report) = read_mbox(&p).unwrap();
        let sources: Vec<&str> = items.iter().map(|m| m.source_id().0.as_str()).collect();
        assert_eq!(sources, ["mbox:p1@example.com", "mbox:p2@example.com", "mbox:p2@example.com"]);
        let reasons: Vec<(usize, &str)> = report.warnings.iter().map(|w| (w.line, w.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [
                (1, "In-Reply-To `yes`, References `yes`: not a message id, so it links the message to no thread"),
                (11, "In-Reply-To `yes`: not a message id, so it links the message to no thread"),
            ]
        );
        assert!(report.adds_up());
    }

    #[test]
    fn dates_fall_back_from_line_received_previous_each_named() {
        let text = "From a@example.com Tue May  2 09:14:00 2023\nFrom: a@example.com\nSubject: one\nDate: \n\nbody one\n\n\
                    From b@example.com\nFrom: b@example.com\nSubject: two\n\
                    Received: from relay.example.com by mx.example.com; Wed, 3 May 2023 10:00:00 +0000\n\
                    Received: from laptop by relay.example.com; Wed, 3 May 2023 08:00:00 +0000\n\nbody two\n\n\
                    From c@example.com\nFrom: c@example.com\nSubject: three\nDate: someday\n\nbody three\n";
        let (_d, p) = write(text.as_bytes());
        let (items, report) = read_mbox(&p).unwrap();
        let m = emails((items, report.clone()));
        let may2 = 1_683_018_840_000;
        let may3_8h = 1_683_100_800_000;
        assert_eq!(m.iter().map(|e| e.date_ms).collect::<Vec<_>>(), [may2, may3_8h, may3_8h]);
        let reasons: Vec<(usize, &str)> = report.warnings.iter().map(|w| (w.line, w.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [
                (4, "empty Date header: dated by its `From ` line's date"),
                (8, "no Date header: dated by its last Received header's date"),
                (19, "unreadable Date header `someday`: dated by the time of the message before it"),
            ]
        );
        assert!(report.adds_up());
    }

    /// notmuch's test corpora converted to mbox (notmuch/notmuch, `test/corpora/lkml`): every
    /// `From ` line carries the conversion's time (`From MAILER-DAEMON Sun Dec  6 13:07:42
    /// 2026`) while the mails are from 2009. A mail whose `Date:` was emptied took 2026 from it
    /// and stretched its thread by 17 years, with a warning naming the `From ` line as if
    /// trusted.
    #[test]
    fn a_from_line_that_lies_dates_nothing() {
        let head = |id: &str, date: &str, extra: &str| {
            format!(
                "From MAILER-DAEMON Sun Dec  6 13:07:42 2026\nFrom: carl@example.com\nSubject: notmuch\n\
                 Date: {date}\nMessage-ID: <{id}@example.com>\n{extra}\nbody {id}\n\n"
            )
        };
        let text = [
            head("a", "Tue, 17 Nov 2009 13:00:00 -0800", ""),
            head("b", "", "In-Reply-To: <a@example.com>\n"),
            head("c", "Wed, 18 Nov 2009 09:00:00 -0800", ""),
            head("d", "", ""),
        ]
        .concat();
        let (_d, p) = write(text.as_bytes());
        let (items, report) = read_mbox(&p).unwrap();
        let m = emails((items, report.clone()));
        let year =
            |e: &EmailMessage| chrono::DateTime::from_timestamp_millis(e.date_ms).unwrap().format("%Y").to_string();
        assert!(m.iter().all(|e| year(e) == "2009"), "{:?}", m.iter().map(year).collect::<Vec<_>>());
        let reasons: Vec<(usize, &str)> = report.warnings.iter().map(|w| (w.line, w.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [
                (
                    12,
                    "empty Date header: dated by the date of the message it replies to (2009-11-17 21:00), \
                     not its `From ` line's (2026-12-06 13:07), years apart"
                ),
                (
                    26,
                    "its `From ` line's date (2026-12-06 13:07) is not trusted: 2 of this file's 2 `From ` lines \
                     checked against a Date header are years from it (a converter's clock): dated by the time of \
                     the message before it"
                ),
            ]
        );
        assert!(report.adds_up());
    }

    /// A sender's clock years off (a dead CMOS battery: `Date: 1 Jan 1980`) against the
    /// servers' stamps: the servers keep time.
    #[test]
    fn a_date_header_years_from_its_received_stamp_is_not_taken() {
        let text = "From a@example.com Tue May  2 09:14:00 2023\nFrom: a@example.com\nSubject: x\n\
                    Received: from laptop by relay.example.com; Tue, 2 May 2023 09:13:00 +0000\n\
                    Date: Tue, 1 Jan 1980 00:00:00 +0000\nMessage-ID: <x@example.com>\n\nbody\n";
        let (_d, p) = write(text.as_bytes());
        let (items, report) = read_mbox(&p).unwrap();
        assert_eq!(emails((items, report.clone()))[0].date_ms, 1_683_018_780_000);
        assert_eq!(
            report.warnings[0].reason,
            "its Date header (1980-01-01 00:00) and its last Received header (2023-05-02 09:13) disagree by years: \
             dated by the Received header"
        );
    }

    #[test]
    fn an_unclosed_multipart_before_another_message_is_read_and_named() {
        let cut = TWO.split("--XX--").next().unwrap();
        let third = "\nFrom c@example.com Tue May  2 11:00:00 2023\nFrom: c@example.com\nSubject: later\n\
                     Date: Tue, 2 May 2023 11:00:00 +0000\n\nstill here\n";
        let (_d, p) = write(format!("{cut}{third}").as_bytes());
        let (items, report) = read_mbox(&p).unwrap();
        assert_eq!((items.len(), report.read), (3, 3));
        assert!(report.adds_up());
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
