//! Evaluation: the LoCoMo recall harness (SPEC §7). Library code computes; the CLI prints.

pub mod recall;

/// The harness's corpus format: LoCoMo-shaped JSON, one conversation a sample.
pub use crate::ingest::import::locomo::{Conversation, Question, Turn, read_locomo};
