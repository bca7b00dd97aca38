//! Questions about the course of a history ("in what order did I bring up X, Y and Z?",
//! "summarise how my project went"), answered over the tree (SPEC §5.1): the level-1
//! summaries — the sessions — that speak of what the question names, in time order, each
//! with the leaves under it that are its evidence.
//!
//! Which sessions: the scorer ranks leaves for the question's topic (the question without
//! the words that frame it as a history question, [`history_topic`]), weighting each leaf by
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
use crate::text::words;
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

/// True when `question` asks for a summary or a recap.
pub fn asks_for_summary(question: &str) -> bool {
    // Only the words that ask for one. "How have my goals evolved from … to …?" reads as a
    // history too, but on BEAM dev taking such questions in cost a multi-session question
    // (R@10 62.2 → 60.2) and an information question ("how did you recommend … steady
    // progress"): measured and left out (BENCHMARKS.md, "History over the tree").
    words(question).any(|w| {
        matches!(
            w.as_str(),
            "summary" | "summarise" | "summarize" | "summarising" | "summarizing" | "recap" | "overview"
        )
    })
}

/// Words that only frame a question about a history: how it asks for the order or the
/// overview ("list the order in which I brought up different aspects of … throughout our
/// conversations", "give me a comprehensive summary of how … progressed over time"), not
/// what the history is of. Left in, they match every message that says "order", "list" or
/// "aspects", and they pull the question's vector towards lists and overviews in general.
const HISTORY_FRAMING: &[&str] = &[
    "list",
    "order",
    "ordered",
    "orders",
    "chronological",
    "chronologically",
    "timeline",
    "brought",
    "bring",
    "bringing",
    "mention",
    "mentioned",
    "mentioning",
    "different",
    "various",
    "aspects",
    "aspect",
    "items",
    "item",
    "only",
    "throughout",
    "across",
    "conversations",
    "conversation",
    "discussions",
    "discussion",
    "chats",
    "talks",
    "walk",
    "through",
    "summary",
    "summarise",
    "summarize",
    "summarising",
    "summarizing",
    "recap",
    "overview",
    "comprehensive",
    "complete",
    "clear",
    "brief",
    "give",
    "provide",
    "tell",
    "can",
    "could",
    "you",
    "over",
    "time",
    "progressed",
    "progress",
    "developed",
    "evolved",
    "changed",
    "including",
    "key",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "first",
    "then",
    "later",
    "past",
    "few",
    "months",
    "weeks",
    "our",
    "we've",
    "i've",
    "what",
    "how",
    "which",
    "in",
    "the",
    "of",
    "and",
    "me",
    "a",
    "an",
    "to",
    "have",
    "has",
    "had",
    "did",
    "do",
    "i",
    "my",
    "us",
    "up",
];

/// What a history question is about: `question` without the words that frame it as one
/// ([`HISTORY_FRAMING`]), in its own order; `None` when nothing would remain.
pub fn history_topic(question: &str) -> Option<String> {
    let kept: Vec<String> = words(question).filter(|w| !HISTORY_FRAMING.contains(&w.as_str())).collect();
    (!kept.is_empty()).then(|| kept.join(" "))
}

/// True when `question` asks in what order things happened or were brought up: "in
/// what/which order", "the order in which", "chronological order", "chronologically",
/// "timeline". Narrow on purpose: "what did I order in Lisbon?" is not such a question.
pub fn asks_for_order(question: &str) -> bool {
    let w: Vec<String> = words(question).collect();
    let order = w.windows(3).any(|p| {
        (p[0] == "in" && matches!(p[1].as_str(), "what" | "which") && p[2] == "order")
            || (p[0] == "order" && p[1] == "in" && p[2] == "which")
    }) || w.windows(2).any(|p| p[0] == "chronological" && p[1] == "order")
        // "list in order how I brought up …", "walk me through, in order, …": "in order"
        // with a verb of listing, and not "in order to/for/that" (a purpose).
        || (w.iter().any(|x| matches!(x.as_str(), "list" | "walk" | "sequence" | "rank"))
            && w.iter().enumerate().any(|(i, x)| {
                x == "in"
                    && w.get(i + 1).is_some_and(|n| n == "order")
                    && !w.get(i + 2).is_some_and(|n| matches!(n.as_str(), "to" | "for" | "that"))
            }));
    order || w.iter().any(|x| matches!(x.as_str(), "chronologically" | "timeline"))
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
/// the same parent, when that is the assistant's.
fn replies_to(
    mem: &MemoryReader,
    heads: &[NodeId],
    by_id: &HashMap<NodeId, Ranked>,
) -> Result<HashMap<NodeId, NodeBrief>> {
    let parents: Vec<NodeId> =
        heads.iter().filter_map(|id| by_id.get(id)).filter_map(|r| r.scored.node.parent_id.clone()).collect();
    let wanted: HashSet<&str> = heads.iter().map(|id| id.as_str()).collect();
    let mut next: HashMap<NodeId, NodeId> = HashMap::new();
    mem.store().for_each_child_list(&parents, |_, children| {
        for pair in children.windows(2) {
            if wanted.contains(pair[0]) {
                next.insert(NodeId(pair[0].to_string()), NodeId(pair[1].to_string()));
            }
        }
        Ok(())
    })?;
    let briefs: HashMap<NodeId, NodeBrief> = mem
        .store()
        .node_briefs(&next.values().cloned().collect::<Vec<_>>())?
        .into_iter()
        .filter(|n| n.assistant && n.is_leaf())
        .map(|n| (n.node_id.clone(), n))
        .collect();
    Ok(next.into_iter().filter_map(|(m, r)| briefs.get(&r).map(|b| (m, b.clone()))).collect())
}

/// The reply as evidence: its own scored row when the scorer saw it, else the row read for
/// it; either way it carries its message's score and `explain.from` = `reply`.
fn reply_of(message: &Ranked, node: NodeBrief, scored: Option<Ranked>) -> Ranked {
    use super::rank::Origin;
    use super::score::Scored;
    let s = scored.map(|r| r.scored).unwrap_or(Scored {
        node,
        score: message.score,
        lexical: 0.0,
        dense: 0.0,
        parent: 0.0,
        speaker: false,
    });
    let mut r = Ranked::new(s, None, Origin::Reply);
    r.score = message.score;
    r
}

#[cfg(test)]
mod tests {
    use super::{asks_for_order, asks_for_summary, history_topic};

    #[test]
    fn summary_questions() {
        for q in ["Can you give me a comprehensive summary of how my budget tracker progressed?", "Recap the launch"] {
            assert!(asks_for_summary(q), "{q}");
        }
        for q in [
            "How often does Melanie go to the beach?",
            "What did Jon say about Gina's progress with her store?",
            "How did you recommend structuring my writing?",
            "How much progress have we made on the edits?",
            "How did you recommend structuring my writing process to keep steady progress?",
        ] {
            assert!(!asks_for_summary(q), "{q}");
        }
    }

    #[test]
    fn the_topic_of_a_history_question() {
        let t = |q: &str| history_topic(q).unwrap_or_default();
        assert_eq!(
            t(
                "Can you list the order in which I brought up different aspects of developing my personal budget tracker throughout our conversations, in order? Mention ONLY and ONLY three items."
            ),
            "developing personal budget tracker"
        );
        assert_eq!(
            t("Can you give me a comprehensive summary of how my weather app project has progressed?"),
            "weather app project"
        );
        assert_eq!(history_topic("in what order?"), None);
    }

    #[test]
    fn order_questions() {
        for q in [
            "Can you list the order in which I brought up different aspects of my tracker?",
            "In what order did I mention the three bugs?",
            "Give me a timeline of the launch",
            "List my trips in chronological order",
            "Can you list in order how I brought up different aspects of my research?",
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
            "List what I did in order to fix the build",
            "Is my kitchen in order?",
        ] {
            assert!(!asks_for_order(q), "{q}");
        }
    }
}
