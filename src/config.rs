//! Engine configuration: sealing thresholds and chunking budgets, with SPEC defaults.

/// How the memory tree is built. `Default` gives SPEC §2's values.
#[derive(Debug, Clone)]
pub struct Config {
    /// A level-0 buffer seals when its token sum reaches this (default 50,000).
    pub seal_token_budget: u64,
    /// A level-0 buffer seals when its oldest item is older than this, on the content clock
    /// (a new item this much after the oldest) or the wall clock (default 1 hour).
    pub flush_age_ms: i64,
    /// A level ≥ 1 buffer seals when it holds this many children (default 10).
    pub fanout: usize,
    /// Token budget of one document slice (default 256).
    pub chunk_tokens: usize,
    /// Tokens shared by consecutive document slices (default 32).
    pub chunk_overlap_tokens: usize,
    /// A chat message or e-mail longer than this is split into flagged pieces (default 1,024).
    pub max_leaf_tokens: usize,
    /// Upper bound on one summary's text, in tokens (default 320).
    pub summary_tokens: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seal_token_budget: 50_000,
            flush_age_ms: 3_600_000,
            fanout: 10,
            chunk_tokens: 256,
            chunk_overlap_tokens: 32,
            max_leaf_tokens: 1_024,
            summary_tokens: 320,
        }
    }
}

/// Approximate token count: words plus punctuation runs, the way BPE tokenisers roughly
/// count English (≈ 1.3 tokens a word). Deterministic and cheap; used for budgets only.
pub fn approx_tokens(text: &str) -> usize {
    let words = text.split_whitespace().count();
    words + words.div_ceil(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_estimate_grows_with_words() {
        assert_eq!(approx_tokens(""), 0);
        assert_eq!(approx_tokens("one two three"), 4);
        assert!(approx_tokens(&"word ".repeat(300)) >= 390);
    }
}
