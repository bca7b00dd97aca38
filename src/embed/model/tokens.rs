//! Texts to token ids, and token ids to the model's batches: the WordPiece tokenizer set up
//! as fastembed set it up (so ids are the same as before), and batches bounded by their
//! padded size (rows × longest row) rather than by a count of texts.
//!
//! Why a token budget: ONNX Runtime's working memory for one call grows with
//! rows × length² (attention) and rows × length (every other layer); 32 texts of 256 tokens
//! need ~8× what 32 of 32 tokens need. A fixed count either wastes short texts' speed or
//! lets long ones blow the footprint, so rows are taken while rows × longest fits
//! [`TOKEN_BUDGET`].

use crate::error::{Error, Result};
use std::path::Path;
use tokenizers::{AddedToken, PaddingParams, Tokenizer, TruncationParams};

/// Padded tokens (rows × longest row) per model call. Small calls are both leaner and faster
/// on one core here: a call's activations then stay in cache (one thread, 126-token
/// messages: 31 vectors/CPU-s at 256 or 512 tokens per call, 22 at 4,096; BENCHMARKS.md,
/// "Model throughput"). Two 256-token texts per call; ~20 short turns.
pub const TOKEN_BUDGET: usize = 512;
/// Rows per model call at most, however short the texts.
pub const MAX_ROWS: usize = 64;

/// One text's tokens: `[CLS] … [SEP]`, truncated at the model's limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tokens {
    /// Token ids.
    pub ids: Vec<i64>,
    /// Segment ids (all 0 for one sentence).
    pub type_ids: Vec<i64>,
}

/// Loads the tokenizer from the four files of a model folder, as fastembed 7.7's
/// `load_tokenizer` did (so ids are unchanged): truncation at `min(max_tokens,
/// model_max_length)`, the special tokens of `special_tokens_map.json` registered. No
/// padding: batches are padded by [`Batch::pad`] to their own longest row. Returns the
/// tokenizer and the padding id (`config.json`'s `pad_token_id`, else the id of
/// `tokenizer_config.json`'s `pad_token`, else 0: fastembed's rule).
pub fn load_tokenizer(dir: &Path, max_tokens: usize) -> Result<(Tokenizer, u32)> {
    let bad = |file: &str, why: String| {
        Error::model(format!("cannot load the tokenizer: {}: {why}", dir.join(file).display()))
    };
    let json = |file: &str| -> Result<serde_json::Value> {
        let bytes = super::read_file(&dir.join(file))?;
        serde_json::from_slice(&bytes).map_err(|e| bad(file, e.to_string()))
    };
    let config = json(super::CONFIG_FILE)?;
    let special = json(super::SPECIAL_TOKENS_FILE)?;
    let tok_config = json(super::TOKENIZER_CONFIG_FILE)?;
    let bytes = super::read_file(&dir.join(super::TOKENIZER_FILE))?;
    let mut tokenizer = Tokenizer::from_bytes(bytes).map_err(|e| bad(super::TOKENIZER_FILE, e.to_string()))?;

    let model_max = tok_config["model_max_length"]
        .as_f64()
        .ok_or_else(|| bad(super::TOKENIZER_CONFIG_FILE, "no numeric `model_max_length`".into()))?;
    // BGE's files say 1e30 here: the float-to-int cast saturates, the min keeps ours.
    let max_length = max_tokens.min(model_max as usize);
    let pad = &tok_config["pad_token"];
    let pad_token: String = pad
        .as_str()
        .or_else(|| pad["content"].as_str())
        .ok_or_else(|| bad(super::TOKENIZER_CONFIG_FILE, "no string `pad_token`".into()))?
        .into();
    let pad_id =
        config["pad_token_id"].as_u64().map(|id| id as u32).or_else(|| tokenizer.token_to_id(&pad_token)).unwrap_or(0);
    tokenizer.with_padding(None::<PaddingParams>);
    tokenizer
        .with_truncation(Some(TruncationParams { max_length, ..Default::default() }))
        .map_err(|e| bad(super::TOKENIZER_FILE, e.to_string()))?;
    if let serde_json::Value::Object(map) = special {
        for value in map.values() {
            let token = if let Some(content) = value.as_str() {
                Some(AddedToken { content: content.into(), special: true, ..Default::default() })
            } else if let (Some(content), Some(single_word), Some(lstrip), Some(rstrip), Some(normalized)) = (
                value["content"].as_str(),
                value["single_word"].as_bool(),
                value["lstrip"].as_bool(),
                value["rstrip"].as_bool(),
                value["normalized"].as_bool(),
            ) {
                Some(AddedToken { content: content.into(), special: true, single_word, lstrip, rstrip, normalized })
            } else {
                None
            };
            if let Some(token) = token {
                tokenizer.add_special_tokens([token]).map_err(|e| bad(super::SPECIAL_TOKENS_FILE, e.to_string()))?;
            }
        }
    }
    Ok((tokenizer, pad_id))
}

/// Bytes of text tokenised at once. The tokenizer keeps every token of a text, not only the
/// first `max_tokens`: truncation moves the rest into the encoding's overflow, each token
/// with its string and offsets, until the batch is returned. 256 leaves of 5 KB (a 50 MB
/// message's pieces) made ~60 MB at once; texts are independent, so the groups change no id.
const ENCODE_BYTES: usize = 256 * 1024;

/// Tokenises `texts` (in parallel, without offsets: `encode_fast` gives the same ids as
/// `encode` and skips the work we would throw away), in groups of at most [`ENCODE_BYTES`]
/// (a longer text alone).
pub fn encode(tokenizer: &Tokenizer, texts: &[&str]) -> Result<Vec<Tokens>> {
    let mut out = Vec::with_capacity(texts.len());
    let mut rest = texts;
    while !rest.is_empty() {
        let mut bytes = rest[0].len();
        let n = 1 + rest[1..]
            .iter()
            .take_while(|t| {
                bytes += t.len();
                bytes <= ENCODE_BYTES
            })
            .count();
        let (group, after) = rest.split_at(n);
        let encodings = tokenizer
            .encode_batch_fast(group.to_vec(), true)
            .map_err(|e| Error::Model { what: format!("cannot tokenise {} text(s)", group.len()), source: Some(e) })?;
        out.extend(encodings.into_iter().map(|e| Tokens {
            ids: e.get_ids().iter().map(|&x| i64::from(x)).collect(),
            type_ids: e.get_type_ids().iter().map(|&x| i64::from(x)).collect(),
        }));
        rest = after;
    }
    Ok(out)
}

/// How many bytes of `text`, from its start, the truncated encoding covers: the end of its
/// last token that is not a special one (`[SEP]`), 0 for a text with none. The tokenizer is
/// the one [`load_tokenizer`] set up, so the truncation is the model's.
pub fn bytes_read(tokenizer: &Tokenizer, text: &str) -> Result<usize> {
    let e = tokenizer
        .encode(text, true)
        .map_err(|e| Error::Model { what: "cannot tokenise a text to find its window".into(), source: Some(e) })?;
    let end = e
        .get_offsets()
        .iter()
        .zip(e.get_special_tokens_mask())
        .filter(|&(_, &special)| special == 0)
        .map(|(&(_, end), _)| end)
        .max()
        .unwrap_or(0);
    Ok(end.min(text.len()))
}

/// Groups rows into model calls: rows sorted by length (so a call pads little), each call as
/// many rows as fit `budget` padded tokens, at most `max_rows`, at least one. Returns the
/// calls as lists of indexes into `tokens`.
pub fn plan(tokens: &[Tokens], budget: usize, max_rows: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..tokens.len()).collect();
    // By length, then by index: the same input always makes the same calls.
    order.sort_by_key(|&i| (tokens[i].ids.len(), i));
    let mut calls: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        let len = tokens[i].ids.len().max(1);
        // Sorted ascending, so this row is the longest of the call if it joins.
        let fits = (current.len() + 1) * len <= budget && current.len() < max_rows;
        if !current.is_empty() && !fits {
            calls.push(std::mem::take(&mut current));
        }
        current.push(i);
    }
    if !current.is_empty() {
        calls.push(current);
    }
    calls
}

/// One model call's inputs, row-major `[rows, len]`, padded to the longest row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Rows.
    pub rows: usize,
    /// Tokens per row (the longest row's).
    pub len: usize,
    /// `input_ids`.
    pub ids: Vec<i64>,
    /// `attention_mask`: 1 for a real token, 0 for padding.
    pub mask: Vec<i64>,
    /// `token_type_ids`.
    pub type_ids: Vec<i64>,
}

impl Batch {
    /// The rows `which` of `tokens`, right-padded with `pad_id` to the longest.
    pub fn pad(tokens: &[Tokens], which: &[usize], pad_id: u32) -> Batch {
        let rows = which.len();
        let len = which.iter().map(|&i| tokens[i].ids.len()).max().unwrap_or(0);
        let mut b = Batch {
            rows,
            len,
            ids: vec![i64::from(pad_id); rows * len],
            mask: vec![0; rows * len],
            type_ids: vec![0; rows * len],
        };
        for (r, &i) in which.iter().enumerate() {
            let t = &tokens[i];
            let at = r * len;
            b.ids[at..at + t.ids.len()].copy_from_slice(&t.ids);
            b.type_ids[at..at + t.type_ids.len()].copy_from_slice(&t.type_ids);
            b.mask[at..at + t.ids.len()].fill(1);
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(lens: &[usize]) -> Vec<Tokens> {
        lens.iter().map(|&n| Tokens { ids: vec![7; n], type_ids: vec![0; n] }).collect()
    }

    #[test]
    fn plan_respects_the_budget_and_covers_every_row_once() {
        let lens = [3, 250, 17, 256, 4, 4, 90, 1, 128, 64, 33, 200];
        let t = toks(&lens);
        let calls = plan(&t, 512, 8);
        let mut seen: Vec<usize> = calls.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..lens.len()).collect::<Vec<_>>());
        for c in &calls {
            let longest = c.iter().map(|&i| lens[i]).max().unwrap();
            assert!(c.len() == 1 || c.len() * longest <= 512, "{c:?}");
            assert!(c.len() <= 8);
        }
    }

    #[test]
    fn plan_gives_an_oversized_row_a_call_of_its_own() {
        let calls = plan(&toks(&[600, 2]), 512, 8);
        assert_eq!(calls, vec![vec![1], vec![0]]);
    }

    #[test]
    fn pad_masks_padding_and_keeps_rows() {
        let t = vec![
            Tokens { ids: vec![101, 5, 102], type_ids: vec![0; 3] },
            Tokens { ids: vec![101, 102], type_ids: vec![0; 2] },
        ];
        let b = Batch::pad(&t, &[1, 0], 0);
        assert_eq!((b.rows, b.len), (2, 3));
        assert_eq!(b.ids, vec![101, 102, 0, 101, 5, 102]);
        assert_eq!(b.mask, vec![1, 1, 0, 1, 1, 1]);
    }
}
