//! Snippets: the passage of a long leaf that best matches the query, so a caller can spend
//! its context budget on the part of a hit that answers.
//!
//! The passage is chosen lexically: the question's content words, analysed by the index's
//! own analyser (lower case, English stemming) so a match here is a match there, weighted
//! by their BM25 IDF over the store, scored over each passage as BM25 does over documents.
//! No passage is embedded at query time: at ~10 ms a passage on these machines, ten long
//! hits would cost more than the walk itself.

use super::hit::RetrievalHit;
use crate::error::Result;
use crate::index::IndexSearcher;
use crate::reader::MemoryReader;
use crate::text::{PassageLimits, content_words, passages};
use crate::types::NodeKind;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// BM25's term-frequency saturation and length normalisation, over passages.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// The passage of a hit's `content` that best matches the query.
///
/// `start` and `end` are character offsets (Unicode scalar values, not bytes or UTF-16
/// units) into `content`: `content.chars().skip(start).take(end - start)` is `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snippet {
    /// The passage (at most ~200 tokens, cut on paragraph, sentence or word boundaries).
    pub text: String,
    /// Its first character in `content`, counted from 0.
    pub start: usize,
    /// One past its last character.
    pub end: usize,
}

/// A query as the snippet chooser sees it: analysed terms and their weights, computed once
/// per request.
struct SnippetQuery {
    weights: HashMap<String, f32>,
}

impl SnippetQuery {
    /// The content words of `query` (all its words when it has none), analysed and weighted.
    fn new(searcher: &IndexSearcher, query: &str) -> Result<SnippetQuery> {
        let words: Vec<String> = content_words(query).collect();
        let text = if words.is_empty() { query.to_string() } else { words.join(" ") };
        Ok(SnippetQuery { weights: searcher.term_weights(&text)?.into_iter().collect() })
    }

    /// The best passage of `content`, or `None` when it is a single passage (the snippet
    /// would be the whole hit). Ties, and a query matching no passage, go to the earliest.
    fn choose(&self, searcher: &IndexSearcher, content: &str) -> Option<Snippet> {
        let ps = passages(content, PassageLimits::default());
        if ps.len() < 2 {
            return None;
        }
        let analysed: Vec<Vec<String>> = ps.iter().map(|p| searcher.analyse(p.text)).collect();
        let avg = analysed.iter().map(Vec::len).sum::<usize>() as f32 / analysed.len() as f32;
        let mut best = (0, 0.0f32);
        for (i, terms) in analysed.iter().enumerate() {
            let s = self.score(terms, avg);
            if s > best.1 {
                best = (i, s);
            }
        }
        let p = ps[best.0];
        Some(Snippet { text: p.text.to_string(), start: p.start, end: p.end })
    }

    /// BM25 of the query over one passage's analysed terms, `avg` the mean passage length.
    fn score(&self, terms: &[String], avg: f32) -> f32 {
        let mut tf: HashMap<&str, f32> = HashMap::new();
        for t in terms.iter().filter(|t| self.weights.contains_key(t.as_str())) {
            *tf.entry(t.as_str()).or_default() += 1.0;
        }
        let norm = K1 * (1.0 - B + B * terms.len() as f32 / avg.max(1.0));
        tf.iter().map(|(t, f)| self.weights[*t] * f * (K1 + 1.0) / (f + norm)).sum()
    }
}

/// Give each leaf hit of `hits` whose content is longer than one passage the passage that
/// best matches `query`. Summaries get none. Reads nothing from the store: the content is
/// in the hit.
pub(crate) fn attach_snippets(mem: &MemoryReader, query: &str, hits: &mut [RetrievalHit]) -> Result<()> {
    if !hits.iter().any(|h| h.node_kind == NodeKind::Leaf) {
        return Ok(());
    }
    let searcher = mem.index().searcher();
    let q = SnippetQuery::new(&searcher, query)?;
    for h in hits.iter_mut().filter(|h| h.node_kind == NodeKind::Leaf) {
        h.snippet = q.choose(&searcher, &h.content);
    }
    Ok(())
}
