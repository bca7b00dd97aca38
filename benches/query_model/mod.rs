//! The benches' query model: the real model under the name a synthetic store's (hashing)
//! vectors were made with. A folder module (not `benches/*.rs`) so that Cargo does not take
//! it for a bench target.

#![allow(dead_code)] // each bench uses its own part

use memtree::{Embedder, HashEmbedder};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// The real model's query embedding under the name the store's vectors were made with, so
/// that opening a store with it loads the stored vectors and embeds nothing. Counts the time
/// spent embedding, to split a walk into its embedding and the rest.
///
/// `control` switches `embed()` to the hashing embedder (no ONNX Runtime at all), for a
/// control row: the same dense work in walk without the model's cost or its threads.
pub struct QueryModel {
    /// The model itself (a bench may time it alone).
    pub model: Arc<dyn Embedder>,
    stored_as: String,
    nanos: AtomicU64,
    /// Embed with the hashing embedder instead (the control row).
    pub control: AtomicBool,
    hashing: HashEmbedder,
}

impl QueryModel {
    pub fn new(model: Arc<dyn Embedder>, stored_as: &str) -> Self {
        let hashing = HashEmbedder::new(model.dim());
        QueryModel {
            model,
            stored_as: stored_as.to_string(),
            nanos: AtomicU64::new(0),
            control: AtomicBool::new(false),
            hashing,
        }
    }

    /// Nanoseconds spent in `embed` so far.
    pub fn embed_nanos(&self) -> u64 {
        self.nanos.load(Ordering::Relaxed)
    }
}

impl Embedder for QueryModel {
    fn name(&self) -> &str {
        &self.stored_as
    }

    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn embed(&self, texts: &[&str]) -> memtree::Result<Vec<Vec<f32>>> {
        let t = Instant::now();
        let out =
            if self.control.load(Ordering::Relaxed) { self.hashing.embed(texts) } else { self.model.embed(texts) };
        self.nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
        out
    }
}
