//! What a write holds back: the leaves a forget record names (issue 32). A forget holds, so a
//! later import, notes sync, `ingest_document`, restore or merge of the same content leaves it
//! out and counts it as `forgotten`. Read once per write from the store's `forgotten` rows
//! (few: one per forget), so a write into a store with none reads one count and nothing else.

use super::WriteBatch;
use crate::error::Result;
use crate::ingest::canonical::LeafDraft;
use crate::store::{ForgetRecord, ForgottenReads};
use crate::types::ForgetGrain;
use std::collections::{HashMap, HashSet};

/// The BLAKE3 of a leaf's text as a forget record keeps it (32 hex digits): the text itself is
/// never kept.
pub(crate) fn content_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..32].to_string()
}

/// The forget records of a store, arranged for a per-leaf test.
#[derive(Debug, Default)]
pub(crate) struct Held {
    /// Sources forgotten whole.
    sources: HashSet<String>,
    /// Per source, the ranges forgotten (inclusive bounds).
    ranges: HashMap<String, Vec<(i64, i64)>>,
    /// Leaf ids forgotten.
    leaves: HashSet<String>,
    /// Per source, the hashes of the texts of its forgotten leaves.
    hashes: HashMap<String, HashSet<String>>,
}

impl Held {
    /// Arrange `records`.
    pub(crate) fn new(records: impl IntoIterator<Item = ForgetRecord>) -> Held {
        let mut h = Held::default();
        for r in records {
            match r.grain {
                ForgetGrain::Source => {
                    h.sources.insert(r.source_id);
                }
                ForgetGrain::Range => h
                    .ranges
                    .entry(r.source_id)
                    .or_default()
                    .push((r.since_ms.unwrap_or(i64::MIN), r.until_ms.unwrap_or(i64::MAX))),
                ForgetGrain::Leaf => {
                    if let Some(n) = r.node_id {
                        h.leaves.insert(n);
                    }
                    if let Some(c) = r.content_hash {
                        h.hashes.entry(r.source_id).or_default().insert(c);
                    }
                }
            }
        }
        h
    }

    /// Whether a leaf of `source` at `ts_ms` with this id and text is forgotten.
    pub(crate) fn holds(&self, source: &str, node_id: &str, ts_ms: i64, text: &str) -> bool {
        self.sources.contains(source)
            || self.ranges.get(source).is_some_and(|rs| rs.iter().any(|(a, b)| (*a..=*b).contains(&ts_ms)))
            || self.leaves.contains(node_id)
            || self.hashes.get(source).is_some_and(|hs| hs.contains(&content_hash(text)))
    }
}

impl WriteBatch<'_, '_> {
    /// Whether the forget records hold `d` back (read from the store at the batch's first leaf).
    pub(super) fn held_back(&mut self, d: &LeafDraft) -> Result<bool> {
        if self.held.is_none() {
            let held =
                if self.tx.forgotten_count()? == 0 { Held::default() } else { Held::new(self.tx.forgotten_all()?) };
            self.held = Some(held);
        }
        Ok(self.held.as_ref().is_some_and(|h| h.holds(d.source_id.as_str(), d.node_id.as_str(), d.ts_ms, &d.content)))
    }

    /// Record a forget (inside the forget's own write); returns the record's id.
    pub fn hold(&mut self, record: &ForgetRecord) -> Result<i64> {
        self.held = None;
        self.tx.insert_forgotten(record)
    }
}
