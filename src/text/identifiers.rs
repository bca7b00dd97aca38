//! Identifiers: version numbers (`0.15`, `v2.3.1`), dotted, slashed and snake_case names
//! (`setup.py`, `src/main.rs`, `max_leaf_tokens`), numbered hyphenations (`gpt-4`,
//! `2023-05-01`), issue and pull-request references (`#1276`) and CamelCase names
//! (`FuzzyQuery`). Split into words, as every tokenizer
//! splits them, the parts are common words and numbers ("0" and "15", "setup" and "py") and a
//! question that writes one exactly finds every text holding its parts: the full-text index
//! keeps each whole as well as by its parts (`index::identifiers`), and a question's
//! identifiers join its lexical query (`retrieval::walk::query`).

use std::ops::Range;

/// Characters that join the words of one identifier, one at a time, with no space.
const JOINERS: [char; 4] = ['.', '/', '_', '-'];

/// A word as the index cuts text: a maximal run of alphanumeric characters (tantivy's
/// `SimpleTokenizer`), by byte range.
pub(crate) fn word_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(s..text.len());
    }
    out
}

/// The identifiers of `text` made of several words, by byte range: words joined by single
/// `.`, `/` or `_` (a version, a file, a path, a snake_case name), or by `-` when some word
/// holds a digit (`gpt-4`, a date; "well-known" is two words, not a name). A joiner must have
/// a word on both sides: "the end." ends no identifier.
pub(crate) fn joined(text: &str, words: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let mut j = i;
        let (mut strong, mut dash) = (false, false);
        while j + 1 < words.len() {
            let gap = &text[words[j].end..words[j + 1].start];
            let mut chars = gap.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if JOINERS.contains(&c) => {
                    strong |= c != '-';
                    dash |= c == '-';
                    j += 1;
                }
                _ => break,
            }
        }
        if j > i {
            let span = words[i].start..words[j].end;
            let digits = text[span.clone()].chars().any(|c| c.is_ascii_digit());
            if strong || (dash && digits) {
                out.push(span);
            }
        }
        i = j + 1;
    }
    out
}

/// Issue and pull-request references (`#1276`, "resolves #17"), by byte range with their
/// `#`: a run of digits right after a `#` that follows no word character ("C#7" is no
/// reference). The number alone is a number like any other, matching every "17".
pub(crate) fn refs(text: &str, words: &[Range<usize>]) -> Vec<Range<usize>> {
    words
        .iter()
        .filter(|w| {
            let before = &text[..w.start];
            before.ends_with('#')
                && !before[..before.len() - 1].chars().next_back().is_some_and(char::is_alphanumeric)
                && text[w.start..w.end].chars().all(|c| c.is_ascii_digit())
        })
        .map(|w| w.start - 1..w.end)
        .collect()
}

/// The identifiers of `text` the index keeps whole: [`joined`] ones and [`refs`], by start.
pub(crate) fn whole(text: &str, words: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out = joined(text, words);
    out.extend(refs(text, words));
    out.sort_by_key(|r| (r.start, r.end));
    out
}

/// The parts of a CamelCase word, by byte range within it (`FuzzyQuery` → `Fuzzy`, `Query`;
/// `HTTPServer` → `HTTP`, `Server`); empty for a word that is not one (`Query`, `iPhone` is
/// `i`, `Phone`).
pub(crate) fn camel_parts(word: &str) -> Vec<Range<usize>> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut cuts = Vec::new();
    for k in 1..chars.len() {
        let (prev, c) = (chars[k - 1].1, chars[k].1);
        let next_lower = chars.get(k + 1).is_some_and(|(_, n)| n.is_lowercase());
        if (prev.is_lowercase() && c.is_uppercase()) || (prev.is_uppercase() && c.is_uppercase() && next_lower) {
            cuts.push(chars[k].0);
        }
    }
    if cuts.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts {
        out.push(start..cut);
        start = cut;
    }
    out.push(start..word.len());
    out
}

/// The identifiers a question writes, whole (`"Bumped tantivy to 0.15"` → `0.15`): the
/// joined ones, the references and the CamelCase words.
pub(crate) fn question_identifiers(q: &str) -> Vec<&str> {
    let words = word_ranges(q);
    let mut out: Vec<&str> = whole(q, &words).into_iter().map(|r| &q[r]).collect();
    out.extend(words.iter().map(|r| &q[r.clone()]).filter(|w| !camel_parts(w).is_empty()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(q: &str) -> Vec<&str> {
        question_identifiers(q)
    }

    #[test]
    fn identifiers_whole() {
        assert_eq!(ids("Bumped tantivy version to 0.15."), ["0.15"]);
        assert_eq!(ids("fix in setup.py and src/main.rs for v2.3.1"), ["setup.py", "src/main.rs", "v2.3.1"]);
        assert_eq!(ids("set max_leaf_tokens, see #1276"), ["max_leaf_tokens", "#1276"]);
        assert_eq!(ids("resolves #17 in C#7 (#9)"), ["#17", "#9"]);
        assert_eq!(ids("gpt-4 on 2023-05-01, a well-known model"), ["gpt-4", "2023-05-01"]);
        assert_eq!(ids("who added FuzzyQuery to the HTTPServer?"), ["FuzzyQuery", "HTTPServer"]);
        assert_eq!(ids("It ends here. Then more... a - b, x. y"), Vec::<&str>::new());
    }

    #[test]
    fn camel_case_parts() {
        let parts = |w: &str| camel_parts(w).into_iter().map(|r| w[r].to_string()).collect::<Vec<_>>();
        assert_eq!(parts("FuzzyQuery"), ["Fuzzy", "Query"]);
        assert_eq!(parts("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(parts("iPhone"), ["i", "Phone"]);
        assert!(parts("Query").is_empty() && parts("NASA").is_empty() && parts("hello").is_empty());
    }
}
