//! Chunking: token-budget document slices with overlap, and the splitting of oversized
//! messages into pieces.

use crate::config::approx_tokens;

/// Split `body` into slices of about `budget` tokens, consecutive slices sharing about
/// `overlap` tokens, cutting at word boundaries (and preferring sentence ends in the last
/// quarter of a slice so a slice rarely stops mid-sentence).
pub fn slice_document(body: &str, budget: usize, overlap: usize) -> Vec<String> {
    let words: Vec<&str> = body.split_whitespace().collect();
    if words.is_empty() {
        return Vec::new();
    }
    // approx_tokens counts ~4/3 tokens a word.
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

    proptest! {
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
