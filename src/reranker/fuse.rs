//! Walk's rank and the cross-encoder's rank, fused by reciprocal rank; and the stage applied
//! to a walk's hits.
//!
//! Why reciprocal rank rather than the scores: walk's fused relevance and a cross-encoder's
//! logits live on unrelated scales that change with the question (and with the model a user
//! brings); ranks do not. The prototype that measured the gain fused ranks the same way.

use super::Reranker;
use crate::error::{Error, Result};
use crate::retrieval::RetrievalHit;
use serde_json::{Value, json};

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

/// Re-scores the first `reranker.top` of `hits` (walk's order) with the model, reorders them
/// by the fused rank, and gives every hit the fused score: the re-scored ones
/// `1/(K + walk rank) + 1/(K + model rank)`, the rest `2/(K + walk rank)`, which stays below
/// every re-scored one, so `score` falls down the list (ranks counted from 1). The passage scored is the hit's
/// snippet when it has one (a long message's matching passage), else its content. Each
/// re-scored hit's `explain.rerank` holds the model's score and rank and walk's rank.
///
/// A hit with `pinned[i]` (a standing instruction that walk brought for a request of its
/// kind) keeps its place and is not scored: the model judges whether a passage answers the
/// question, and an instruction ("always use TypeScript when I ask for code") does not
/// answer a request, it governs it; walk's instruction signal is what put it there. The
/// others are fused among themselves into the remaining places.
pub(crate) fn rerank_hits(
    reranker: &Reranker,
    query: &str,
    hits: &mut Vec<RetrievalHit>,
    pinned: &[bool],
) -> Result<()> {
    let n = reranker.top.min(hits.len());
    let is_pinned = |i: usize| pinned.get(i).copied().unwrap_or(false);
    let free: Vec<usize> = (0..n).filter(|&i| !is_pinned(i)).collect();
    if free.is_empty() {
        return Ok(());
    }
    let passages: Vec<&str> =
        free.iter().map(|&i| hits[i].snippet.as_ref().map_or(hits[i].content.as_str(), |s| s.text.as_str())).collect();
    let scores = reranker.scorer.score(query, &passages)?;
    if scores.len() != free.len() {
        return Err(Error::reranker(format!(
            "{} scored {} of {} passages",
            reranker.scorer.name(),
            scores.len(),
            free.len()
        )));
    }
    let fused = fuse_ranks(&scores);
    let mut head: Vec<Option<RetrievalHit>> = hits.drain(..n).map(Some).collect();
    let mut order = fused.into_iter();
    let mut reordered = Vec::with_capacity(n + hits.len());
    // A pinned hit takes the score above it (the best possible at the top), so scores still
    // fall down the list: the fused scores come out of `fuse_ranks` falling.
    let mut above = 2.0 / (RRF_K + 1.0);
    for slot in 0..n {
        if is_pinned(slot) {
            let Some(mut h) = head[slot].take() else { continue };
            h.score = above;
            reordered.push(h);
            continue;
        }
        let Some((k, f, model_rank)) = order.next() else { continue };
        let i = free[k];
        let Some(mut h) = head[i].take() else { continue };
        let rerank = json!({
            "model": reranker.scorer.name(),
            "score": scores[k],
            "rank": model_rank + 1,
            "walk_rank": i + 1,
            "walk_score": h.score,
        });
        match &mut h.explain {
            Some(Value::Object(m)) => {
                m.insert("rerank".into(), rerank);
            }
            e => *e = Some(json!({ "rerank": rerank })),
        }
        h.score = f;
        above = f;
        reordered.push(h);
    }
    for (j, mut h) in hits.drain(..).enumerate() {
        h.score = 2.0 / (RRF_K + 1.0 + (n + j) as f64);
        reordered.push(h);
    }
    *hits = reordered;
    Ok(())
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
