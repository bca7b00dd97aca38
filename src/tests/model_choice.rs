//! The model is a choice: a store records the model that made its vectors, and opening it
//! with another model (same name, other manifest) drops and re-embeds them; a reader with the
//! other model scores none of the old vectors meanwhile.

use crate::tests::common::{Fixture, T0, chat};
use crate::{Config, Embedder, Embedding, HashEmbedder, Memory, OpenOptions};
use std::sync::Arc;

/// The hashing embedder under one name with a chosen manifest (two "models" of one name),
/// flipping the vector's sign so the two makers' vectors differ.
struct Versioned {
    inner: HashEmbedder,
    manifest: &'static str,
    sign: f32,
}

impl Embedder for Versioned {
    fn name(&self) -> &str {
        "test-model"
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn manifest(&self) -> &str {
        self.manifest
    }
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f32>>> {
        let mut v = self.inner.embed(texts)?;
        v.iter_mut().flatten().for_each(|x| *x *= self.sign);
        Ok(v)
    }
}

fn opts(fx: &Fixture, manifest: &'static str, sign: f32, embedding: Embedding) -> OpenOptions {
    OpenOptions {
        embedder: Some(Arc::new(Versioned { inner: HashEmbedder::new(32), manifest, sign })),
        embedding,
        ..fx.options()
    }
}

#[test]
fn another_manifest_reembeds_and_never_mixes() {
    let fx = Fixture::new(Config::default());
    {
        let mut mem = Memory::open_with(fx.dir.path(), opts(&fx, "aaaa", 1.0, Embedding::WithEachWrite)).unwrap();
        mem.ingest([chat("slack:#a", "ann", T0, "the budget review moved to Friday")]).unwrap();
        mem.flush().unwrap();
        assert_eq!(mem.as_reader().stats().unwrap().vectors_pending, 0);
    }
    // Model B opened deferred: A's vectors are dropped at open, every node is pending, and
    // the reader's matrix holds none of A's vectors.
    let mut mem = Memory::open_with(fx.dir.path(), opts(&fx, "bbbb", -1.0, Embedding::Deferred)).unwrap();
    let stats = mem.as_reader().stats().unwrap();
    assert_eq!(stats.counts.vectors, 0, "model A's vectors must be gone");
    assert!(stats.vectors_pending > 0);
    let pending = stats.vectors_pending as usize;
    assert_eq!(mem.embed_pending(|_| {}).unwrap(), pending);
    assert_eq!(mem.as_reader().stats().unwrap().vectors_pending, 0);
    drop(mem);
    // Reopening with B again keeps B's vectors (nothing re-embedded).
    let mem = Memory::open_with(fx.dir.path(), opts(&fx, "bbbb", -1.0, Embedding::WithEachWrite)).unwrap();
    assert_eq!(mem.open_report().vectors_added, 0);
    assert_eq!(mem.as_reader().stats().unwrap().counts.vectors as usize, pending);
}
