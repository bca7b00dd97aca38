//! The mbox file as lines, with what the splitter needs beyond `read_until`: a look at the
//! next line before deciding whether a `From ` line is a separator, a run of exact bytes (a
//! `Content-Length:` body), and a way to put bytes back when that run turns out wrong.

use std::io::{self, BufRead, Read};

pub(super) struct Lines<R> {
    reader: R,
    /// Bytes put back, read before the reader; `at` is how far they have been read.
    replay: Vec<u8>,
    at: usize,
    /// A line read ahead by [`Lines::peek`].
    peeked: Option<Vec<u8>>,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R) -> Self {
        Lines { reader, replay: Vec::new(), at: 0, peeked: None }
    }

    /// The next line into `out` (with its line end); false at the end of the file.
    pub fn next_line(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        out.clear();
        if let Some(p) = self.peeked.take() {
            *out = p;
            return Ok(true);
        }
        if self.at < self.replay.len() {
            let rest = &self.replay[self.at..];
            let end = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
            out.extend_from_slice(&rest[..end]);
            self.at += end;
            if self.at == self.replay.len() {
                self.replay.clear();
                self.at = 0;
            }
            return Ok(true);
        }
        Ok(self.reader.read_until(b'\n', out)? > 0)
    }

    /// The next line without consuming it; `None` at the end of the file.
    pub fn peek(&mut self) -> io::Result<Option<&[u8]>> {
        if self.peeked.is_none() {
            let mut line = Vec::new();
            if self.next_line(&mut line)? {
                self.peeked = Some(line);
            }
        }
        Ok(self.peeked.as_deref())
    }

    /// Up to `n` bytes appended to `out`, fewer only at the end of the file; how many.
    pub fn take(&mut self, n: usize, out: &mut Vec<u8>) -> io::Result<usize> {
        let start = out.len();
        let mut line = Vec::new();
        // Whole lines first (the peeked one, the replay), then the reader's bytes.
        while out.len() - start < n {
            if self.peeked.is_none() && self.at >= self.replay.len() {
                let want = n - (out.len() - start);
                let got = (&mut self.reader).take(want as u64).read_to_end(out)?;
                if got == 0 {
                    break;
                }
                continue;
            }
            if !self.next_line(&mut line)? {
                break;
            }
            let want = n - (out.len() - start);
            if line.len() <= want {
                out.extend_from_slice(&line);
            } else {
                out.extend_from_slice(&line[..want]);
                self.unread(line[want..].to_vec());
            }
        }
        Ok(out.len() - start)
    }

    /// Put `bytes` back in front of everything not yet read.
    pub fn unread(&mut self, bytes: Vec<u8>) {
        let mut front = bytes;
        if let Some(p) = self.peeked.take() {
            front.extend_from_slice(&p);
        }
        front.extend_from_slice(&self.replay[self.at..]);
        self.replay = front;
        self.at = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peek_take_and_unread_keep_the_byte_order() {
        let mut l = Lines::new(&b"one\ntwo\nthree\nfour"[..]);
        let mut line = Vec::new();
        assert_eq!(l.peek().unwrap(), Some(&b"one\n"[..]));
        assert!(l.next_line(&mut line).unwrap());
        assert_eq!(line, b"one\n");
        let mut run = Vec::new();
        assert_eq!(l.take(6, &mut run).unwrap(), 6);
        assert_eq!(run, b"two\nth");
        l.unread(run);
        assert_eq!(l.peek().unwrap(), Some(&b"two\n"[..]));
        let mut all = Vec::new();
        assert_eq!(l.take(100, &mut all).unwrap(), 14);
        assert_eq!(all, b"two\nthree\nfour");
        assert!(!l.next_line(&mut line).unwrap());
    }
}
