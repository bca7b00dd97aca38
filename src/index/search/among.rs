//! BM25 restricted to a known candidate set (walk's rerank of the neighbours it scores): the
//! text query intersected with a constant-score filter of the candidates' docs, found through
//! the per-segment node-id maps, with scores bit-equal to a union of one term query per id.

use super::{IndexSearcher, NodeDoc, filter};
use crate::error::Result;
use crate::index::node_ids::corrupt;
use crate::types::NodeId;
use std::collections::HashMap;
use std::sync::Arc;
use tantivy::collector::TopDocs;
use tantivy::index::SegmentId;
use tantivy::query::{BooleanQuery, EmptyScorer, EnableScoring, Explanation, Occur, Query, Scorer, TermQuery, Weight};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED, Term};

impl IndexSearcher {
    /// BM25 scores of `text` restricted to the nodes `ids` (a rerank of a known candidate
    /// set); nodes without any matching term are absent from the map.
    ///
    /// The query is the text OR intersected with a constant-score filter of the ids' docs, and
    /// the scores are bit for bit those of the union of one term query per id this used to
    /// be. That union cost two term-dictionary lookups per id and segment (one for BM25
    /// statistics a constant score ignores, one for postings): over a second for the ~18k
    /// neighbours walk scores on a 100k-leaf store. `IdDocsQuery` walks the same docs with
    /// the same size hint (see `union_size_hint`), so tantivy advances the text scorer
    /// exactly as before; the ids are found in each segment's cached node-id map, and
    /// the hits map back to ids without reading documents.
    pub fn bm25_among(&self, text: &str, ids: &[NodeId]) -> Result<HashMap<NodeId, f32>> {
        let Some(text_q) = self.content_query(text).filter(|_| !ids.is_empty()) else {
            return Ok(Default::default());
        };
        let mut sorted: Vec<&str> = ids.iter().map(|i| i.as_str()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let resolved = self.resolve_ids(&sorted, ids.len())?;
        let top = self.search_among(text_q, &resolved, ids.len())?;
        let mut out = HashMap::with_capacity(top.len());
        for (score, id) in top {
            out.insert(NodeId(sorted[id].to_string()), score);
        }
        Ok(out)
    }

    /// Which of `terms` (analysed terms, as [`IndexSearcher::analyse`] gives them; at most
    /// 64) each of `ids` holds in its content: bit `i` set for `terms[i]`. Nodes holding none
    /// are absent. The ids are resolved once and each term is one term query over them, so
    /// the cost is that of [`IndexSearcher::bm25_among`] plus a posting walk per term.
    pub fn terms_among(&self, terms: &[String], ids: &[NodeId]) -> Result<HashMap<NodeId, u64>> {
        let mut out = HashMap::new();
        if ids.is_empty() || terms.is_empty() {
            return Ok(out);
        }
        let mut sorted: Vec<&str> = ids.iter().map(|i| i.as_str()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let resolved = self.resolve_ids(&sorted, ids.len())?;
        for (bit, t) in terms.iter().take(64).enumerate() {
            let q = Box::new(TermQuery::new(Term::from_field_text(self.f.content, t), IndexRecordOption::Basic));
            for (_, j) in self.search_among(q, &resolved, sorted.len())? {
                *out.entry(NodeId(sorted[j].to_string())).or_insert(0) |= 1u64 << bit;
            }
        }
        Ok(out)
    }

    /// [`IndexSearcher::bm25_among`] over the nodes of `docs` (one doc per node, as
    /// [`IndexSearcher::entity_intersection_docs`] gives them): their scores position for
    /// position, 0 for a node without any matching term; the same scores, bit for bit.
    ///
    /// When no segment has deletes, a node's doc is the only one carrying its id, so the
    /// filter is `docs` themselves and no id is read or looked up. Otherwise an older,
    /// deleted version of a node may be another doc of it (in any segment), which the
    /// union of term queries `bm25_among` reproduces would visit: the ids are looked up.
    pub fn bm25_among_docs(&self, text: &str, docs: &[NodeDoc]) -> Result<Vec<f32>> {
        let mut out = vec![0.0; docs.len()];
        let Some(text_q) = self.content_query(text).filter(|_| !docs.is_empty()) else { return Ok(out) };
        let readers = self.searcher.segment_readers();
        if readers.iter().any(|r| r.has_deletes()) {
            let ids = self.node_ids_of_docs(docs)?;
            let scores = self.bm25_among(text, &ids)?;
            for (o, id) in out.iter_mut().zip(&ids) {
                *o = scores.get(id).copied().unwrap_or(0.0);
            }
            return Ok(out);
        }
        let mut resolved: Vec<SegmentIds> =
            readers.iter().map(|r| SegmentIds { segment: r.segment_id(), docs: Vec::new(), size_hint: 0 }).collect();
        for (j, d) in docs.iter().enumerate() {
            let seg =
                resolved.get_mut(d.segment as usize).ok_or_else(|| corrupt(format!("no segment {}", d.segment)))?;
            seg.docs.push((d.doc, j as u32));
        }
        for seg in &mut resolved {
            seg.docs.sort_unstable();
            // Each id's postings are its one doc.
            let spans: Vec<(DocId, DocId, u32)> = seg.docs.iter().map(|&(d, _)| (d, d, 1)).collect();
            seg.size_hint = union_size_hint(&spans, docs.len());
        }
        for (score, j) in self.search_among(text_q, &resolved, docs.len())? {
            out[j] = score;
        }
        Ok(out)
    }

    /// The text query intersected with the resolved docs: `(score, index of the id)` of each
    /// match, at most `limit`.
    fn search_among(
        &self,
        text_q: Box<dyn Query>,
        resolved: &[SegmentIds],
        limit: usize,
    ) -> Result<Vec<(Score, usize)>> {
        let filter_q =
            IdDocsQuery { per_segment: Arc::new(resolved.iter().map(|s| (s.segment, s.docset())).collect()) };
        let q = BooleanQuery::new(vec![(Occur::Must, text_q), filter(Box::new(filter_q))]);
        let top = self.searcher.search(&q, &TopDocs::with_limit(limit))?;
        Ok(top
            .into_iter()
            .filter_map(|(score, addr)| {
                resolved.get(addr.segment_ord as usize).and_then(|s| s.id_of(addr.doc_id)).map(|j| (score, j))
            })
            .collect())
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
