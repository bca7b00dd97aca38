//! Queries over the index, always built as query objects (never parsed from user text):
//! BM25 over content, entity posting-list intersection, filters for level, scope and time.

use super::schema::Fields;
use crate::error::Result;
use crate::types::{EntityId, NodeId, SourceKind};
use std::cell::OnceCell;
use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::Arc;
use tantivy::collector::{Count, TopDocs};
use tantivy::columnar::Cardinality;
use tantivy::index::SegmentId;
use tantivy::query::{
    AllQuery, BooleanQuery, ConstScoreQuery, EmptyScorer, EnableScoring, Explanation, Occur, Query, RangeQuery, Scorer,
    TermQuery, Weight,
};
use tantivy::schema::{IndexRecordOption, Term};
use tantivy::{DateTime, DocAddress, DocId, DocSet, Index, Score, Searcher, SegmentReader, TERMINATED};

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
    /// Each segment's node ids, fetched from the shared cache on first use.
    node_ids: Vec<OnceCell<Arc<SegmentNodeIds>>>,
}

fn term_q(t: Term) -> Box<dyn Query> {
    Box::new(TermQuery::new(t, IndexRecordOption::Basic))
}

fn filter(q: Box<dyn Query>) -> (Occur, Box<dyn Query>) {
    (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0)))
}

impl IndexSearcher {
    pub(super) fn new(searcher: Searcher, f: Fields, index: Index) -> Self {
        let node_ids = searcher.segment_readers().iter().map(|_| OnceCell::new()).collect();
        IndexSearcher { searcher, f, index, node_ids }
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
    /// index), up to `limit`, in id order; also returns the total.
    pub fn entity_intersection(
        &self,
        all: &[EntityId],
        flt: &SearchFilter,
        limit: usize,
    ) -> Result<(Vec<NodeId>, usize)> {
        self.intersect_entities(all, flt, limit, true)
    }

    /// [`IndexSearcher::entity_intersection`] without the total.
    pub fn entity_intersection_ids(&self, all: &[EntityId], flt: &SearchFilter, limit: usize) -> Result<Vec<NodeId>> {
        Ok(self.intersect_entities(all, flt, limit, false)?.0)
    }

    fn intersect_entities(
        &self,
        all: &[EntityId],
        flt: &SearchFilter,
        limit: usize,
        count: bool,
    ) -> Result<(Vec<NodeId>, usize)> {
        if all.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let must: Vec<(Occur, Box<dyn Query>)> =
            all.iter().map(|e| (Occur::Must, term_q(Term::from_field_text(self.f.entities, e.as_str())))).collect();
        let (hits, total) = self.run(Box::new(BooleanQuery::new(must)), flt, limit, count)?;
        let mut ids: Vec<NodeId> = hits.into_iter().map(|h| h.0).collect();
        ids.sort();
        Ok((ids, total))
    }

    /// Every node matching the filter (no text query), up to `limit`, and the total.
    pub fn filtered(&self, flt: &SearchFilter, limit: usize) -> Result<(Vec<NodeId>, usize)> {
        let (hits, total) = self.run(Box::new(AllQuery), flt, limit, true)?;
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
    ///
    /// The query is the text OR intersected with a constant-score filter of the ids' docs, and
    /// the scores are bit for bit those of the union of one term query per id this used to
    /// be. That union cost two term-dictionary lookups per id and segment (one for BM25
    /// statistics a constant score ignores, one for postings): over a second for the ~18k
    /// neighbours walk scores on a 100k-leaf store. [`IdDocsQuery`] walks the same docs with
    /// the same size hint (see [`union_size_hint`]), so tantivy advances the text scorer
    /// exactly as before; the ids are found in each segment's cached [`SegmentNodeIds`], and
    /// the hits map back to ids without reading documents.
    pub fn bm25_among(&self, text: &str, ids: &[NodeId]) -> Result<std::collections::HashMap<NodeId, f32>> {
        let Some(text_q) = self.content_query(text).filter(|_| !ids.is_empty()) else {
            return Ok(Default::default());
        };
        let mut sorted: Vec<&str> = ids.iter().map(|i| i.as_str()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let resolved = self.resolve_ids(&sorted, ids.len())?;
        let filter_q =
            IdDocsQuery { per_segment: Arc::new(resolved.iter().map(|s| (s.segment, s.docset())).collect()) };
        let q = BooleanQuery::new(vec![(Occur::Must, text_q), filter(Box::new(filter_q))]);
        let top = self.searcher.search(&q, &TopDocs::with_limit(ids.len()))?;
        let mut out = std::collections::HashMap::with_capacity(top.len());
        for (score, addr) in top {
            if let Some(id) = resolved.get(addr.segment_ord as usize).and_then(|s| s.id_of(addr.doc_id)) {
                out.insert(NodeId(sorted[id].to_string()), score);
            }
        }
        Ok(out)
    }

    /// Where each of `ids` (sorted, unique) lives, segment by segment: every doc carrying it,
    /// deleted ones included (as the postings of a term query on it list them), by doc.
    /// `clauses` is how many id clauses a union of term queries would have (it decides that
    /// union's size hint, which [`union_size_hint`] reproduces).
    fn resolve_ids(&self, ids: &[&str], clauses: usize) -> Result<Vec<SegmentIds>> {
        let mut out = Vec::with_capacity(self.searcher.segment_readers().len());
        for (ord, reader) in self.searcher.segment_readers().iter().enumerate() {
            let map = self.segment_node_ids(ord)?;
            let mut seg = SegmentIds { segment: reader.segment_id(), docs: Vec::new(), size_hint: 0 };
            // (first doc, last doc, doc_freq) of each id present, for the union's size hint.
            let mut spans: Vec<(DocId, DocId, u32)> = Vec::new();
            map.find_sorted(ids, |j, docs| {
                if let (Some(&first), Some(&last)) = (docs.first(), docs.last()) {
                    spans.push((first, last, docs.len() as u32));
                    seg.docs.extend(docs.iter().map(|&d| (d, j as u32)));
                }
            });
            seg.docs.sort_unstable();
            seg.size_hint = union_size_hint(&spans, clauses);
            out.push(seg);
        }
        Ok(out)
    }

    /// The node ids of segment `ord`, from the process-wide cache (built on first sight of
    /// the segment).
    fn segment_node_ids(&self, ord: usize) -> Result<&Arc<SegmentNodeIds>> {
        let Some(cell) = self.node_ids.get(ord) else {
            return Err(corrupt(format!("no segment {ord}")));
        };
        if let Some(map) = cell.get() {
            return Ok(map);
        }
        let name = self.searcher.schema().get_field_name(self.f.node_id);
        let map = node_id_cache::get(self.searcher.segment_reader(ord as u32), name, self.live_segments())?;
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

/// An index that does not hold what its schema promises.
fn corrupt(reason: String) -> crate::error::Error {
    crate::error::Error::Corrupt { what: "full-text index".into(), reason }
}

/// An I/O error of the index files, as an index error.
fn io(e: std::io::Error) -> crate::error::Error {
    tantivy::TantivyError::from(e).into()
}

/// The window tantivy's `BufferedUnionScorer` fills at once (64 × 64 docs, tantivy 0.25).
const UNION_HORIZON: DocId = 4096;

/// The size hint a BooleanQuery of `clauses` SHOULD term queries reports in a segment where
/// the terms present have postings spanning `(first, last, doc_freq)`: a single clause is its
/// term scorer (hint = doc_freq); a union drops, while filling its first window, every term
/// whose postings end inside it, and reports the largest doc_freq of those left (0 if none).
/// The intersection with the text query orders its parts by this hint, and that order decides
/// how the text scorer is advanced, so the hint is reproduced exactly: scores stay bit-equal.
fn union_size_hint(spans: &[(DocId, DocId, u32)], clauses: usize) -> u32 {
    if clauses == 1 {
        return spans.first().map_or(0, |s| s.2);
    }
    let Some(min_doc) = spans.iter().map(|s| s.0).min() else { return 0 };
    let horizon = min_doc.saturating_add(UNION_HORIZON);
    spans.iter().filter(|s| s.1 >= horizon).map(|s| s.2).max().unwrap_or(0)
}

/// One segment's share of a resolved id set.
struct SegmentIds {
    segment: SegmentId,
    /// (doc, index of the id), by doc.
    docs: Vec<(DocId, u32)>,
    size_hint: u32,
}

impl SegmentIds {
    fn docset(&self) -> (Arc<Vec<DocId>>, u32) {
        (Arc::new(self.docs.iter().map(|d| d.0).collect()), self.size_hint)
    }

    fn id_of(&self, doc: DocId) -> Option<usize> {
        self.docs.binary_search_by_key(&doc, |d| d.0).ok().map(|i| self.docs[i].1 as usize)
    }
}

/// Per segment, its listed docs (sorted, unique) and the size hint to report.
type DocLists = HashMap<SegmentId, (Arc<Vec<DocId>>, u32)>;

/// A query matching a fixed list of docs per segment (resolved beforehand), reporting a given
/// size hint; used only as a constant-score filter.
#[derive(Clone)]
struct IdDocsQuery {
    per_segment: Arc<DocLists>,
}

impl std::fmt::Debug for IdDocsQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IdDocs({} segments)", self.per_segment.len())
    }
}

impl Query for IdDocsQuery {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(IdDocsWeight { per_segment: self.per_segment.clone() }))
    }
}

struct IdDocsWeight {
    per_segment: Arc<DocLists>,
}

impl Weight for IdDocsWeight {
    fn scorer(&self, reader: &SegmentReader, _boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(match self.per_segment.get(&reader.segment_id()) {
            Some((docs, hint)) if !docs.is_empty() => {
                Box::new(DocList { docs: docs.clone(), pos: 0, size_hint: *hint })
            }
            _ => Box::new(EmptyScorer),
        })
    }

    fn explain(&self, _reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        Ok(Explanation::new_with_string(format!("listed doc {doc}"), 0.0))
    }
}

/// Sorted, unique docs; positioned on the first at creation, as tantivy's doc sets are.
struct DocList {
    docs: Arc<Vec<DocId>>,
    pos: usize,
    size_hint: u32,
}

impl DocSet for DocList {
    fn advance(&mut self) -> DocId {
        if self.pos < self.docs.len() {
            self.pos += 1;
        }
        self.doc()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        if self.doc() < target {
            self.pos += self.docs[self.pos..].partition_point(|&d| d < target);
        }
        self.doc()
    }

    fn doc(&self) -> DocId {
        self.docs.get(self.pos).copied().unwrap_or(TERMINATED)
    }

    fn size_hint(&self) -> u32 {
        self.size_hint
    }
}

impl Scorer for DocList {
    fn score(&mut self) -> Score {
        0.0
    }
}

/// Node ids of one segment, read once from its `node_id` column. Searches map candidate ids
/// to docs and hit docs to ids through it, with no dictionary lookup or stored-document read
/// per id: the column's dictionary is zstd-compressed blocks, and decoding them once per
/// segment instead of once per query is most of the saving.
pub(crate) struct SegmentNodeIds {
    /// Every node id of the segment, sorted (the column's dictionary, in ordinal order),
    /// concatenated; id `t` is `text[bounds[t]..bounds[t + 1]]`.
    text: String,
    bounds: Vec<u32>,
    /// Per id, its first eight bytes as a big-endian number (zero-padded): comparing these
    /// first orders ids as their text does, and settles almost every comparison of random
    /// hex ids without touching the text.
    heads: Vec<u64>,
    /// Per doc, the ordinal of its id (`u32::MAX` for a doc without one).
    by_doc: Vec<u32>,
    /// Per ordinal, its docs (deleted ones included), ascending: `docs[starts[t]..starts[t + 1]]`.
    starts: Vec<u32>,
    docs: Vec<DocId>,
}

impl SegmentNodeIds {
    /// Read the `node_id` column of a segment.
    fn build(reader: &SegmentReader, field_name: &str) -> Result<SegmentNodeIds> {
        let col = reader.fast_fields().str(field_name)?.ok_or_else(|| {
            corrupt(format!("segment {} has no `{field_name}` column", reader.segment_id().short_uuid_string()))
        })?;
        let dict = col.dictionary();
        let mut text = String::new();
        let mut bounds = vec![0u32];
        let mut stream = dict.stream().map_err(io)?;
        while stream.advance() {
            if stream.term_ord() as usize + 1 != bounds.len() {
                return Err(corrupt(format!("`{field_name}` dictionary out of order")));
            }
            text.push_str(&String::from_utf8_lossy(stream.key()));
            bounds.push(text.len() as u32);
        }
        let num_terms = bounds.len() - 1;
        let max_doc = reader.max_doc();
        let mut by_doc = vec![u32::MAX; max_doc as usize];
        let ords = col.ords();
        if ords.get_cardinality() == Cardinality::Full {
            // One value per doc: decode the column in blocks.
            let mut buf = vec![0u64; 1024];
            let mut start: DocId = 0;
            while start < max_doc {
                let n = (max_doc - start).min(buf.len() as DocId) as usize;
                ords.values.get_range(u64::from(start), &mut buf[..n]);
                for (k, &ord) in buf[..n].iter().enumerate() {
                    by_doc[start as usize + k] = ord as u32;
                }
                start += n as DocId;
            }
        } else {
            for doc in 0..max_doc {
                if let Some(ord) = col.term_ords(doc).next() {
                    by_doc[doc as usize] = ord as u32;
                }
            }
        }
        // Docs per ordinal by a counting sort (docs come out ascending).
        let mut starts = vec![0u32; num_terms + 1];
        for &t in &by_doc {
            if let Some(c) = starts.get_mut(t as usize + 1) {
                *c += 1;
            }
        }
        for t in 0..num_terms {
            starts[t + 1] += starts[t];
        }
        let mut next: Vec<u32> = starts[..num_terms].to_vec();
        let mut docs = vec![0 as DocId; starts[num_terms] as usize];
        for (doc, &t) in by_doc.iter().enumerate() {
            if let Some(n) = next.get_mut(t as usize) {
                docs[*n as usize] = doc as DocId;
                *n += 1;
            }
        }
        let heads = (0..num_terms).map(|t| head(&text[bounds[t] as usize..bounds[t + 1] as usize])).collect();
        Ok(SegmentNodeIds { text, bounds, heads, by_doc, starts, docs })
    }

    fn term(&self, t: usize) -> &str {
        &self.text[self.bounds[t] as usize..self.bounds[t + 1] as usize]
    }

    fn num_terms(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The id of a doc.
    fn id_of(&self, doc: DocId) -> Option<&str> {
        let t = *self.by_doc.get(doc as usize)?;
        (t != u32::MAX).then(|| self.term(t as usize))
    }

    /// Order of id `t` against `id` (whose head is `h`).
    fn cmp_term(&self, t: usize, id: &str, h: u64) -> std::cmp::Ordering {
        self.heads[t].cmp(&h).then_with(|| self.term(t).cmp(id))
    }

    /// For each of `ids` (sorted, unique) present in the segment, `f(index in ids, its docs)`,
    /// in id order: a merge when the ids are many, a binary search each when few.
    fn find_sorted(&self, ids: &[&str], mut f: impl FnMut(usize, &[DocId])) {
        let n = self.num_terms();
        let docs_of = |t: usize| &self.docs[self.starts[t] as usize..self.starts[t + 1] as usize];
        if ids.len().saturating_mul(16) < n {
            for (j, id) in ids.iter().enumerate() {
                let h = head(id);
                let (mut lo, mut hi) = (0, n);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if self.cmp_term(mid, id, h).is_lt() {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                if lo < n && self.cmp_term(lo, id, h).is_eq() {
                    f(j, docs_of(lo));
                }
            }
            return;
        }
        let (mut j, mut t) = (0, 0);
        let mut h = ids.first().map_or(0, |id| head(id));
        while j < ids.len() && t < n {
            match self.cmp_term(t, ids[j], h) {
                std::cmp::Ordering::Less => t += 1,
                std::cmp::Ordering::Greater => {
                    j += 1;
                    h = ids.get(j).map_or(0, |id| head(id));
                }
                std::cmp::Ordering::Equal => {
                    f(j, docs_of(t));
                    t += 1;
                    j += 1;
                    h = ids.get(j).map_or(0, |id| head(id));
                }
            }
        }
    }

    /// Docs covered (its size is about 60 bytes per doc), for the cache's budget.
    fn docs_held(&self) -> usize {
        self.by_doc.len()
    }
}

/// The first eight bytes of `s` as a big-endian number, zero-padded.
fn head(s: &str) -> u64 {
    let mut b = [0u8; 8];
    let n = s.len().min(8);
    b[..n].copy_from_slice(&s.as_bytes()[..n]);
    u64::from_be_bytes(b)
}

/// The process-wide cache of [`SegmentNodeIds`], keyed by segment id. Segments never change
/// (deletes only mark docs), so an entry is valid as long as its segment exists; entries of
/// segments no searcher uses any more (merged away, another store) are evicted, least
/// recently used first, once the cache holds more than twice the docs of the searcher at
/// hand (and at least a million).
mod node_id_cache {
    use super::{Result, SegmentId, SegmentNodeIds};
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use tantivy::SegmentReader;

    struct Entry {
        map: Arc<SegmentNodeIds>,
        last_used: u64,
    }

    #[derive(Default)]
    struct Cache {
        entries: HashMap<SegmentId, Entry>,
        clock: u64,
    }

    static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

    const MIN_BUDGET_DOCS: usize = 1_000_000;

    /// The map of `reader`'s segment, built if absent. `live`: the segments of the searcher
    /// asking (never evicted by this call).
    pub(super) fn get(reader: &SegmentReader, field_name: &str, live: Vec<SegmentId>) -> Result<Arc<SegmentNodeIds>> {
        let id = reader.segment_id();
        {
            // A panic elsewhere while holding the lock leaves a usable cache: take it anyway.
            let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
            let cache = guard.get_or_insert_with(Cache::default);
            cache.clock += 1;
            let now = cache.clock;
            if let Some(e) = cache.entries.get_mut(&id) {
                e.last_used = now;
                return Ok(e.map.clone());
            }
        }
        // Built outside the lock: two threads may build the same map; both are identical.
        let map = Arc::new(SegmentNodeIds::build(reader, field_name)?);
        let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let cache = guard.get_or_insert_with(Cache::default);
        cache.clock += 1;
        let now = cache.clock;
        cache.entries.insert(id, Entry { map: map.clone(), last_used: now });
        let live_docs: usize = live.iter().filter_map(|s| cache.entries.get(s)).map(|e| e.map.docs_held()).sum();
        let budget = (2 * live_docs).max(MIN_BUDGET_DOCS);
        let mut held: usize = cache.entries.values().map(|e| e.map.docs_held()).sum();
        if held > budget {
            let mut old: Vec<(u64, SegmentId, usize)> = cache
                .entries
                .iter()
                .filter(|(s, _)| !live.contains(s))
                .map(|(s, e)| (e.last_used, *s, e.map.docs_held()))
                .collect();
            old.sort_unstable_by_key(|o| o.0);
            for (_, s, n) in old {
                if held <= budget {
                    break;
                }
                cache.entries.remove(&s);
                held -= n;
            }
        }
        Ok(map)
    }
}
