//! Time-only questions ("what happened yesterday?", "catch me up on last week", "what did
//! we talk about on January 23?"): nothing to rank by relevance, so the answer is the
//! window's content by salience, read from the tree (SPEC §5.1). First the topmost
//! summaries lying inside the window, as `cover_window` finds them, one per source a round
//! (so one busy channel cannot fill the answer), a summary over a single child left out (it
//! would say its leaf's words twice); then the leaves said outside the window that speak of
//! a time inside it (the dinner of 3 May told on the 4th as "yesterday", the trip planned
//! for it: SPEC §5.1's second clock), by that time; then the in-window leaves that carry the
//! most entities and topics; then the other leaves in time order.

use super::rank::Origin;
use super::score::passes;
use crate::error::Result;
use crate::index::SearchFilter;
use crate::reader::MemoryReader;
use crate::store::{BatchReads, SpokenReads, WindowNode};
use crate::time::AdmittedBy;
use crate::types::NodeId;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

/// At most this many nodes of a window are read (the earliest): a time-only question about
/// "this year" on a large store is answered from its first this-many nodes, not from a
/// scan of the year.
const WINDOW_NODES: usize = 50_000;

/// Of the slots the summaries leave, this share goes to the most salient leaves; the rest
/// of the answer is in time order, so that a day reads as it went.
const SALIENT_SHARE: f64 = 0.5;

/// One node of the answer, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineHit {
    /// The node (a summary or a leaf).
    pub node_id: NodeId,
    /// Why it is where it is (`explain.from`).
    pub from: Origin,
    /// Its entities and topics counted.
    pub salience: u32,
    /// Which clock let it into the window.
    pub admitted_by: AdmittedBy,
}

/// The answer to a time-only question about `window`, within `flt`'s scope and sources:
/// at most `limit` nodes in answer order, and how many the window holds (summaries of its
/// cover plus its leaves).
pub fn timeline(
    mem: &MemoryReader,
    window: (i64, i64),
    flt: &SearchFilter,
    limit: usize,
) -> Result<(Vec<TimelineHit>, usize)> {
    let inside: Vec<WindowNode> = mem
        .store()
        .nodes_inside_with_salience(window.0, window.1, WINDOW_NODES)?
        .into_iter()
        .filter(|n| passes(&n.brief, flt))
        .collect();
    let ids: HashSet<&NodeId> = inside.iter().map(|n| &n.brief.node_id).collect();
    // A summary over one child says what that child says: beside the leaf it would be the
    // same thing twice (a one-message thread), so it is no answer of its own, and what it
    // seals is covered by what covers it.
    let mut children: HashMap<&NodeId, usize> = HashMap::new();
    for n in &inside {
        if let Some(p) = &n.brief.parent_id {
            *children.entry(p).or_default() += 1;
        }
    }
    let single = |id: &NodeId| children.get(id).is_some_and(|&c| c == 1);
    let parent_of: HashMap<&NodeId, &NodeId> = inside
        .iter()
        .filter_map(|n| Some((&n.brief.node_id, n.brief.parent_id.as_ref().filter(|p| ids.contains(p))?)))
        .collect();
    // The cover's summaries: inside, over more than one child, and under no inside parent
    // but single-child ones.
    let covered = |n: &WindowNode| {
        let mut at = &n.brief.node_id;
        while let Some(p) = parent_of.get(at) {
            if !single(p) {
                return true;
            }
            at = p;
        }
        false
    };
    let summaries: Vec<&WindowNode> =
        inside.iter().filter(|n| !n.brief.is_leaf() && !single(&n.brief.node_id) && !covered(n)).collect();
    let leaves: Vec<&WindowNode> = inside.iter().filter(|n| n.brief.is_leaf()).collect();
    // Said outside it, speaking of it: the store gives them by the time they speak of.
    let store = mem.store();
    let speaking = store.leaves_speaking_within(window.0, window.1, WINDOW_NODES)?;
    let speaking: Vec<WindowNode> = store
        .node_briefs(&speaking)?
        .into_iter()
        .filter(|b| !ids.contains(&b.node_id) && passes(b, flt))
        .map(|brief| WindowNode { brief, salience: 0 })
        .collect();
    let total = summaries.len() + leaves.len() + speaking.len();

    let mut out: Vec<TimelineHit> = Vec::with_capacity(limit.min(total));
    let hit = |n: &WindowNode, from: Origin| TimelineHit {
        node_id: n.brief.node_id.clone(),
        from,
        salience: n.salience,
        admitted_by: if from == Origin::WindowSpoken { AdmittedBy::SpeaksOf } else { AdmittedBy::Said },
    };
    for n in by_source_rounds(&summaries, &leaves) {
        if out.len() == limit {
            return Ok((out, total));
        }
        out.push(hit(n, Origin::WindowSummary));
    }
    for n in &speaking {
        if out.len() == limit {
            return Ok((out, total));
        }
        out.push(hit(n, Origin::WindowSpoken));
    }
    let left = limit.saturating_sub(out.len());
    let salient_slots = (left as f64 * SALIENT_SHARE).ceil() as usize;
    let mut by_salience: Vec<&WindowNode> = leaves.clone();
    by_salience.sort_by(|a, b| {
        b.salience
            .cmp(&a.salience)
            .then(a.brief.time_start_ms.cmp(&b.brief.time_start_ms))
            .then_with(|| a.brief.node_id.cmp(&b.brief.node_id))
    });
    let mut taken: HashSet<&NodeId> = HashSet::new();
    for n in by_salience.into_iter().filter(|n| n.salience > 0).take(salient_slots) {
        taken.insert(&n.brief.node_id);
        out.push(hit(n, Origin::WindowSalient));
    }
    // `inside` is in time order already.
    for n in leaves.iter().filter(|n| !taken.contains(&n.brief.node_id)) {
        if out.len() == limit {
            break;
        }
        out.push(hit(n, Origin::WindowTime));
    }
    Ok((out, total))
}

/// The cover's summaries, one per source a round. Sources take turns busiest first (most
/// in-window leaves, then by name); within a source, the highest and most salient summary
/// first, then by time.
fn by_source_rounds<'a>(summaries: &[&'a WindowNode], leaves: &[&WindowNode]) -> Vec<&'a WindowNode> {
    let mut busy: HashMap<&str, usize> = HashMap::new();
    for l in leaves {
        *busy.entry(l.brief.tree_id.scope()).or_default() += 1;
    }
    let mut per_source: BTreeMap<&str, Vec<&'a WindowNode>> = BTreeMap::new();
    for s in summaries {
        per_source.entry(s.brief.tree_id.scope()).or_default().push(s);
    }
    let mut queues: Vec<(&str, VecDeque<&'a WindowNode>)> = per_source
        .into_iter()
        .map(|(src, mut v)| {
            v.sort_by(|a, b| {
                b.brief
                    .level
                    .cmp(&a.brief.level)
                    .then(b.salience.cmp(&a.salience))
                    .then(a.brief.time_start_ms.cmp(&b.brief.time_start_ms))
                    .then_with(|| a.brief.node_id.cmp(&b.brief.node_id))
            });
            (src, v.into())
        })
        .collect();
    queues.sort_by(|a, b| {
        let (ba, bb) = (busy.get(a.0).copied().unwrap_or(0), busy.get(b.0).copied().unwrap_or(0));
        bb.cmp(&ba).then(a.0.cmp(b.0))
    });
    let mut out = Vec::with_capacity(summaries.len());
    while out.len() < summaries.len() {
        for (_, q) in &mut queues {
            if let Some(n) = q.pop_front() {
                out.push(n);
            }
        }
    }
    out
}
