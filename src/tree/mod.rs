//! The memory tree: per-source level buffers, the sealing cascade, and the `Summariser`
//! that writes a summary's text (extractive by default, an LLM when the host supplies one).

mod summariser;
mod topics;

pub use summariser::{ExtractiveSummariser, Summariser, SummaryChild, SummaryRequest};
pub use topics::topics_of;
