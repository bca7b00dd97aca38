//! `--format mbox`: a Unix mailbox (mboxo/mboxrd), one e-mail leaf per message. Messages are
//! grouped into threads by `References`/`In-Reply-To` (else the message itself), each thread one
//! e-mail source `mbox:<root message-id>`. MIME is read as far as a mail archive needs it:
//! header folding, RFC 2047 encoded words, quoted-printable and base64 bodies, the first
//! `text/plain` part of a multipart message (else tag-stripped `text/html`).

use super::read_utf8;
use crate::error::{Error, Result};
use crate::ingest::{EmailMessage, Item};
use crate::text::clip;
use std::collections::HashMap;
use std::path::Path;

/// One header, with the 1-based line it starts on.
struct Header {
    name: String,
    value: String,
    line: usize,
}

/// A message's raw lines and where it starts in the file.
struct RawMessage<'a> {
    /// Line of the `From ` separator.
    start: usize,
    /// The separator line itself (its date is the fallback when `Date:` is missing).
    separator: &'a str,
    /// Lines after the separator, each with its 1-based line number.
    lines: Vec<(usize, &'a str)>,
}

/// Parse an mbox file into e-mail items, oldest first. Fails on invalid UTF-8, a file that
/// does not start with a `From ` line, a message cut off inside its headers or inside a
/// multipart body, and a message with no readable date — naming the file and the line.
pub fn read_mbox(path: &Path) -> Result<Vec<Item>> {
    let text = read_utf8(path)?;
    let bad = |line: usize, reason: String| Error::ImportFormat { path: path.to_path_buf(), line, reason };
    let mut raw = Vec::new();
    let mut prev_blank = true;
    for (i, line) in text.lines().enumerate() {
        let no = i + 1;
        // A body line "From ..." after a blank line that a writer forgot to escape is only a
        // separator when it looks like one (a sender and a date ending in a year).
        if line.starts_with("From ") && prev_blank && (raw.is_empty() || looks_like_separator(line)) {
            raw.push(RawMessage { start: no, separator: line, lines: Vec::new() });
        } else if let Some(m) = raw.last_mut() {
            m.lines.push((no, line));
        } else if !line.trim().is_empty() {
            return Err(bad(no, "not an mbox file: expected a `From ` separator line before any message".into()));
        }
        prev_blank = line.trim().is_empty();
    }
    let mut parsed = Vec::with_capacity(raw.len());
    for m in &raw {
        parsed.push(parse_message(m).map_err(|(line, reason)| bad(line, reason))?);
    }
    // Thread roots: the first id of References, else In-Reply-To, else the message itself,
    // followed through messages of this file so a reply lands in its parent's thread.
    let mut root_of: HashMap<String, String> = HashMap::new();
    let mut out = Vec::with_capacity(parsed.len());
    for p in &parsed {
        let root = p
            .references
            .first()
            .or(p.in_reply_to.as_ref())
            .map(|r| root_of.get(r).cloned().unwrap_or_else(|| r.clone()))
            .or_else(|| p.message_id.clone())
            .unwrap_or_else(|| format!("{}#{}", normalise_subject(&p.subject), p.start));
        if let Some(id) = &p.message_id {
            root_of.entry(id.clone()).or_insert_with(|| root.clone());
        }
        out.push((
            p.date_ms,
            p.start,
            Item::Email(EmailMessage {
                source_id: format!("mbox:{root}").into(),
                message_id: p.message_id.clone(),
                from: p.from.clone(),
                to: p.to.clone(),
                cc: p.cc.clone(),
                subject: p.subject.clone(),
                date_ms: p.date_ms,
                body: p.body.clone(),
                source_ref: p.message_id.as_ref().map(|id| format!("mid:{id}")),
            }),
        ));
    }
    out.sort_by_key(|(date, start, _)| (*date, *start));
    let mut items = Vec::with_capacity(out.len());
    for (_, start, item) in out {
        // Validate now so the error names the message.
        item.clone().into_drafts(&crate::Config::default()).map_err(|e| bad(start, e.to_string()))?;
        items.push(item);
    }
    Ok(items)
}

struct Parsed {
    start: usize,
    message_id: Option<String>,
    in_reply_to: Option<String>,
    references: Vec<String>,
    from: String,
    to: Vec<String>,
    cc: Vec<String>,
    subject: String,
    date_ms: i64,
    body: String,
}

type LineErr = (usize, String);

fn parse_message(m: &RawMessage<'_>) -> Result<Parsed, LineErr> {
    let (headers, body_at) = parse_headers(&m.lines, m.start)?;
    let get = |name: &str| headers.iter().find(|h| h.name.eq_ignore_ascii_case(name));
    let text = |name: &str| get(name).map(|h| decode_words(&h.value)).unwrap_or_default();
    let date_ms = match get("date") {
        Some(h) => {
            parse_date(&h.value).ok_or_else(|| (h.line, format!("unreadable Date header `{}`", clip(&h.value, 60))))?
        }
        None => separator_date(m.separator)
            .ok_or_else(|| (m.start, "message has no Date header and no date on its `From ` line".to_string()))?,
    };
    let ids = |name: &str| get(name).map(|h| message_ids(&h.value)).unwrap_or_default();
    let body_lines: Vec<(usize, &str)> = strip_trailing_blank(&m.lines[body_at..]);
    let body_lines: Vec<(usize, String)> = body_lines.iter().map(|(n, l)| (*n, unquote_from(l))).collect();
    let content_type = get("content-type").map(|h| h.value.clone()).unwrap_or_default();
    let encoding = get("content-transfer-encoding").map(|h| h.value.clone()).unwrap_or_default();
    let start_line = m.lines.get(body_at).map(|(n, _)| *n).unwrap_or(m.start);
    let body = extract_text(&content_type, &encoding, &body_lines, start_line)?.unwrap_or_default();
    Ok(Parsed {
        start: m.start,
        message_id: ids("message-id").into_iter().next(),
        in_reply_to: ids("in-reply-to").into_iter().next(),
        references: ids("references"),
        from: text("from").trim().to_string(),
        to: split_addresses(&text("to")),
        cc: split_addresses(&text("cc")),
        subject: text("subject").trim().to_string(),
        date_ms,
        body: body.trim().to_string(),
    })
}

/// Headers up to the first blank line (folded lines joined), and the index of the first body
/// line. A message that ends inside its headers is truncated.
fn parse_headers(lines: &[(usize, &str)], start: usize) -> Result<(Vec<Header>, usize), LineErr> {
    let mut headers: Vec<Header> = Vec::new();
    for (i, (no, line)) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            return Ok((headers, i + 1));
        }
        if line.starts_with([' ', '\t']) {
            let Some(h) = headers.last_mut() else {
                return Err((*no, "continuation line before any header".into()));
            };
            h.value.push(' ');
            h.value.push_str(line.trim());
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err((*no, format!("malformed header line (no `:`): `{}`", clip(line, 60))));
        };
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err((*no, format!("malformed header name in `{}`", clip(line, 60))));
        }
        headers.push(Header { name: name.to_string(), value: value.trim().to_string(), line: *no });
    }
    let last = lines.last().map(|(n, _)| *n).unwrap_or(start);
    Err((last, format!("truncated message (starts at line {start}): the file ends inside its headers")))
}

fn strip_trailing_blank<'a>(lines: &[(usize, &'a str)]) -> Vec<(usize, &'a str)> {
    let mut v = lines.to_vec();
    while v.last().is_some_and(|(_, l)| l.trim().is_empty()) {
        v.pop();
    }
    v
}

/// mboxrd: a body line `>From `, `>>From `… was escaped by one `>`.
fn unquote_from(line: &str) -> String {
    let rest = line.trim_start_matches('>');
    if line.starts_with('>') && rest.starts_with("From ") { line[1..].to_string() } else { line.to_string() }
}

/// The body text of a (possibly multipart) entity: `Ok(None)` when it has no text part.
fn extract_text(
    content_type: &str,
    encoding: &str,
    lines: &[(usize, String)],
    start_line: usize,
) -> Result<Option<String>, LineErr> {
    let (mime, params) = parse_content_type(content_type);
    if let Some(kind) = mime.strip_prefix("multipart/") {
        let boundary = params
            .get("boundary")
            .ok_or_else(|| (start_line, format!("multipart/{} message without a boundary", clip(kind, 60))))?;
        let parts = split_multipart(lines, boundary, start_line)?;
        let mut html = None;
        for part in parts {
            let hdr_lines: Vec<(usize, &str)> = part.iter().map(|(n, l)| (*n, l.as_str())).collect();
            let part_start = part.first().map(|(n, _)| *n).unwrap_or(start_line);
            let (headers, at) = parse_headers(&hdr_lines, part_start)?;
            let get = |name: &str| {
                headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value.clone()).unwrap_or_default()
            };
            let ct = get("content-type");
            let disposition = get("content-disposition").to_ascii_lowercase();
            if disposition.starts_with("attachment") {
                continue;
            }
            let (part_mime, _) = parse_content_type(&ct);
            let body_start = part.get(at).map(|(n, _)| *n).unwrap_or(part_start);
            let text = extract_text(&ct, &get("content-transfer-encoding"), &part[at..], body_start)?;
            match text {
                Some(t) if part_mime != "text/html" => return Ok(Some(t)),
                Some(t) if html.is_none() => html = Some(t),
                _ => {}
            }
        }
        return Ok(html);
    }
    if !(mime.is_empty() || mime.starts_with("text/")) {
        return Ok(None);
    }
    let raw: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    let bytes = match encoding.trim().to_ascii_lowercase().as_str() {
        "quoted-printable" => decode_quoted_printable(&raw),
        "base64" => {
            decode_base64(&raw.concat()).ok_or_else(|| (start_line, "invalid base64 in a message body".to_string()))?
        }
        _ => raw.join("\n").into_bytes(),
    };
    let text = decode_charset(&bytes, params.get("charset").map(String::as_str).unwrap_or("utf-8"));
    Ok(Some(if mime == "text/html" { strip_html(&text) } else { text }))
}

/// The parts between `--boundary` lines; a body that never reaches `--boundary--` is
/// truncated.
fn split_multipart(
    lines: &[(usize, String)],
    boundary: &str,
    start: usize,
) -> Result<Vec<Vec<(usize, String)>>, LineErr> {
    let open = format!("--{boundary}");
    let close = format!("--{boundary}--");
    let mut parts: Vec<Vec<(usize, String)>> = Vec::new();
    let mut current: Option<Vec<(usize, String)>> = None;
    for (no, line) in lines {
        let l = line.trim_end();
        if l == close {
            parts.extend(current.take());
            return Ok(parts);
        }
        if l == open {
            parts.extend(current.take());
            current = Some(Vec::new());
        } else if let Some(c) = current.as_mut() {
            c.push((*no, line.clone()));
        }
    }
    let last = lines.last().map(|(n, _)| *n).unwrap_or(start);
    Err((last, format!("truncated multipart body (starts at line {start}): no closing `{}`", clip(&close, 80))))
}

/// `text/plain; charset="utf-8"` → (`text/plain`, {charset: utf-8}), lower-cased names.
fn parse_content_type(v: &str) -> (String, HashMap<String, String>) {
    let mut it = v.split(';');
    let mime = it.next().unwrap_or_default().trim().to_ascii_lowercase();
    let params = it
        .filter_map(|p| {
            let (k, v) = p.split_once('=')?;
            Some((k.trim().to_ascii_lowercase(), v.trim().trim_matches('"').to_string()))
        })
        .collect();
    (mime, params)
}

fn decode_quoted_printable(lines: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim_end_matches([' ', '\t']);
        let (line, soft) = match line.strip_suffix('=') {
            Some(l) => (l, true),
            None => (line, false),
        };
        let b = line.as_bytes();
        let mut j = 0;
        while j < b.len() {
            if b[j] == b'='
                && j + 2 < b.len()
                && let Some(v) = std::str::from_utf8(&b[j + 1..j + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                j += 3;
                continue;
            }
            out.push(b[j]);
            j += 1;
        }
        if !soft && i + 1 < lines.len() {
            out.push(b'\n');
        }
    }
    out
}

/// Standard base64 (white space ignored, padding optional); `None` on a foreign character.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            c if c.is_ascii_whitespace() => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Bytes in `charset` as text: UTF-8 (lossy), Latin-1 and Windows-1252 (as Latin-1); other
/// charsets are read as UTF-8, lossily.
fn decode_charset(bytes: &[u8], charset: &str) -> String {
    match charset.trim().to_ascii_lowercase().as_str() {
        "iso-8859-1" | "latin1" | "latin-1" | "iso8859-1" | "windows-1252" | "cp1252" => {
            bytes.iter().map(|&b| b as char).collect()
        }
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// RFC 2047 encoded words (`=?utf-8?Q?...?=`, `=?utf-8?B?...?=`) in a header value; white
/// space between two encoded words is dropped, as the RFC says.
fn decode_words(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    let mut last_was_word = false;
    while let Some(at) = rest.find("=?") {
        let (before, tail) = rest.split_at(at);
        let decoded = (|| {
            let inner = &tail[2..];
            let (charset, inner) = inner.split_once('?')?;
            let (enc, inner) = inner.split_once('?')?;
            let end = inner.find("?=")?;
            let payload = &inner[..end];
            let bytes = match enc.to_ascii_lowercase().as_str() {
                "b" => decode_base64(payload)?,
                "q" => {
                    let s = payload.replace('_', " ");
                    decode_quoted_printable(&[s.as_str()])
                }
                _ => return None,
            };
            let consumed = 2 + charset.len() + 1 + enc.len() + 1 + end + 2;
            Some((decode_charset(&bytes, charset), consumed))
        })();
        match decoded {
            Some((text, consumed)) => {
                if !(last_was_word && before.trim().is_empty()) {
                    out.push_str(before);
                }
                out.push_str(&text);
                rest = &tail[consumed..];
                last_was_word = true;
            }
            None => {
                out.push_str(before);
                out.push_str("=?");
                rest = &tail[2..];
                last_was_word = false;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The `<id>`s of a Message-ID / In-Reply-To / References header, without brackets; a bare
/// id without brackets is accepted.
fn message_ids(v: &str) -> Vec<String> {
    let mut ids: Vec<String> = v
        .split('<')
        .skip(1)
        .filter_map(|s| s.split_once('>').map(|(id, _)| id.trim().to_string()))
        .filter(|s| !s.is_empty())
        .collect();
    if ids.is_empty() && !v.trim().is_empty() && !v.contains(char::is_whitespace) {
        ids.push(v.trim().to_string());
    }
    ids
}

/// Split an address list on commas outside quotes and angle brackets.
fn split_addresses(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut cur, mut quoted, mut angle) = (String::new(), false, false);
    for c in v.chars() {
        match c {
            '"' => quoted = !quoted,
            '<' if !quoted => angle = true,
            '>' if !quoted => angle = false,
            ',' if !quoted && !angle => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter().map(|a| a.trim().replace('"', "")).filter(|a| !a.is_empty()).collect()
}

/// RFC 2822 date, with a trailing `(comment)` tolerated.
fn parse_date(v: &str) -> Option<i64> {
    let v = match v.find('(') {
        Some(i) => &v[..i],
        None => v,
    };
    chrono::DateTime::parse_from_rfc2822(v.trim()).ok().map(|d| d.timestamp_millis())
}

/// `From sender <date> <year>`: at least a sender and a date, the last word a year.
fn looks_like_separator(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.len() >= 4 && words.last().is_some_and(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()))
}

/// The asctime date of a `From sender Tue May  2 09:14:00 2023` separator (a numeric zone
/// such as `+0000` before the year is skipped), as UTC.
fn separator_date(sep: &str) -> Option<i64> {
    let words: Vec<&str> = sep
        .split_whitespace()
        .filter(|w| !(w.len() == 5 && w.starts_with(['+', '-']) && w[1..].bytes().all(|b| b.is_ascii_digit())))
        .collect();
    let tail = words.get(words.len().checked_sub(5)?..)?.join(" ");
    chrono::NaiveDateTime::parse_from_str(&tail, "%a %b %e %H:%M:%S %Y").ok().map(|d| d.and_utc().timestamp_millis())
}

/// `Re: Fwd: Subject` → `subject` (a thread key for messages without ids).
fn normalise_subject(s: &str) -> String {
    let mut s = s.trim();
    loop {
        let lower = s.to_ascii_lowercase();
        match ["re:", "fwd:", "fw:", "aw:"].iter().find(|p| lower.starts_with(*p)) {
            Some(p) => s = s[p.len()..].trim_start(),
            None => break,
        }
    }
    s.to_lowercase()
}

/// Tags removed, common entities decoded, blank runs collapsed: enough to index an HTML-only
/// mail.
fn strip_html(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out.replace("&nbsp;", " ").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"");
    let out = out.replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
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

    fn emails(items: Vec<Item>) -> Vec<EmailMessage> {
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

        let mut bytes = TWO.as_bytes().to_vec();
        bytes.splice(200..200, [0xff, 0xfe]);
        let (_d, p) = write(&bytes);
        let e = read_mbox(&p).unwrap_err().to_string();
        assert!(e.contains("invalid UTF-8"), "{e}");

        let (_d, p) = write(b"From a@example.com\nFrom: a@example.com\nSubject: x\n\nbody\n");
        let e = read_mbox(&p).unwrap_err().to_string();
        assert!(e.contains(":1: message has no Date header"), "{e}");
    }

    #[test]
    fn base64_and_encoded_words() {
        assert_eq!(decode_base64("aGVsbG8gd29ybGQ=").unwrap(), b"hello world");
        assert_eq!(decode_words("=?UTF-8?B?w6l0w6k=?= =?utf-8?Q?_ok?="), "été ok");
        assert_eq!(decode_words("plain =?bogus"), "plain =?bogus");
        assert_eq!(separator_date("From x Tue May  2 09:14:00 2023"), Some(1_683_018_840_000));
        assert_eq!(separator_date("From 17644@xxx Tue May 02 09:14:00 +0000 2023"), Some(1_683_018_840_000));
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
