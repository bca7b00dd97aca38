//! Splitting an mbox file into its messages as it is read, one message in memory at a time:
//! the `From ` separator lines (mboxo/mboxrd), and the mboxrd unescaping of `>From ` lines.

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

/// The messages of an mbox stream, in file order.
pub(super) struct Messages<R> {
    reader: R,
    /// Lines read so far.
    line_no: usize,
    /// The message being read; the next separator or the end of the file hands it out.
    pending: Option<RawMessage>,
    prev_blank: bool,
    done: bool,
    line: Vec<u8>,
}

impl<R: BufRead> Messages<R> {
    pub fn new(reader: R) -> Self {
        Messages { reader, line_no: 0, pending: None, prev_blank: true, done: false, line: Vec::with_capacity(256) }
    }
}

impl<R: BufRead> Iterator for Messages<R> {
    type Item = Result<RawMessage, SplitError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            self.line.clear();
            match self.reader.read_until(b'\n', &mut self.line) {
                Ok(0) => {
                    self.done = true;
                    return self.pending.take().map(Ok);
                }
                Ok(_) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(SplitError::Io(e)));
                }
            }
            self.line_no += 1;
            let line = self.line.as_slice();
            let blank = line.iter().all(u8::is_ascii_whitespace);
            // A body line "From ..." after a blank line that a writer forgot to escape is only
            // a separator when it looks like one (a sender and a date ending in a year).
            let separator = line.starts_with(b"From ")
                && self.prev_blank
                && (self.pending.is_none() || looks_like_separator(&String::from_utf8_lossy(line)));
            self.prev_blank = blank;
            if separator {
                let text = String::from_utf8_lossy(line).trim_end().to_string();
                let next = RawMessage { start: self.line_no, separator: text, bytes: Vec::new() };
                if let Some(done) = self.pending.replace(next) {
                    return Some(Ok(done));
                }
            } else if let Some(m) = self.pending.as_mut() {
                m.bytes.extend_from_slice(unescape_from(line));
            } else if !blank {
                self.done = true;
                return Some(Err(SplitError::NotMbox(self.line_no)));
            }
        }
    }
}

/// mboxrd: a body line `>From `, `>>From `… was escaped by one `>`.
fn unescape_from(line: &[u8]) -> &[u8] {
    let quotes = line.iter().take_while(|&&b| b == b'>').count();
    if quotes > 0 && line[quotes..].starts_with(b"From ") { &line[1..] } else { line }
}

/// `From sender <date> <year>`: at least a sender and a date, the last word a year.
fn looks_like_separator(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.len() >= 4 && words.last().is_some_and(|y| y.len() == 4 && y.bytes().all(|b| b.is_ascii_digit()))
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
        let m = RawMessage { start: 2, separator: String::new(), bytes: got[0].2.clone().into_bytes() };
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
}
