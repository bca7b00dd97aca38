//! Snippets: the passage of a long leaf that best matches the query, so a caller can spend
//! its context budget on the part of a hit that answers.
//!
//! The passage is chosen lexically: the question's content words, analysed by the index's
//! own analyser (lower case, English stemming) so a match here is a match there, weighted
//! by their BM25 IDF over the store, scored over each passage as BM25 does over documents.
//! No passage is embedded at query time: at ~10 ms a passage on these machines, ten long
//! hits would cost more than the walk itself.

use super::hit::{RetrievalHit, Snippet};
use crate::error::Result;
use crate::index::IndexSearcher;
use crate::text::{PassageLimits, content_words, passages};
use crate::types::NodeKind;

/// BM25's term-frequency saturation and length normalisation, over passages.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// A query as the snippet chooser sees it: analysed terms and their weights, computed once
/// per request.
struct SnippetQuery {
    /// Sorted by term (a binary search per token of the content).
    weights: Vec<(String, f32)>,
}

impl SnippetQuery {
    /// The content words of `query` (all its words when it has none), analysed and weighted.
    fn new(searcher: &IndexSearcher, query: &str) -> Result<SnippetQuery> {
        let words: Vec<String> = content_words(query).collect();
        let text = if words.is_empty() { query.to_string() } else { words.join(" ") };
        Ok(SnippetQuery { weights: searcher.term_weights(&text)? })
    }

    /// The best passage of `content`, or `None` when it is a single passage (the snippet
    /// would be the whole hit). Ties, and a query matching no passage, go to the earliest.
    ///
    /// The content is analysed once, whole, and each token counted in the passage its byte
    /// offset falls in: an analyser per passage cost ~30 ms over walk's 50 hits on BEAM.
    fn choose(&self, searcher: &IndexSearcher, content: &str, limits: PassageLimits) -> Option<Snippet> {
        let ps = passages(content, limits);
        if ps.len() < 2 {
            return None;
        }
        let nt = self.weights.len();
        let mut len = vec![0usize; ps.len()];
        let mut tf = vec![0.0f32; ps.len() * nt];
        let mut at = 0;
        searcher.for_each_term(content, &mut |offset, term| {
            // Tokens come in order and never lie between passages (only whitespace does).
            while at + 1 < ps.len() && offset >= ps[at + 1].byte_start {
                at += 1;
            }
            len[at] += 1;
            if let Ok(k) = self.weights.binary_search_by(|(t, _)| t.as_str().cmp(term)) {
                tf[at * nt + k] += 1.0;
            }
        });
        let avg = (len.iter().sum::<usize>() as f32 / ps.len() as f32).max(1.0);
        let mut best = (0, 0.0f32);
        for (i, &n) in len.iter().enumerate() {
            let norm = K1 * (1.0 - B + B * n as f32 / avg);
            let s: f32 = (0..nt)
                .map(|k| (tf[i * nt + k], self.weights[k].1))
                .filter(|(f, _)| *f > 0.0)
                .map(|(f, w)| w * f * (K1 + 1.0) / (f + norm))
                .sum();
            if s > best.1 {
                best = (i, s);
            }
        }
        let p = ps[best.0];
        Some(Snippet { text: p.text.to_string(), start: p.start, end: p.end })
    }
}

/// Give each leaf hit of `hits` whose content is longer than one passage the passage that
/// best matches `query`. Summaries get none. Reads nothing from the store: the content is
/// in the hit.
pub(crate) fn attach_snippets(searcher: &IndexSearcher, query: &str, hits: &mut [RetrievalHit]) -> Result<()> {
    attach_to(searcher, query, hits, NodeKind::Leaf, PassageLimits::default())
}

/// A headline's size: a few lines of a session, where a leaf's snippet is a passage (a
/// session summary runs to a thousand tokens on BEAM, and its headline is context for the
/// evidence leaves that come with it, not the answer).
const HEADLINE: PassageLimits = PassageLimits { tokens: 50, chars: 400, min_tokens: 0 };

/// Give each summary hit of `hits` longer than one passage its headline: the passage that
/// best matches `query`. A history answer's session (`walk`) carries its evidence leaves
/// whole or as their snippets; the session's own text is context, and a caller with a small
/// budget needs its headline, not all of it.
pub(crate) fn attach_headlines(searcher: &IndexSearcher, query: &str, hits: &mut [RetrievalHit]) -> Result<()> {
    attach_to(searcher, query, hits, NodeKind::Summary, HEADLINE)
}

/// The best passage for `query` on each hit of `kind`.
fn attach_to(
    searcher: &IndexSearcher,
    query: &str,
    hits: &mut [RetrievalHit],
    kind: NodeKind,
    limits: PassageLimits,
) -> Result<()> {
    if !hits.iter().any(|h| h.node_kind == kind) {
        return Ok(());
    }
    let q = SnippetQuery::new(searcher, query)?;
    for h in hits.iter_mut().filter(|h| h.node_kind == kind) {
        h.snippet = q.choose(searcher, &h.content, limits);
    }
    Ok(())
}
