//! The `Summariser` trait and the built-in deterministic extractive summariser.

use crate::config::approx_tokens;
use crate::error::Result;
use crate::text::{content_words, sentences};
use std::collections::{BTreeSet, HashMap};

/// One child of the summary being written.
#[derive(Debug, Clone)]
pub struct SummaryChild<'a> {
    /// The child's text (a leaf's content or a summary's text).
    pub content: &'a str,
    /// The child's author, when it is a chat or e-mail leaf.
    pub author: Option<&'a str>,
}

/// What a summariser is asked to summarise.
#[derive(Debug, Clone)]
pub struct SummaryRequest<'a> {
    /// The source the tree covers.
    pub tree_scope: &'a str,
    /// Level of the summary being written (1 = over leaves).
    pub level: u32,
    /// The children, in order.
    pub children: Vec<SummaryChild<'a>>,
    /// Upper bound on the summary's length, in approximate tokens.
    pub max_tokens: usize,
}

/// Writes a summary's text. A host may plug in an LLM; the default is extractive and
/// deterministic. Summaries are sealed once and never rewritten, so a summariser must be
/// deterministic for the store to be reproducible.
pub trait Summariser: Send + Sync {
    /// The summary text for `req`.
    fn summarise(&self, req: &SummaryRequest<'_>) -> Result<String>;
}

/// Keeps the children's most informative sentences, in their original order, within the
/// token budget. A sentence's score is the mean of `ln(1 + tf)` of its content words, where
/// `tf` counts the word across all children (words the run keeps coming back to are its
/// topic), with a bonus for capitalised names; near-duplicates of a kept sentence are
/// skipped. Chat sentences keep their speaker so the summary still says who said what.
#[derive(Debug, Clone, Default)]
pub struct ExtractiveSummariser;

struct Candidate {
    order: usize,
    text: String,
    /// Ordered, so the float sum below is the same in every process (a `HashSet`'s
    /// per-process iteration order changed the last bits and, through ties, the summary).
    words: BTreeSet<String>,
    score: f64,
    tokens: usize,
}

impl Summariser for ExtractiveSummariser {
    fn summarise(&self, req: &SummaryRequest<'_>) -> Result<String> {
        // One pass over the words: a text's words are its sentences' words, in order (a
        // sentence ends only at a separator, `.`/`!`/`?` before white space or a line break, so
        // no word straddles two), so the run's term frequencies are counted sentence by
        // sentence, and each sentence's words are read once, not once for `tf` and once more.
        let mut tf: HashMap<String, usize> = HashMap::new();
        let mut cands = Vec::new();
        for c in &req.children {
            for s in sentences(c.content) {
                let mut words = BTreeSet::new();
                for w in content_words(s) {
                    match tf.get_mut(w.as_str()) {
                        Some(n) => *n += 1,
                        None => {
                            tf.insert(w.clone(), 1);
                        }
                    }
                    words.insert(w);
                }
                if words.is_empty() {
                    continue;
                }
                let names = s.split_whitespace().skip(1).filter(|w| w.starts_with(char::is_uppercase)).count();
                let text = match c.author {
                    Some(a) if !s.starts_with(a) => format!("{a}: {s}"),
                    _ => s.to_string(),
                };
                let tokens = approx_tokens(&text);
                // The names' share now, the words' once every frequency is in (below).
                cands.push(Candidate { order: cands.len(), text, words, score: 0.3 * names as f64, tokens });
            }
        }
        // The words' share once every frequency is in (the words in set order, as before, and
        // one addition, which commutes: the score is the same to the last bit).
        for c in &mut cands {
            let mean = c.words.iter().map(|w| (1.0 + tf[w] as f64).ln()).sum::<f64>() / (c.words.len() as f64).sqrt();
            c.score += mean;
        }
        let mut ranked: Vec<usize> = (0..cands.len()).collect();
        ranked.sort_by(|&a, &b| cands[b].score.total_cmp(&cands[a].score).then(a.cmp(&b)));
        let mut kept: Vec<usize> = Vec::new();
        let mut used = 0;
        for i in ranked {
            let c = &cands[i];
            if used + c.tokens > req.max_tokens && !kept.is_empty() {
                continue;
            }
            let dup = kept.iter().any(|&k| {
                let inter = cands[k].words.intersection(&c.words).count();
                inter as f64 >= 0.7 * c.words.len() as f64
            });
            if dup {
                continue;
            }
            used += c.tokens;
            kept.push(i);
        }
        kept.sort_by_key(|&i| cands[i].order);
        let mut text = kept.iter().map(|&i| cands[i].text.as_str()).collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            // Nothing sentence-like (e.g. only links or emoji): keep the first child's text.
            text = req.children.first().map(|c| c.content.chars().take(400).collect()).unwrap_or_default();
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_topical_sentences_within_budget_in_order() {
        let kids = [
            "Alice: The launch of Phoenix moves to May. Lunch was fine.",
            "Bob: Phoenix launch needs the new billing API.",
            "Alice: ok",
            "Bob: Phoenix billing API is ready next week.",
        ];
        let req = SummaryRequest {
            tree_scope: "slack:#eng",
            level: 1,
            children: kids.iter().map(|c| SummaryChild { content: c, author: None }).collect(),
            max_tokens: 24,
        };
        let s = ExtractiveSummariser.summarise(&req).unwrap();
        assert!(s.contains("Phoenix"), "{s}");
        assert!(!s.contains("Lunch"), "{s}");
        assert!(approx_tokens(&s) <= 24 + 12, "{s}");
        // Deterministic.
        assert_eq!(s, ExtractiveSummariser.summarise(&req).unwrap());
    }
}
