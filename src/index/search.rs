//! Queries over the index, always built as query objects (never parsed from user text):
//! BM25 over content, entity posting-list intersection, filters for level, scope and time,
//! and the top-docs collection that maps hits back to node ids. The rerank of a known
//! candidate set lives in [`among`].

mod among;
mod docs;

pub use docs::NodeDoc;

use super::node_ids::{NodeIdCache, SegmentNodeIds, corrupt};
use super::schema::Fields;
use crate::error::Result;
use crate::time::{AdmittedBy, SpokenTime};
use crate::types::{EntityId, NodeId, SourceKind};
use std::cell::OnceCell;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;
use tantivy::collector::{Count, TopDocs};
use tantivy::index::SegmentId;
use tantivy::query::{AllQuery, BooleanQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Term};
use tantivy::{DateTime, DocAddress, Index, Searcher};

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
    /// `[since, until]` (epoch ms, inclusive) admits a node by either clock (SPEC §5.1): its
    /// envelope overlaps it, or its text speaks of a time lying inside it.
    pub window_ms: Option<(i64, i64)>,
}

impl SearchFilter {
    /// The scopes a node's tree may have: the gate narrowed to `source_id` (`None` = any,
    /// empty = none). What the index filter matches on ([`IndexSearcher`]'s clauses).
    fn allowed_scopes(&self) -> Option<BTreeSet<String>> {
        match &self.source_id {
            Some(src) if self.scopes.as_ref().is_some_and(|s| !s.contains(src)) => Some(BTreeSet::new()),
            Some(src) => Some(BTreeSet::from([src.clone()])),
            None => self.scopes.clone(),
        }
    }

    /// The filter's scope, source and window conditions checked on a row: a node of
    /// `tree_scope` whose envelope is `[start_ms, end_ms]` and whose text speaks of `spoken`.
    /// The same conditions the index applies (exact here, where the index widens the window
    /// by its dates' second and cannot pair a leaf's spoken bounds), for candidates that do
    /// not come through the index, and to check those that do. Levels and the source kind
    /// are the caller's to check (a row's level is at hand, its tree's kind is not).
    pub fn admits(&self, tree_scope: &str, start_ms: i64, end_ms: i64, spoken: &[SpokenTime]) -> bool {
        // `allowed_scopes` as a test, without building the set per row.
        self.scopes.as_ref().is_none_or(|s| s.contains(tree_scope))
            && self.source_id.as_ref().is_none_or(|s| s == tree_scope)
            && self.window_ms.is_none_or(|w| AdmittedBy::window(w, start_ms, end_ms, spoken).is_some())
    }
}

/// A searcher over one commit of the index.
pub struct IndexSearcher {
    searcher: Searcher,
    f: Fields,
    index: Index,
    /// The index handle's cache of per-segment node ids.
    cache: NodeIdCache,
    /// Each segment's node ids, fetched from `cache` on first use.
    node_ids: Vec<OnceCell<Arc<SegmentNodeIds>>>,
}

fn term_q(t: Term) -> Box<dyn Query> {
    Box::new(TermQuery::new(t, IndexRecordOption::Basic))
}

fn filter(q: Box<dyn Query>) -> (Occur, Box<dyn Query>) {
    (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0)))
}

impl IndexSearcher {
    pub(super) fn new(searcher: Searcher, f: Fields, index: Index, cache: NodeIdCache) -> Self {
        let node_ids = searcher.segment_readers().iter().map(|_| OnceCell::new()).collect();
        IndexSearcher { searcher, f, index, cache, node_ids }
    }

    /// Analyse `text` with the content field's tokenizer (lower-case, English stemming).
    pub fn analyse(&self, text: &str) -> Vec<String> {
        let Ok(mut analyzer) = self.index.tokenizer_for_field(self.f.content) else { return Vec::new() };
        let mut out = Vec::new();
        let mut stream = analyzer.token_stream(text);
        stream.process(&mut |t| out.push(t.text.clone()));
        out
    }

    /// Call `f` with each analysed term of `text` (as [`Self::analyse`] gives them) and the
    /// byte offset in `text` where its token starts, in order: one analyser for a whole text
    /// and no allocation per token, for a caller that scores parts of a text.
    pub fn for_each_term(&self, text: &str, f: &mut dyn FnMut(usize, &str)) {
        let Ok(mut analyzer) = self.index.tokenizer_for_field(self.f.content) else { return };
        let mut stream = analyzer.token_stream(text);
        stream.process(&mut |t| f(t.offset_from, &t.text));
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
        if let Some(scopes) = flt.allowed_scopes() {
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
            // Indexed dates are truncated to seconds, so widen by a second; callers re-check
            // exact bounds on the rows. tantivy keeps dates in i64 nanoseconds: a bound past
            // year 2262 (an open end, `i64::MAX / 2`) would overflow into a negative time and
            // match nothing.
            const MAX_MS: i64 = i64::MAX / 1_000_000 - 1_000;
            let date = |ms: i64| DateTime::from_timestamp_millis(ms.clamp(-MAX_MS, MAX_MS));
            let (until, since) = (date(until.saturating_add(1000)), date(since.saturating_sub(1000)));
            let range = |field, from: Bound<DateTime>, to: Bound<DateTime>| -> Box<dyn Query> {
                let term = |d| Term::from_field_date_for_search(field, d);
                Box::new(RangeQuery::new(from.map(term), to.map(term)))
            };
            let both = |a: Box<dyn Query>, b: Box<dyn Query>| -> Box<dyn Query> {
                Box::new(BooleanQuery::new(vec![(Occur::Must, a), (Occur::Must, b)]))
            };
            // Said in it: start <= until AND end >= since.
            let said = both(
                range(f.time_start, Bound::Unbounded, Bound::Included(until)),
                range(f.time_end, Bound::Included(since), Bound::Unbounded),
            );
            // Speaks of a time inside it: some since and some until of the leaf inside
            // (not necessarily one pair's: `admits` checks the pairs).
            let spoken = both(
                range(f.spoken_since, Bound::Included(since), Bound::Included(until)),
                range(f.spoken_until, Bound::Included(since), Bound::Included(until)),
            );
            clauses.push(filter(Box::new(BooleanQuery::new(vec![(Occur::Should, said), (Occur::Should, spoken)]))));
        }
        Some(clauses)
    }

    /// Top `limit` nodes of `main` under the filter, best first, ties by id; with `count`,
    /// also the number of matches (else 0). Counting adds a second collector that every match
    /// goes through; without it only matches above the top-docs' running threshold are
    /// collected. The top docs are the same either way: tantivy keeps the best scores, ties
    /// to the lower doc address, in both. Node ids come from the `node_id` column.
    fn run(
        &self,
        main: Box<dyn Query>,
        flt: &SearchFilter,
        limit: usize,
        count: bool,
    ) -> Result<(Vec<(NodeId, f32)>, usize)> {
        let Some(mut clauses) = self.filter_clauses(flt) else { return Ok((Vec::new(), 0)) };
        clauses.push((Occur::Must, main));
        let q = BooleanQuery::new(clauses);
        let top_docs = TopDocs::with_limit(limit.max(1));
        let (top, total) = if count {
            self.searcher.search(&q, &(top_docs, Count))?
        } else {
            (self.searcher.search(&q, &top_docs)?, 0)
        };
        let ids = self.node_ids_of(&top.iter().map(|t| t.1).collect::<Vec<_>>())?;
        let mut hits = Vec::with_capacity(top.len());
        for ((score, _), id) in top.into_iter().zip(ids) {
            if let Some(id) = id {
                hits.push((NodeId(id), score));
            }
        }
        // Deterministic order: score, then id.
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok((hits, total))
    }

    /// BM25 over content for the analysed terms of `text` (OR of terms), best first; also
    /// returns the number of matches. Terms are given pre-analysed-free: the text is analysed
    /// here.
    // Only the harness's `bm25` baseline.
    #[cfg(any(test, feature = "harness"))]
    pub fn bm25(&self, text: &str, flt: &SearchFilter, limit: usize) -> Result<(Vec<(NodeId, f32)>, usize)> {
        match self.content_query(text) {
            Some(q) => self.run(q, flt, limit, true),
            None => Ok((Vec::new(), 0)),
        }
    }

    /// [`IndexSearcher::bm25`] without the number of matches (cheaper on long posting lists).
    pub fn bm25_top(&self, text: &str, flt: &SearchFilter, limit: usize) -> Result<Vec<(NodeId, f32)>> {
        match self.content_query(text) {
            Some(q) => Ok(self.run(q, flt, limit, false)?.0),
            None => Ok(Vec::new()),
        }
    }

    /// Nodes whose entity posting lists contain every id of `all` (an intersection in the
    /// index), up to `limit`, in id order: the reference the doc-order intersection walk
    /// uses (`entity_intersection_docs`) is checked against.
    #[cfg(test)]
    pub fn entity_intersection_ids(&self, all: &[EntityId], flt: &SearchFilter, limit: usize) -> Result<Vec<NodeId>> {
        if all.is_empty() {
            return Ok(Vec::new());
        }
        let (hits, _) = self.run(self.entities_query(all), flt, limit, false)?;
        let mut ids: Vec<NodeId> = hits.into_iter().map(|h| h.0).collect();
        ids.sort();
        Ok(ids)
    }

    /// Nodes carrying every entity of `all` (an AND of their terms).
    fn entities_query(&self, all: &[EntityId]) -> Box<dyn Query> {
        let must: Vec<(Occur, Box<dyn Query>)> =
            all.iter().map(|e| (Occur::Must, term_q(Term::from_field_text(self.f.entities, e.as_str())))).collect();
        Box::new(BooleanQuery::new(must))
    }

    /// Every node matching the filter (no text query), up to `limit`, and the total.
    pub fn filtered(&self, flt: &SearchFilter, limit: usize) -> Result<(Vec<NodeId>, usize)> {
        let (hits, total) = self.run(Box::new(AllQuery), flt, limit, true)?;
        Ok((hits.into_iter().map(|h| h.0).collect(), total))
    }

    /// The distinct analysed terms of `text` (as [`Self::analyse`] gives them), each with
    /// its BM25 inverse document frequency over the content field, `ln(1 + (N - n + 0.5) /
    /// (n + 0.5))`: what a passage scorer outside the index weighs matches by, so a rare
    /// word of the question counts for more than a common one, as it does in BM25. Sorted
    /// by term.
    pub fn term_weights(&self, text: &str) -> Result<Vec<(String, f32)>> {
        let terms: BTreeSet<String> = self.analyse(text).into_iter().collect();
        let n = self.searcher.num_docs() as f32;
        terms
            .into_iter()
            .map(|t| {
                let df = self.searcher.doc_freq(&Term::from_field_text(self.f.content, &t))? as f32;
                // `num_docs` counts live documents while `doc_freq` still counts deleted ones
                // until their segments merge (a replaced document): a weight is never negative.
                Ok((t, (1.0 + (n - df + 0.5).max(0.0) / (df + 0.5)).ln()))
            })
            .collect()
    }

    /// Number of documents in this commit.
    pub fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }
}

impl IndexSearcher {
    /// The node ids of segment `ord`, from the index handle's cache (built on first sight of
    /// the segment).
    fn segment_node_ids(&self, ord: usize) -> Result<&Arc<SegmentNodeIds>> {
        let Some(cell) = self.node_ids.get(ord) else {
            return Err(corrupt(format!("no segment {ord}")));
        };
        if let Some(map) = cell.get() {
            return Ok(map);
        }
        let name = self.searcher.schema().get_field_name(self.f.node_id);
        let map = self.cache.get(self.searcher.segment_reader(ord as u32), name, self.live_segments())?;
        Ok(cell.get_or_init(|| map))
    }

    /// The segments this searcher sees (the cache keeps them when it evicts).
    fn live_segments(&self) -> Vec<SegmentId> {
        self.searcher.segment_readers().iter().map(|r| r.segment_id()).collect()
    }

    /// The node ids of docs (`None` for a doc without one), in the order given.
    fn node_ids_of(&self, addrs: &[DocAddress]) -> Result<Vec<Option<String>>> {
        addrs
            .iter()
            .map(|a| Ok(self.segment_node_ids(a.segment_ord as usize)?.id_of(a.doc_id).map(str::to_string)))
            .collect()
    }
}
