//! Threading: which thread (source `mbox:<root message-id>`) each message of a mailbox joins.

use super::message::Parsed;
use std::collections::HashMap;

/// Thread roots seen so far in one mailbox, in file order.
#[derive(Default)]
pub(super) struct Threads {
    root_of: HashMap<String, String>,
}

impl Threads {
    /// The root id of `p`'s thread: the first id of `References`, else `In-Reply-To`, else the
    /// message itself, followed through the messages seen before so that a reply lands in its
    /// parent's thread. A message without any id is its own thread, keyed by its subject and
    /// line.
    pub fn root(&mut self, p: &Parsed) -> String {
        let root = p
            .references
            .first()
            .or(p.in_reply_to.as_ref())
            .map(|r| self.root_of.get(r).cloned().unwrap_or_else(|| r.clone()))
            .or_else(|| p.message_id.clone())
            .unwrap_or_else(|| format!("{}#{}", normalise_subject(&p.subject), p.start));
        if let Some(id) = &p.message_id {
            self.root_of.entry(id.clone()).or_insert_with(|| root.clone());
        }
        root
    }
}

/// `Re: Fwd: Subject` → `subject` (a thread key for messages without ids).
fn normalise_subject(s: &str) -> String {
    let mut s = s.trim();
    loop {
        let lower = s.to_ascii_lowercase();
        match ["re:", "fwd:", "fw:", "aw:"].iter().find(|p| lower.starts_with(*p)) {
            Some(p) => s = s[p.len()..].trim_start(),
            None => break,
        }
    }
    s.to_lowercase()
}
