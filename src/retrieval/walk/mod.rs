//! `walk`: a natural-language question in, ranked evidence out, no language model. The
//! router of SPEC §5 (query entities → global, occurrence-ranked global, or local entity
//! intersection) decides the branch; the branches share one leaf scorer.

mod query;
mod router;
mod score;
mod time;

pub use query::{QueryAnalysis, analyse_query};
pub use router::{Branch, WalkArgs, walk};
pub use score::WalkParams;
pub use time::time_window;
