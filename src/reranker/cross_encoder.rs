//! A cross-encoder as an ONNX graph on the same ONNX Runtime as the embedder: the question
//! and a passage tokenised as one pair (`[CLS] q [SEP] p [SEP]`), one score out.
//!
//! A reranker folder holds:
//!
//! | file | what |
//! | --- | --- |
//! | `model.onnx` | inputs `input_ids`, `attention_mask` (and `token_type_ids` if it takes them), int64 `[batch, seq]`; one output, `logits` or the only one, `[batch, 1]` or `[batch]` |
//! | `tokenizer.json` | the model's tokenizer (a Hugging Face `tokenizers` file), with its pair template |
//! | `memtree-reranker.json` (optional) | `{"name", "max_tokens"}`; without it: the folder's name, 256 tokens |
//! | `libonnxruntime.so*` (optional) | else the embedding model's, or `ORT_DYLIB_PATH` |
//!
//! Everything a query could trip on is checked at load, never mid-query: the files, the
//! graph's inputs and output, one probe call whose output must be one score per pair, and a
//! second probe with the tokenizer's highest token id, which fails when the tokenizer's
//! vocabulary is larger than the model's embedding table (a tokenizer from another model).
//!
//! Why not fastembed's reranker API: the embedder left fastembed because its session builder
//! cannot turn ONNX Runtime's CPU arena off (an import reached 1.6 GB); its reranker keeps the
//! arena too. Measured on the same int8 cross-encoder, 100 questions × 20 passages, one
//! thread: fastembed 7.7's `TextRerank` peaked at 551 MB, this one at 190 MB (BENCHMARKS.md,
//! "Reranking"), since it is built like the embedder's session (arena and memory patterns
//! off) under `tune_malloc`.

use super::CrossScorer;
use crate::embed::{intra_threads, runtime, tokens};
use crate::error::{Error, Result, panic_message};
use ort::session::Session;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tokenizers::{EncodeInput, PaddingParams, Tokenizer, TruncationParams, TruncationStrategy};

/// The optional settings file of a reranker folder.
pub const RERANKER_SETTINGS_FILE: &str = "memtree-reranker.json";
/// Environment variable setting the reranker's ONNX Runtime intra-op threads (default: the
/// embedder's rule, the cores up to 4).
pub const RERANK_THREADS_ENV: &str = "MEMTREE_RERANK_THREADS";

const MODEL_FILE: &str = "model.onnx";
const TOKENIZER_FILE: &str = "tokenizer.json";
/// Longest pair in tokens without a settings file: a question and a paragraph. Cross-encoders
/// accept 512; the cost grows with the square of the length, and the stage scores a long
/// message's snippet, not the message.
const DEFAULT_MAX_TOKENS: usize = 256;
/// A passage is cut at this many bytes before tokenising: the tokenizer keeps every token of
/// a text until truncation, and `max_tokens` tokens never need more than a few KB.
const MAX_PASSAGE_BYTES: usize = 16 * 1024;

/// A loaded cross-encoder. Thread-safe: calls are serialised on one session.
pub struct CrossEncoder {
    session: Mutex<Session>,
    tokenizer: Tokenizer,
    pad_id: u32,
    type_ids: bool,
    output: String,
    name: String,
    max_tokens: usize,
    dir: PathBuf,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder").field("dir", &self.dir).field("name", &self.name).finish()
    }
}

/// An embedder's model error as the reranker's (the runtime helpers are shared).
fn as_reranker(e: Error) -> Error {
    match e {
        Error::Model { what, source } => Error::Reranker { what, source },
        other => other,
    }
}

impl CrossEncoder {
    /// Loads the reranker folder `dir` and checks it (module docs), on
    /// `$MEMTREE_RERANK_THREADS` intra-op threads (else the embedder's rule). Fails with
    /// [`Error::Reranker`] naming the file or the mismatch.
    pub fn load(dir: &Path) -> Result<CrossEncoder> {
        CrossEncoder::load_with_threads(dir, threads())
    }

    /// [`CrossEncoder::load`] on `threads` intra-op threads (at least 1).
    pub fn load_with_threads(dir: &Path, threads: usize) -> Result<CrossEncoder> {
        let dir = std::fs::canonicalize(dir).map_err(|e| Error::Reranker {
            what: format!("reranker folder {} is not readable", dir.display()),
            source: Some(Box::new(e)),
        })?;
        if !dir.is_dir() {
            return Err(Error::reranker(format!("{} is not a folder", dir.display())));
        }
        for name in [MODEL_FILE, TOKENIZER_FILE] {
            if !dir.join(name).is_file() {
                return Err(Error::reranker(format!(
                    "{} is missing: a reranker folder holds an ONNX cross-encoder ({MODEL_FILE}) and its {TOKENIZER_FILE}",
                    dir.join(name).display()
                )));
            }
        }
        let (name, max_tokens) = settings(&dir)?;
        let (tokenizer, pad_id) = load_tokenizer(&dir, max_tokens)?;
        let library = crate::embed::ModelPaths::new(&dir)
            .ort_library()
            .or_else(|| crate::embed::ModelPaths::from_env_or_default().ort_library())
            .ok_or_else(|| {
                Error::reranker(format!(
                    "no ONNX Runtime library in {} nor in the embedding model's folder (run scripts/fetch-models.sh, or set ORT_DYLIB_PATH)",
                    dir.display()
                ))
            })?;
        let (_, env) = runtime::init(&library).map_err(as_reranker)?;
        let model = dir.join(MODEL_FILE);
        let opts = runtime::SessionOptions { threads: threads.max(1), quiet: true };
        let session = catch_unwind(AssertUnwindSafe(|| runtime::session(&env, &model, opts)))
            .map_err(|p| {
                Error::reranker(format!(
                    "ONNX Runtime panicked while loading {}: {}",
                    model.display(),
                    panic_message(&*p)
                ))
            })?
            .map_err(as_reranker)?;
        let inputs: Vec<String> = session.inputs().iter().map(|i| i.name().to_string()).collect();
        for needed in ["input_ids", "attention_mask"] {
            if !inputs.iter().any(|i| i == needed) {
                return Err(Error::reranker(format!(
                    "{} has no `{needed}` input (it has {inputs:?}); a cross-encoder takes input_ids, attention_mask and optionally token_type_ids",
                    model.display()
                )));
            }
        }
        if let Some(other) =
            inputs.iter().find(|i| !matches!(i.as_str(), "input_ids" | "attention_mask" | "token_type_ids"))
        {
            return Err(Error::reranker(format!(
                "{} takes an input `{other}` that memtree does not give (a cross-encoder takes input_ids, attention_mask and optionally token_type_ids)",
                model.display()
            )));
        }
        let type_ids = inputs.iter().any(|i| i == "token_type_ids");
        let outputs: Vec<String> = session.outputs().iter().map(|o| o.name().to_string()).collect();
        let output = match outputs.iter().find(|o| o.as_str() == "logits").or(outputs.first()) {
            Some(o) => o.clone(),
            None => return Err(Error::reranker(format!("{} has no output", model.display()))),
        };
        let enc = CrossEncoder {
            session: Mutex::new(session),
            tokenizer,
            pad_id,
            type_ids,
            output,
            name,
            max_tokens,
            dir: dir.clone(),
        };
        enc.probe()?;
        Ok(enc)
    }

    /// The (canonical) folder it was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The longest pair in tokens; longer pairs lose the end of the passage.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The checks that need the model to run: one score per pair, and a vocabulary that fits.
    fn probe(&self) -> Result<()> {
        let pair = self.encode("a question", &["a passage"])?;
        let shape = self.run(&pair, &[0]).map(|(s, _)| s)?;
        if !matches!(shape[..], [1] | [1, 1]) {
            return Err(Error::reranker(format!(
                "{}: output `{}` is {shape:?} for one pair; a cross-encoder gives one score per pair ([batch, 1] or [batch]) — is this an embedding model?",
                self.dir.join(MODEL_FILE).display(),
                self.output
            )));
        }
        // The tokenizer's highest id must be a row of the model's embedding table.
        let vocab = self.tokenizer.get_vocab_size(true);
        let mut top = pair[0].clone();
        if let Some(last_real) = top.ids.len().checked_sub(2) {
            top.ids[last_real] = vocab.saturating_sub(1) as i64;
        }
        self.run(&[top], &[0]).map_err(|e| Error::Reranker {
            what: format!(
                "the tokenizer's vocabulary ({vocab} tokens, {}) does not fit the model {}: its highest token id cannot be read; use the tokenizer the model was trained with",
                self.dir.join(TOKENIZER_FILE).display(),
                self.dir.join(MODEL_FILE).display()
            ),
            source: Some(Box::new(e)),
        })?;
        Ok(())
    }

    fn encode(&self, query: &str, passages: &[&str]) -> Result<Vec<tokens::Tokens>> {
        let inputs: Vec<EncodeInput> =
            passages.iter().map(|p| EncodeInput::Dual(query.into(), head(p, MAX_PASSAGE_BYTES).into())).collect();
        let enc = self.tokenizer.encode_batch_fast(inputs, true).map_err(|e| Error::Reranker {
            what: format!("cannot tokenise {} pair(s)", passages.len()),
            source: Some(e),
        })?;
        Ok(enc
            .into_iter()
            .map(|e| tokens::Tokens {
                ids: e.get_ids().iter().map(|&x| i64::from(x)).collect(),
                type_ids: e.get_type_ids().iter().map(|&x| i64::from(x)).collect(),
            })
            .collect())
    }

    /// One model call on the rows `which` of `pairs`: the output's shape and values.
    fn run(&self, pairs: &[tokens::Tokens], which: &[usize]) -> Result<(Vec<i64>, Vec<f32>)> {
        let batch = tokens::Batch::pad(pairs, which, self.pad_id);
        let mut session =
            self.session.lock().map_err(|_| Error::reranker("the model is unusable after an earlier failure"))?;
        catch_unwind(AssertUnwindSafe(|| {
            runtime::run(&mut session, &batch, self.type_ids, &self.output).map_err(|e| Error::Reranker {
                what: format!("scoring {} pair(s) of {} tokens failed", batch.rows, batch.len),
                source: Some(Box::new(e)),
            })
        }))
        .map_err(|p| Error::reranker(format!("ONNX Runtime panicked while scoring: {}", panic_message(&*p))))?
    }
}

impl CrossScorer for CrossEncoder {
    fn name(&self) -> &str {
        &self.name
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>> {
        if passages.is_empty() {
            return Ok(Vec::new());
        }
        let pairs = self.encode(query, passages)?;
        // One pair per model call. An int8 model quantised dynamically (as `train-reranker.py`
        // exports, and most published int8 cross-encoders) computes one activation scale per
        // call over the whole batch, padding included, so a pair's score moved with the pairs
        // beside it (by up to 0.9 logits on one LoCoMo question, batched 19 + 1 against 20 at
        // once). Alone, a score is a function of its question and passage; a call's fixed cost
        // is small beside 20 × ~50–250 tokens of attention, and no padding is run.
        let mut scores = Vec::with_capacity(pairs.len());
        for i in 0..pairs.len() {
            let (shape, values) = self.run(&pairs, &[i])?;
            match values[..] {
                [score] => scores.push(score),
                _ => {
                    return Err(Error::reranker(format!(
                        "the model returned {shape:?} for one pair; expected one score per pair"
                    )));
                }
            }
        }
        Ok(scores)
    }
}

/// The settings file's name and pair length, else the folder's name and the default.
fn settings(dir: &Path) -> Result<(String, usize)> {
    let default_name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("reranker").to_string();
    let path = dir.join(RERANKER_SETTINGS_FILE);
    if !path.is_file() {
        return Ok((default_name, DEFAULT_MAX_TOKENS));
    }
    let bad = |why: String| Error::reranker(format!("{}: {why}", path.display()));
    let bytes = std::fs::read(&path).map_err(|e| bad(e.to_string()))?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    let name = match &v["name"] {
        serde_json::Value::Null => default_name,
        serde_json::Value::String(s) if !s.trim().is_empty() && s.len() <= 100 => s.trim().to_string(),
        _ => return Err(bad("`name` must be a non-empty string of at most 100 bytes".into())),
    };
    let max_tokens = match &v["max_tokens"] {
        serde_json::Value::Null => DEFAULT_MAX_TOKENS,
        n => n
            .as_u64()
            .filter(|&n| (8..=8192).contains(&n))
            .ok_or_else(|| bad("`max_tokens` must be a whole number from 8 to 8192".into()))? as usize,
    };
    Ok((name, max_tokens))
}

/// `tokenizer.json` with our truncation (the pair cut to `max_tokens`, the longer side first:
/// the passage) and no padding (batches pad themselves); the padding id is the tokenizer's
/// own, else `[PAD]`'s, else 0.
fn load_tokenizer(dir: &Path, max_tokens: usize) -> Result<(Tokenizer, u32)> {
    let path = dir.join(TOKENIZER_FILE);
    let bytes = std::fs::read(&path)
        .map_err(|e| Error::Reranker { what: format!("cannot read {}", path.display()), source: Some(Box::new(e)) })?;
    let mut tokenizer = Tokenizer::from_bytes(bytes)
        .map_err(|e| Error::Reranker { what: format!("{} is not a tokenizer", path.display()), source: Some(e) })?;
    let pad_id = tokenizer
        .get_padding()
        .map(|p| p.pad_id)
        .or_else(|| tokenizer.token_to_id("[PAD]"))
        .or_else(|| tokenizer.token_to_id("<pad>"))
        .unwrap_or(0);
    tokenizer.with_padding(None::<PaddingParams>);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: max_tokens,
            strategy: TruncationStrategy::LongestFirst,
            ..Default::default()
        }))
        .map_err(|e| Error::Reranker { what: format!("{}: cannot truncate", path.display()), source: Some(e) })?;
    Ok((tokenizer, pad_id))
}

/// The first `max` bytes of `s`, cut at a character boundary.
fn head(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Intra-op threads: `MEMTREE_RERANK_THREADS` when a positive number, else the embedder's.
fn threads() -> usize {
    std::env::var(RERANK_THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(intra_threads)
}
