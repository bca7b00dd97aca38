//! The rerank stage applied to a walk's hits: the first `top` re-scored by the host's
//! cross-encoder ([`Reranker`]) and reordered by the fused rank ([`fuse_ranks`]).

use crate::error::{Error, Result};
use crate::reranker::{RRF_K, Reranker, fuse_ranks};
use crate::retrieval::RetrievalHit;
use serde_json::{Value, json};

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
