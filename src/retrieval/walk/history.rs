//! Questions about the course of a history ("in what order did I bring up X, Y and Z?"):
//! their evidence is one message in each of several sessions, and the best-scored messages
//! of a thread tend to sit together in one session (a question and its follow-ups). So for
//! such a question the ranking is spread over the tree's level-1 summaries — the sessions:
//! the best leaf of each session first, in score order, then the rest in score order.
//!
//! Measured on BEAM dev (BENCHMARKS.md, "walk on long content"): `event_ordering` R@10
//! 18.1 → 24.8 with every other type unchanged; no LoCoMo question asks for an order.

use super::rank::Ranked;
use crate::text::words;
use std::collections::HashSet;

/// True when `question` asks in what order things happened or were brought up.
pub fn asks_for_order(question: &str) -> bool {
    let w: Vec<String> = words(question).collect();
    let order = w.windows(2).any(|p| {
        (matches!(p[0].as_str(), "what" | "which" | "the" | "chronological") && p[1] == "order")
            || (p[0] == "order" && matches!(p[1].as_str(), "in" | "of"))
    });
    order || w.iter().any(|x| matches!(x.as_str(), "chronologically" | "timeline" | "sequence"))
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
            "What was the sequence of steps I took?",
        ] {
            assert!(asks_for_order(q), "{q}");
        }
        for q in ["What did I order for dinner?", "When does my first sprint end?", "Summarise my project"] {
            assert!(!asks_for_order(q), "{q}");
        }
    }
}
