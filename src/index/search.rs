//! Queries over the index, always built as query objects (never parsed from user text):
//! BM25 over content, entity posting-list intersection, filters for level, scope and time.

use super::schema::Fields;
use crate::error::Result;
use crate::types::{EntityId, NodeId, SourceKind};
use std::collections::BTreeSet;
use std::ops::Bound;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{AllQuery, BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Term, Value};
use tantivy::{DateTime, Index, Searcher, TantivyDocument};

/// Which levels a search may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LevelFilter {
    /// Leaves and summaries.
    #[default]
    All,
    /// Level 0 only.
    Leaves,
    /// Level ≥ 1 only.
    Summaries,
}

/// Restrictions every search applies before scoring and counting.
#[derive(Debug, Clone, Default)]
pub struct SearchFilter {
    /// Levels allowed.
    pub levels: LevelFilter,
    /// The scope gate: allowed `tree_scope` values (`None` = all, empty = nothing).
    pub scopes: Option<BTreeSet<String>>,
    /// Only these trees' scopes (a `source_id` filter), intersected with the gate.
    pub source_id: Option<String>,
    /// Only sources of this kind.
    pub source_kind: Option<SourceKind>,
    /// Envelope overlaps `[since, until]` (epoch ms, inclusive).
    pub window_ms: Option<(i64, i64)>,
}

/// A searcher over one commit of the index.
pub struct IndexSearcher {
    searcher: Searcher,
    f: Fields,
    index: Index,
}

fn term_q(t: Term) -> Box<dyn Query> {
    Box::new(TermQuery::new(t, IndexRecordOption::Basic))
}

fn filter(q: Box<dyn Query>) -> (Occur, Box<dyn Query>) {
    (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0)))
}

impl IndexSearcher {
    pub(super) fn new(searcher: Searcher, f: Fields, index: Index) -> Self {
        IndexSearcher { searcher, f, index }
    }

    /// Analyse `text` with the content field's tokenizer (lower-case, English stemming).
    pub fn analyse(&self, text: &str) -> Vec<String> {
        let Ok(mut analyzer) = self.index.tokenizer_for_field(self.f.content) else { return Vec::new() };
        let mut out = Vec::new();
        let mut stream = analyzer.token_stream(text);
        stream.process(&mut |t| out.push(t.text.clone()));
        out
    }

    /// BM25 over content: an OR of the analysed terms of `text`; `None` when nothing is left
    /// after analysis.
    fn content_query(&self, text: &str) -> Option<Box<dyn Query>> {
        let terms: BTreeSet<String> = self.analyse(text).into_iter().collect();
        if terms.is_empty() {
            return None;
        }
        let should: Vec<(Occur, Box<dyn Query>)> = terms
            .into_iter()
            .map(|t| {
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(Term::from_field_text(self.f.content, &t), IndexRecordOption::WithFreqs));
                (Occur::Should, q)
            })
            .collect();
        Some(Box::new(BooleanQuery::new(should)))
    }

    /// The filter clauses; `None` when the filter can match nothing (empty scope gate).
    fn filter_clauses(&self, flt: &SearchFilter) -> Option<Vec<(Occur, Box<dyn Query>)>> {
        let f = &self.f;
        let mut clauses = Vec::new();
        match flt.levels {
            LevelFilter::All => {}
            LevelFilter::Leaves => clauses.push(filter(term_q(Term::from_field_u64(f.level, 0)))),
            LevelFilter::Summaries => clauses.push(filter(Box::new(RangeQuery::new(
                Bound::Included(Term::from_field_u64(f.level, 1)),
                Bound::Unbounded,
            )))),
        }
        let mut scopes: Option<BTreeSet<String>> = flt.scopes.clone();
        if let Some(src) = &flt.source_id {
            scopes = Some(match scopes {
                Some(s) if !s.contains(src) => BTreeSet::new(),
                _ => BTreeSet::from([src.clone()]),
            });
        }
        if let Some(scopes) = scopes {
            if scopes.is_empty() {
                return None;
            }
            let any: Vec<(Occur, Box<dyn Query>)> =
                scopes.iter().map(|s| (Occur::Should, term_q(Term::from_field_text(f.tree_scope, s)))).collect();
            clauses.push(filter(Box::new(BooleanQuery::new(any))));
        }
        if let Some(kind) = flt.source_kind {
            clauses.push(filter(term_q(Term::from_field_text(f.source_kind, kind.as_str()))));
        }
        if let Some((since, until)) = flt.window_ms {
            // Overlap: start <= until AND end >= since. Indexed dates are truncated to
            // seconds, so widen by a second; callers re-check exact bounds on the rows.
            let until = DateTime::from_timestamp_millis(until.saturating_add(1000));
            let since = DateTime::from_timestamp_millis(since.saturating_sub(1000));
            clauses.push(filter(Box::new(RangeQuery::new(
                Bound::Unbounded,
                Bound::Included(Term::from_field_date_for_search(f.time_start, until)),
            ))));
            clauses.push(filter(Box::new(RangeQuery::new(
                Bound::Included(Term::from_field_date_for_search(f.time_end, since)),
                Bound::Unbounded,
            ))));
        }
        Some(clauses)
    }

    fn run(&self, main: Box<dyn Query>, flt: &SearchFilter, limit: usize) -> Result<(Vec<(NodeId, f32)>, usize)> {
        let Some(mut clauses) = self.filter_clauses(flt) else { return Ok((Vec::new(), 0)) };
        clauses.push((Occur::Must, main));
        let q = BooleanQuery::new(clauses);
        let (top, total) = self.searcher.search(&q, &(TopDocs::with_limit(limit.max(1)), Count))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = self.searcher.doc(addr)?;
            if let Some(id) = doc.get_first(self.f.node_id).and_then(|v| v.as_str()) {
                hits.push((NodeId(id.to_string()), score));
            }
        }
        // Deterministic order: score, then id.
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok((hits, total))
    }

    /// BM25 over content for the analysed terms of `text` (OR of terms), best first; also
    /// returns the number of matches. Terms are given pre-analysed-free: the text is analysed
    /// here.
    pub fn bm25(&self, text: &str, flt: &SearchFilter, limit: usize) -> Result<(Vec<(NodeId, f32)>, usize)> {
        match self.content_query(text) {
            Some(q) => self.run(q, flt, limit),
            None => Ok((Vec::new(), 0)),
        }
    }

    /// Nodes whose entity posting lists contain every id of `all` (an intersection in the
    /// index), up to `limit`, in id order; also returns the total.
    pub fn entity_intersection(
        &self,
        all: &[EntityId],
        flt: &SearchFilter,
        limit: usize,
    ) -> Result<(Vec<NodeId>, usize)> {
        if all.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let must: Vec<(Occur, Box<dyn Query>)> =
            all.iter().map(|e| (Occur::Must, term_q(Term::from_field_text(self.f.entities, e.as_str())))).collect();
        let (hits, total) = self.run(Box::new(BooleanQuery::new(must)), flt, limit)?;
        let mut ids: Vec<NodeId> = hits.into_iter().map(|h| h.0).collect();
        ids.sort();
        Ok((ids, total))
    }

    /// Every node matching the filter (no text query), up to `limit`, and the total.
    pub fn filtered(&self, flt: &SearchFilter, limit: usize) -> Result<(Vec<NodeId>, usize)> {
        let (hits, total) = self.run(Box::new(AllQuery), flt, limit)?;
        Ok((hits.into_iter().map(|h| h.0).collect(), total))
    }

    /// Number of documents in this commit.
    pub fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }
}

impl IndexSearcher {
    /// BM25 scores of `text` restricted to the nodes `ids` (a rerank of a known candidate
    /// set); nodes without any matching term are absent from the map.
    pub fn bm25_among(&self, text: &str, ids: &[NodeId]) -> Result<std::collections::HashMap<NodeId, f32>> {
        let Some(text_q) = self.content_query(text).filter(|_| !ids.is_empty()) else {
            return Ok(Default::default());
        };
        let among: Vec<(Occur, Box<dyn Query>)> =
            ids.iter().map(|id| (Occur::Should, term_q(Term::from_field_text(self.f.node_id, id.as_str())))).collect();
        let q = BooleanQuery::new(vec![(Occur::Must, text_q), filter(Box::new(BooleanQuery::new(among)))]);
        let top = self.searcher.search(&q, &TopDocs::with_limit(ids.len()))?;
        let mut out = std::collections::HashMap::with_capacity(top.len());
        for (score, addr) in top {
            let doc: TantivyDocument = self.searcher.doc(addr)?;
            if let Some(id) = doc.get_first(self.f.node_id).and_then(|v| v.as_str()) {
                out.insert(NodeId(id.to_string()), score);
            }
        }
        Ok(out)
    }
}
