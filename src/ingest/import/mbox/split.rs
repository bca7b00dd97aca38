//! Splitting an mbox file into its messages as it is read, one message in memory at a time,
//! in every dialect mail programs write: mboxo and mboxrd (`>From ` unescaped), mboxcl and
//! mboxcl2 (a `Content-Length:` body taken whole when the next separator or the end of the
//! file follows it), separators with or without a date (Netscape's and Thunderbird's
//! `From - …`, a bare `From -`) and with or without a blank line before them, CRLF files.
//!
//! A `From ` line is a separator when it opens the file; after a blank line when it looks
//! like one (a sender and a date ending in a year, or `From -`) or when header fields follow
//! it; without a blank line only when it looks like one *and* header fields follow. A line
//! that looks like a separator but is kept as text is named in the message's notes, so an
//! import never glues two messages together without saying so.

use super::lines::Lines;

/// A fault in a message: the 1-based file line and the reason.
pub(super) type LineErr = (usize, String);
use std::io::{self, BufRead};

/// One message's bytes as the file holds them after its separator line, with `>From `
/// unescaped; line ends are kept, so line numbers can be counted back from an offset.
pub(super) struct RawMessage {
    /// 1-based line of the `From ` separator.
    pub start: usize,
    /// The separator line (its date is the fallback when `Date:` is missing), read lossily.
    pub separator: String,
    /// Everything after the separator up to the next one.
    pub bytes: Vec<u8>,
    /// Lines of this message the splitter had doubts about: (1-based file line, what).
    pub notes: Vec<LineErr>,
}

impl RawMessage {
    /// The 1-based file line of byte `offset` of [`RawMessage::bytes`].
    pub fn line_at(&self, offset: usize) -> usize {
        let upto = &self.bytes[..offset.min(self.bytes.len())];
        self.start + 1 + upto.iter().filter(|&&b| b == b'\n').count()
    }

    /// The 1-based file line of the message's last non-blank line (its separator when it
    /// has none).
    pub fn last_line(&self) -> usize {
        let end = self.bytes.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(0, |i| i + 1);
        if end == 0 { self.start } else { self.line_at(end - 1) }
    }
}

/// Why the split stopped.
pub(super) enum SplitError {
    /// Reading the file failed.
    Io(io::Error),
    /// Text before the first separator: not an mbox file (the 1-based line).
    NotMbox(usize),
}

/// Where the splitter is inside the pending message.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Headers,
    Body,
}

/// The messages of an mbox stream, in file order.
pub(super) struct Messages<R> {
    lines: Lines<R>,
    /// Lines read so far.
    line_no: usize,
    /// The message being read; the next separator or the end of the file hands it out.
    pending: Option<RawMessage>,
    part: Part,
    /// The pending message's `Content-Length:`, when it has one.
    content_length: Option<usize>,
    prev_blank: bool,
    done: bool,
    line: Vec<u8>,
}

impl<R: BufRead> Messages<R> {
    pub fn new(reader: R) -> Self {
        Messages {
            lines: Lines::new(reader),
            line_no: 0,
            pending: None,
            part: Part::Headers,
            content_length: None,
            prev_blank: true,
            done: false,
            line: Vec::with_capacity(256),
        }
    }

    /// Whether the `From ` line just read separates messages (see the module docs).
    fn is_separator(&mut self) -> io::Result<bool> {
        if !self.line.starts_with(b"From ") {
            return Ok(false);
        }
        if self.pending.is_none() {
            return Ok(true);
        }
        let text = String::from_utf8_lossy(&self.line).into_owned();
        let looks = looks_like_separator(&text);
        if self.prev_blank && looks {
            return Ok(true);
        }
        // `From <sender>` alone, without a date: a separator only after a blank line and
        // before header fields. Prose (`From Russia with love`) never is.
        let bare = text.split_whitespace().count() == 2;
        let headers_follow = self.lines.peek()?.is_some_and(is_header_field);
        if headers_follow && (looks || bare && self.prev_blank) {
            return Ok(true);
        }
        // One sign without the other: most likely text, but say so.
        let doubt = match (looks, headers_follow) {
            (true, _) => "looks like a separator but no header follows it",
            (false, true) => "is followed by a header-like line but has no date and no blank line before it",
            (false, false) => return Ok(false),
        };
        if let Some(m) = self.pending.as_mut() {
            m.notes.push((
                self.line_no,
                format!(
                    "`{}` {doubt}: kept as text of the message at line {}",
                    crate::text::clip(text.trim_end(), 60),
                    m.start
                ),
            ));
        }
        Ok(false)
    }

    /// At the blank line that ends a message's headers, with `Content-Length: n`: take the
    /// next `n` bytes as the body when the end of the file or a separator follows them (after
    /// blank lines); else put them back and split by lines, noting the wrong length.
    fn take_counted_body(&mut self, n: usize) -> io::Result<()> {
        let mut body = Vec::with_capacity(n.min(1 << 24));
        let got = self.lines.take(n, &mut body)?;
        let mut after = Vec::new();
        let mut line = Vec::new();
        let fits = got == n
            && loop {
                match self.lines.peek()? {
                    None => break true,
                    Some(l) if l.starts_with(b"From ") => break true,
                    Some(l) if l.iter().all(u8::is_ascii_whitespace) => {
                        self.lines.next_line(&mut line)?;
                        after.extend_from_slice(&line);
                    }
                    Some(_) => break false,
                }
            };
        let Some(m) = self.pending.as_mut() else { return Ok(()) };
        if fits {
            self.line_no += body.iter().chain(&after).filter(|&&b| b == b'\n').count();
            for l in body.split_inclusive(|&b| b == b'\n') {
                m.bytes.extend_from_slice(unescape_from(l));
            }
            m.bytes.extend_from_slice(&after);
            self.prev_blank = true;
        } else {
            m.notes.push((
                self.line_no,
                format!("its Content-Length ({n}) does not end at a message boundary: split by lines instead"),
            ));
            body.extend_from_slice(&after);
            self.lines.unread(body);
        }
        Ok(())
    }
}

impl<R: BufRead> Iterator for Messages<R> {
    type Item = Result<RawMessage, SplitError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            match self.lines.next_line(&mut self.line) {
                Ok(false) => {
                    self.done = true;
                    return self.pending.take().map(Ok);
                }
                Ok(true) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(SplitError::Io(e)));
                }
            }
            self.line_no += 1;
            if self.line_no == 1 && self.line.starts_with(crate::ingest::import::BOM) {
                self.line.drain(..crate::ingest::import::BOM.len());
            }
            let blank = self.line.iter().all(u8::is_ascii_whitespace);
            let separator = match self.is_separator() {
                Ok(s) => s,
                Err(e) => {
                    self.done = true;
                    return Some(Err(SplitError::Io(e)));
                }
            };
            self.prev_blank = blank;
            if separator {
                let text = String::from_utf8_lossy(&self.line).trim_end().to_string();
                let next = RawMessage { start: self.line_no, separator: text, bytes: Vec::new(), notes: Vec::new() };
                self.part = Part::Headers;
                self.content_length = None;
                if let Some(done) = self.pending.replace(next) {
                    return Some(Ok(done));
                }
                continue;
            }
            let Some(m) = self.pending.as_mut() else {
                if !blank {
                    self.done = true;
                    return Some(Err(SplitError::NotMbox(self.line_no)));
                }
                continue;
            };
            m.bytes.extend_from_slice(unescape_from(&self.line));
            if self.part == Part::Headers {
                if blank {
                    self.part = Part::Body;
                    if let Some(n) = self.content_length.take()
                        && let Err(e) = self.take_counted_body(n)
                    {
                        self.done = true;
                        return Some(Err(SplitError::Io(e)));
                    }
                } else if let Some(n) = content_length(&self.line) {
                    self.content_length = Some(n);
                }
            }
        }
    }
}

/// mboxrd: a body line `>From `, `>>From `… was escaped by one `>`.
fn unescape_from(line: &[u8]) -> &[u8] {
    let quotes = line.iter().take_while(|&&b| b == b'>').count();
    if quotes > 0 && line[quotes..].starts_with(b"From ") { &line[1..] } else { line }
}

/// `From sender <date> <year>` (a sender and a date, the last word a year), or Netscape's
/// and Thunderbird's `From -` with or without a date.
fn looks_like_separator(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let dated = words.len() >= 4 && words.last().is_some_and(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()));
    dated || words.get(1) == Some(&"-")
}

/// A header field line: a name of printable ASCII without spaces, then a colon.
fn is_header_field(line: &[u8]) -> bool {
    let Some(colon) = memchr::memchr(b':', line) else { return false };
    colon > 0 && line[..colon].iter().all(|&b| (33..=126).contains(&b))
}

/// The value of a `Content-Length:` header line.
fn content_length(line: &[u8]) -> Option<usize> {
    const NAME: &[u8] = b"content-length:";
    if line.len() < NAME.len() || !line[..NAME.len()].eq_ignore_ascii_case(NAME) {
        return None;
    }
    std::str::from_utf8(&line[NAME.len()..]).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<(usize, String, String)> {
        Messages::new(text.as_bytes())
            .map(|m| {
                let m = m.ok().expect("splits");
                (m.start, m.separator, String::from_utf8(m.bytes).unwrap())
            })
            .collect()
    }

    #[test]
    fn separators_escapes_and_line_numbers() {
        let text = "\nFrom a Tue May  2 09:14:00 2023\nA: 1\n\n>From x\n>>From y\n>Fromage\n\nFrom what I hear\n\n\
                    From b Tue May  2 09:15:00 2023\r\nB: 2\n";
        let got = split(text);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, 2);
        assert_eq!(got[0].2, "A: 1\n\nFrom x\n>From y\n>Fromage\n\nFrom what I hear\n\n", "not a separator: no date");
        assert_eq!((got[1].0, got[1].1.as_str(), got[1].2.as_str()), (11, "From b Tue May  2 09:15:00 2023", "B: 2\n"));
        let m = RawMessage { start: 2, separator: String::new(), bytes: got[0].2.clone().into_bytes(), notes: vec![] };
        assert_eq!(m.line_at(0), 3);
        assert_eq!(m.line_at(6), 5, "the first byte after `A: 1\\n\\n` is on line 5");
        assert_eq!(m.last_line(), 9);
    }

    #[test]
    fn text_before_the_first_separator_is_not_an_mbox() {
        let mut it = Messages::new(&b"\n\nhello\nFrom a Tue May  2 09:14:00 2023\n"[..]);
        assert!(matches!(it.next(), Some(Err(SplitError::NotMbox(3)))));
        assert!(it.next().is_none(), "the split stops at the error");
    }

    #[test]
    fn netscape_separators_without_a_date_or_a_blank_line() {
        let text = "From -\nX-Mozilla-Status: 0001\nSubject: one\n\nbody one\nFrom -\nSubject: two\n\nbody two\n\
                    From - Mon Jan  1 10:00:00 2001\nSubject: three\n\nbody three\n";
        let got = split(text);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].2, "X-Mozilla-Status: 0001\nSubject: one\n\nbody one\n");
        assert_eq!((got[1].0, got[2].0), (6, 10));
    }

    #[test]
    fn a_bare_from_line_after_a_blank_needs_headers_after_it() {
        let text =
            "From a@example.com\nSubject: one\n\nbody\n\nFrom b@example.com\nSubject: two\n\nFrom here on\nwe walk.\n";
        let got = split(text);
        assert_eq!(got.len(), 2);
        assert!(got[1].2.ends_with("From here on\nwe walk.\n"));
    }

    #[test]
    fn prose_from_lines_stay_text_even_before_a_header_like_line() {
        let text = "\u{feff}From -\nSubject: one\n\nMy favourite film:\n\nFrom Russia with love\nYear: 1963\n\nFrom -\nSubject: two\n\nx\n";
        let msgs: Vec<RawMessage> = Messages::new(text.as_bytes()).map(|m| m.ok().unwrap()).collect();
        assert_eq!(msgs.len(), 2, "a byte order mark before the first separator, and prose, split nothing");
        assert!(String::from_utf8_lossy(&msgs[0].bytes).contains("From Russia with love\nYear: 1963"));
        assert_eq!(msgs[0].notes.len(), 1, "the header-like line after it is named: {:?}", msgs[0].notes);
        assert_eq!(msgs[0].notes[0].0, 6);
    }

    #[test]
    fn content_length_bodies_keep_unescaped_from_lines() {
        let body = "Hi\n\nFrom a Tue May  2 09:14:00 2023\nSubject: not a header\n";
        let text = format!(
            "From a Tue May  2 09:14:00 2023\nContent-Length: {}\nSubject: one\n\n{body}\nFrom b Tue May  2 09:15:00 2023\nSubject: two\n\nx\n",
            body.len()
        );
        let got = split(&text);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].2.ends_with(&format!("\n\n{body}\n")));
        assert_eq!(got[1].0, 10);
    }

    #[test]
    fn a_wrong_content_length_falls_back_to_lines_and_says_so() {
        let text = "From a Tue May  2 09:14:00 2023\nContent-Length: 3\nSubject: one\n\nbody one\n\n\
                    From b Tue May  2 09:15:00 2023\nSubject: two\n\nx\n";
        let msgs: Vec<RawMessage> = Messages::new(text.as_bytes()).map(|m| m.ok().unwrap()).collect();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].bytes, b"Content-Length: 3\nSubject: one\n\nbody one\n\n");
        assert_eq!(msgs[0].notes.len(), 1);
        assert!(msgs[0].notes[0].1.contains("Content-Length (3)"), "{:?}", msgs[0].notes);
        assert_eq!(msgs[1].start, 7);
    }

    #[test]
    fn crlf_files_split_the_same() {
        let text = "From a Tue May  2 09:14:00 2023\r\nSubject: one\r\n\r\nbody\r\n\r\nFrom b Tue May  2 09:15:00 2023\r\nSubject: two\r\n\r\nx\r\n";
        let got = split(text);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].0, 6);
    }
}
