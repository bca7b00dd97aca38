//! The passage vectors of long leaves, in memory: int8 code rows like the node vectors', each
//! tagged with its leaf and slot, so that a leaf's dense score can be its best passage's.

use super::codes::{ScanQuery, dot_codes_f32};
use std::collections::HashMap;

/// Passage rows in one contiguous buffer (removal swaps the last row into the hole), with the
/// rows of each leaf found by its id's hash. Only leaves have passages, so the hash alone
/// names the leaf.
#[derive(Debug, Clone)]
pub(super) struct PassageVectors {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    /// Per row, its leaf's id hash and its slot.
    owners: Vec<u128>,
    slots: Vec<u16>,
    /// Each leaf's rows (a leaf has a handful at most).
    by_owner: HashMap<u128, Vec<u32>>,
}

impl PassageVectors {
    pub(super) fn new(dim: usize) -> Self {
        PassageVectors {
            dim,
            codes: Vec::new(),
            scales: Vec::new(),
            owners: Vec::new(),
            slots: Vec::new(),
            by_owner: HashMap::new(),
        }
    }

    /// Rows held.
    pub(super) fn len(&self) -> usize {
        self.owners.len()
    }

    /// Insert or replace the vector of `owner`'s passage `slot`.
    pub(super) fn upsert(&mut self, owner: u128, slot: u16, scale: f32, codes: &[i8]) {
        if codes.len() != self.dim {
            return;
        }
        let rows = self.by_owner.entry(owner).or_default();
        if let Some(&r) = rows.iter().find(|&&r| self.slots[r as usize] == slot) {
            let i = r as usize;
            self.codes[i * self.dim..(i + 1) * self.dim].copy_from_slice(codes);
            self.scales[i] = scale;
            return;
        }
        rows.push(self.owners.len() as u32);
        self.owners.push(owner);
        self.slots.push(slot);
        self.scales.push(scale);
        self.codes.extend_from_slice(codes);
    }

    /// Drop every passage of `owner`.
    pub(super) fn remove(&mut self, owner: u128) {
        let Some(mut rows) = self.by_owner.remove(&owner) else { return };
        // Highest first: a swap from the end never moves a row still to be removed.
        rows.sort_unstable_by(|a, b| b.cmp(a));
        for r in rows {
            self.swap_remove(r as usize);
        }
    }

    /// Remove row `i`, moving the last row into its place.
    fn swap_remove(&mut self, i: usize) {
        let (last, dim) = (self.owners.len() - 1, self.dim);
        if i != last {
            let moved = self.owners[last];
            if let Some(r) =
                self.by_owner.get_mut(&moved).and_then(|rows| rows.iter_mut().find(|r| **r as usize == last))
            {
                *r = i as u32;
            }
            self.codes.copy_within(last * dim..(last + 1) * dim, i * dim);
            self.scales[i] = self.scales[last];
            self.owners[i] = moved;
            self.slots[i] = self.slots[last];
        }
        self.owners.pop();
        self.slots.pop();
        self.scales.pop();
        self.codes.truncate(last * dim);
    }

    /// `owner`'s best passage for `query`: its cosine less `discount`, and its slot (the
    /// lowest slot on ties), as [`best_per_owner`](Self::best_per_owner) gives every leaf's.
    pub(super) fn best(&self, query: &[f32], owner: u128, discount: f32) -> Option<(f32, u16)> {
        let rows = self.by_owner.get(&owner)?;
        rows.iter()
            .map(|&r| {
                let i = r as usize;
                let c = dot_codes_f32(&self.codes[i * self.dim..(i + 1) * self.dim], self.scales[i], query);
                (c - discount, self.slots[i])
            })
            .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(&a.1)))
    }

    /// Every leaf with a passage, with its best passage's cosine with `query` less `discount`
    /// and that passage's slot (the lowest slot on ties): one scan of every row.
    pub(super) fn best_per_owner(&self, query: &[f32], discount: f32) -> HashMap<u128, (f32, u16)> {
        let mut scores = Vec::with_capacity(self.len());
        ScanQuery::new(query).scan(self.dim, &self.codes, &self.scales, &mut scores);
        let mut best: HashMap<u128, (f32, u16)> = HashMap::with_capacity(self.by_owner.len());
        for ((owner, &slot), s) in self.owners.iter().zip(&self.slots).zip(scores) {
            let s = s - discount;
            let b = best.entry(*owner).or_insert((s, slot));
            if s > b.0 || (s == b.0 && slot < b.1) {
                *b = (s, slot);
            }
        }
        best
    }
}
