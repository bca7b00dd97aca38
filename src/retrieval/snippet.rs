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
use crate::text::{Passage, PassageLimits, content_words, passages, quoted_spans, sentences};
use crate::types::{NodeKind, SourceKind};
use std::ops::Range;

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
    /// would be the whole hit). Ties go to the earliest; a query matching no passage to
    /// `dense` (the passage whose vector gave the hit its dense score) when there is one, else
    /// to the earliest.
    ///
    /// The content is analysed once, whole, and each token counted in the passage its byte
    /// offset falls in: an analyser per passage cost ~30 ms over walk's 50 hits on BEAM.
    ///
    /// `quoted` are the byte ranges that are not the text's own words (a mail's quotes and
    /// signature, `text::quoted_spans`; empty for any other text): only a passage mostly of
    /// its own words is chosen ("-Carl" would be the best match of every question naming
    /// Carl), and the quoted lines it opens or ends with are cut off; none when no passage is
    /// (the hit's content is then the answer).
    fn choose(
        &self,
        searcher: &IndexSearcher,
        content: &str,
        limits: PassageLimits,
        quoted: &[Range<usize>],
        dense: Option<u16>,
    ) -> Option<Snippet> {
        let ps = passages(content, limits);
        if ps.len() < 2 {
            return None;
        }
        let dense = dense.map(usize::from);
        if quoted.is_empty() {
            return self.best_of(searcher, content, &ps, |_| true, dense);
        }
        // A passage that opens with a mail's headers and runs on into a quote is the quote's.
        let own: Vec<bool> = ps.iter().map(|p| p.mostly_outside(quoted)).collect();
        let chosen = self.best_of(searcher, content, &ps, |i| own[i], dense)?;
        Some(without_quoted_ends(content, chosen, quoted))
    }

    /// The passage of `ps` (the passages of `content`) that best matches the query among
    /// those `admit` takes (by index), the earliest on ties; `fallback` (when admitted) if
    /// none holds a word of the query; `None` when it takes none.
    fn best_of(
        &self,
        searcher: &IndexSearcher,
        content: &str,
        ps: &[Passage<'_>],
        admit: impl Fn(usize) -> bool,
        fallback: Option<usize>,
    ) -> Option<Snippet> {
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
        let mut best: Option<(usize, f32)> = None;
        for (i, &n) in len.iter().enumerate() {
            if !admit(i) {
                continue;
            }
            let norm = K1 * (1.0 - B + B * n as f32 / avg);
            let s: f32 = (0..nt)
                .map(|k| (tf[i * nt + k], self.weights[k].1))
                .filter(|(f, _)| *f > 0.0)
                .map(|(f, w)| w * f * (K1 + 1.0) / (f + norm))
                .sum();
            if best.is_none_or(|(_, b)| s > b) {
                best = Some((i, s));
            }
        }
        let (mut at, score) = best?;
        if let Some(f) = fallback.filter(|&f| score <= 0.0 && f < ps.len() && admit(f)) {
            at = f;
        }
        let p = ps[at];
        Some(Snippet { text: p.text.to_string(), start: p.start, end: p.end })
    }
}

/// `s` (a passage of `content`) without the quoted lines or signature it opens or ends
/// with ("Looks good, pushed.\n\n-Carl" → "Looks good, pushed."); `s` itself when nothing
/// would be left.
fn without_quoted_ends(content: &str, s: Snippet, quoted: &[Range<usize>]) -> Snippet {
    let Some((start_byte, _)) = content.char_indices().nth(s.start) else { return s };
    let (mut a, mut b) = (start_byte, start_byte + s.text.len());
    for q in quoted {
        if q.start <= a && q.end > a {
            a = q.end;
        }
    }
    for q in quoted.iter().rev() {
        if q.end >= b && q.start < b {
            b = q.start;
        }
    }
    let Some(kept) = content.get(a..b.max(a)).map(str::trim).filter(|t| !t.is_empty()) else { return s };
    let a = a + content[a..].find(kept).unwrap_or(0);
    let start = content[..a].chars().count();
    Snippet { text: kept.to_string(), start, end: start + kept.chars().count() }
}

/// What a history answer's session summary says of its evidence (`walk`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Headline {
    /// The summary is one passage, and it holds a sentence of the evidence: it is its own
    /// headline.
    Whole,
    /// The passage that best matches the question among those holding a sentence of the
    /// evidence.
    Passage(Snippet),
    /// The summary holds no sentence of its evidence (the summariser's budget kept others):
    /// shown, it would speak of something else than the leaves it comes with.
    Unstated,
}

/// Chooses the headlines of a history answer's sessions, the question analysed once.
pub(crate) struct Headlines<'a> {
    searcher: &'a IndexSearcher,
    query: SnippetQuery,
}

impl<'a> Headlines<'a> {
    /// For `query` (the question's lexical text).
    pub(crate) fn new(searcher: &'a IndexSearcher, query: &str) -> Result<Headlines<'a>> {
        Ok(Headlines { searcher, query: SnippetQuery::new(searcher, query)? })
    }

    /// The headline of a session summary whose evidence leaves hold `evidence`: a passage
    /// (a few lines) of the summary that holds one of their sentences, so what the session
    /// says is what its evidence says. The extractive summariser keeps its children's
    /// sentences verbatim, so a sentence of a leaf is found in the summary as it is, between
    /// white space; a sentence with fewer than three content words ("Thanks a lot!",
    /// `return jsonify(r)`) is not looked for, since another child may say it too.
    pub(crate) fn stating(&self, summary: &str, evidence: &[&str]) -> Headline {
        let bounded = |at: usize, end: usize| {
            summary[..at].chars().next_back().is_none_or(char::is_whitespace)
                && summary[end..].chars().next().is_none_or(char::is_whitespace)
        };
        let mut stated: Vec<(usize, usize)> = Vec::new();
        for text in evidence {
            for s in sentences(text) {
                if content_words(s).nth(2).is_none() {
                    continue;
                }
                stated
                    .extend(summary.match_indices(s).map(|(at, m)| (at, at + m.len())).filter(|&(a, b)| bounded(a, b)));
            }
        }
        if stated.is_empty() {
            return Headline::Unstated;
        }
        let ps = passages(summary, HEADLINE);
        if ps.len() < 2 {
            return Headline::Whole;
        }
        // The stated ranges, merged: a sentence said twice is counted once.
        stated.sort_unstable();
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(stated.len());
        for (a, b) in stated {
            match merged.last_mut() {
                Some(last) if a <= last.end => last.end = last.end.max(b),
                _ => merged.push(a..b),
            }
        }
        // Each passage's share of the evidence's own words.
        let share: Vec<f64> = ps.iter().map(|p| p.bytes_inside(&merged) as f64 / p.text.len().max(1) as f64).collect();
        // The headline is mostly the evidence's own words where a passage is (a passage
        // holding one stated line among code lines of other messages says little of it),
        // else any passage holding some. A stated range always lies in some passage
        // (passages cover every non-whitespace character), so one is admitted.
        let mostly = share.iter().any(|&x| x >= 0.5);
        let admit = |i: usize| if mostly { share[i] >= 0.5 } else { share[i] > 0.0 };
        self.query.best_of(self.searcher, summary, &ps, admit, None).map_or(Headline::Unstated, Headline::Passage)
    }
}

/// Give each leaf hit of `hits` whose content is longer than one passage the passage that
/// best matches `query` (by its words; by the hit's passage vector when no passage holds one
/// of them). Summaries get none. Reads nothing from the store: the content is
/// in the hit.
pub(crate) fn attach_snippets(searcher: &IndexSearcher, query: &str, hits: &mut [RetrievalHit]) -> Result<()> {
    if !hits.iter().any(|h| h.node_kind == NodeKind::Leaf) {
        return Ok(());
    }
    let q = SnippetQuery::new(searcher, query)?;
    for h in hits.iter_mut().filter(|h| h.node_kind == NodeKind::Leaf) {
        let quoted = if h.source_kind == Some(SourceKind::Email) { quoted_spans(&h.content) } else { Vec::new() };
        h.snippet = q.choose(searcher, &h.content, PassageLimits::default(), &quoted, h.dense_passage);
    }
    Ok(())
}

/// A headline's size: a few lines of a session, where a leaf's snippet is a passage (a
/// session summary runs to a thousand tokens on BEAM, and its headline is context for the
/// evidence leaves that come with it, not the answer: a caller with a small budget needs
/// the headline, not all of it).
const HEADLINE: PassageLimits = PassageLimits { tokens: 50, chars: 400, min_tokens: 0 };
