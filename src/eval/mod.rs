//! Evaluation: the recall harness (SPEC §7). Library code computes; the CLI prints.

pub mod corpus;
pub mod recall;
pub mod time_questions;

/// The harness's corpus format: LoCoMo-shaped JSON, one conversation (or one set of imported
/// files) a sample.
pub use crate::ingest::import::locomo::{Conversation, Question, Turn, read_locomo};
pub use corpus::{DEMO_QUESTIONS, FileSample, ImportFile, Sample, evidence_key, read_corpus};
