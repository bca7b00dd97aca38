//! Questions about the course of a history ("in what order did I bring up X, Y and Z?"):
//! their evidence is one message in each of several sessions, and the best-scored messages
//! of a thread tend to sit together in one session (a question and its follow-ups). So for
//! such a question the ranking is spread over the tree's level-1 summaries — the sessions:
//! the best leaf of each session first, in score order, then the rest in score order.
//!
//! A question that asks for a summary of a thread ("summarise how my project progressed")
//! needs both sides of each exchange: every person's message among the first hits brings the
//! assistant's reply to it (the next leaf of its session) right after it.
//!
//! Measured on BEAM dev (BENCHMARKS.md, "Recall on long content"): `event_ordering` R@10
//! 18.1 → 24.8 with every other type unchanged; no LoCoMo question asks for an order or a
//! summary.

use super::rank::{Origin, Ranked};
use super::score::Scored;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::BatchReads;
use crate::text::words;
use crate::types::NodeId;
use std::collections::{HashMap, HashSet};

/// True when `question` asks for a summary or a recap.
pub fn asks_for_summary(question: &str) -> bool {
    words(question).any(|w| {
        matches!(
            w.as_str(),
            "summary" | "summarise" | "summarize" | "summarising" | "summarizing" | "recap" | "overview"
        )
    })
}

/// `ranked` with, among its first `k`, each person's message followed by the assistant's
/// reply to it (the next leaf under the same parent, when that is an assistant message). A
/// reply brought forward leaves its later place; it carries the message's score and no
/// signals of its own (`explain.from` = `reply`).
pub fn with_replies(mem: &MemoryReader, ranked: Vec<Ranked>, k: usize) -> Result<Vec<Ranked>> {
    // The next sibling of each person's message among the first k.
    let heads: Vec<&Scored> = ranked.iter().take(k).map(|r| &r.scored).filter(|s| !s.node.assistant).collect();
    let parents: Vec<NodeId> = heads.iter().filter_map(|s| s.node.parent_id.clone()).collect();
    let wanted: HashSet<&str> = heads.iter().map(|s| s.node.node_id.as_str()).collect();
    let mut next: HashMap<String, NodeId> = HashMap::new();
    mem.store().for_each_child_list(&parents, |_, children| {
        for pair in children.windows(2) {
            if wanted.contains(pair[0]) {
                next.insert(pair[0].to_string(), NodeId(pair[1].to_string()));
            }
        }
        Ok(())
    })?;
    let replies: HashMap<NodeId, _> = mem
        .store()
        .node_briefs(&next.values().cloned().collect::<Vec<_>>())?
        .into_iter()
        .filter(|n| n.assistant && n.is_leaf())
        .map(|n| (n.node_id.clone(), n))
        .collect();
    let mut out: Vec<Ranked> = Vec::with_capacity(ranked.len() + replies.len());
    let mut placed: HashSet<NodeId> = HashSet::new();
    let mut rest = Vec::new();
    for (i, r) in ranked.into_iter().enumerate() {
        if placed.contains(&r.scored.node.node_id) {
            continue;
        }
        if i >= k {
            rest.push(r);
            continue;
        }
        let reply = next.get(r.scored.node.node_id.as_str()).and_then(|id| replies.get(id));
        let score = r.score;
        placed.insert(r.scored.node.node_id.clone());
        out.push(r);
        if let Some(node) = reply
            && placed.insert(node.node_id.clone())
        {
            let s = Scored { node: node.clone(), score, lexical: 0.0, dense: 0.0, parent: 0.0, speaker: false };
            let mut reply = Ranked::new(s, None, Origin::Reply);
            reply.score = score;
            out.push(reply);
        }
    }
    out.extend(rest.into_iter().filter(|r| !placed.contains(&r.scored.node.node_id)));
    Ok(out)
}

/// True when `question` asks in what order things happened or were brought up: "in
/// what/which order", "the order in which", "chronological order", "chronologically",
/// "timeline". Narrow on purpose: "what did I order in Lisbon?" is not such a question.
pub fn asks_for_order(question: &str) -> bool {
    let w: Vec<String> = words(question).collect();
    let order = w.windows(3).any(|p| {
        (p[0] == "in" && matches!(p[1].as_str(), "what" | "which") && p[2] == "order")
            || (p[0] == "order" && p[1] == "in" && p[2] == "which")
    }) || w.windows(2).any(|p| p[0] == "chronological" && p[1] == "order");
    order || w.iter().any(|x| matches!(x.as_str(), "chronologically" | "timeline"))
}

/// `ranked` (best first) with the best leaf of each session (its parent summary; a leaf in
/// an open buffer is its own session) first, then the others, each part in its old order.
pub fn spread_over_sessions(ranked: Vec<Ranked>) -> Vec<Ranked> {
    let mut seen: HashSet<String> = HashSet::new();
    let (first, rest): (Vec<Ranked>, Vec<Ranked>) = ranked.into_iter().partition(|r| {
        let n = &r.scored.node;
        let session = n.parent_id.as_ref().unwrap_or(&n.node_id);
        seen.insert(session.as_str().to_string())
    });
    first.into_iter().chain(rest).collect()
}

#[cfg(test)]
mod tests {
    use super::asks_for_order;

    #[test]
    fn order_questions() {
        for q in [
            "Can you list the order in which I brought up different aspects of my tracker?",
            "In what order did I mention the three bugs?",
            "Give me a timeline of the launch",
            "List my trips in chronological order",
        ] {
            assert!(asks_for_order(q), "{q}");
        }
        for q in [
            "What did I order for dinner?",
            "What did I order in Lisbon?",
            "When did the order ship?",
            "What is the order of operations in this formula?",
            "What DNA sequence did I paste?",
            "When does my first sprint end?",
            "Summarise my project",
        ] {
            assert!(!asks_for_order(q), "{q}");
        }
    }
}
