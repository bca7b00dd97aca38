//! Passages: a text cut into pieces that each fit the dense model's window, on paragraph
//! boundaries first, then sentence (or code-line) boundaries, then words — what a hit's
//! `snippet` is chosen from.
//!
//! Offsets are in characters (Unicode scalar values, Rust `char`s), not bytes: a client in
//! any language can index `content` with them, and `content.chars().skip(start).take(end -
//! start)` is the passage.

/// How large one passage may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassageLimits {
    /// At most this many approximate tokens ([`approx_tokens`](crate::config::approx_tokens)). 200 keeps a passage of
    /// English prose under all-MiniLM-L6-v2's 256-word-piece window.
    pub tokens: usize,
    /// At most this many characters. `approx_tokens` counts whitespace-separated words, so a
    /// text without spaces (a URL, a base64 blob, Chinese) would otherwise be one "word" of
    /// any length.
    pub chars: usize,
    /// A passage shorter than this many tokens at a paragraph end takes in the next
    /// paragraph (when it fits): a Markdown heading or a one-line list item alone is no
    /// useful snippet.
    pub min_tokens: usize,
}

impl Default for PassageLimits {
    fn default() -> Self {
        PassageLimits { tokens: 200, chars: 1_000, min_tokens: 40 }
    }
}

/// One passage: its character range in the text and the text itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Passage<'a> {
    /// First character (Unicode scalar value) of the passage, counted from 0.
    pub start: usize,
    /// One past its last character.
    pub end: usize,
    /// `text[start..end]` in characters; it starts and ends with a non-whitespace character.
    pub text: &'a str,
    /// Where `text` starts in the whole text, in bytes (for byte-offset tokenisers).
    pub byte_start: usize,
}

impl Passage<'_> {
    /// How many of its bytes lie in `spans` (byte ranges of the whole text, sorted, not
    /// overlapping).
    pub fn bytes_inside(&self, spans: &[std::ops::Range<usize>]) -> usize {
        let end = self.byte_start + self.text.len();
        spans.iter().map(|r| r.end.min(end).saturating_sub(r.start.max(self.byte_start))).sum()
    }

    /// Whether at most half of it lies in `spans`: a mail's passage that is mostly its own
    /// words, given its quotes and signature (`text::quoted_spans`).
    pub fn mostly_outside(&self, spans: &[std::ops::Range<usize>]) -> bool {
        self.bytes_inside(spans) * 2 <= self.text.len()
    }
}

/// Cut `text` into passages within `limits`, in order, not overlapping, together covering
/// every non-whitespace character; only whitespace lies between two passages. Paragraphs
/// (separated by blank lines) are kept whole when they fit; a longer one is cut between
/// sentences (`.`, `!`, `?` before whitespace, or a line break); a fenced code block
/// (```` ``` ```` or `~~~`) is cut between lines only; a sentence or line over the limits
/// is cut between words, and a word over `limits.chars` between characters. Blank text
/// gives no passage.
/// (`two_paragraphs_are_two_passages_with_their_offsets` shows one.)
pub fn passages(text: &str, limits: PassageLimits) -> Vec<Passage<'_>> {
    let limits = PassageLimits { tokens: limits.tokens.max(2), chars: limits.chars.max(1), ..limits };
    let mut units = Vec::new();
    for para in paragraphs(text) {
        for u in para {
            split_unit(text, u, limits, &mut units);
        }
        units.push(Piece::ParagraphEnd);
    }
    to_passages(text, &pack(text, &units, limits))
}

/// A sentence, code line or word run, as a byte range with its word count; or the end of a
/// paragraph.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Unit(Unit),
    ParagraphEnd,
}

#[derive(Debug, Clone, Copy)]
struct Unit {
    start: usize,
    end: usize,
    words: usize,
    chars: usize,
}

impl Unit {
    fn of(text: &str, start: usize, end: usize) -> Unit {
        let s = &text[start..end];
        Unit { start, end, words: s.split_whitespace().count(), chars: s.chars().count() }
    }
}

/// Tokens of a text of `words` words, as [`approx_tokens`](crate::config::approx_tokens) counts them.
fn tokens(words: usize) -> usize {
    words + words.div_ceil(3)
}

/// The paragraphs of `text`, each a list of trimmed, non-empty sentences or code lines
/// (byte ranges). A fenced code block is one paragraph of lines, blank lines included.
fn paragraphs(text: &str) -> Vec<Vec<Unit>> {
    let mut out = Vec::new();
    let mut cur: Vec<Unit> = Vec::new();
    let mut in_fence = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        let fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
        if fence && !in_fence && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if in_fence || fence {
            if let Some(u) = trimmed_unit(text, start, start + line.len()) {
                cur.push(u);
            }
            if fence {
                in_fence = !in_fence;
                if !in_fence {
                    out.push(std::mem::take(&mut cur));
                }
            }
            continue;
        }
        if trimmed.is_empty() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        sentences(text, start, start + line.len(), &mut cur);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The trimmed byte range `start..end` of `text`, `None` when only whitespace.
fn trimmed_unit(text: &str, start: usize, end: usize) -> Option<Unit> {
    let s = &text[start..end];
    let lead = s.len() - s.trim_start().len();
    let t = s.trim();
    (!t.is_empty()).then(|| Unit::of(text, start + lead, start + lead + t.len()))
}

/// Sentences of one prose line: cut after `.`, `!` or `?` followed by whitespace.
fn sentences(text: &str, start: usize, end: usize, out: &mut Vec<Unit>) {
    let line = &text[start..end];
    let mut from = 0;
    let mut prev: Option<char> = None;
    for (i, c) in line.char_indices() {
        if c.is_whitespace() && matches!(prev, Some('.' | '!' | '?')) {
            out.extend(trimmed_unit(text, start + from, start + i));
            from = i;
        }
        prev = Some(c);
    }
    out.extend(trimmed_unit(text, start + from, end));
}

/// `u` as is when it fits `limits`, else cut between words into runs that fit, and a word
/// longer than `limits.chars` between characters.
fn split_unit(text: &str, u: Unit, limits: PassageLimits, out: &mut Vec<Piece>) {
    if tokens(u.words) <= limits.tokens && u.chars <= limits.chars {
        out.push(Piece::Unit(u));
        return;
    }
    let mut run: Option<Unit> = None;
    for w in word_ranges(text, u.start, u.end, limits.chars) {
        run = Some(match run {
            Some(r) if fits(text, &r, &w, limits) => join(text, &r, &w),
            Some(r) => {
                out.push(Piece::Unit(r));
                w
            }
            None => w,
        });
    }
    out.extend(run.map(Piece::Unit));
}

/// The words of `text[start..end]` as units, a word longer than `max_chars` cut into pieces
/// of `max_chars` characters.
fn word_ranges(text: &str, start: usize, end: usize, max_chars: usize) -> Vec<Unit> {
    let s = &text[start..end];
    let mut out = Vec::new();
    let mut word: Option<(usize, usize)> = None; // (byte start, chars so far)
    let mut push = |from: usize, to: usize, chars: usize| {
        out.push(Unit { start: start + from, end: start + to, words: 1, chars });
    };
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if let Some((from, n)) = word.take() {
                push(from, i, n);
            }
            continue;
        }
        word = match word {
            Some((from, n)) if n == max_chars => {
                push(from, i, n);
                Some((i, 1))
            }
            Some((from, n)) => Some((from, n + 1)),
            None => Some((i, 1)),
        };
    }
    if let Some((from, n)) = word {
        push(from, s.len(), n);
    }
    out
}

/// True when `a` and the following `b`, with the whitespace between them, fit `limits`.
fn fits(text: &str, a: &Unit, b: &Unit, limits: PassageLimits) -> bool {
    let gap = text[a.end..b.start].chars().count();
    tokens(a.words + b.words) <= limits.tokens && a.chars + gap + b.chars <= limits.chars
}

/// `a` extended to the end of the following `b`. The word count may overcount by one where
/// `b` continues a word cut at `limits.chars`, which only makes the budget stricter.
fn join(text: &str, a: &Unit, b: &Unit) -> Unit {
    let gap = text[a.end..b.start].chars().count();
    Unit { start: a.start, end: b.end, words: a.words + b.words, chars: a.chars + gap + b.chars }
}

/// Greedy packing: units join the open passage while it fits; a paragraph end closes it
/// unless it is shorter than `limits.min_tokens`.
fn pack(text: &str, pieces: &[Piece], limits: PassageLimits) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut cur: Option<Unit> = None;
    for p in pieces {
        match p {
            Piece::ParagraphEnd => {
                if let Some(c) = cur.take_if(|c| tokens(c.words) >= limits.min_tokens) {
                    out.push(c);
                }
            }
            Piece::Unit(u) => {
                cur = Some(match cur {
                    Some(c) if fits(text, &c, u, limits) => join(text, &c, u),
                    Some(c) => {
                        out.push(c);
                        *u
                    }
                    None => *u,
                });
            }
        }
    }
    out.extend(cur);
    out
}

/// Byte ranges (in order) to passages with character offsets, in one pass over the text.
fn to_passages<'a>(text: &'a str, ranges: &[Unit]) -> Vec<Passage<'a>> {
    let mut out = Vec::with_capacity(ranges.len());
    let (mut byte, mut chars) = (0, 0);
    for r in ranges {
        chars += text[byte..r.start].chars().count();
        let start = chars;
        chars += r.chars;
        byte = r.end;
        out.push(Passage { start, end: chars, text: &text[r.start..r.end], byte_start: r.start });
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn two_paragraphs_are_two_passages_with_their_offsets() {
        let text = "First paragraph, one sentence.\n\nSecond paragraph.";
        let limits = PassageLimits { min_tokens: 0, ..PassageLimits::default() };
        let p = passages(text, limits);
        assert_eq!(
            p.iter().map(|p| p.text).collect::<Vec<_>>(),
            ["First paragraph, one sentence.", "Second paragraph."]
        );
        assert_eq!((p[1].start, p[1].end), (32, 49));
    }

    use super::*;
    use crate::config::approx_tokens;
    use proptest::prelude::*;

    fn texts(text: &str, limits: PassageLimits) -> Vec<&str> {
        passages(text, limits).into_iter().map(|p| p.text).collect()
    }

    /// Every promise of [`passages`], checked on one input.
    fn check_invariants(text: &str, limits: PassageLimits) {
        let ps = passages(text, limits);
        let chars: Vec<char> = text.chars().collect();
        let mut covered = vec![false; chars.len()];
        let mut last_end = 0;
        for p in &ps {
            assert!(p.start >= last_end && p.start < p.end && p.end <= chars.len(), "{ps:?}");
            let by_offsets: String = text.chars().skip(p.start).take(p.end - p.start).collect();
            assert_eq!(by_offsets, p.text, "offsets index the text");
            assert!(!p.text.starts_with(char::is_whitespace) && !p.text.ends_with(char::is_whitespace));
            assert!(approx_tokens(p.text) <= limits.tokens.max(2), "{} tokens: {:?}", approx_tokens(p.text), p.text);
            assert!(p.text.chars().count() <= limits.chars.max(1));
            assert_eq!(&text[p.byte_start..p.byte_start + p.text.len()], p.text);
            covered[p.start..p.end].iter_mut().for_each(|c| *c = true);
            last_end = p.end;
        }
        for (i, c) in chars.iter().enumerate() {
            assert!(covered[i] || c.is_whitespace(), "char {i} {c:?} in no passage");
        }
    }

    #[test]
    fn paragraphs_stay_whole_and_short_ones_join_the_next() {
        let a = "Alpha one two three four five six seven eight nine ten eleven twelve thirteen. ".repeat(3);
        let b = "Beta one two three four five six seven eight nine ten eleven twelve thirteen. ".repeat(3);
        let text = format!("## Heading\n\n{}\n\n{}", a.trim(), b.trim());
        let got = texts(&text, PassageLimits::default());
        assert_eq!(got, [format!("## Heading\n\n{}", a.trim()), b.trim().to_string()]);
        check_invariants(&text, PassageLimits::default());
    }

    #[test]
    fn a_long_paragraph_is_cut_between_sentences() {
        let s = "This sentence has exactly ten words in it, you see. ";
        let text = s.repeat(40); // 400 words, one paragraph
        let got = passages(&text, PassageLimits::default());
        assert!(got.len() >= 3, "{}", got.len());
        for p in &got {
            assert!(p.text.starts_with("This") && p.text.ends_with("see."), "{:?}", p.text);
        }
        check_invariants(&text, PassageLimits::default());
    }

    #[test]
    fn code_blocks_are_cut_between_lines_only() {
        let line = "let x = foo(a. b, c); // a. b. c. d. e";
        let code = format!("```rust\n{}\n```", vec![line; 60].join("\n"));
        let text = format!("Intro. Here is code:\n\n{code}\n\nAfter.");
        let limits = PassageLimits::default();
        for p in passages(&text, limits) {
            for l in p.text.lines() {
                assert!(text.lines().any(|t| t.trim() == l.trim()), "cut inside a line: {l:?}");
            }
        }
        check_invariants(&text, limits);
    }

    #[test]
    fn an_over_long_sentence_is_cut_at_words_and_a_word_at_characters() {
        let text = "word ".repeat(1000);
        let ps = passages(&text, PassageLimits::default());
        assert!(ps.len() >= 6 && ps.iter().all(|p| approx_tokens(p.text) <= 200));
        check_invariants(&text, PassageLimits::default());
        let blob = "é".repeat(2_500);
        let ps = passages(&blob, PassageLimits::default());
        assert_eq!(ps.iter().map(|p| (p.start, p.end)).collect::<Vec<_>>(), [(0, 1000), (1000, 2000), (2000, 2500)]);
    }

    #[test]
    fn offsets_count_characters_not_bytes() {
        let text = "🎉 Ünïcödé fïrst.\r\n\r\nSécond 👩‍👩‍👧 e\u{301}nd.";
        let limits = PassageLimits { min_tokens: 0, ..PassageLimits::default() };
        let ps = passages(text, limits);
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0].start, 0);
        assert_eq!(ps[1].start, "🎉 Ünïcödé fïrst.\r\n\r\n".chars().count());
        check_invariants(text, limits);
    }

    #[test]
    fn blank_text_has_no_passage() {
        assert!(passages("", PassageLimits::default()).is_empty());
        assert!(passages(" \n\t\r\n ", PassageLimits::default()).is_empty());
    }

    #[test]
    fn hostile_inputs_keep_the_invariants() {
        let limits = PassageLimits::default();
        let cases = [
            "x".repeat(50_000),
            "a b c d e f g ".repeat(4_000),
            "no sentence end just words ".repeat(2_000),
            "\u{301}".repeat(3_000),
            "```\n".repeat(100) + &"code ".repeat(500),
            "line\r\n".repeat(2_000),
            format!("{}\n\n\n{}", " ".repeat(5_000), "z".repeat(3_000)),
        ];
        for c in &cases {
            check_invariants(c, limits);
        }
    }

    proptest! {
        #[test]
        fn passages_are_ordered_disjoint_covering_and_within_limits(
            text in "(\\PC|[ \n\r\t.!?`~]){0,600}",
            tokens in 2usize..60,
            chars in 1usize..200,
            min_tokens in 0usize..30,
        ) {
            check_invariants(&text, PassageLimits { tokens, chars, min_tokens });
        }

        #[test]
        fn word_salad_with_paragraphs_keeps_the_invariants(
            words in proptest::collection::vec("[a-zé🎉]{1,12}[.!?]?", 0..400),
            breaks in proptest::collection::vec(0usize..6, 0..400),
        ) {
            let mut text = String::new();
            for (i, w) in words.iter().enumerate() {
                text.push_str(w);
                text.push_str(match breaks.get(i).copied().unwrap_or(0) { 0 => "\n\n", 1 => "\n", 2 => "\r\n```\n", _ => " " });
            }
            check_invariants(&text, PassageLimits::default());
            check_invariants(&text, PassageLimits { tokens: 20, chars: 60, min_tokens: 5 });
        }
    }
}
