//! Where a record of a JSON file starts, as a 1-based line: the readers that parse a whole
//! file as one value (the ChatGPT, Claude and Slack exports) name a record they skip by its line,
//! as the line-by-line readers do, so that a warning points into the file.

/// Where a record starts: its byte offset in the text and its 1-based line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spot {
    /// The byte offset.
    pub at: usize,
    /// The 1-based line.
    pub line: usize,
}

impl Spot {
    /// The start of a text: byte 0, line 1.
    pub(crate) const START: Spot = Spot { at: 0, line: 1 };

    /// The line of the first occurrence of `needle` in `text` at or after this spot (counting
    /// from here, so a warning per message costs its own record's bytes, not the file's),
    /// `None` when there is none (a value written with escapes the needle does not have).
    pub(crate) fn line_of(self, text: &str, needle: &str) -> Option<usize> {
        self.line_where(text, needle, |_| true)
    }

    /// The line of the first object key `key` at or after this spot (the string followed by
    /// `:`, not the same string as a value), `None` when there is none.
    pub(crate) fn line_of_key(self, text: &str, key: &str) -> Option<usize> {
        let quoted = format!("\"{key}\"");
        self.line_where(text, &quoted, |after| after.trim_start().starts_with(':'))
    }

    fn line_where(self, text: &str, needle: &str, fits: impl Fn(&str) -> bool) -> Option<usize> {
        let rest = text.get(self.at..)?;
        let found = rest.match_indices(needle).find(|(at, _)| fits(&rest[at + needle.len()..]))?.0;
        Some(self.line + rest.as_bytes()[..found].iter().filter(|&&b| b == b'\n').count())
    }
}

/// Where the elements of a JSON document's list of records start: the elements of the
/// top-level array, or, when the document is an object, of the array under its key `key`.
/// Empty when there is no such array. `text` must be the JSON that was parsed: this is a scan
/// of its syntax, not a second parse (strings and their escapes are stepped over; a line
/// break can only be white space between tokens, since JSON strings escape theirs).
pub(crate) fn element_starts(text: &str, key: &str) -> Vec<Spot> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // The depth of the array whose elements are wanted: 1 for a top-level array, 2 for the
    // array under `key` of a top-level object; 0 until it is known.
    let mut want = 0usize;
    let mut depth = 0usize;
    // Whether the next value at depth `want` starts an element (after `[` or `,`).
    let mut expect = false;
    // The last string closed at depth 1 of an object: a key when a `[` follows it.
    let mut last_key: Option<(usize, usize)> = None;
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            line += usize::from(c == b'\n');
            i += 1;
            continue;
        }
        if expect && depth == want && c != b']' {
            out.push(Spot { at: i, line });
            expect = false;
        }
        match c {
            b'"' => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 && want == 0 {
                    last_key = Some((start, i.min(b.len())));
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if c == b'[' && want == 0 {
                    let top = depth == 1;
                    let under_key = depth == 2 && last_key.is_some_and(|(s, e)| text.get(s..e) == Some(key));
                    if top || under_key {
                        want = depth;
                        expect = true;
                    }
                }
            }
            b']' | b'}' => {
                if depth == want {
                    // The list ended: nothing further is one of its elements.
                    return out;
                }
                depth = depth.saturating_sub(1);
            }
            b',' if depth == want => expect = true,
            b',' if depth == 1 => last_key = None,
            _ => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str, key: &str) -> Vec<usize> {
        element_starts(text, key).iter().map(|s| s.line).collect()
    }

    #[test]
    fn elements_of_a_top_level_array_start_where_they_are_written() {
        let text = "[\n {\"id\": \"a\", \"x\": [1, {\"y\": \"],\\\"\"}]},\n\n {\"id\": \"b\"}, 3 ,\"s,\"\n]";
        let starts = element_starts(text, "conversations");
        assert_eq!(starts.iter().map(|s| s.line).collect::<Vec<_>>(), vec![2, 4, 4, 4]);
        assert_eq!(&text[starts[1].at..starts[1].at + 4], "{\"id");
        assert_eq!(&text[starts[2].at..starts[2].at + 1], "3");
        assert!(element_starts("[]", "k").is_empty());
        assert!(element_starts(" [ ] ", "k").is_empty());
    }

    #[test]
    fn elements_under_the_key_of_a_top_level_object() {
        let text = "{\"other\": [9, 9], \"nested\": {\"conversations\": [0]},\n\"conversations\": [\n{\"a\": 1},\n{\"b\": 2}]}";
        assert_eq!(lines(text, "conversations"), vec![3, 4]);
        assert!(element_starts("{\"x\": 1}", "conversations").is_empty());
        assert!(element_starts("\"just a string\"", "conversations").is_empty());
    }

    #[test]
    fn a_needle_is_found_from_a_spot() {
        let text = "a\nb \"id\"\nc \"id\"";
        let start = Spot::START;
        assert_eq!(start.line_of(text, "\"id\""), Some(2));
        assert_eq!(Spot { at: 5, line: 2 }.line_of(text, "\"id\""), Some(3));
        assert_eq!(start.line_of(text, "\"nope\""), None);
        assert_eq!(Spot { at: 999, line: 9 }.line_of(text, "\"id\""), None);
        let text = "{\"now\": \"m2\",\n \"m1\": {},\n \"m2\"  :\n {}}";
        assert_eq!(start.line_of(text, "\"m2\""), Some(1));
        assert_eq!(start.line_of_key(text, "m2"), Some(3));
        assert_eq!(start.line_of_key(text, "m3"), None);
    }
}
