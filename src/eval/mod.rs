//! Evaluation: the recall harness (SPEC §7), the FTS5 baseline, and what the benches time
//! apart. Library code computes; the CLI prints. Compiled with the `harness` feature only.

pub mod corpus;
mod fts5;
pub mod recall;
pub mod spoken_days;
pub mod time_questions;

/// The harness's corpus format: LoCoMo-shaped JSON, one conversation (or one set of imported
/// files) a sample.
pub use crate::ingest::import::locomo::{Conversation, Question, Turn, read_locomo};
pub use corpus::{DEMO_QUESTIONS, FileSample, ImportFile, Sample, evidence_key, read_corpus};
pub use fts5::Fts5Baseline;

use crate::embed::Rows;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::types::NodeId;

/// The text walk embeds for `question` (the question less what only the lexical signals
/// read): the latency bench times the query embedding apart with it.
pub fn dense_query_text(mem: &MemoryReader, question: &str) -> String {
    crate::retrieval::walk::analyse_query(mem, question).dense
}

/// The `dense` baseline: the raw question embedded, the `k` leaves of highest cosine among
/// every stored vector (a leaf's own: the classic baseline, which passage vectors do not
/// change); `None` without a model. The recall harness's `dense` system, and
/// the latency bench's row beside walk on the same store.
pub fn dense_top_k(mem: &MemoryReader, question: &str, k: usize) -> Result<Option<Vec<NodeId>>> {
    let Some(d) = mem.dense() else { return Ok(None) };
    let qv = d.embedder.embed(&[question])?.pop().unwrap_or_default();
    Ok(Some(d.vectors().top_k(&qv, k, Rows::Leaves).into_iter().map(|(id, _)| NodeId(id)).collect()))
}
