//! Hits kept as docs of one searcher ([`NodeDoc`]) instead of node ids: walk's local branch
//! unions thousands of posting-list intersection hits and cuts them by BM25, and only the
//! few it keeps need their id as a string.
//!
//! Why: on the 100k-leaf synthetic store, turning every intersection hit into an owned id
//! string, then sorting, cloning, hashing and comparing those strings in the router's unions
//! and cut, was most of a walk's time (the index queries themselves were a fraction of it).

use super::{IndexSearcher, SearchFilter};
use crate::error::Result;
use crate::index::node_ids::corrupt;
use crate::types::{EntityId, NodeId};
use tantivy::collector::{Collector, SegmentCollector, TopDocs};
use tantivy::query::{BooleanQuery, Occur};
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

/// A node's doc in the searcher that found it (segment ordinal, doc): meaningful with that
/// searcher only. Ordered by segment, then doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeDoc {
    pub(super) segment: SegmentOrdinal,
    pub(super) doc: DocId,
}

impl From<DocAddress> for NodeDoc {
    fn from(a: DocAddress) -> Self {
        NodeDoc { segment: a.segment_ord, doc: a.doc_id }
    }
}

impl IndexSearcher {
    /// [`IndexSearcher::entity_intersection_ids`] as docs, in doc order: the same nodes (when
    /// more than `limit` match, the same best `limit` by score), without reading their ids.
    pub fn entity_intersection_docs(&self, all: &[EntityId], flt: &SearchFilter, limit: usize) -> Result<Vec<NodeDoc>> {
        if all.is_empty() {
            return Ok(Vec::new());
        }
        let Some(mut clauses) = self.filter_clauses(flt) else { return Ok(Vec::new()) };
        clauses.push((Occur::Must, self.entities_query(all)));
        let q = BooleanQuery::new(clauses);
        // Collecting without scores is cheaper; only a set larger than `limit` needs them.
        let mut docs = self.searcher.search(&q, &AllDocs)?;
        if docs.len() > limit {
            let top = self.searcher.search(&q, &TopDocs::with_limit(limit.max(1)))?;
            docs = top.into_iter().map(|(_, a)| NodeDoc::from(a)).collect();
        }
        docs.sort_unstable();
        Ok(docs)
    }

    /// The id of a node's doc, borrowed from the segment's node-id map.
    pub fn node_id_of_doc(&self, d: NodeDoc) -> Result<&str> {
        self.segment_node_ids(d.segment as usize)?
            .id_of(d.doc)
            .ok_or_else(|| corrupt(format!("doc {} of segment {} has no node id", d.doc, d.segment)))
    }

    /// The ids of `docs`, position for position.
    pub fn node_ids_of_docs(&self, docs: &[NodeDoc]) -> Result<Vec<NodeId>> {
        docs.iter().map(|d| Ok(NodeId(self.node_id_of_doc(*d)?.to_string()))).collect()
    }
}

/// Every matching live doc, unscored.
struct AllDocs;

impl Collector for AllDocs {
    type Fruit = Vec<NodeDoc>;
    type Child = SegmentDocs;

    fn for_segment(&self, segment: SegmentOrdinal, _: &SegmentReader) -> tantivy::Result<SegmentDocs> {
        Ok(SegmentDocs { segment, docs: Vec::new() })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<(SegmentOrdinal, Vec<DocId>)>) -> tantivy::Result<Vec<NodeDoc>> {
        Ok(fruits
            .into_iter()
            .flat_map(|(segment, docs)| docs.into_iter().map(move |doc| NodeDoc { segment, doc }))
            .collect())
    }
}

struct SegmentDocs {
    segment: SegmentOrdinal,
    docs: Vec<DocId>,
}

impl SegmentCollector for SegmentDocs {
    type Fruit = (SegmentOrdinal, Vec<DocId>);

    fn collect(&mut self, doc: DocId, _: Score) {
        self.docs.push(doc);
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        self.docs.extend_from_slice(docs);
    }

    fn harvest(self) -> Self::Fruit {
        (self.segment, self.docs)
    }
}
