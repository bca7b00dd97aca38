//! The in-memory vector matrix: one row per node, exact cosine top-k with ndarray.

use ndarray::{Array1, Array2, ArrayView1};
use std::collections::HashMap;

/// Unit-norm vectors of the store's nodes held as one row-major matrix, so a query is a single
/// matrix–vector product. Removal swaps the last row into the hole (O(dim)).
#[derive(Debug, Clone)]
pub struct VectorMatrix {
    dim: usize,
    rows: Array2<f32>,
    ids: Vec<String>,
    pos: HashMap<String, usize>,
}

impl VectorMatrix {
    /// An empty matrix of dimension `dim`.
    pub fn new(dim: usize) -> Self {
        VectorMatrix { dim, rows: Array2::zeros((0, dim)), ids: Vec::new(), pos: HashMap::new() }
    }

    /// Vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of vectors held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when no vector is held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Insert or replace the vector of `id`. Vectors of the wrong dimension are ignored
    /// (the caller validated them when they were made).
    pub fn upsert(&mut self, id: &str, v: &[f32]) {
        if v.len() != self.dim {
            return;
        }
        if let Some(&i) = self.pos.get(id) {
            self.rows.row_mut(i).assign(&ArrayView1::from(v));
            return;
        }
        self.rows.push_row(ArrayView1::from(v)).expect("dimension checked above");
        self.pos.insert(id.to_string(), self.ids.len());
        self.ids.push(id.to_string());
    }

    /// Remove the vector of `id`, if held.
    pub fn remove(&mut self, id: &str) {
        let Some(i) = self.pos.remove(id) else { return };
        let last = self.ids.len() - 1;
        if i != last {
            let moved = self.rows.row(last).to_owned();
            self.rows.row_mut(i).assign(&moved);
            self.ids.swap(i, last);
            self.pos.insert(self.ids[i].clone(), i);
        }
        self.ids.pop();
        // Drop the last row in place: slicing and copying would move the whole matrix (≈ 150 MB
        // at 100k nodes) on every removal. Rows only ever grow by `push_row`, so the matrix is
        // in standard layout with its data at offset 0.
        let rows = std::mem::replace(&mut self.rows, Array2::zeros((0, self.dim)));
        let (mut data, _) = rows.into_raw_vec_and_offset();
        data.truncate(last * self.dim);
        self.rows = Array2::from_shape_vec((last, self.dim), data).expect("rows × dim elements");
    }

    /// The stored vector of `id`.
    pub fn get(&self, id: &str) -> Option<ArrayView1<'_, f32>> {
        self.row(id).map(ArrayView1::from)
    }

    /// Cosine of `query` with the vector of `id` (both unit norm), if held.
    pub fn cosine(&self, query: &[f32], id: &str) -> Option<f32> {
        if query.len() != self.dim {
            return None;
        }
        self.row(id).map(|row| dot(row, query))
    }

    /// The stored vector of `id` as a slice.
    fn row(&self, id: &str) -> Option<&[f32]> {
        let &i = self.pos.get(id)?;
        self.rows.as_slice().map(|all| &all[i * self.dim..(i + 1) * self.dim])
    }

    /// Cosine of `query` against every row.
    pub fn scores(&self, query: &[f32]) -> Array1<f32> {
        if query.len() != self.dim || self.ids.is_empty() {
            return Array1::zeros(self.ids.len());
        }
        // One pass over the contiguous rows with the unrolled `dot`: ndarray's matrix–vector
        // product without BLAS ran at ~1.5 GFLOP/s here and was a quarter of walk's time at 100k.
        match self.rows.as_slice() {
            Some(all) => all.chunks_exact(self.dim).map(|row| dot(row, query)).collect(),
            None => self.rows.dot(&ArrayView1::from(query)),
        }
    }

    /// The `k` ids most similar to `query` among those `keep` accepts, best first; ties are
    /// broken by id so the order is deterministic.
    pub fn top_k(&self, query: &[f32], k: usize, keep: impl Fn(&str) -> bool) -> Vec<(String, f32)> {
        let scores = self.scores(query);
        let mut all: Vec<(usize, f32)> =
            scores.iter().copied().enumerate().filter(|(i, _)| keep(&self.ids[*i])).collect();
        let cmp =
            |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then_with(|| self.ids[a.0].cmp(&self.ids[b.0]));
        if all.len() > k && k > 0 {
            all.select_nth_unstable_by(k - 1, cmp);
            all.truncate(k);
        }
        all.sort_by(cmp);
        all.truncate(k);
        all.into_iter().map(|(i, s)| (self.ids[i].clone(), s)).collect()
    }

    /// Mean of the vectors of `ids` (those held), normalised; `None` when none is held.
    pub fn centroid<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Option<Vec<f32>> {
        // Summed in place (no copy of the selected rows); the mean's scale vanishes in the
        // normalisation.
        let mut sum = vec![0.0f32; self.dim];
        let mut held = 0usize;
        for row in ids.into_iter().filter_map(|id| self.row(id)) {
            sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
            held += 1;
        }
        if held == 0 {
            return None;
        }
        let norm = dot(&sum, &sum).sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return None;
        }
        sum.iter_mut().for_each(|s| *s /= norm);
        Some(sum)
    }
}

/// Dot product with eight independent accumulators, so the compiler can keep them in vector
/// registers (a single running sum forces one add after another).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    let mut acc = [0.0f32; 8];
    for (x, y) in ca.zip(cb) {
        for ((s, x), y) in acc.iter_mut().zip(x).zip(y) {
            *s += x * y;
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// top-k over the matrix equals a brute-force sort of all cosines (dimension 11: the
        /// unrolled dot's blocks of eight and its tail).
        #[test]
        fn top_k_matches_brute_force(
            vecs in proptest::collection::vec(proptest::collection::vec(-1.0f32..1.0, 11), 1..40),
            q in proptest::collection::vec(-1.0f32..1.0, 11),
            k in 1usize..50,
        ) {
            let mut m = VectorMatrix::new(11);
            for (i, v) in vecs.iter().enumerate() {
                m.upsert(&format!("n{i:03}"), v);
            }
            let got = m.top_k(&q, k, |_| true);
            let mut want: Vec<(String, f32)> = vecs
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("n{i:03}"), v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>()))
                .collect();
            want.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            want.truncate(k);
            prop_assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                prop_assert!((g.1 - w.1).abs() < 1e-4);
            }
        }
    }

    #[test]
    fn centroid_is_the_normalised_mean_of_the_held_vectors() {
        let mut m = VectorMatrix::new(2);
        m.upsert("a", &[1.0, 0.0]);
        m.upsert("b", &[0.0, 1.0]);
        let c = m.centroid(["a", "b", "missing"]).unwrap();
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert!((c[0] - h).abs() < 1e-6 && (c[1] - h).abs() < 1e-6, "{c:?}");
        assert!(m.centroid(["missing"]).is_none());
        m.upsert("c", &[-1.0, 0.0]);
        assert!(m.centroid(["a", "c"]).is_none(), "opposite vectors have no direction");
    }

    #[test]
    fn remove_keeps_other_rows() {
        let mut m = VectorMatrix::new(2);
        m.upsert("a", &[1.0, 0.0]);
        m.upsert("b", &[0.0, 1.0]);
        m.upsert("c", &[0.6, 0.8]);
        m.remove("a");
        assert_eq!(m.len(), 2);
        assert!((m.cosine(&[0.0, 1.0], "b").unwrap() - 1.0).abs() < 1e-6);
        assert!((m.cosine(&[0.0, 1.0], "c").unwrap() - 0.8).abs() < 1e-6);
        assert!(m.get("a").is_none());
    }
}
