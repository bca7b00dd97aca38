//! Reranking a candidate set by similarity to a query: BM25 from the index, cosine from the
//! dense model when one is loaded, fused by min-max normalisation.
//!
//! Why min-max and not reciprocal-rank fusion: RETRIEVAL-NOTES lesson 4 — equal-weight RRF
//! with a weaker dense list drags a strong lexical list down, while a weighted min-max fusion
//! keeps the lexical order where dense has nothing to add.

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

/// Min-max normalise into [0, 1] (all equal → all 1 when positive, else 0).
pub fn min_max(scores: &HashMap<NodeId, f64>) -> HashMap<NodeId, f64> {
    let (lo, hi) = scores.values().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &s| (l.min(s), h.max(s)));
    scores
        .iter()
        .map(|(k, &s)| {
            let v = if hi > lo {
                (s - lo) / (hi - lo)
            } else if hi > 0.0 {
                1.0
            } else {
                0.0
            };
            (k.clone(), v)
        })
        .collect()
}

/// Score `ids` against `query`: fused lexical + dense in [0, 1] (lexical alone without a
/// model). Returns `(id, score)` best first, ties by id; ids with no signal score 0.
pub fn rerank(mem: &MemoryReader, query: &str, ids: &[NodeId], fusion: Fusion) -> Result<Vec<(NodeId, f64)>> {
    let bm25: HashMap<NodeId, f64> =
        mem.index().searcher().bm25_among(query, ids)?.into_iter().map(|(k, v)| (k, f64::from(v))).collect();
    let mut lex = min_max(&bm25);
    let mut fused: HashMap<NodeId, f64> = HashMap::new();
    let dense = match mem.dense() {
        Some(d) => {
            let q = d.embedder.embed(&[query])?.pop().unwrap_or_default();
            let cos: HashMap<NodeId, f64> = ids
                .iter()
                .filter_map(|id| d.vectors().cosine(&q, id.as_str()).map(|c| (id.clone(), f64::from(c))))
                .collect();
            Some(min_max(&cos))
        }
        None => None,
    };
    for id in ids {
        let l = lex.remove(id).unwrap_or(0.0);
        let s = match &dense {
            Some(d) => fusion.lexical * l + fusion.dense * d.get(id).copied().unwrap_or(0.0),
            None => l,
        };
        fused.insert(id.clone(), s);
    }
    let mut out: Vec<(NodeId, f64)> = fused.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(out)
}
