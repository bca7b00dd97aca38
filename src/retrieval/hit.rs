//! The shapes every read mode returns (`RetrievalHit`, `QueryResponse`, `EntityMatch`) and
//! the scope gate.

use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{BatchReads, NodeRow, SpokenReads, TreeRow};
use crate::time::{AdmittedBy, SpokenTime};
use crate::types::{EntityId, NodeId, NodeKind, SourceKind, TreeId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The scope gate (SPEC §1): an allow-list of `tree_scope` values. `None` lets everything
/// through; an empty set lets nothing through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope(pub Option<BTreeSet<String>>);

impl Scope {
    /// No restriction.
    pub fn all() -> Scope {
        Scope(None)
    }

    /// Only these scopes.
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(scopes: I) -> Scope {
        Scope(Some(scopes.into_iter().map(Into::into).collect()))
    }

    /// True when nodes of `tree_scope` may be shown.
    pub fn allows(&self, tree_scope: &str) -> bool {
        self.0.as_ref().is_none_or(|s| s.contains(tree_scope))
    }
}

/// One node returned by a read mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrievalHit {
    /// What its source holds (the snippet reads a mail by its own words); not in the tool's
    /// response.
    #[serde(skip)]
    pub(crate) source_kind: Option<SourceKind>,
    /// The passage (its number, 1 or more) whose vector gave a long leaf its dense score
    /// (walk): the snippet when the question's words choose none. Not in the tool's response
    /// (`explain.signals.passage` says it).
    #[serde(skip)]
    pub(crate) dense_passage: Option<u16>,
    /// The node's id: `L…` for a leaf, `S…` for a summary (what `fetch_leaves` and
    /// `drill_down` take).
    pub node_id: String,
    /// `leaf` or `summary`.
    pub node_kind: NodeKind,
    /// The tree it belongs to (`source:<source_id>`).
    pub tree_id: String,
    /// `source` (the only kind of tree built; `topic` and `global` are reserved).
    pub tree_kind: String,
    /// The source the tree covers: what the scope gate allows or hides.
    pub tree_scope: String,
    /// 0 for leaves.
    pub level: u32,
    /// The full text: a leaf's content, or a summary's text.
    pub content: String,
    /// Canonical entity ids.
    pub entities: Vec<String>,
    /// Topic words (summaries; empty on leaves).
    pub topics: Vec<String>,
    /// RFC 3339 UTC.
    pub time_range_start: String,
    /// RFC 3339 UTC.
    pub time_range_end: String,
    /// Relevance, higher is better; its meaning is documented per mode.
    pub score: f64,
    /// Empty on leaves.
    pub child_ids: Vec<String>,
    /// Back-pointer (leaves).
    pub source_ref: Option<String>,
    /// The times a leaf's text speaks of (SPEC §5.1's second clock), each `[since, until]`
    /// RFC 3339 UTC, resolved against when it was said ("next Saturday" said on 1 May 2023:
    /// 6 May). Empty otherwise, and then not serialised.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub speaks_of: Vec<[String; 2]>,
    /// The passage of `content` that best matches the query, with its character offsets:
    /// on leaves longer than one passage, in the modes that take a query (walk, and
    /// drill_down / query_source when given one). Absent otherwise, and then not serialised.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub snippet: Option<Snippet>,
    /// Which branch and signals produced the hit (walk, reranked modes).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub explain: Option<serde_json::Value>,
    /// The leaves a summary hit stands for, as hits of their own (walk's answer to a
    /// question about a history: a session and its evidence). Empty otherwise, and then not
    /// serialised.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub evidence: Vec<RetrievalHit>,
    /// The reply that answers a hit that asks (walk: a person's turn the host's assistant
    /// answered next, or a message or mail whose own words ask): the first later turn of its
    /// thread by someone else. A long reply's `content` is its passage that best matches the
    /// question, and its `explain.passage_of_content` the character range of that passage in
    /// the whole (`null` when whole). Absent otherwise, and then not serialised.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub answer: Option<Box<RetrievalHit>>,
}

/// A ranked, possibly truncated list of hits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct QueryResponse {
    /// The hits, best first (or in the mode's documented order).
    pub hits: Vec<RetrievalHit>,
    /// Matches before truncation (after the scope gate).
    pub total: usize,
    /// `total > hits.len()`.
    pub truncated: bool,
    /// What the mode says about the response as a whole: walk gives the time window it was
    /// bounded by, whether the question was about that time only, and notes (a date that is
    /// not one, a reversed range, a window after now, nothing inside the window).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub explain: Option<serde_json::Value>,
}

impl QueryResponse {
    /// Build from hits already truncated and the total before truncation.
    pub fn new(hits: Vec<RetrievalHit>, total: usize) -> Self {
        let truncated = total > hits.len();
        QueryResponse { hits, total, truncated, explain: None }
    }
}

/// One entity returned by `search_entities`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntityMatch {
    /// `<kind>:<normalised surface>`, e.g. `person:alice`.
    pub canonical_id: String,
    /// The entity kind (`person`, `email`, …).
    pub kind: String,
    /// The surface first seen.
    pub surface: String,
    /// Leaves mentioning it (within the scope gate).
    pub mention_count: u64,
    /// Newest mention, epoch ms.
    pub last_seen_ms: i64,
}

pub use crate::time::rfc3339;

/// Read back a hit's RFC 3339 time ([`rfc3339`]'s inverse), epoch ms; 0 for a time that
/// does not parse.
// Only the harness reads hit times back.
#[cfg(any(test, feature = "harness"))]
pub fn parse_rfc3339(s: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(s).map_or(0, |t| t.timestamp_millis())
}

/// What turning stored nodes into hits reads besides their rows (entities, topics, trees),
/// read for all of them at once: three statements for a page of hits instead of three per
/// hit. Walk also counts each hit's query entities from it (`rank::Coverage`).
pub(crate) struct HitParts {
    entities: HashMap<NodeId, Vec<EntityId>>,
    topics: HashMap<NodeId, Vec<String>>,
    spoken: HashMap<NodeId, Vec<SpokenTime>>,
    trees: HashMap<TreeId, TreeRow>,
}

impl HitParts {
    /// The parts of `nodes`' hits.
    pub(crate) fn read<'a>(mem: &MemoryReader, nodes: impl IntoIterator<Item = &'a NodeRow>) -> Result<HitParts> {
        let mut ids = Vec::new();
        let mut trees = BTreeSet::new();
        for n in nodes {
            ids.push(n.node_id.clone());
            trees.insert(n.tree_id.clone());
        }
        let store = mem.store();
        Ok(HitParts {
            entities: store.entities_of_nodes(&ids)?,
            topics: store.topics_of_nodes(&ids)?,
            spoken: store.spoken_times(&ids)?,
            trees: store
                .trees_by_id(&trees.into_iter().collect::<Vec<_>>())?
                .into_iter()
                .map(|t| (t.tree_id.clone(), t))
                .collect(),
        })
    }

    /// The entities on `id`, sorted (empty for a node [`Self::read`] was not given).
    pub(crate) fn entities(&self, id: &NodeId) -> &[EntityId] {
        self.entities.get(id).map_or(&[], Vec::as_slice)
    }

    /// The times `id` speaks of (empty for a node [`Self::read`] was not given).
    pub(crate) fn spoken(&self, id: &NodeId) -> &[SpokenTime] {
        self.spoken.get(id).map_or(&[], Vec::as_slice)
    }

    /// `n` as a hit with `score`.
    pub(crate) fn hit(&self, n: &NodeRow, score: f64) -> RetrievalHit {
        let tree = self.trees.get(&n.tree_id);
        let (tree_kind, tree_scope) = tree.map(|t| (t.tree_kind.clone(), t.tree_scope.clone())).unwrap_or_default();
        RetrievalHit {
            source_kind: tree.map(|t| t.source_kind),
            dense_passage: None,
            node_id: n.node_id.0.clone(),
            node_kind: NodeKind::of_level(n.level),
            tree_id: n.tree_id.0.clone(),
            tree_kind,
            tree_scope,
            level: n.level,
            content: n.content.clone(),
            entities: self.entities(&n.node_id).iter().map(|e| e.0.clone()).collect(),
            topics: self.topics.get(&n.node_id).cloned().unwrap_or_default(),
            time_range_start: rfc3339(n.time_start_ms),
            time_range_end: rfc3339(n.time_end_ms),
            score,
            child_ids: n.child_ids.iter().map(|c| c.0.clone()).collect(),
            source_ref: n.source_ref.clone(),
            speaks_of: self.spoken(&n.node_id).iter().map(|t| [rfc3339(t.since_ms), rfc3339(t.until_ms)]).collect(),
            snippet: None,
            explain: None,
            evidence: Vec::new(),
            answer: None,
        }
    }
}

/// Stored nodes as hits, each with its score, in the order given.
pub(crate) fn to_hits<'a>(
    mem: &MemoryReader,
    nodes: impl IntoIterator<Item = (&'a NodeRow, f64)> + Clone,
) -> Result<Vec<RetrievalHit>> {
    let parts = HitParts::read(mem, nodes.clone().into_iter().map(|(n, _)| n))?;
    Ok(nodes.into_iter().map(|(n, s)| parts.hit(n, s)).collect())
}

/// Say in each hit's `explain` which clock let it into the window (SPEC §5.1): `speaks_of`
/// for the ids in `spoken` (leaves said outside it that speak of a time inside it), `said`
/// for the others. What `cover_window` and a windowed `query_source` attach.
pub(crate) fn mark_admitted(hits: &mut [RetrievalHit], spoken: &HashSet<&str>) {
    for h in hits {
        let by = if spoken.contains(h.node_id.as_str()) { AdmittedBy::SpeaksOf } else { AdmittedBy::Said };
        h.explain = Some(serde_json::json!({ "admitted_by": by }));
    }
}

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
