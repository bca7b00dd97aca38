//! The engine's vectors against reference vectors computed elsewhere (the torch
//! sentence-transformers recipe of `scripts/export_onnx.py reference`), text by text: the
//! check that an exported model folder is read by the engine as the model's authors meant.
//!
//! ```sh
//! python scripts/export_onnx.py reference SRC_DIR scripts/embed-check-texts.jsonl 384 /tmp/ref.f32
//! MEMTREE_MODEL_DIR=models/all-mpnet-base-v2 cargo run --release --example embed_check -- \
//!     scripts/embed-check-texts.jsonl /tmp/ref.f32 [MIN_COSINE]
//! ```
//!
//! `TEXTS_JSONL` holds one JSON string per line; the vectors file is float32, row-major, one
//! row per text. The engine embeds the texts twice: in its own padded batches
//! ([`Embedder::embed`]) and one text per call (no padding). Prints the minimum and mean cosine
//! of each to the reference, and fails when a minimum is below `MIN_COSINE` (default 0.9999).

use memtree::{Batching, Embedder, FastEmbedder, ModelPaths};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [texts, vectors, rest @ ..] = &args[..] else {
        return Err("usage: embed_check TEXTS_JSONL VECTORS_F32 [MIN_COSINE]".into());
    };
    let min_cosine: f64 = rest.first().map(|a| a.parse()).transpose()?.unwrap_or(0.9999);
    let texts: Vec<String> = std::fs::read_to_string(texts)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    let bytes = std::fs::read(vectors)?;
    let floats: Vec<f32> = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();

    let paths =
        ModelPaths::discover().ok_or("no model files: run scripts/fetch-models.sh, or set MEMTREE_MODEL_DIR")?;
    let model = FastEmbedder::load(&paths)?;
    let dim = model.dim();
    if floats.len() != texts.len() * dim {
        return Err(format!(
            "{} floats in the reference; {} texts of {dim} dimensions need {}",
            floats.len(),
            texts.len(),
            texts.len() * dim
        )
        .into());
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    // One row per call: a token budget of 1 gives every text a call of its own.
    let single = Batching { token_budget: 1, max_rows: 1 };
    println!("model {} ({dim} dims) in {}; {} texts", model.name(), model.dir().display(), texts.len());
    let mut failed = false;
    for (label, got) in
        [("engine batches", model.embed(&refs)?), ("one text per call", model.embed_with(&refs, single)?)]
    {
        let cosines: Vec<f64> = got
            .iter()
            .zip(floats.chunks_exact(dim))
            .map(|(a, b)| a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum::<f64>())
            .collect();
        let (worst, at) =
            cosines.iter().enumerate().fold((f64::INFINITY, 0), |m, (i, &c)| if c < m.0 { (c, i) } else { m });
        let mean = cosines.iter().sum::<f64>() / cosines.len().max(1) as f64;
        println!("{label}: min cosine {worst:.9} (text {at}), mean {mean:.9}");
        failed |= worst < min_cosine;
    }
    if failed {
        return Err(format!("a vector is below cosine {min_cosine} to the reference").into());
    }
    Ok(())
}
