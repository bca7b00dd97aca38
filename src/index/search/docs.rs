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

#[cfg(test)]
mod tests {
    use crate::index::{LevelFilter, SearchFilter};
    use crate::types::{EntityId, NodeId, SourceId};
    use crate::{ChatMessage, Item, Memory, Role};

    fn chat(source: &str, i: usize, text: String) -> Item {
        Item::Chat(ChatMessage {
            source_id: source.into(),
            author: ["Alice", "Bob", "Caroline"][i % 3].into(),
            ts_ms: 1_683_504_000_000 + i as i64 * 60_000,
            text,
            source_ref: Some(format!("{source}/{i}")),
            participants: vec![],
            tags: vec![],
            role: Role::Person,
            title: None,
        })
    }

    /// The doc-space intersection and BM25 against the id-space ones they replace, on a store
    /// of several segments, first without deletes (no id lookups), then with a source deleted
    /// (its docs marked deleted: the id path).
    #[test]
    fn docs_agree_with_ids_with_and_without_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let mut mem = Memory::open(dir.path()).unwrap();
        let topics = ["the Osprey prototype", "the billing migration", "the Phoenix launch"];
        for batch in 0..4 {
            let items: Vec<Item> = (0..40)
                .map(|k| {
                    let i = batch * 40 + k;
                    let tags = if i % 4 == 0 {
                        " #osprey @dmitri"
                    } else if i % 4 == 1 {
                        " #osprey"
                    } else {
                        ""
                    };
                    let text = format!("Quick update on {}{tags} (msg {i})", topics[i % 3]);
                    chat(["slack:#eng", "slack:#ops"][i % 2], i, text)
                })
                .collect();
            mem.ingest(items).unwrap();
        }
        let pair = [EntityId::from("hashtag:osprey"), EntityId::from("handle:dmitri")];
        let leaves = SearchFilter { levels: LevelFilter::Leaves, ..SearchFilter::default() };
        let text = "billing migration";
        let check = |mem: &Memory| {
            let s = mem.as_reader().index().searcher();
            for limit in [5, 10_000] {
                let docs = s.entity_intersection_docs(&pair, &leaves, limit).unwrap();
                let mut got = s.node_ids_of_docs(&docs).unwrap();
                got.sort();
                let want = s.entity_intersection_ids(&pair, &leaves, limit).unwrap();
                assert_eq!(got, want, "limit {limit}");
                assert!(!want.is_empty());
            }
            let docs = s.entity_intersection_docs(&pair, &leaves, 10_000).unwrap();
            let ids: Vec<NodeId> = s.node_ids_of_docs(&docs).unwrap();
            let by_id = s.bm25_among(text, &ids).unwrap();
            let by_doc = s.bm25_among_docs(text, &docs).unwrap();
            for (id, got) in ids.iter().zip(&by_doc) {
                let want = by_id.get(id).copied().unwrap_or(0.0);
                assert_eq!(got.to_bits(), want.to_bits(), "{}", id.as_str());
            }
            assert!(by_doc.iter().any(|&x| x > 0.0) && by_doc.contains(&0.0), "{by_doc:?}");
        };
        check(&mem);
        mem.delete_source(&SourceId::from("slack:#ops")).unwrap();
        check(&mem);
    }
}
