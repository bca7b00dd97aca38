//! One mbox message as an e-mail: headers, date and body text, read by mail-parser (MIME,
//! quoted-printable, base64, RFC 2047, charsets, HTML to text). Attachments are not read; each
//! is named in the body text as `[attachment: report.pdf]`, so a search for the file finds the
//! mail that carried it.

use super::dating::{Clocks, HeaderDate};
use super::split::{LineErr, RawMessage};
use crate::text::clip;
use mail_parser::decoders::html::html_to_text;
use mail_parser::{Addr, Address, HeaderName, HeaderValue, Message, MessageParser, MimeHeaders, PartType};
use regex::Regex;
use std::sync::LazyLock;

/// Block-level tags. mail-parser's HTML-to-text breaks lines at `<br>` and `</p>` only, so
/// `</h1><p>Tom` would glue two words; a `<br>` after each block tag keeps them apart.
static BLOCK_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)</?(?:h[1-6]|div|li|ul|ol|dl|dt|dd|tr|td|th|table|thead|tbody|blockquote|pre|hr|section|article|header|footer|nav|aside|address|center)\b[^>]*>",
    )
    .expect("a valid pattern")
});

/// A message's fields as the importer keeps them.
pub(super) struct Parsed {
    /// Line of the `From ` separator.
    pub start: usize,
    pub message_id: Option<String>,
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    /// The clocks it carries; [`super::dating::decide`] dates it.
    pub clocks: Clocks,
    pub body: String,
}

/// Read one message. Fails (the caller skips the message and names it) on a message cut off
/// inside its headers and on the file's last message cut off inside a multipart body (`at_end`:
/// the file was cut, as an interrupted download cuts it); any bytes are text (decoded per the charset they declare, lossily where they break
/// it). An unclosed multipart with another message after it is malformed mail, not a cut
/// file: it is read as far as it goes and noted in `notes`. Its clocks are gathered, not yet
/// read: its date depends on the messages around it (`dating`).
pub(super) fn parse(mut raw: RawMessage, at_end: bool, notes: &mut Vec<LineErr>) -> Result<Parsed, LineErr> {
    let Some(header_end) = header_end(&raw.bytes) else {
        return Err((
            if raw.bytes.is_empty() { raw.start } else { raw.line_at(raw.bytes.len() - 1) },
            format!("truncated message (starts at line {}): the file ends inside its headers", raw.start),
        ));
    };
    legacy_headers_to_utf8(&mut raw.bytes, header_end);
    let Some(msg) = MessageParser::new().parse(&raw.bytes[..]) else {
        // No header at all (the message opens with a blank line): a body and nothing else.
        let body = String::from_utf8_lossy(&raw.bytes[header_end..]).trim().to_string();
        let clocks = Clocks {
            start: raw.start,
            header: HeaderDate::Missing,
            received: None,
            separator: separator_date(&raw.separator),
        };
        return Ok(Parsed {
            start: raw.start,
            message_id: None,
            in_reply_to: None,
            references: Vec::new(),
            from: String::new(),
            to: Vec::new(),
            cc: Vec::new(),
            subject: String::new(),
            clocks,
            body,
        });
    };
    if let Err((line, reason)) = check_multipart_closed(&raw, &msg) {
        if at_end {
            return Err((line, reason));
        }
        notes.push((line, format!("{reason}; another message follows, so it is read as far as it goes")));
    }
    let clocks = clocks(&raw, &msg);
    let ids = |v: &HeaderValue<'_>| -> Vec<String> {
        match v {
            HeaderValue::Text(t) => vec![t.trim().to_string()],
            HeaderValue::TextList(l) => l.iter().map(|t| t.trim().to_string()).collect(),
            _ => Vec::new(),
        }
        .into_iter()
        .filter(|id| !id.is_empty())
        .collect()
    };
    // A thread header that holds no message id (`In-Reply-To: <yes>` from a broken
    // git-send-email) would join every message that says the same into one thread: it links
    // nothing, and the message says so.
    let mut junk: Vec<String> = Vec::new();
    let mut real = |header: &str, ids: Vec<String>| -> Vec<String> {
        let (good, bad): (Vec<String>, Vec<String>) = ids.into_iter().partition(|id| is_message_id(id));
        if !bad.is_empty() {
            junk.push(format!("{header} `{}`", bad.join(" ")));
        }
        good
    };
    let message_id = real(
        "Message-ID",
        msg.message_id().map(str::trim).filter(|id| !id.is_empty()).map(str::to_string).into_iter().collect(),
    );
    let in_reply_to = real("In-Reply-To", ids(msg.in_reply_to()));
    let references = real("References", ids(msg.references()));
    if !junk.is_empty() {
        let what = junk.join(", ");
        notes.push((raw.start, format!("{what}: not a message id, so it links the message to no thread")));
    }
    Ok(Parsed {
        start: raw.start,
        message_id: message_id.into_iter().next(),
        in_reply_to: in_reply_to.into_iter().next(),
        references,
        from: addresses(msg.from()).join(", "),
        to: addresses(msg.to()),
        cc: addresses(msg.cc()),
        subject: msg.subject().unwrap_or_default().trim().to_string(),
        clocks,
        body: body_text(&msg),
    })
}

/// An RFC 5322 message id, as the parser gives it (without its angle brackets): `left@right`,
/// both sides non-empty, no white space. What else stands in a thread header (`yes`, `none`,
/// a bare number) names no message.
fn is_message_id(id: &str) -> bool {
    id.split_once('@').is_some_and(|(l, r)| !l.is_empty() && !r.is_empty()) && !id.contains(char::is_whitespace)
}

/// The offset of the first body byte: just past the blank line that ends the headers; `None`
/// when the message ends inside its headers.
fn header_end(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    while at < bytes.len() {
        let end = bytes[at..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| at + i + 1);
        let line = &bytes[at..end];
        if line.iter().all(u8::is_ascii_whitespace) && end > at && line.ends_with(b"\n") {
            return Some(end);
        }
        at = end;
    }
    None
}

/// Raw 8-bit headers that are not UTF-8 were written by a client that used its own code page
/// without saying so (RFC 2047 was for that): read them as windows-1252, the common case and a
/// superset of Latin-1, rather than as U+FFFD. Line ends are ASCII, so line numbers hold.
fn legacy_headers_to_utf8(bytes: &mut Vec<u8>, header_end: usize) {
    if std::str::from_utf8(&bytes[..header_end]).is_ok() {
        return;
    }
    let (text, _) = encoding_rs::WINDOWS_1252.decode_without_bom_handling(&bytes[..header_end]);
    let mut out = Vec::with_capacity(bytes.len() + text.len() - header_end);
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(&bytes[header_end..]);
    *bytes = out;
}

/// Each multipart entity must reach its closing `--boundary--`, else the file was cut inside
/// it: the message would be read without its tail, silently.
fn check_multipart_closed(raw: &RawMessage, msg: &Message<'_>) -> Result<(), LineErr> {
    for part in &msg.parts {
        // By the declared type, not by how mail-parser read the part: it reads a multipart
        // whose boundary breaks the RFC's 70-character limit as text.
        let Some(ct) = part.content_type().filter(|ct| ct.ctype().eq_ignore_ascii_case("multipart")) else { continue };
        let Some(boundary) = ct.attribute("boundary") else { continue };
        let close = format!("--{boundary}--");
        let from = (part.offset_body as usize).min(raw.bytes.len());
        if memchr::memmem::find(&raw.bytes[from..], close.as_bytes()).is_none() {
            return Err((
                raw.last_line(),
                format!(
                    "truncated multipart body (starts at line {}): no closing `{}`",
                    raw.line_at(from),
                    clip(&close, 80)
                ),
            ));
        }
    }
    Ok(())
}

/// The clocks `msg` carries: its `Date:` header, its last `Received:` header's date (the
/// first hop, the nearest to when it was sent) and its `From ` line's.
fn clocks(raw: &RawMessage, msg: &Message<'_>) -> Clocks {
    let header = match msg.root_part().headers.iter().find(|h| h.name == HeaderName::Date) {
        Some(h) => match &h.value {
            HeaderValue::DateTime(d) if d.is_valid() => HeaderDate::Good(d.to_timestamp().saturating_mul(1000)),
            _ => {
                let start = (h.offset_start as usize).min(raw.bytes.len());
                let end = (h.offset_end as usize).clamp(start, raw.bytes.len());
                let value = String::from_utf8_lossy(&raw.bytes[start..end]);
                let value = value.trim();
                let why = if value.is_empty() {
                    "empty Date header".to_string()
                } else {
                    format!("unreadable Date header `{}`", clip(value, 60))
                };
                HeaderDate::Bad { line: raw.line_at(h.offset_field as usize), why }
            }
        },
        None => HeaderDate::Missing,
    };
    let received = msg
        .root_part()
        .headers
        .iter()
        .filter(|h| h.name == HeaderName::Received)
        .filter_map(|h| match &h.value {
            HeaderValue::Received(r) => r.date().filter(|d| d.is_valid()),
            _ => None,
        })
        .next_back()
        .map(|d| d.to_timestamp().saturating_mul(1000));
    Clocks { start: raw.start, header, received, separator: separator_date(&raw.separator) }
}

/// The asctime date of a `From sender Tue May  2 09:14:00 2023` separator (a numeric zone
/// such as `+0000` before the year is skipped), as UTC.
pub(super) fn separator_date(sep: &str) -> Option<i64> {
    let words: Vec<&str> = sep
        .split_whitespace()
        .filter(|w| !(w.len() == 5 && w.starts_with(['+', '-']) && w[1..].bytes().all(|b| b.is_ascii_digit())))
        .collect();
    let tail = words.get(words.len().checked_sub(5)?..)?.join(" ");
    chrono::NaiveDateTime::parse_from_str(&tail, "%a %b %e %H:%M:%S %Y").ok().map(|d| d.and_utc().timestamp_millis())
}

/// An address header as `Name <address>` (or the bare address, or the bare name) per mailbox,
/// groups flattened.
fn addresses(a: Option<&Address<'_>>) -> Vec<String> {
    let Some(a) = a else { return Vec::new() };
    let one = |m: &Addr<'_>| {
        let name = m.name().map(str::trim).filter(|n| !n.is_empty());
        let addr = m.address().map(str::trim).filter(|n| !n.is_empty());
        match (name, addr) {
            (Some(n), Some(a)) => format!("{n} <{a}>"),
            (None, Some(a)) => a.to_string(),
            (Some(n), None) => n.to_string(),
            (None, None) => String::new(),
        }
    };
    a.iter().map(one).filter(|s| !s.is_empty()).collect()
}

/// The text the message shows a reader: its text bodies (the `text/plain` alternative when
/// there is one, else the HTML as text), then one `[attachment: name]` line per attachment.
fn body_text(msg: &Message<'_>) -> String {
    let mut parts: Vec<String> = Vec::new();
    for i in 0..msg.text_body.len() {
        let Some(part) = msg.text_body.get(i).and_then(|&id| msg.parts.get(id as usize)) else { continue };
        let text = match &part.body {
            PartType::Text(t) => t.replace("\r\n", "\n"),
            PartType::Html(html) => tidy(&html_to_text(&BLOCK_TAG.replace_all(html, "$0<br>"))),
            _ => continue,
        };
        let text = text.trim();
        if !text.is_empty() {
            parts.push(text.to_string());
        }
    }
    let names: Vec<String> = msg
        .attachments
        .iter()
        .filter(|id| !msg.text_body.contains(id))
        .filter_map(|&id| msg.parts.get(id as usize))
        .map(|p| format!("[attachment: {}]", attachment_name(p)))
        .collect();
    if !names.is_empty() {
        parts.push(names.join("\n"));
    }
    parts.join("\n\n")
}

/// A file name, else a forwarded message's subject, else the MIME type.
fn attachment_name(part: &mail_parser::MessagePart<'_>) -> String {
    if let Some(name) = part.attachment_name().map(str::trim).filter(|n| !n.is_empty()) {
        return clip(name, 200).to_string();
    }
    if let PartType::Message(m) = &part.body {
        return format!("message \"{}\"", clip(m.subject().unwrap_or_default().trim(), 200));
    }
    match part.content_type() {
        Some(ct) => match ct.subtype() {
            Some(sub) => format!("{}/{}", ct.ctype(), sub),
            None => ct.ctype().to_string(),
        },
        None => "unnamed".to_string(),
    }
}

/// HTML as text leaves blank runs, trailing spaces and no-break spaces (`&nbsp;` for layout):
/// lines trimmed, runs of blank lines one, U+00A0 a space.
fn tidy(text: &str) -> String {
    let text = text.replace('\u{a0}', " ");
    let mut out = String::with_capacity(text.len());
    let mut gap = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            gap = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if gap { "\n\n" } else { "\n" });
        }
        out.push_str(line);
        gap = false;
    }
    out
}
