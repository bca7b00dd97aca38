//! The in-memory vector matrix: one int8 code row per node (see `codes`), the session vector
//! of every level-1 summary, and exact top-k over the codes.

use super::codes::{ScanQuery, dot_codes_f32, quantise, quantise_into};
use super::passage_vectors::PassageVectors;
use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use rayon::prelude::*;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Rows per block of the parallel scan: a block is ~6 MB of codes at 384 dimensions (a few
/// hundred microseconds of work, far above rayon's hand-off), and a 100k-row matrix still
/// splits across two cores.
const SCAN_BLOCK: usize = 16_384;

/// A row in the top-k order: higher score first, then leaves before summaries, then by hash
/// (which orders as the id's hex digits do), so `Less` is better and ties cannot happen
/// between distinct rows. A heap of these has the worst kept row on top.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    score: f32,
    /// `true` for a summary: `L` ids sort before `S` ones.
    kind: bool,
    hash: u128,
    row: usize,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        other.score.total_cmp(&self.score).then_with(|| (self.kind, self.hash).cmp(&(other.kind, other.hash)))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

/// A node id parsed: `L`/`S` and the 128-bit hash its 32 hex digits spell. The matrix keeps
/// the two parts in columns (`hashes`, `leaf`), so a row costs 17 bytes of id, not a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    hash: u128,
    leaf: bool,
}

impl Key {
    /// The key of a well-formed node id; anything else cannot be a stored node.
    fn parse(id: &str) -> Option<Key> {
        let leaf = match id.as_bytes().first()? {
            b'L' => true,
            b'S' => false,
            _ => return None,
        };
        let hex = id.get(1..)?;
        if hex.len() != 32 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
            return None;
        }
        Some(Key { hash: u128::from_str_radix(hex, 16).ok()?, leaf })
    }

    fn id(&self) -> String {
        format!("{}{:032x}", if self.leaf { 'L' } else { 'S' }, self.hash)
    }

    /// The table hash of a key. Node ids are already content hashes, so folding the halves
    /// spreads them; the multiply keeps a hand-made id (all zeros but the tail) from
    /// clustering.
    fn table_hash(hash: u128, leaf: bool) -> u64 {
        ((hash as u64) ^ ((hash >> 64) as u64) ^ u64::from(leaf)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// This key's table hash.
    fn table(&self) -> u64 {
        Key::table_hash(self.hash, self.leaf)
    }
}

/// Whether a slot of the id table (a row number) holds `key`.
fn holds<'a>(hashes: &'a [u128], leaf: &'a [bool], key: Key) -> impl Fn(&u32) -> bool + 'a {
    move |&r| hashes[r as usize] == key.hash && leaf[r as usize] == key.leaf
}

/// The table hash of a slot, from the row it names (for the table's growth).
fn rehash<'a>(hashes: &'a [u128], leaf: &'a [bool]) -> impl Fn(&u32) -> u64 + 'a {
    move |&r| Key::table_hash(hashes[r as usize], leaf[r as usize])
}

/// Which rows a top-k search ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Leaves only (the dense candidates of walk and the baselines).
    Leaves,
    /// Leaves and summaries.
    All,
}

/// Every long leaf's best passage for one query ([`VectorMatrix::passage_scores`]): by the
/// leaf's id hash, its best passage's cosine less the discount, and its slot.
#[derive(Debug, Clone, Default)]
pub struct PassageScores(HashMap<u128, (f32, u16)>);

/// A summary's session vector: the normalised mean of its children's vectors, as codes.
#[derive(Debug, Clone)]
struct Session {
    scale: f32,
    codes: Vec<i8>,
}

/// The node vectors of a store as int8 codes in one contiguous row-major buffer (one scale per
/// row), so a query is a single pass over `len × dim` bytes. Removal swaps the last row into
/// the hole (O(dim)). Ids that are not node ids (`L`/`S` + 32 lower-case hex digits) are
/// ignored: nothing else is ever stored.
///
/// Memory is the codes and little else: per row a scale (4 bytes), its id's hash (16) and
/// kind (1), and a 4-byte row number in the id table (which hashes the row's key, held once
/// in `hashes`). A map from key to row would hold each key a second time and cost ~100 bytes
/// a row at a million rows, a quarter of the codes.
///
/// It also keeps each level-1 summary's *session vector* (the normalised mean of its
/// children's vectors), which walk's session signal compares the question with: computed
/// when the summary or its children's vectors arrive ([`VectorMatrix::set_session`]), not per
/// query.
#[derive(Debug, Clone)]
pub struct VectorMatrix {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    /// Per row, its node id's hash and whether it is a leaf (the id's `L`).
    hashes: Vec<u128>,
    leaf: Vec<bool>,
    /// Row numbers, found by hashing `(hashes[row], leaf[row])`.
    rows: HashTable<u32>,
    sessions: HashMap<Key, Session>,
    /// The passage vectors of long leaves (`embed::passages`): a leaf's best-passage score
    /// ([`VectorMatrix::best_cosine`], [`VectorMatrix::top_k_by_passage`]) is the best of its
    /// own vector's and theirs.
    passages: PassageVectors,
}

impl VectorMatrix {
    /// An empty matrix of dimension `dim`.
    pub fn new(dim: usize) -> Self {
        VectorMatrix {
            dim,
            codes: Vec::new(),
            scales: Vec::new(),
            hashes: Vec::new(),
            leaf: Vec::new(),
            rows: HashTable::new(),
            sessions: HashMap::new(),
            passages: PassageVectors::new(dim),
        }
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of node vectors held.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when no node vector is held.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The row of `key`, if held.
    fn find(&self, key: Key) -> Option<usize> {
        self.rows.find(key.table(), holds(&self.hashes, &self.leaf, key)).map(|&r| r as usize)
    }

    /// The key of row `i`.
    fn key(&self, i: usize) -> Key {
        Key { hash: self.hashes[i], leaf: self.leaf[i] }
    }

    /// Number of passage vectors held (beside the [`len`](Self::len) node vectors).
    pub fn passage_rows(&self) -> usize {
        self.passages.len()
    }

    /// Number of session vectors held.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Insert or replace the vector of `id`. Vectors of the wrong dimension are ignored
    /// (the caller validated them when they were made).
    pub fn upsert(&mut self, id: &str, v: &[f32]) {
        if v.len() != self.dim {
            return;
        }
        let (scale, codes) = quantise(v);
        self.upsert_codes(id, scale, &codes);
    }

    /// Insert or replace the vector of `id` given as codes and their scale (as stored).
    pub fn upsert_codes(&mut self, id: &str, scale: f32, codes: &[i8]) {
        let Some(key) = Key::parse(id) else { return };
        if codes.len() != self.dim {
            return;
        }
        // One probe finds the row or the place for a new one.
        let (hashes, leaf) = (&self.hashes, &self.leaf);
        let row = hashes.len() as u32;
        match self.rows.entry(key.table(), holds(hashes, leaf, key), rehash(hashes, leaf)) {
            Entry::Occupied(e) => {
                let i = *e.get() as usize;
                self.codes[i * self.dim..(i + 1) * self.dim].copy_from_slice(codes);
                self.scales[i] = scale;
                return;
            }
            Entry::Vacant(e) => {
                e.insert(row);
            }
        }
        self.hashes.push(key.hash);
        self.leaf.push(key.leaf);
        self.scales.push(scale);
        self.codes.extend_from_slice(codes);
    }

    /// Insert or replace the vector of passage `slot` (1 or more) of leaf `id`, as stored.
    pub fn upsert_passage(&mut self, id: &str, slot: u16, scale: f32, codes: &[i8]) {
        match Key::parse(id) {
            Some(key) if key.leaf && slot > 0 => self.passages.upsert(key.hash, slot, scale, codes),
            _ => {}
        }
    }

    /// Remove the vector of `id` (with its session vector or its passages' vectors), if held.
    pub fn remove(&mut self, id: &str) {
        let Some(key) = Key::parse(id) else { return };
        self.sessions.remove(&key);
        if key.leaf {
            self.passages.remove(key.hash);
        }
        // Drop the removed row's entry, then renumber the last row's entry to the hole.
        let (hashes, leaf) = (&self.hashes, &self.leaf);
        let Ok(e) = self.rows.find_entry(key.table(), holds(hashes, leaf, key)) else { return };
        let i = e.remove().0 as usize;
        let (last, dim) = (hashes.len() - 1, self.dim);
        if i != last {
            let moved = Key { hash: hashes[last], leaf: leaf[last] };
            if let Some(r) = self.rows.find_mut(moved.table(), |&r| r as usize == last) {
                *r = i as u32;
            }
            self.codes.copy_within(last * dim..(last + 1) * dim, i * dim);
            self.scales[i] = self.scales[last];
            self.hashes[i] = moved.hash;
            self.leaf[i] = moved.leaf;
        }
        self.hashes.pop();
        self.leaf.pop();
        self.scales.pop();
        self.codes.truncate(last * dim);
    }

    /// The stored vector of `id`, dequantised.
    pub fn get(&self, id: &str) -> Option<Vec<f32>> {
        let (codes, scale) = self.row(id)?;
        Some(codes.iter().map(|&c| f32::from(c) * scale).collect())
    }

    /// Cosine of `query` with the vector of `id` (both unit norm), if held.
    pub fn cosine(&self, query: &[f32], id: &str) -> Option<f32> {
        if query.len() != self.dim {
            return None;
        }
        self.row(id).map(|(codes, scale)| dot_codes_f32(codes, scale, query))
    }

    /// The best of `query`'s cosine with `id`'s own vector and its cosines with its
    /// passages' vectors less `discount` ([`PASSAGE_DISCOUNT`](crate::embed::PASSAGE_DISCOUNT)),
    /// with the slot that gave it (0: its own); `None` when it has no vector of its own (a
    /// passage vector alone would be a leaf half embedded).
    pub fn best_cosine(&self, query: &[f32], id: &str, discount: f32) -> Option<(f32, u16)> {
        self.own_or_passage(query, id, |hash| self.passages.best(query, hash, discount))
    }

    /// `id`'s own cosine with `query`, or its best passage's (`passage` of its id hash: cosine
    /// less the discount, and slot) when higher; `None` without a vector of its own.
    fn own_or_passage(
        &self,
        query: &[f32],
        id: &str,
        passage: impl FnOnce(u128) -> Option<(f32, u16)>,
    ) -> Option<(f32, u16)> {
        let own = self.cosine(query, id)?;
        let key = Key::parse(id)?;
        Some(match passage(key.hash) {
            Some((c, slot)) if key.leaf && c > own => (c, slot),
            _ => (own, 0),
        })
    }

    /// Every long leaf's best passage for `query` (its cosine less `discount`, and its slot),
    /// from one scan of the passage rows: what a query that scores many leaves by passage
    /// ([`best_cosine_among`](Self::best_cosine_among),
    /// [`top_k_by_passage_among`](Self::top_k_by_passage_among)) reads instead of each leaf's
    /// rows one by one.
    pub fn passage_scores(&self, query: &[f32], discount: f32) -> PassageScores {
        if self.passages.len() == 0 || query.len() != self.dim {
            return PassageScores(HashMap::new());
        }
        PassageScores(self.passages.best_per_owner(query, discount))
    }

    /// [`best_cosine`](Self::best_cosine) with the passages' scores of
    /// [`passage_scores`](Self::passage_scores) for the same query.
    pub fn best_cosine_among(&self, scores: &PassageScores, query: &[f32], id: &str) -> Option<(f32, u16)> {
        self.own_or_passage(query, id, |hash| scores.0.get(&hash).copied())
    }

    /// The `k` leaves most similar to `query` by their best vector, own or passage's (less
    /// `discount`: [`best_cosine`](Self::best_cosine)), best first, ties by id
    /// ([`top_k`](Self::top_k) over leaves when none has passages).
    ///
    /// Exact: a leaf of the true top `k` whose best is its own vector is among the `k` best
    /// own vectors (a leaf ranked above it by its own vector is above it by its best), and
    /// one whose best is a passage is among the `k` leaves with the best passages; so the
    /// union of the two, each leaf scored by its best, holds the top `k`.
    pub fn top_k_by_passage(&self, query: &[f32], k: usize, discount: f32) -> Vec<(String, f32)> {
        self.top_k_by_passage_among(&self.passage_scores(query, discount), query, k)
    }

    /// [`top_k_by_passage`](Self::top_k_by_passage) with the passages' scores of
    /// [`passage_scores`](Self::passage_scores) for the same query.
    pub fn top_k_by_passage_among(&self, scores: &PassageScores, query: &[f32], k: usize) -> Vec<(String, f32)> {
        let own = self.top_k(query, k, Rows::Leaves);
        if scores.0.is_empty() || query.len() != self.dim || k == 0 {
            return own;
        }
        let mut best: HashMap<u128, f32> = HashMap::with_capacity(own.len() + k);
        for (id, score) in &own {
            if let Some(key) = Key::parse(id) {
                best.insert(key.hash, scores.0.get(&key.hash).map_or(*score, |p| p.0.max(*score)));
            }
        }
        let mut by_passage: Vec<(u128, f32)> = scores.0.iter().map(|(&owner, &(s, _))| (owner, s)).collect();
        by_passage.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        // A passage whose leaf has no vector of its own is not scored (see `best_cosine`), and
        // takes no place among the k.
        let held = by_passage.into_iter().filter_map(|(owner, score)| {
            let own = self.find(Key { hash: owner, leaf: true }).map(|i| self.row_cosine(i, query))?;
            Some((owner, score.max(own)))
        });
        for (owner, score) in held.take(k) {
            best.entry(owner).or_insert(score);
        }
        let mut all: Vec<(u128, f32)> = best.into_iter().collect();
        all.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        all.truncate(k);
        all.into_iter().map(|(hash, score)| (Key { hash, leaf: true }.id(), score)).collect()
    }

    /// Cosine of `query` with row `i`.
    fn row_cosine(&self, i: usize, query: &[f32]) -> f32 {
        let (codes, scale) = self.row_at(i);
        dot_codes_f32(codes, scale, query)
    }

    /// The codes and scale of `id`.
    fn row(&self, id: &str) -> Option<(&[i8], f32)> {
        Some(self.row_at(self.find(Key::parse(id)?)?))
    }

    /// The codes and scale of row `i`.
    fn row_at(&self, i: usize) -> (&[i8], f32) {
        (&self.codes[i * self.dim..(i + 1) * self.dim], self.scales[i])
    }

    /// The `k` ids most similar to `query` among the rows `which` names, best first; ties
    /// are broken by id so the order is deterministic.
    ///
    /// The rows are scanned in blocks on rayon's pool (at a million rows the scan is ~400 MB
    /// of codes; on two cores a walk's dense work took ~40 % less, BENCHMARKS.md), each block
    /// keeping its own best `k`; the blocks' bests are then ranked together. Every comparison uses the
    /// same total order (score, then id), so the result does not depend on the blocking.
    pub fn top_k(&self, query: &[f32], k: usize, which: Rows) -> Vec<(String, f32)> {
        if k == 0 {
            return Vec::new();
        }
        // A query of another dimension scores 0 against every row (they then rank by id).
        let scan = (query.len() == self.dim).then(|| ScanQuery::new(query));
        let blocks = self.len().div_ceil(SCAN_BLOCK);
        let best = |b: usize| -> Vec<Ranked> {
            let (lo, hi) = (b * SCAN_BLOCK, ((b + 1) * SCAN_BLOCK).min(self.len()));
            let mut scores = Vec::with_capacity(hi - lo);
            if let Some(q) = &scan {
                q.scan(self.dim, &self.codes[lo * self.dim..hi * self.dim], &self.scales[lo..hi], &mut scores);
            }
            scores.resize(hi - lo, 0.0);
            let rows = scores.into_iter().enumerate().map(|(i, score)| (lo + i, score));
            self.best_of(rows.filter(|&(i, _)| which == Rows::All || self.leaf[i]), k)
        };
        let mut all: Vec<Ranked> = if blocks > 1 {
            (0..blocks).into_par_iter().flat_map_iter(best).collect()
        } else {
            (0..blocks).flat_map(best).collect()
        };
        if all.len() > k {
            all.select_nth_unstable(k - 1);
            all.truncate(k);
        }
        all.sort_unstable();
        all.into_iter().map(|r| (self.key(r.row).id(), r.score)).collect()
    }

    /// The best `k` of `rows` (row, score) in no particular order: a bounded heap whose top
    /// is the worst kept, so most rows cost one comparison with it.
    fn best_of(&self, rows: impl Iterator<Item = (usize, f32)>, k: usize) -> Vec<Ranked> {
        let mut heap: BinaryHeap<Ranked> = BinaryHeap::with_capacity(k + 1);
        for (row, score) in rows {
            if heap.len() == k {
                let worst = heap.peek().map_or(f32::NEG_INFINITY, |w| w.score);
                // Below the worst kept: cannot enter (equal scores go to the id order).
                if score < worst {
                    continue;
                }
            }
            let r = Ranked { score, kind: !self.leaf[row], hash: self.hashes[row], row };
            if heap.len() < k {
                heap.push(r);
            } else if let Some(mut worst) = heap.peek_mut()
                && r < *worst
            {
                *worst = r;
            }
        }
        heap.into_vec()
    }

    /// Mean of the vectors of `ids` (those held), normalised; `None` when none is held or
    /// they cancel out.
    pub fn centroid<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Option<Vec<f32>> {
        // Summed in place; the mean's scale vanishes in the normalisation.
        let mut sum = vec![0.0f32; self.dim];
        let mut held = 0usize;
        for (codes, scale) in ids.into_iter().filter_map(|id| self.row(id)) {
            sum.iter_mut().zip(codes).for_each(|(s, &c)| *s += f32::from(c) * scale);
            held += 1;
        }
        if held == 0 {
            return None;
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return None;
        }
        sum.iter_mut().for_each(|s| *s /= norm);
        Some(sum)
    }

    /// (Re)compute the session vector of summary `id` from its `children`'s vectors (those
    /// held); a summary none of whose children has a vector has none.
    pub fn set_session<'a>(&mut self, id: &str, children: impl IntoIterator<Item = &'a str>) {
        let Some(key) = Key::parse(id) else { return };
        match self.centroid(children) {
            Some(c) => {
                let mut codes = Vec::with_capacity(self.dim);
                let scale = quantise_into(&c, &mut codes);
                self.sessions.insert(key, Session { scale, codes });
            }
            None => {
                self.sessions.remove(&key);
            }
        }
    }

    /// Cosine of `query` with the session vector of summary `id`, if it has one.
    pub fn session_cosine(&self, query: &[f32], id: &str) -> Option<f32> {
        if query.len() != self.dim {
            return None;
        }
        let s = self.sessions.get(&Key::parse(id)?)?;
        Some(dot_codes_f32(&s.codes, s.scale, query))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A well-formed leaf id for test row `i`.
    fn leaf(i: usize) -> String {
        format!("L{i:032x}")
    }

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
        v.iter().map(|x| x / n).collect()
    }

    /// How far a scanned cosine of row `v` with query `q` may be from the exact one: each
    /// int8 code is off by at most half its row's scale (`max|v| / 127`), each 16-bit query
    /// code by half the query's (`max|q| / 16384`), so the dot product is off by at most
    /// `|q|₁ · max|v| / 254 + |v|₁ · max|q| / 32768`, plus a little for the product of the
    /// two errors and f32 rounding. (A flat 5e-3 held for 11 dimensions only by luck: the
    /// bound there reaches 0.013, and CI found a row off by 0.0053.)
    fn code_error_bound(v: &[f32], q: &[f32]) -> f32 {
        let l1 = |x: &[f32]| x.iter().map(|a| a.abs()).sum::<f32>();
        let max = |x: &[f32]| x.iter().fold(0.0f32, |m, a| m.max(a.abs()));
        l1(q) * max(v) / 254.0 + l1(v) * max(q) / 32_768.0 + 1e-4
    }

    proptest! {
        /// top-k over the codes equals a brute-force sort of the exact cosines, up to the
        /// quantisation error: every returned score is within its row's error bound
        /// ([`code_error_bound`]) of its exact cosine, and whatever was left out scores no
        /// better than the last one kept, beyond that bound. Dimension 11: the kernels'
        /// blocks of eight and their tail.
        #[test]
        fn top_k_matches_brute_force(
            vecs in proptest::collection::vec(proptest::collection::vec(-1.0f32..1.0, 11), 1..40),
            q in proptest::collection::vec(-1.0f32..1.0, 11),
            k in 1usize..50,
        ) {
            let q = unit(&q);
            let vecs: Vec<Vec<f32>> = vecs.iter().map(|v| unit(v)).collect();
            let mut m = VectorMatrix::new(11);
            for (i, v) in vecs.iter().enumerate() {
                m.upsert(&leaf(i), v);
            }
            let exact = |i: usize| vecs[i].iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
            let got = m.top_k(&q, k, Rows::All);
            prop_assert_eq!(got.len(), k.min(vecs.len()));
            for (id, s) in &got {
                let i = (0..vecs.len()).find(|&i| leaf(i) == *id).unwrap();
                let bound = code_error_bound(&vecs[i], &q);
                prop_assert!((s - exact(i)).abs() <= bound, "{} vs {} (bound {})", s, exact(i), bound);
            }
            let last = got.last().unwrap().1;
            for i in (0..vecs.len()).filter(|&i| !got.iter().any(|(id, _)| *id == leaf(i))) {
                let bound = code_error_bound(&vecs[i], &q);
                prop_assert!(exact(i) <= last + bound, "left out {} > kept {}", exact(i), last);
            }
            for w in got.windows(2) {
                prop_assert!(w[0].1 >= w[1].1);
            }
        }
    }

    proptest! {
        /// Any sequence of upserts and removals leaves exactly the rows a plain map would
        /// hold, each with its own latest vector: the id table follows the rows the last one
        /// is swapped into.
        #[test]
        fn upserts_and_removals_match_a_map(ops in proptest::collection::vec((0usize..12, any::<bool>(), -1.0f32..1.0), 1..80)) {
            let mut m = VectorMatrix::new(2);
            let mut model: HashMap<usize, [f32; 2]> = HashMap::new();
            for (i, put, x) in ops {
                // Even rows are leaves, odd ones summaries, so both kinds share the table.
                let id = if i % 2 == 0 { leaf(i) } else { format!("S{i:032x}") };
                if put {
                    let v = [x, (1.0 - x * x).max(0.0).sqrt()];
                    m.upsert(&id, &v);
                    model.insert(i, v);
                } else {
                    m.remove(&id);
                    model.remove(&i);
                }
                prop_assert_eq!(m.len(), model.len());
            }
            for i in 0..12 {
                let id = if i % 2 == 0 { leaf(i) } else { format!("S{i:032x}") };
                match model.get(&i) {
                    Some(v) => {
                        let got = m.get(&id).expect("held");
                        prop_assert!((got[0] - v[0]).abs() < 1e-2 && (got[1] - v[1]).abs() < 1e-2, "{:?} vs {:?}", got, v);
                    }
                    None => prop_assert!(m.get(&id).is_none()),
                }
            }
            let all = m.top_k(&[1.0, 0.0], 100, Rows::All);
            prop_assert_eq!(all.len(), model.len());
            prop_assert_eq!(m.top_k(&[1.0, 0.0], 100, Rows::Leaves).len(), model.keys().filter(|i| *i % 2 == 0).count());
        }
    }

    /// How far a cosine over int8 codes may be from the exact one in 5 dimensions.
    const TOLERANCE: f32 = 1e-2;

    proptest! {
        /// A leaf's score by passage is the best of its own vector's and its passages', and
        /// `top_k_by_passage` keeps the `k` best leaves by it (up to the quantisation error:
        /// in 5 dimensions an int8 code's rounding moves a cosine by up to ~0.01): checked
        /// against a brute force over the exact cosines. Removing a leaf takes its passages
        /// with it; summaries and unknown leaves get none.
        #[test]
        fn top_k_by_passage_matches_brute_force(
            leaves in proptest::collection::vec(
                proptest::collection::vec(proptest::collection::vec(-1.0f32..1.0, 5), 1..4), 1..30),
            q in proptest::collection::vec(-1.0f32..1.0, 5),
            k in 1usize..40,
            removed in proptest::collection::vec(0usize..30, 0..5),
            discount in prop_oneof![Just(0.0f32), 0.0f32..0.3],
        ) {
            let q = unit(&q);
            let dot = |v: &[f32]| v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
            let mut m = VectorMatrix::new(5);
            for (i, vs) in leaves.iter().enumerate() {
                m.upsert(&leaf(i), &unit(&vs[0]));
                for (slot, v) in vs.iter().enumerate().skip(1) {
                    let (scale, codes) = quantise(&unit(v));
                    m.upsert_passage(&leaf(i), slot as u16, scale, &codes);
                }
            }
            let (scale, codes) = quantise(&q);
            m.upsert_passage("S0000000000000000000000000000000a", 1, scale, &codes);
            m.upsert_passage(&leaf(0), 0, scale, &codes);
            prop_assert_eq!(m.passage_rows(), leaves.iter().map(|vs| vs.len() - 1).sum::<usize>());
            for &r in &removed {
                m.remove(&leaf(r));
            }
            let kept: Vec<usize> = (0..leaves.len()).filter(|i| !removed.contains(i)).collect();
            prop_assert_eq!(m.passage_rows(), kept.iter().map(|&i| leaves[i].len() - 1).sum::<usize>());
            // A passage of a leaf with no vector of its own, matching the question exactly: never
            // scored, and it takes no place among the k.
            m.upsert_passage(&leaf(1_000), 1, scale, &codes);
            prop_assert!(m.best_cosine(&q, &leaf(1_000), discount).is_none());
            // Its own vector's cosine, or a passage's less the discount.
            let score = |i: usize, slot: usize| dot(&unit(&leaves[i][slot])) - if slot > 0 { discount } else { 0.0 };
            let exact = |i: usize| (0..leaves[i].len()).map(|s| score(i, s)).fold(f32::NEG_INFINITY, f32::max);
            for &i in &kept {
                let (c, slot) = m.best_cosine(&q, &leaf(i), discount).expect("held");
                prop_assert!((c - exact(i)).abs() < TOLERANCE, "{} vs {}", c, exact(i));
                prop_assert!((c - score(i, slot as usize)).abs() < TOLERANCE);
                // The same from one scan of every passage.
                let (c2, _) = m.best_cosine_among(&m.passage_scores(&q, discount), &q, &leaf(i)).expect("held");
                prop_assert!((c2 - exact(i)).abs() < TOLERANCE, "{} vs {}", c2, exact(i));
            }
            let got = m.top_k_by_passage(&q, k, discount);
            prop_assert_eq!(got.len(), k.min(kept.len()));
            prop_assert!(got.iter().all(|(id, _)| *id != leaf(1_000)));
            for (id, s) in &got {
                let i = kept.iter().copied().find(|&i| leaf(i) == *id).expect("a kept leaf");
                prop_assert!((s - exact(i)).abs() < TOLERANCE, "{} vs {}", s, exact(i));
            }
            let last = got.last().map_or(f32::NEG_INFINITY, |g| g.1);
            for &i in kept.iter().filter(|&&i| !got.iter().any(|(id, _)| *id == leaf(i))) {
                prop_assert!(exact(i) <= last + 2.0 * TOLERANCE, "left out {} > kept {}", exact(i), last);
            }
            for w in got.windows(2) {
                prop_assert!(w[0].1 >= w[1].1);
            }
        }
    }

    #[test]
    fn blocked_top_k_equals_one_sort_of_every_row() {
        // Three blocks and a tail, leaves and summaries mixed, and few distinct directions so
        // that most scores tie and the id order decides.
        let n = 2 * SCAN_BLOCK + 1_234;
        let mut m = VectorMatrix::new(2);
        for i in 0..n {
            let a = (i.wrapping_mul(2_654_435_761) % 7) as f32;
            let id = if i % 3 == 0 { format!("S{:032x}", i * 7919) } else { format!("L{:032x}", i * 7919) };
            m.upsert(&id, &[a.cos(), a.sin()]);
        }
        let q = [0.6, 0.8];
        // The reference: one scan of the whole matrix (the scores the blocks compute).
        let mut scores = Vec::new();
        ScanQuery::new(&q).scan(2, &m.codes, &m.scales, &mut scores);
        for which in [Rows::All, Rows::Leaves] {
            let mut want: Vec<(String, f32)> =
                (0..n).filter(|&i| which == Rows::All || m.leaf[i]).map(|i| (m.key(i).id(), scores[i])).collect();
            // Best score first, then by id (`L` before `S`, then the hex digits).
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            for k in [1, 5, 300, SCAN_BLOCK + 10] {
                let got = m.top_k(&q, k, which);
                assert_eq!(got.len(), k);
                assert_eq!(got, want[..k].to_vec(), "k = {k}, {which:?}");
            }
        }
        assert!(m.top_k(&[1.0, 0.0, 0.0], 3, Rows::All).iter().all(|(_, s)| *s == 0.0), "another dimension scores 0");
    }

    #[test]
    fn centroid_and_sessions_are_the_normalised_mean_of_the_held_vectors() {
        let mut m = VectorMatrix::new(2);
        m.upsert(&leaf(1), &[1.0, 0.0]);
        m.upsert(&leaf(2), &[0.0, 1.0]);
        let (a, b) = (leaf(1), leaf(2));
        let c = m.centroid([a.as_str(), b.as_str(), "missing"]).unwrap();
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!((c[0] - h).abs() < 1e-2 && (c[1] - h).abs() < 1e-2, "{c:?}");
        assert!(m.centroid(["missing"]).is_none());
        let s = format!("S{:032x}", 7);
        m.set_session(&s, [a.as_str(), b.as_str()]);
        let cos = m.session_cosine(&[h, h], &s).unwrap();
        assert!((cos - 1.0).abs() < 1e-2, "{cos}");
        m.upsert(&leaf(3), &[-1.0, 0.0]);
        let c3 = leaf(3);
        assert!(m.centroid([a.as_str(), c3.as_str()]).is_none(), "opposite vectors have no direction");
        m.set_session(&s, [a.as_str(), c3.as_str()]);
        assert!(m.session_cosine(&[1.0, 0.0], &s).is_none(), "a session without direction is dropped");
    }

    #[test]
    fn remove_keeps_other_rows_and_malformed_ids_are_ignored() {
        let mut m = VectorMatrix::new(2);
        m.upsert(&leaf(1), &[1.0, 0.0]);
        m.upsert(&leaf(2), &[0.0, 1.0]);
        m.upsert(&leaf(3), &[0.6, 0.8]);
        m.upsert("not-a-node", &[1.0, 0.0]);
        m.upsert(&format!("L{:032X}", 0xab), &[1.0, 0.0]);
        assert_eq!(m.len(), 3);
        m.remove(&leaf(1));
        assert_eq!(m.len(), 2);
        assert!((m.cosine(&[0.0, 1.0], &leaf(2)).unwrap() - 1.0).abs() < 1e-2);
        assert!((m.cosine(&[0.0, 1.0], &leaf(3)).unwrap() - 0.8).abs() < 1e-2);
        assert!(m.get(&leaf(1)).is_none());
        assert_eq!(m.top_k(&[0.0, 1.0], 5, Rows::All)[0].0, leaf(2));
    }

    #[test]
    fn keys_round_trip_node_ids() {
        for id in ["L0123456789abcdef0123456789abcdef", "S00000000000000000000000000000000"] {
            assert_eq!(Key::parse(id).unwrap().id(), id);
        }
        for bad in ["", "L", "X0123456789abcdef0123456789abcdef", "L0123456789abcdef0123456789abcde", "Lé"] {
            assert!(Key::parse(bad).is_none(), "{bad}");
        }
    }
}
