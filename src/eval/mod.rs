//! Evaluation: the recall harness (SPEC §7), the FTS5 baseline, and what the benches time
//! apart. Library code computes; the CLI prints. Compiled with the `harness` feature only.

pub mod corpus;
mod fts5;
pub mod recall;
pub mod time_questions;

/// The harness's corpus format: LoCoMo-shaped JSON, one conversation (or one set of imported
/// files) a sample.
pub use crate::ingest::import::locomo::{Conversation, Question, Turn, read_locomo};
pub use corpus::{DEMO_QUESTIONS, FileSample, ImportFile, Sample, evidence_key, read_corpus};
pub use fts5::Fts5Baseline;

use crate::reader::MemoryReader;

/// The text walk embeds for `question` (the question less what only the lexical signals
/// read): the latency bench times the query embedding apart with it.
pub fn dense_query_text(mem: &MemoryReader, question: &str) -> String {
    crate::retrieval::walk::analyse_query(mem, question).dense
}
