//! The answer with its question (issue 44, item 4): a hit that asks — a person's turn the
//! host's assistant answered next, or a message or mail whose own words ask something —
//! carries the reply that answers it, the first later turn of its session by someone else,
//! as `RetrievalHit::answer`.
//!
//! A question and its answer share the question's words only on the asking side: the words
//! find "which base image should I use?" and not the assistant's reply that names the
//! image, so the reply is given with the hit the words found. A reply that is itself a hit
//! further down is given once, with its question; one ranked above its question is not given
//! again.

use super::siblings::{Leaf, among_siblings};
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::{BatchReads, NodeBrief, NodeReads, NodeRow};
use crate::types::NodeId;
use std::collections::HashMap;

/// Turns after a question looked at for its reply: the asker's own next turns (a message
/// split in parts, a follow-up) come first in a chat, and past a few the conversation has
/// moved on.
const REPLY_REACH: usize = 4;

/// A question hit and the reply that answers it.
pub struct Answered {
    /// The question's position among the hits.
    pub at: usize,
    /// The reply.
    pub reply: NodeId,
}

/// True when `text` asks something: a question mark that ends a sentence or clause (not one
/// inside a link's query string, `?id=3`).
pub fn asks(text: &str) -> bool {
    let mut chars = text.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        let ends =
            chars.peek().is_none_or(|n| n.is_whitespace() || matches!(n, '"' | '\'' | ')' | '”' | '’' | '?' | '!'));
        // A word or a closing quote before it: `a ? b : c` and SQL's `= ? AND` ask nothing.
        let after_word = prev.is_some_and(|p| p.is_alphanumeric() || matches!(p, '"' | '\'' | '”' | '’'));
        if (c == '?' || c == '？') && ends && after_word {
            return true;
        }
        prev = Some(c);
    }
    false
}

/// For the hits `rows` (in rank order; leaves only answer), the replies to those that ask;
/// `asks_in_own_words[i]` says whether row `i`'s own words ask ([`asks`] over a mail
/// without what it quotes). Reads the parents' child lists in one statement, each open
/// buffer's once, the next leaves of a leaf sealed alone one statement each, and the briefs
/// of the turns after every question in one batch.
pub fn answered<'a>(mem: &MemoryReader, rows: &[&'a NodeRow], asks_in_own_words: &[bool]) -> Result<Vec<Answered>> {
    // The turns after each hit among its siblings: under its parent summary, or in its tree's
    // open buffer while not sealed (a thread of a few mails stays there).
    let leaves: Vec<&'a NodeRow> = rows.iter().copied().filter(|n| n.is_leaf()).collect();
    let asked: Vec<Leaf<'_>> =
        leaves.iter().map(|n| Leaf { id: &n.node_id, parent: n.parent_id.as_ref(), tree: &n.tree_id }).collect();
    let mut after: HashMap<&NodeId, Vec<NodeId>> = HashMap::new();
    // The leaves sealed alone in their summary (a long mail): their reply lies past it.
    let mut alone: Vec<&'a NodeRow> = Vec::new();
    among_siblings(mem, &asked, |i, siblings, at, _| {
        let next = siblings.iter().skip(at + 1).take(REPLY_REACH).map(|c| NodeId(c.to_string()));
        after.insert(&leaves[i].node_id, next.collect());
        if siblings.len() == 1 {
            alone.push(leaves[i]);
        }
    })?;
    // A leaf sealed alone in its summary (a long mail is) is followed by its tree's next
    // leaves; the last turn of a session of several is not answered by the next session's.
    for n in alone {
        after.insert(&n.node_id, mem.store().leaves_after(&n.tree_id, n.seq, REPLY_REACH)?);
    }
    let wanted: Vec<NodeId> = after.values().flatten().cloned().collect();
    let briefs: HashMap<NodeId, NodeBrief> =
        mem.store().node_briefs(&wanted)?.into_iter().map(|b| (b.node_id.clone(), b)).collect();
    let mut out = Vec::new();
    for (at, n) in rows.iter().enumerate() {
        let Some(asker) = n.author.as_deref() else { continue };
        if n.flags & NodeRow::FLAG_ASSISTANT != 0 {
            continue;
        }
        let Some(next) = after.get(&n.node_id) else { continue };
        let reply = next.iter().filter_map(|id| briefs.get(id)).find(|b| b.author.as_deref() != Some(asker));
        let Some(reply) = reply else { continue };
        if reply.assistant || asks_in_own_words.get(at).copied().unwrap_or(false) {
            out.push(Answered { at, reply: reply.node_id.clone() });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::asks;

    #[test]
    fn a_question_mark_that_ends_a_clause_asks() {
        assert!(asks("Which base image should I use?"));
        assert!(asks("Is it ok? I think so."));
        assert!(asks("did you mean \"foo?\""));
        assert!(!asks("See https://example.com/a?id=3 for the fix."));
        assert!(!asks("No question here."));
        assert!(!asks("let x = a ? b : c;"));
        assert!(!asks("SELECT * FROM t WHERE id = ? AND k = ?"));
        assert!(asks("これは何ですか？"));
    }
}
