//! A deterministic bag-of-words embedder for tests and model-free runs: no weights, no I/O.

use super::Embedder;
use crate::error::Result;

/// Hashes lower-cased word unigrams and bigrams into `dim` buckets with signs, then
/// normalises. Texts that share words get a positive cosine, which is all tests need; it is
/// not a semantic model and is never used when the real one is available.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
}

impl HashEmbedder {
    /// A hashing embedder of dimension `dim` (at least 8).
    pub fn new(dim: usize) -> Self {
        HashEmbedder { dim: dim.max(8) }
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        let words: Vec<String> =
            text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(|w| w.to_lowercase()).collect();
        let mut add = |feature: &str, weight: f32| {
            let h = blake3::hash(feature.as_bytes());
            let b = h.as_bytes();
            let idx = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes")) as usize % self.dim;
            let sign = if b[8] & 1 == 0 { 1.0 } else { -1.0 };
            v[idx] += sign * weight;
        };
        for w in &words {
            add(w, 1.0);
        }
        for pair in words.windows(2) {
            add(&format!("{} {}", pair[0], pair[1]), 0.5);
        }
        // The empty text still gets a fixed unit vector, never zeros.
        add("\u{0}bias", 0.05);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }
}

impl Embedder for HashEmbedder {
    fn name(&self) -> &str {
        "hash-bow"
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn shared_words_score_higher_than_unrelated() {
        let e = HashEmbedder::new(256);
        let v = e.embed(&["the cat sat on the mat", "a cat on a mat", "quarterly revenue report"]).unwrap();
        assert!(cos(&v[0], &v[1]) > cos(&v[0], &v[2]));
        for x in &v {
            assert!((cos(x, x) - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn empty_text_is_a_unit_vector() {
        let e = HashEmbedder::new(64);
        let v = e.embed(&[""]).unwrap();
        assert!((cos(&v[0], &v[0]) - 1.0).abs() < 1e-5);
    }
}
