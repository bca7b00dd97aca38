//! `walk`: a natural-language question in, ranked evidence out, no language model. The
//! router of SPEC §5 (query entities → global, occurrence-ranked global, or local entity
//! intersection) decides the branch; the branches share one leaf scorer, then each orders
//! its leaves (`rank`); `params` holds the scorer's weights and the `spec_baseline` preset.

mod answer;
mod coverage;
mod first;
mod history;
mod intent;
mod params;
mod query;
mod rank;
mod rerank_stage;
mod router;
mod score;
mod siblings;
mod timeline;

pub use crate::time::{TimeReading, read_time, time_window};
pub use params::{Ordering, PRESETS, WalkParams};
pub use query::{QueryAnalysis, analyse_query};
pub use rank::{Branch, Origin};
pub use router::{WalkArgs, WalkCandidates, walk, walk_candidates};
pub use score::{CandidateSignals, QuestionSignals, SHORT_QUESTION_TERMS, replay};
