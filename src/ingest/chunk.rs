//! Chunking: token-budget document slices with overlap, and the splitting of oversized
//! messages into pieces.

use crate::config::approx_tokens;

/// Split `body` into slices of about `budget` tokens, consecutive slices sharing about
/// `overlap` tokens, cutting at word boundaries (and preferring sentence ends in the last
/// quarter of a slice so a slice rarely stops mid-sentence).
pub fn slice_document(body: &str, budget: usize, overlap: usize) -> Vec<String> {
    Slices::new(body, budget, overlap).collect()
}

/// The slices of [`slice_document`], one at a time. Only the words of the slice being cut
/// are held (a window of at most one slice and one word), never a list of the body's words:
/// that list cost 16 bytes a word, 2.6× a 50 MB body (issue 28).
pub struct Slices<'a> {
    words: std::str::SplitWhitespace<'a>,
    /// The words from the next slice's first one on, read ahead up to `per + 1`.
    window: std::collections::VecDeque<&'a str>,
    /// Words per slice, at most.
    per: usize,
    /// Words a slice shares with the one before it, at most.
    back: usize,
    done: bool,
}

impl<'a> Slices<'a> {
    /// The slices of `body`; see [`slice_document`].
    pub fn new(body: &'a str, budget: usize, overlap: usize) -> Self {
        // approx_tokens counts ~4/3 tokens a word.
        let per = ((budget * 3) / 4).max(8);
        let back = ((overlap * 3) / 4).min(per / 2);
        Slices { words: body.split_whitespace(), window: std::collections::VecDeque::new(), per, back, done: false }
    }
}

impl Iterator for Slices<'_> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        if self.done {
            return None;
        }
        // One word past a full slice says whether the body goes on after it.
        while self.window.len() <= self.per {
            match self.words.next() {
                Some(w) => self.window.push_back(w),
                None => break,
            }
        }
        if self.window.len() <= self.per {
            // The rest of the body fits: the last slice (none for a body without words).
            self.done = true;
            return (!self.window.is_empty()).then(|| join(self.window.iter()));
        }
        let mut end = self.per;
        let floor = self.per * 3 / 4;
        if let Some(cut) = (floor..end).rev().find(|&i| self.window[i].ends_with(['.', '!', '?'])) {
            end = cut + 1;
        }
        let slice = join(self.window.range(..end));
        // The next slice starts `back` words before this one's end, and at least one word on.
        let step = end.saturating_sub(self.back).max(1);
        self.window.drain(..step);
        Some(slice)
    }
}

/// `words` joined by single spaces.
fn join<'a>(words: impl Iterator<Item = &'a &'a str> + Clone) -> String {
    let len = words.clone().map(|w| w.len() + 1).sum::<usize>().saturating_sub(1);
    let mut out = String::with_capacity(len);
    for w in words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// Split a message longer than `max_tokens` into pieces of at most that many tokens;
/// returns the text unchanged (one piece) when it fits.
pub fn split_oversized(text: &str, max_tokens: usize) -> Vec<String> {
    if approx_tokens(text) <= max_tokens {
        return vec![text.to_string()];
    }
    slice_document(text, max_tokens, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn slices_overlap_and_cover_everything() {
        let body = (0..1000).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        let s = slice_document(&body, 100, 20);
        assert!(s.len() > 10);
        assert!(s[0].starts_with("w0 "));
        assert!(s.last().unwrap().ends_with("w999"));
        let last_of_first = s[0].split(' ').next_back().unwrap();
        assert!(s[1].split(' ').any(|w| w == last_of_first), "consecutive slices share words");
    }

    /// The slicing as it was before [`Slices`]: over a list of all the body's words.
    fn slice_by_word_list(body: &str, budget: usize, overlap: usize) -> Vec<String> {
        let words: Vec<&str> = body.split_whitespace().collect();
        let per = ((budget * 3) / 4).max(8);
        let back = ((overlap * 3) / 4).min(per / 2);
        let mut out = Vec::new();
        let mut start = 0;
        while start < words.len() {
            let mut end = (start + per).min(words.len());
            if end < words.len() {
                let floor = start + per * 3 / 4;
                if let Some(cut) = (floor..end).rev().find(|&i| words[i].ends_with(['.', '!', '?'])) {
                    end = cut + 1;
                }
            }
            out.push(words[start..end].join(" "));
            if end >= words.len() {
                break;
            }
            start = end.saturating_sub(back).max(start + 1);
        }
        out
    }

    proptest! {
        /// The windowed slicer cuts exactly where the word-list one did (the stored leaves
        /// and their ids are unchanged).
        #[test]
        fn slices_match_the_word_list_slicer(
            words in proptest::collection::vec("[a-c]{1,3}[.!?]?", 0..400),
            seps in proptest::collection::vec("[ \n\t]{1,3}", 400),
            budget in 0usize..120,
            overlap in 0usize..200,
        ) {
            let body: String = words.iter().zip(&seps).map(|(w, s)| format!("{s}{w}")).collect();
            prop_assert_eq!(slice_document(&body, budget, overlap), slice_by_word_list(&body, budget, overlap));
        }

        #[test]
        fn every_word_lands_in_some_slice(n in 1usize..600, budget in 8usize..200, overlap in 0usize..64) {
            let body = (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
            let slices = slice_document(&body, budget, overlap);
            let mut seen = std::collections::HashSet::new();
            for s in &slices {
                prop_assert!(approx_tokens(s) <= budget.max(11) + 2);
                seen.extend(s.split(' ').map(str::to_string));
            }
            prop_assert_eq!(seen.len(), n);
        }
    }
}
