//! Walk's rank and the cross-encoder's rank, fused by reciprocal rank (walk applies it to
//! its hits: `retrieval/walk/rerank_stage.rs`).
//!
//! Why reciprocal rank rather than the scores: walk's fused relevance and a cross-encoder's
//! logits live on unrelated scales that change with the question (and with the model a user
//! brings); ranks do not. The prototype that measured the gain fused ranks the same way.

/// The constant of reciprocal-rank fusion, `1 / (K + rank)`: the usual 60, which keeps the
/// first ranks of either list from deciding alone.
pub const RRF_K: f64 = 60.0;

/// The fused order of `n` items given each one's score from the model: walk's rank is the
/// position (0 = first). Returns `(index, fused score, model rank)` best first; ties (equal
/// fused scores) keep walk's order, and equal model scores share walk's order too.
pub fn fuse_ranks(model_scores: &[f32]) -> Vec<(usize, f64, usize)> {
    let n = model_scores.len();
    let mut by_model: Vec<usize> = (0..n).collect();
    by_model.sort_by(|&a, &b| model_scores[b].total_cmp(&model_scores[a]).then(a.cmp(&b)));
    let mut model_rank = vec![0; n];
    for (r, &i) in by_model.iter().enumerate() {
        model_rank[i] = r;
    }
    let mut out: Vec<(usize, f64, usize)> = (0..n)
        .map(|i| (i, 1.0 / (RRF_K + 1.0 + i as f64) + 1.0 / (RRF_K + 1.0 + model_rank[i] as f64), model_rank[i]))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn agreeing_lists_keep_walks_order() {
        let f = fuse_ranks(&[3.0, 2.0, 1.0]);
        assert_eq!(f.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    #[test]
    fn the_model_moves_a_hit_up_but_a_tie_keeps_walks_order() {
        // Item 2 is the model's first: 1/(61+2) + 1/61 beats item 0's 1/61 + 1/(61+1).
        let f = fuse_ranks(&[2.0, 1.0, 3.0]);
        assert_eq!(f.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 2, 1]);
        // Swapped first two (model prefers 1): equal fused scores, walk's order decides.
        let f = fuse_ranks(&[1.0, 2.0]);
        assert_eq!(f.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(f[0].1, f[1].1);
    }

    proptest! {
        /// The fused order is a permutation, fused scores fall, and it equals a brute-force
        /// sort of the definition.
        #[test]
        fn fusion_matches_its_definition(scores in proptest::collection::vec(-5.0f32..5.0, 0..40)) {
            let f = fuse_ranks(&scores);
            let mut idx: Vec<usize> = f.iter().map(|x| x.0).collect();
            idx.sort_unstable();
            prop_assert_eq!(idx, (0..scores.len()).collect::<Vec<_>>());
            for w in f.windows(2) {
                prop_assert!(w[0].1 >= w[1].1);
            }
            for &(i, fused, mr) in &f {
                let better = scores.iter().enumerate().filter(|&(j, s)| *s > scores[i] || (*s == scores[i] && j < i)).count();
                prop_assert_eq!(mr, better);
                let want = 1.0 / (RRF_K + 1.0 + i as f64) + 1.0 / (RRF_K + 1.0 + better as f64);
                prop_assert!((fused - want).abs() < 1e-12);
            }
        }
    }
}
