//! Questions about the course of a history ("in what order did I bring up X, Y and Z?",
//! "summarise how my project went"), answered over the tree (SPEC §5.1): the level-1
//! summaries — the sessions — that speak of what the question names, in time order, each
//! with the leaves under it that are its evidence.
//!
//! Which sessions: the scorer ranks leaves for the question's topic (the question without
//! the words that frame it as a history question, `intent::history_topic`), weighting each leaf by
//! its session rather than by its neighbouring turns (`WalkParams::for_history`); sessions
//! are taken in the order of their best person's message (what the person brought up; any
//! leaf when the question asks what the assistant said). Their evidence: for an order
//! question that message (one moment of the history per session), for a summary question
//! the message and the assistant's reply to it (both sides of the exchange). At most
//! `limit` leaves of evidence over the whole answer: `limit` counts what a reader reads, so
//! fewer sessions come back when each brings two leaves.
//!
//! Measured on BEAM dev (BENCHMARKS.md, "History over the tree"); no LoCoMo question asks
//! for an order or a summary.

use super::rank::Ranked;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{BatchReads, NodeBrief};
use crate::types::NodeId;
use std::collections::{HashMap, HashSet};

/// One session of a history answer: its summary (`None` for a leaf still in an open
/// buffer: then it stands alone) and the leaves that are its evidence, best first.
pub struct Session {
    /// The level-1 summary, when the leaves are sealed under one.
    pub summary: Option<NodeId>,
    /// Its evidence leaves: the ranked leaf that chose the session first.
    pub evidence: Vec<Ranked>,
    /// When the session began (its first evidence leaf's start, or the summary's).
    pub start_ms: i64,
}

/// What a history question asks of each session.
#[derive(Debug, Clone, Copy)]
pub struct Ask {
    /// A summary: both sides of each exchange (the message and the reply to it).
    pub summary: bool,
    /// What the assistant said ("in what order did you suggest…"): its messages may choose a
    /// session.
    pub assistant: bool,
}

/// The sessions of a history answer, in time order (ties by summary id): sessions taken in
/// the order of their best person's message in `ranked` (best leaf, when the question asks
/// what the assistant said), each bringing its evidence (`summary`: the
/// person's message and the assistant's reply after it, when there is one), until `limit`
/// leaves are taken. A session whose evidence does not fit whole brings its first leaf.
pub fn over_sessions(mem: &MemoryReader, ranked: Vec<Ranked>, limit: usize, ask: Ask) -> Result<Vec<Session>> {
    let summary = ask.summary;
    let mut sessions: Vec<Session> = Vec::new();
    let mut taken: HashSet<NodeId> = HashSet::new();
    let mut leaves = 0;
    let mut by_id: HashMap<NodeId, Ranked> = HashMap::new();
    let mut order: Vec<NodeId> = Vec::with_capacity(ranked.len());
    for r in ranked {
        order.push(r.scored.node.node_id.clone());
        by_id.insert(r.scored.node.node_id.clone(), r);
    }
    // Sessions are chosen by a person's message ("in what order did I bring up…": what the
    // person brought up; a summary: what the exchange is about, the reply following it),
    // unless the question asks what the assistant said.
    let heads: Vec<NodeId> = order
        .iter()
        .filter(|id| ask.assistant || !by_id.get(*id).is_some_and(|r| r.scored.node.assistant))
        .cloned()
        .collect();
    let replies = if summary { replies_to(mem, &heads, &by_id)? } else { HashMap::new() };
    for id in heads {
        if leaves >= limit {
            break;
        }
        let Some(head) = by_id.get(&id) else { continue };
        let session = head.scored.node.parent_id.clone();
        if let Some(s) = &session
            && !taken.insert(s.clone())
        {
            continue;
        }
        let Some(head) = by_id.remove(&id) else { continue };
        let start_ms = head.scored.node.time_start_ms;
        let mut evidence = vec![head];
        if let Some(reply) = replies.get(&id)
            && leaves + 2 <= limit
        {
            evidence.push(reply_of(&evidence[0], reply.clone(), by_id.remove(&reply.node_id)));
        }
        leaves += evidence.len();
        sessions.push(Session { summary: session, evidence, start_ms });
    }
    sessions.sort_by(|a, b| a.start_ms.cmp(&b.start_ms).then_with(|| a.summary.cmp(&b.summary)));
    Ok(sessions)
}

/// For each person's message in `heads`, the assistant's reply to it: the next leaf under
/// the same parent (the scorer found it with the message's neighbours), when that is the
/// assistant's.
fn replies_to(
    mem: &MemoryReader,
    heads: &[NodeId],
    by_id: &HashMap<NodeId, Ranked>,
) -> Result<HashMap<NodeId, NodeBrief>> {
    let next: Vec<(&NodeId, &NodeId)> = heads
        .iter()
        .filter_map(|id| by_id.get(id))
        .filter_map(|r| r.scored.next.as_ref().map(|n| (&r.scored.node.node_id, n)))
        .collect();
    let briefs: HashMap<NodeId, NodeBrief> = mem
        .store()
        .node_briefs(&next.iter().map(|(_, r)| (*r).clone()).collect::<Vec<_>>())?
        .into_iter()
        .filter(|n| n.assistant && n.is_leaf())
        .map(|n| (n.node_id.clone(), n))
        .collect();
    Ok(next.into_iter().filter_map(|(m, r)| briefs.get(r).map(|b| (m.clone(), b.clone()))).collect())
}

/// The reply as evidence: its own scored row when the scorer saw it, else the row read for
/// it; either way it carries its message's score and `explain.from` = `reply`.
fn reply_of(message: &Ranked, node: NodeBrief, scored: Option<Ranked>) -> Ranked {
    use super::rank::Origin;
    use super::score::Scored;
    let s = scored.map(|r| r.scored).unwrap_or(Scored {
        node,
        next: None,
        score: message.score,
        lexical: 0.0,
        dense: 0.0,
        parent: 0.0,
        speaker: false,
        coverage: None,
        passage: None,
    });
    let mut r = Ranked::new(s, None, Origin::Reply);
    r.score = message.score;
    r
}
