//! A deterministic bag-of-words embedder for tests and model-free runs: no weights, no I/O.

use super::Embedder;
use crate::error::Result;

/// Hashes lower-cased word unigrams and bigrams into `dim` buckets with signs, then
/// normalises. Texts that share words get a positive cosine, which is all tests need; it is
/// not a semantic model and is never used when the real one is available.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
    /// Words read from a text's start, like a model's window (`None`: all of them).
    window: Option<usize>,
}

impl HashEmbedder {
    /// A hashing embedder of dimension `dim` (at least 8) that reads the whole text.
    pub fn new(dim: usize) -> Self {
        HashEmbedder { dim: dim.max(8), window: None }
    }

    /// One that reads only the first `words` words of a text (at least 1), as a model
    /// truncates at its window: what lies past them needs a passage vector.
    pub fn windowed(dim: usize, words: usize) -> Self {
        HashEmbedder { dim: dim.max(8), window: Some(words.max(1)) }
    }

    /// The words of `text` as (byte end, word), up to the window.
    fn words<'a>(&self, text: &'a str) -> impl Iterator<Item = (usize, &'a str)> {
        all_words(text).take(self.window.unwrap_or(usize::MAX))
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        let words: Vec<String> = self.words(text).map(|(_, w)| w.to_lowercase()).collect();
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

/// The words of `text` (runs of letters and digits) as (byte end, word).
fn all_words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize + w.len(), w))
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

    fn reads(&self, text: &str) -> Result<usize> {
        Ok(match self.window {
            None => text.len(),
            // The window's last word's end when the text has more words; else all of it.
            Some(n) => {
                let mut ends = all_words(text).map(|(end, _)| end).skip(n - 1);
                match (ends.next(), ends.next()) {
                    (Some(end), Some(_)) => end,
                    _ => text.len(),
                }
            }
        })
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
    fn a_window_reads_the_first_words_only() {
        let e = HashEmbedder::windowed(64, 2);
        let v = e.embed(&["alpha beta gamma", "alpha beta", "Alpha, beta!"]).unwrap();
        assert!((cos(&v[0], &v[1]) - 1.0).abs() < 1e-5, "the third word is past the window");
        assert_eq!(e.reads("alpha beta gamma").unwrap(), "alpha beta".len());
        assert_eq!(e.reads("Alpha, beta!").unwrap(), "Alpha, beta!".len(), "nothing past the window");
        assert_eq!(HashEmbedder::new(64).reads("alpha beta gamma").unwrap(), 16);
    }

    #[test]
    fn empty_text_is_a_unit_vector() {
        let e = HashEmbedder::new(64);
        let v = e.embed(&[""]).unwrap();
        assert!((cos(&v[0], &v[0]) - 1.0).abs() < 1e-5);
    }
}
