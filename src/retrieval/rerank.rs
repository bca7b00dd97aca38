//! Reranking a candidate set by similarity to a query: BM25 from the index, cosine from the
//! dense model when one is loaded, fused by min-max normalisation. The one min-max
//! normaliser and the one lexical/dense fusion every ranker uses (walk's scorer, the recall
//! harness's hybrid baseline) live here.
//!
//! Why min-max and not reciprocal-rank fusion: RETRIEVAL-NOTES lesson 4 — equal-weight RRF
//! with a weaker dense list drags a strong lexical list down, while a weighted min-max fusion
//! keeps the lexical order where dense has nothing to add.

use crate::embed::PASSAGE_DISCOUNT;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::types::NodeId;
use std::collections::HashMap;

/// Weights of the fused score.
#[derive(Debug, Clone, Copy)]
pub struct Fusion {
    /// Weight of the normalised BM25 score.
    pub lexical: f64,
    /// Weight of the normalised cosine.
    pub dense: f64,
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion { lexical: 0.5, dense: 0.5 }
    }
}

impl Fusion {
    /// `dense` as the share of the dense signal, the rest lexical.
    pub fn dense_share(dense: f64) -> Self {
        Fusion { lexical: 1.0 - dense, dense }
    }

    /// One candidate's fused score from its normalised signals; the lexical one alone when
    /// there is no dense signal (no model loaded).
    pub fn fuse(&self, lexical: f64, dense: Option<f64>) -> f64 {
        match dense {
            Some(d) => self.lexical * lexical + self.dense * d,
            None => lexical,
        }
    }

    /// `ids` ranked by the fusion of raw `lexical` and `dense` scores, each min-max normalised
    /// over its map; an id missing from a map scores 0 there, and `dense` `None` means lexical
    /// alone. Best first, ties by id; a repeated id counts once.
    pub fn rank<'a>(
        &self,
        lexical: &HashMap<NodeId, f64>,
        dense: Option<&HashMap<NodeId, f64>>,
        ids: impl IntoIterator<Item = &'a NodeId>,
    ) -> Vec<(NodeId, f64)> {
        let lex = min_max_map(lexical);
        let den = dense.map(min_max_map);
        let fused: HashMap<NodeId, f64> = ids
            .into_iter()
            .map(|id| {
                let l = lex.get(id).copied().unwrap_or(0.0);
                let d = den.as_ref().map(|d| d.get(id).copied().unwrap_or(0.0));
                (id.clone(), self.fuse(l, d))
            })
            .collect();
        let mut out: Vec<(NodeId, f64)> = fused.into_iter().collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

/// Min-max normalise into [0, 1], position for position (all equal → all 1 when positive,
/// else 0).
pub fn min_max(scores: &[f64]) -> Vec<f64> {
    let (lo, hi) = scores.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &s| (l.min(s), h.max(s)));
    scores
        .iter()
        .map(|&s| {
            if hi > lo {
                (s - lo) / (hi - lo)
            } else if hi > 0.0 {
                1.0
            } else {
                0.0
            }
        })
        .collect()
}

/// [`min_max`] with the range `max - min` taken as at least `floor` (> 0): the maximum maps
/// to `(max - min) / floor` when the values span less than `floor`, not to 1.
pub fn min_max_at_least(scores: &[f64], floor: f64) -> Vec<f64> {
    let (lo, hi) = scores.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &s| (l.min(s), h.max(s)));
    if hi - lo >= floor {
        return min_max(scores);
    }
    scores.iter().map(|&s| (s - lo) / floor).collect()
}

/// [`min_max`] over a map's values (min and max do not depend on the order they are taken
/// in, so the values are the same as the slice's).
pub fn min_max_map(scores: &HashMap<NodeId, f64>) -> HashMap<NodeId, f64> {
    let (ids, raw): (Vec<&NodeId>, Vec<f64>) = scores.iter().map(|(k, &s)| (k, s)).unzip();
    ids.into_iter().cloned().zip(min_max(&raw)).collect()
}

/// Score `ids` against `query`: fused lexical + dense in [0, 1] (lexical alone without a
/// model). Returns `(id, score)` best first, ties by id; ids with no signal score 0.
pub fn rerank(mem: &MemoryReader, query: &str, ids: &[NodeId], fusion: Fusion) -> Result<Vec<(NodeId, f64)>> {
    let bm25: HashMap<NodeId, f64> =
        mem.index().searcher().bm25_among(query, ids)?.into_iter().map(|(k, v)| (k, f64::from(v))).collect();
    let cos = match mem.dense() {
        Some(d) => {
            let q = d.embedder.embed(&[query])?.pop().unwrap_or_default();
            let cos: HashMap<NodeId, f64> = ids
                .iter()
                .filter_map(|id| {
                    d.vectors().best_cosine(&q, id.as_str(), PASSAGE_DISCOUNT).map(|(c, _)| (id.clone(), f64::from(c)))
                })
                .collect();
            Some(cos)
        }
        None => None,
    };
    Ok(fusion.rank(&bm25, cos.as_ref(), ids))
}

/// `r` with a note in its `explain` when `query` was past the question cap
/// (`text::cap_question`) and so was read only up to it: the reranking modes say what walk
/// says of a cut question.
pub(super) fn with_cut_note(
    mut r: crate::retrieval::QueryResponse,
    query: Option<&str>,
) -> crate::retrieval::QueryResponse {
    if let Some(note) = query.and_then(|q| crate::text::cap_question(q.trim()).1) {
        r.explain = Some(serde_json::json!({ "notes": [note] }));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_max_spans_zero_to_one_and_flat_lists_by_sign() {
        assert_eq!(min_max(&[2.0, 4.0, 3.0]), vec![0.0, 1.0, 0.5]);
        assert_eq!(min_max(&[3.0, 3.0]), vec![1.0, 1.0]);
        assert_eq!(min_max(&[0.0, 0.0]), vec![0.0, 0.0]);
        assert!(min_max(&[]).is_empty());
        let m: HashMap<NodeId, f64> = [(NodeId::from("a"), 2.0), (NodeId::from("b"), 4.0)].into();
        assert_eq!(min_max_map(&m)[&NodeId::from("a")], 0.0);
    }

    #[test]
    fn fusion_ranks_best_first_ties_by_id_missing_signals_zero() {
        let id = |s: &str| NodeId::from(s);
        let lex: HashMap<NodeId, f64> = [(id("a"), 1.0), (id("b"), 3.0)].into();
        let den: HashMap<NodeId, f64> = [(id("a"), 0.9), (id("c"), 0.1)].into();
        let ids = [id("a"), id("b"), id("c"), id("a")];
        let r = Fusion::default().rank(&lex, Some(&den), &ids);
        assert_eq!(r, vec![(id("a"), 0.5), (id("b"), 0.5), (id("c"), 0.0)]);
        let r = Fusion::default().rank(&lex, None, &ids);
        assert_eq!(r, vec![(id("b"), 1.0), (id("a"), 0.0), (id("c"), 0.0)]);
    }
}
