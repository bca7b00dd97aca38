//! How each branch orders the scorer's leaves: the fused order (the default), or SPEC §5's
//! baseline orderings by query-entity coverage (the `spec_baseline` preset); and the tag each
//! hit carries in `explain.from`.

use super::params::Ordering;
use super::score::Scored;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::BatchReads;
use crate::types::{EntityId, NodeId};
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};

/// The occurrence-ranked global branch takes the scorer's top `OCCURRENCE_POOL × k`
/// (SPEC §5: "the dense top `2k`").
const OCCURRENCE_POOL: usize = 2;

/// Which branch answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Branch {
    /// No query entity.
    Global,
    /// Entities, but no related pair.
    OccurrenceGlobal,
    /// Related pairs: intersection of posting lists.
    Local,
}

/// Where a hit came from, as `explain.from` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The global ranking (every branch's leaves outside an intersection).
    Global,
    /// The occurrence-ranked global branch's pool.
    OccurrenceGlobal,
    /// The local branch's intersection of entity posting lists.
    Local,
    /// After the intersection hits, under SPEC §5's coverage-first local ordering: the
    /// global ranking filling the rest.
    GlobalFill,
    /// The assistant's reply to a person's message ranked above it, brought in for a
    /// question that asks for a summary (`history.rs`).
    Reply,
    /// A time-only question's answer (`timeline.rs`): a topmost summary inside the window.
    WindowSummary,
    /// A time-only question's answer: a leaf said outside the window that speaks of a time
    /// inside it (SPEC §5.1's second clock).
    WindowSpoken,
    /// A time-only question's answer: an in-window leaf carrying many entities and topics.
    WindowSalient,
    /// A time-only question's answer: the window's other leaves, in time order.
    WindowTime,
}

/// A leaf in its branch's order.
pub struct Ranked {
    pub scored: Scored,
    /// Query entities it mentions, when the order needed them (else read for the hits
    /// returned only).
    pub coverage: Option<usize>,
    pub from: Origin,
    /// The hit's `score`: the fused relevance, or coverage + relevance for a local hit
    /// ranked coverage-first.
    pub score: f64,
}

impl Ranked {
    pub(super) fn new(scored: Scored, coverage: Option<usize>, from: Origin) -> Self {
        let score = scored.score;
        Ranked { scored, coverage, from, score }
    }
}

/// The number of query entities a leaf mentions.
pub struct Coverage<'a> {
    mem: &'a MemoryReader,
    query_entities: BTreeSet<&'a EntityId>,
}

impl<'a> Coverage<'a> {
    pub fn new(mem: &'a MemoryReader, query_entities: &'a [EntityId]) -> Self {
        Coverage { mem, query_entities: query_entities.iter().collect() }
    }

    /// How many query entities `entities` (a leaf's) holds.
    pub fn count(&self, entities: &[EntityId]) -> usize {
        entities.iter().filter(|e| self.query_entities.contains(e)).count()
    }

    /// How many query entities each of `scored` mentions: one batch read (none without any
    /// query entity: then every count is 0).
    fn of_all<'s>(&self, scored: impl Iterator<Item = &'s Scored>) -> Result<Vec<usize>> {
        let ids: Vec<NodeId> = scored.map(|s| s.node.node_id.clone()).collect();
        if self.query_entities.is_empty() {
            return Ok(vec![0; ids.len()]);
        }
        let entities = self.mem.store().entities_of_nodes(&ids)?;
        Ok(ids.iter().map(|id| entities.get(id).map_or(0, |e| self.count(e))).collect())
    }
}

/// `scored` (best first) in `branch`'s order, `k` hits asked; `local` is the local branch's
/// intersection. Coverage is read for every candidate only when it moves the order.
pub fn rank(
    branch: Branch,
    scored: Vec<Scored>,
    local: &[NodeId],
    k: usize,
    ordering: Ordering,
    coverage: &Coverage<'_>,
) -> Result<Vec<Ranked>> {
    let spec = ordering == Ordering::SpecBaseline;
    match branch {
        Branch::Global => Ok(scored.into_iter().map(|s| Ranked::new(s, Some(0), Origin::Global)).collect()),
        Branch::OccurrenceGlobal => occurrence_pool(scored, k, spec, coverage),
        Branch::Local if spec => local_coverage_first(scored, local, coverage),
        Branch::Local => {
            // Intersection hits earn no bonus: no score moves, and everything competes in
            // `scored`'s order (score, then id).
            let local: HashSet<&NodeId> = local.iter().collect();
            Ok(scored
                .into_iter()
                .map(|s| {
                    if local.contains(&s.node.node_id) {
                        Ranked::new(s, None, Origin::Local)
                    } else {
                        Ranked::new(s, Some(0), Origin::Global)
                    }
                })
                .collect())
        }
    }
}

/// The scorer's top `2k`, stably reordered by query-entity coverage under SPEC §5's
/// ordering (`reorder`), else kept in the fused order.
fn occurrence_pool(scored: Vec<Scored>, k: usize, reorder: bool, coverage: &Coverage<'_>) -> Result<Vec<Ranked>> {
    let pool: Vec<Scored> = scored.into_iter().take(OCCURRENCE_POOL * k).collect();
    let counts =
        if reorder { coverage.of_all(pool.iter())?.into_iter().map(Some).collect() } else { vec![None; pool.len()] };
    let mut top: Vec<Ranked> =
        pool.into_iter().zip(counts).map(|(s, c)| Ranked::new(s, c, Origin::OccurrenceGlobal)).collect();
    if reorder {
        top.sort_by_key(|r| std::cmp::Reverse(r.coverage));
    }
    Ok(top)
}

/// SPEC §5's local ordering: intersection hits by coverage, then relevance, then recency,
/// then id, scored coverage + relevance; the global ranking fills the rest.
fn local_coverage_first(scored: Vec<Scored>, local: &[NodeId], coverage: &Coverage<'_>) -> Result<Vec<Ranked>> {
    let local: HashSet<&NodeId> = local.iter().collect();
    let (inside, outside): (Vec<Scored>, Vec<Scored>) =
        scored.into_iter().partition(|s| local.contains(&s.node.node_id));
    let mut ranked = Vec::with_capacity(inside.len() + outside.len());
    let counts = coverage.of_all(inside.iter())?;
    for (s, c) in inside.into_iter().zip(counts) {
        let mut r = Ranked::new(s, Some(c), Origin::Local);
        r.score = c as f64 + r.scored.score;
        ranked.push(r);
    }
    ranked.sort_by(|a, b| {
        let (sa, sb) = (&a.scored, &b.scored);
        b.coverage
            .cmp(&a.coverage)
            .then(sb.score.total_cmp(&sa.score))
            .then(sb.node.time_end_ms.cmp(&sa.node.time_end_ms))
            .then(sa.node.node_id.cmp(&sb.node.node_id))
    });
    // Fewer local hits than asked: the global ranking fills the rest.
    ranked.extend(outside.into_iter().map(|s| Ranked::new(s, Some(0), Origin::GlobalFill)));
    Ok(ranked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tags_serialise_to_the_explain_strings() {
        let tags = [
            Origin::Global,
            Origin::OccurrenceGlobal,
            Origin::Local,
            Origin::GlobalFill,
            Origin::Reply,
            Origin::WindowSummary,
            Origin::WindowSpoken,
            Origin::WindowSalient,
            Origin::WindowTime,
        ];
        let got: Vec<_> = tags.iter().map(|t| serde_json::to_value(t).unwrap()).collect();
        let want = [
            json!("global"),
            json!("occurrence_global"),
            json!("local"),
            json!("global_fill"),
            json!("reply"),
            json!("window_summary"),
            json!("window_spoken"),
            json!("window_salient"),
            json!("window_time"),
        ];
        assert_eq!(got, want);
        let branches = [Branch::Global, Branch::OccurrenceGlobal, Branch::Local];
        let got: Vec<_> = branches.iter().map(|b| serde_json::to_value(b).unwrap()).collect();
        assert_eq!(got, [json!("global"), json!("occurrence_global"), json!("local")]);
    }
}
