//! The in-memory vector matrix: one int8 code row per node (see `codes`), the session vector
//! of every level-1 summary, and exact top-k over the codes.

use super::codes::{ScanQuery, dot_codes_f32, quantise, quantise_into};
use std::collections::HashMap;

/// A node id packed into 17 bytes: `L`/`S` and the 128-bit hash its 32 hex digits spell.
/// At a million nodes the string ids (held twice, in the row list and the map) cost more
/// memory than the codes themselves.
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
}

/// Which rows a top-k search ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Leaves only (the dense candidates of walk and the baselines).
    Leaves,
    /// Leaves and summaries.
    All,
}

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
/// It also keeps each level-1 summary's *session vector* (the normalised mean of its
/// children's vectors), which walk's session signal compares the question with: computed
/// when the summary or its children's vectors arrive ([`VectorMatrix::set_session`]), not per
/// query.
#[derive(Debug, Clone)]
pub struct VectorMatrix {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    keys: Vec<Key>,
    pos: HashMap<Key, u32>,
    sessions: HashMap<Key, Session>,
}

impl VectorMatrix {
    /// An empty matrix of dimension `dim`.
    pub fn new(dim: usize) -> Self {
        VectorMatrix {
            dim,
            codes: Vec::new(),
            scales: Vec::new(),
            keys: Vec::new(),
            pos: HashMap::new(),
            sessions: HashMap::new(),
        }
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of node vectors held.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when no node vector is held.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
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
        if let Some(&i) = self.pos.get(&key) {
            let i = i as usize;
            self.codes[i * self.dim..(i + 1) * self.dim].copy_from_slice(codes);
            self.scales[i] = scale;
            return;
        }
        self.pos.insert(key, self.keys.len() as u32);
        self.keys.push(key);
        self.scales.push(scale);
        self.codes.extend_from_slice(codes);
    }

    /// Remove the vector of `id` (and its session vector), if held.
    pub fn remove(&mut self, id: &str) {
        let Some(key) = Key::parse(id) else { return };
        self.sessions.remove(&key);
        let Some(i) = self.pos.remove(&key) else { return };
        let (i, last, dim) = (i as usize, self.keys.len() - 1, self.dim);
        if i != last {
            self.codes.copy_within(last * dim..(last + 1) * dim, i * dim);
            self.scales[i] = self.scales[last];
            self.keys[i] = self.keys[last];
            self.pos.insert(self.keys[i], i as u32);
        }
        self.keys.pop();
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

    /// The codes and scale of `id`.
    fn row(&self, id: &str) -> Option<(&[i8], f32)> {
        let &i = self.pos.get(&Key::parse(id)?)?;
        let i = i as usize;
        Some((&self.codes[i * self.dim..(i + 1) * self.dim], self.scales[i]))
    }

    /// Cosine of `query` against every row, in row order.
    fn scores(&self, query: &[f32]) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.keys.len());
        if query.len() == self.dim {
            ScanQuery::new(query).scan(self.dim, &self.codes, &self.scales, &mut out);
        }
        out.resize(self.keys.len(), 0.0);
        out
    }

    /// The `k` ids most similar to `query` among the rows `which` names, best first; ties
    /// are broken by id so the order is deterministic.
    pub fn top_k(&self, query: &[f32], k: usize, which: Rows) -> Vec<(String, f32)> {
        if k == 0 {
            return Vec::new();
        }
        let scores = self.scores(query);
        let mut all: Vec<(usize, f32)> =
            scores.iter().copied().enumerate().filter(|(i, _)| which == Rows::All || self.keys[*i].leaf).collect();
        // Keys order as their ids do (the prefix aside, which `which` makes uniform or
        // which sorts `L` before `S` as the text does).
        let cmp = |a: &(usize, f32), b: &(usize, f32)| {
            b.1.total_cmp(&a.1).then_with(|| {
                (!self.keys[a.0].leaf, self.keys[a.0].hash).cmp(&(!self.keys[b.0].leaf, self.keys[b.0].hash))
            })
        };
        if all.len() > k {
            all.select_nth_unstable_by(k - 1, cmp);
            all.truncate(k);
        }
        all.sort_by(cmp);
        all.into_iter().map(|(i, s)| (self.keys[i].id(), s)).collect()
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

    proptest! {
        /// top-k over the codes equals a brute-force sort of the exact cosines, up to the
        /// quantisation error: every returned score is within 5e-3 of its exact cosine, and
        /// whatever was left out scores no better than the last one kept (beyond that error).
        /// Dimension 11: the kernels' blocks of eight and their tail.
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
                prop_assert!((s - exact(i)).abs() < 5e-3, "{} vs {}", s, exact(i));
            }
            let last = got.last().unwrap().1;
            for i in (0..vecs.len()).filter(|&i| !got.iter().any(|(id, _)| *id == leaf(i))) {
                prop_assert!(exact(i) <= last + 1e-2, "left out {} > kept {}", exact(i), last);
            }
            for w in got.windows(2) {
                prop_assert!(w[0].1 >= w[1].1);
            }
        }
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
