//! Dense embeddings: the `Embedder` trait, the ONNX model implementation (`model/`), a
//! deterministic test embedder, the int8 vector codes, and the in-memory vector matrix with
//! exact top-k over them.

mod codes;
mod hashing;
mod model;
mod passage_vectors;
mod passages;
mod vectors;

pub use codes::quantise;
pub use hashing::HashEmbedder;
pub use model::{Batching, FastEmbedder, ModelPaths, SETTINGS_FILE};
/// ONNX Runtime and batching, shared with the cross-encoder (`crate::reranker`).
pub(crate) use model::{intra_threads, runtime, tokens};
pub use passages::{PASSAGE_DISCOUNT, passage_slots};
pub use vectors::{PassageScores, Rows, VectorMatrix};

use crate::error::Result;

/// Turns texts into unit-norm vectors of a fixed dimension.
///
/// Implementations must be deterministic (same text, same vector) and thread-safe; the store
/// keeps the vectors it gets as the record, so changing the model means `memtree reindex`.
pub trait Embedder: Send + Sync {
    /// A stable name for the model, stored beside the vectors so a store notices a swap.
    fn name(&self) -> &str;
    /// Vector dimension.
    fn dim(&self) -> usize;
    /// A hash of the files that decide the vectors (weights, tokenizer, settings), stored
    /// beside the name: the same name with another manifest is another model. Empty when the
    /// name and dimension say it all (the test embedders).
    fn manifest(&self) -> &str {
        ""
    }
    /// Embed a batch of texts; returns one unit-norm vector per text, in order.
    /// An empty text gets the embedding of the empty string, never a zero vector.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// How many bytes of `text`, from its start, the model reads: a model with a window
    /// truncates, and what lies past it needs a vector of its own (`passages`). The whole
    /// text unless the model says otherwise; a wrapper around a model forwards it (without
    /// it, no leaf gets a passage vector).
    fn reads(&self, text: &str) -> Result<usize> {
        Ok(text.len())
    }
}
