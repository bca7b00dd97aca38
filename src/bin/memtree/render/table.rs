//! Tables sized to the terminal: one row a line, the text column takes the width the other
//! columns leave, and a narrow terminal drops the least useful columns instead of squeezing
//! the text.
//!
//! Widths are display widths (`console`, on `unicode-width`): a CJK character or most emoji
//! take two cells, and a cut never splits a character. Cells are cleaned first: line breaks,
//! tabs and other control characters become spaces (so a row cannot wrap or move the cursor,
//! and stored text cannot send escape sequences to the terminal).

use console::{Alignment, measure_text_width, pad_str, truncate_str};

/// The width when stdout is not a terminal and `$COLUMNS` is not set: wide enough that a pipe
/// or a file gets every column of the hit table.
pub const PIPE_WIDTH: usize = 160;

/// Cells between two columns.
const GAP: usize = 2;

/// The text column never gets less than this (when it has that much to show), whatever the
/// other columns want; below it, the table shows only the rank and the text.
const MIN_TEXT: usize = 20;

/// One column of a [`Table`].
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub header: &'static str,
    /// Widest the column gets; a longer cell is cut with `…`. Ignored for the text column.
    pub max: usize,
    /// Order in which columns are kept when the width is short: 0 is dropped last. The text
    /// column is always kept.
    pub keep: u8,
    /// Right-aligned (numbers).
    pub right: bool,
}

impl Column {
    /// A left-aligned column.
    pub const fn new(header: &'static str, max: usize, keep: u8) -> Column {
        Column { header, max, keep, right: false }
    }

    /// The same column, right-aligned.
    pub const fn right(self) -> Column {
        Column { right: true, ..self }
    }
}

/// A table to render: columns in display order, the index of the text column (which takes
/// the rest of the width), and rows of cells, one per column.
#[derive(Debug, Clone)]
pub struct Table {
    pub columns: Vec<Column>,
    pub text: usize,
    pub rows: Vec<Vec<String>>,
}

/// The terminal width the REPL lays tables out for: `--width` if given, else the width of
/// the terminal stdout is (read at each call, so a resized window is followed), else
/// `$COLUMNS`, else [`PIPE_WIDTH`].
pub fn current_width(flag: Option<usize>) -> usize {
    if let Some(w) = flag {
        return w;
    }
    if let Some((_, cols)) = console::Term::stdout().size_checked() {
        return usize::from(cols);
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()).filter(|&c| c > 0).unwrap_or(PIPE_WIDTH)
}

/// One line of text for a cell: every run of white space or control characters becomes one
/// space, and the ends are trimmed.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `s` cut to `width` display cells, with `…` when something was cut.
pub fn clip(s: &str, width: usize) -> String {
    truncate_str(s, width, "…").into_owned()
}

/// `s` cut to `width` display cells at the end of a word, with `…` when something was cut; at
/// a character when the last word that fits ends in the first half (a long URL, a path).
pub fn clip_at_word(s: &str, width: usize) -> String {
    if measure_text_width(s) <= width {
        return s.to_string();
    }
    let cut = clip(s, width);
    let kept = cut.trim_end_matches('…');
    match kept.rfind(' ') {
        Some(sp) if measure_text_width(&kept[..sp]) * 2 >= width => {
            format!("{}…", kept[..sp].trim_end_matches([',', ';', ':', ' ', '(']))
        }
        _ => cut,
    }
}

/// `text` in lines of at most `width` display cells, broken at the last space that fits (the
/// spacing inside a line is kept, so aligned columns stay aligned; a word wider than a line is
/// cut), the lines after the first indented by `indent` spaces.
pub fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    // An indent of more than half the width leaves too little to read: none then.
    let indent = if indent * 2 > width { 0 } else { indent };
    let mut lines = Vec::new();
    let mut rest = text.trim_end();
    loop {
        let lead = if lines.is_empty() { 0 } else { indent };
        let room = width.saturating_sub(lead).max(1);
        if measure_text_width(rest) <= room {
            lines.push(format!("{}{rest}", " ".repeat(lead)));
            return lines;
        }
        // The byte where the first `room` cells end, and the last space before it.
        let mut cells = 0;
        let mut end = rest.len();
        for (i, c) in rest.char_indices() {
            cells += measure_text_width(c.encode_utf8(&mut [0; 4]));
            if cells > room {
                end = i;
                break;
            }
        }
        let space = if rest[end..].starts_with(' ') { Some(end) } else { rest[..end].rfind(' ') };
        let (line, next) = match space {
            Some(sp) if !rest[..sp].trim().is_empty() => (&rest[..sp], &rest[sp..]),
            _ => {
                // No space to break at: the word is cut, and the line goes on after it.
                let word_end = rest[end..].find(' ').map_or(rest.len(), |i| end + i);
                lines.push(format!("{}{}", " ".repeat(lead), clip(&rest[..word_end], room)));
                rest = rest[word_end..].trim_start();
                if rest.is_empty() {
                    return lines;
                }
                continue;
            }
        };
        lines.push(format!("{}{}", " ".repeat(lead), line.trim_end()));
        rest = next.trim_start();
        if rest.is_empty() {
            return lines;
        }
    }
}

impl Table {
    /// The table as lines no wider than `width` display cells (header, a rule, one line per
    /// row), without a trailing newline.
    pub fn render(&self, width: usize) -> String {
        let n = self.columns.len();
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| r.iter().map(|c| one_line(c)).collect()).collect();
        // What each column would take: its header or widest cell, up to its cap.
        let natural: Vec<usize> = (0..n)
            .map(|i| {
                let cells = rows.iter().filter_map(|r| r.get(i)).map(|c| measure_text_width(c));
                let w = cells.chain([measure_text_width(self.columns[i].header)]).max().unwrap_or(0);
                if i == self.text { w } else { w.min(self.columns[i].max) }
            })
            .collect();
        // The text is promised half the width (or all it needs, if less), and gets what the
        // other columns leave. They join in `keep` order while they leave the promise, and the
        // first that does not fit stops the rest, so a column is never shown while a more
        // useful one is dropped.
        let promise = natural[self.text].min((width / 2).max(MIN_TEXT));
        let mut order: Vec<usize> = (0..n).filter(|&i| i != self.text).collect();
        order.sort_by_key(|&i| self.columns[i].keep);
        let mut shown = vec![false; n];
        shown[self.text] = true;
        let mut used = 0;
        for (k, &i) in order.iter().enumerate() {
            let cost = natural[i] + GAP;
            // The most useful column (the rank) stays even when the text gets less than promised.
            if k > 0 && used + cost + promise > width {
                break;
            }
            used += cost;
            shown[i] = true;
        }
        let text_width = width.saturating_sub(used).min(natural[self.text]);
        let widths: Vec<usize> = (0..n).map(|i| if i == self.text { text_width } else { natural[i] }).collect();
        let cols: Vec<usize> = (0..n).filter(|&i| shown[i]).collect();

        let line = |cells: &dyn Fn(usize) -> String| -> String {
            let mut s = String::new();
            for (k, &i) in cols.iter().enumerate() {
                let cell = if i == self.text { clip_at_word(&cells(i), widths[i]) } else { clip(&cells(i), widths[i]) };
                let last = k + 1 == cols.len();
                if last && !self.columns[i].right {
                    s.push_str(&cell);
                } else {
                    let align = if self.columns[i].right { Alignment::Right } else { Alignment::Left };
                    s.push_str(&pad_str(&cell, widths[i], align, None));
                }
                if !last {
                    s.push_str(&" ".repeat(GAP));
                }
            }
            // A cut can leave a column one cell short of the width (a wide character does not
            // fit the last cell); trimming keeps the rule and the rows honest.
            s.trim_end().to_string()
        };
        let header = line(&|i| self.columns[i].header.to_string());
        let body: Vec<String> = rows.iter().map(|r| line(&|i| r.get(i).cloned().unwrap_or_default())).collect();
        let rule_width = body.iter().chain([&header]).map(|l| measure_text_width(l)).max().unwrap_or(0).min(width);
        let mut out = vec![header, "-".repeat(rule_width)];
        out.extend(body);
        out.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_at_a_word() {
        let t = "github: [enrique:master] 1 new commit by hfaran: a6f78a1 (https://github.com/mesos-magellan/enrique/commit/a6f78a1)";
        assert_eq!(clip_at_word(t, 80), "github: [enrique:master] 1 new commit by hfaran: a6f78a1…");
        assert_eq!(clip_at_word("short", 80), "short");
        let url = "see https://github.com/mesos-magellan/enrique/commit/a6f78a1d0c2e";
        assert_eq!(clip_at_word(url, 30), clip(url, 30), "a word longer than half the cell is cut inside");
        assert!(measure_text_width(&clip_at_word(t, 40)) <= 40);
    }
}
