//! The rerank stage after `walk`: a model that reads the question and a memory together
//! (a cross-encoder) re-scores walk's top N, and its rank is fused with walk's own. Off unless
//! a host gives one ([`crate::OpenOptions::reranker`], `--reranker DIR`).
//!
//! Why a stage and not another signal inside walk's scorer: walk's signals, re-weighted, did
//! not carry to conversations they were not fitted on, while a cross-encoder trained on two
//! corpora raised recall on the third (BENCHMARKS.md, "Reranking"). Why after walk and only
//! its top N: the model costs milliseconds per pair, walk microseconds per candidate.
//!
//! Not to be confused with `retrieval::rerank`, the lexical/dense similarity fusion that
//! orders `query_source` and `drill_down` hits.

mod cross_encoder;
mod fuse;
mod paths;

pub use cross_encoder::{CrossEncoder, RERANK_THREADS_ENV, RERANKER_SETTINGS_FILE};
pub use fuse::{RRF_K, fuse_ranks};
pub use paths::{DEFAULT_RERANKER_ARG, RERANKER_DIR_ENV, RERANKER_SUBDIR, default_reranker_dir, reranker_dir};

use crate::error::Result;
use std::sync::Arc;

/// How many of walk's hits the stage re-scores by default. The prototype measured most of
/// the gain of reranking 50 with 20 (LoCoMo held-out R@10 79.4 of 80.8) at 40 % of the cost,
/// and one core scores 20 short pairs well inside the latency target; a question wants 10.
pub const DEFAULT_RERANK_TOP: usize = 20;
/// The most hits the stage re-scores (the walk cap).
pub const MAX_RERANK_TOP: usize = 100;

/// Scores (question, passage) pairs; higher is more relevant. Deterministic and thread-safe.
pub trait CrossScorer: Send + Sync {
    /// A name for `explain` and the logs.
    fn name(&self) -> &str;
    /// One score per passage, in order.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>>;
}

/// The stage: a scorer and how many of walk's hits it re-scores.
#[derive(Clone)]
pub struct Reranker {
    /// The model.
    pub scorer: Arc<dyn CrossScorer>,
    /// Walk's top this many are re-scored; past them, hits keep walk's order (a walk for 30
    /// hits with `top` 20 reorders its first 20), so the first k hits are the same whatever
    /// the limit.
    pub top: usize,
}

impl std::fmt::Debug for Reranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reranker").field("scorer", &self.scorer.name()).field("top", &self.top).finish()
    }
}

impl Reranker {
    /// The cross-encoder in `dir` (see [`CrossEncoder::load`]) re-scoring the top `top`
    /// (clamped to 1..=[`MAX_RERANK_TOP`]).
    pub fn load(dir: &std::path::Path, top: usize) -> Result<Reranker> {
        Ok(Reranker::new(Arc::new(CrossEncoder::load(dir)?), top))
    }

    /// `scorer` re-scoring the top `top` (clamped to 1..=[`MAX_RERANK_TOP`]).
    pub fn new(scorer: Arc<dyn CrossScorer>, top: usize) -> Reranker {
        Reranker { scorer, top: top.clamp(1, MAX_RERANK_TOP) }
    }
}
