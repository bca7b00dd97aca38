//! The real embedder: a sentence-transformers model (all-MiniLM-L6-v2 int8 by default) as an
//! ONNX graph run by an ONNX Runtime shared library loaded at run time, with the model's own
//! WordPiece tokenizer and mean pooling.
//!
//! Nothing here touches the network: every file comes from a model folder that
//! `scripts/fetch-models.sh` fills (see `models/README.md`), or any folder with the same files:
//!
//! | file | what |
//! | --- | --- |
//! | `model.onnx` | the transformer: inputs `input_ids`, `attention_mask` (and `token_type_ids` if it takes them), int64 `[batch, seq]`; output `last_hidden_state` `[batch, seq, dim]` |
//! | `tokenizer.json`, `config.json`, `special_tokens_map.json`, `tokenizer_config.json` | the tokenizer |
//! | `memtree-model.json` (optional) | `{"name", "max_tokens"}`; without it: all-MiniLM-L6-v2, 256 tokens |
//! | `libonnxruntime.so*` | ONNX Runtime ≥ 1.24 (else `ORT_DYLIB_PATH`) |
//!
//! Pooling is the attention-masked mean of the token vectors, then L2 normalisation (the
//! sentence-transformers recipe). Texts are truncated at the model's `max_tokens`.
//!
//! We drive ONNX Runtime ourselves (`ort`) instead of through fastembed, whose session
//! builder cannot turn the CPU arena off: with it on, an import's memory grew to 1.6 GB
//! (`runtime`). The tokenizer set-up and the pooling arithmetic are fastembed 7.7's, so a
//! text's vector did not move (BENCHMARKS.md, "Model footprint"). Batches are bounded by
//! padded tokens, not by a count of texts (`tokens::plan`).
//!
//! A model folder is loaded once per process: [`FastEmbedder::load`] keeps the loaded model in
//! a process-wide cache keyed by the folder, and every `FastEmbedder` for that folder shares it.

mod identity;
mod paths;
mod pool;
pub(crate) mod runtime;
pub(crate) mod tokens;

pub use identity::SETTINGS_FILE;
pub use paths::ModelPaths;
pub use tokens::{MAX_ROWS, TOKEN_BUDGET};

use super::Embedder;
use crate::error::{Error, Result, panic_message};
use ort::session::Session;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tokenizers::Tokenizer;

/// The default model's name as stored beside the vectors.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// The default longest input in tokens (including `[CLS]` and `[SEP]`); longer texts are
/// truncated. MiniLM was trained on 128-token windows and accepts 512 positions; 256 keeps
/// a paragraph whole at a modest cost.
pub const MAX_TOKENS: usize = 256;
/// Environment variable naming a model folder (overrides the in-repo default).
pub const MODEL_DIR_ENV: &str = "MEMTREE_MODEL_DIR";
/// Environment variable setting ONNX Runtime's intra-op thread count.
pub const THREADS_ENV: &str = "MEMTREE_EMBED_THREADS";
/// The folder name under `models/` that `scripts/fetch-models.sh` fills.
pub const MODEL_SUBDIR: &str = "all-minilm-l6-v2";

const MODEL_FILE: &str = "model.onnx";
const TOKENIZER_FILE: &str = "tokenizer.json";
const CONFIG_FILE: &str = "config.json";
const SPECIAL_TOKENS_FILE: &str = "special_tokens_map.json";
const TOKENIZER_CONFIG_FILE: &str = "tokenizer_config.json";
/// The files a folder must hold, besides the runtime library; the manifest hash covers them.
const VECTOR_FILES: [&str; 5] = [MODEL_FILE, TOKENIZER_FILE, CONFIG_FILE, SPECIAL_TOKENS_FILE, TOKENIZER_CONFIG_FILE];
/// The ONNX Runtime library the fetch script installs.
const ORT_LIBRARY_FILE: &str = "libonnxruntime.so.1.31.1";

/// The loaded model, shared by every [`FastEmbedder`] on the same folder.
struct Loaded {
    /// `Session::run` takes `&mut self`: calls are serialised (each runs on the intra-op
    /// threads).
    session: Mutex<Session>,
    tokenizer: Tokenizer,
    pad_id: u32,
    io: Io,
    name: String,
    dim: usize,
    max_tokens: usize,
    manifest: String,
    dir: PathBuf,
}

/// A sentence-transformers ONNX model (all-MiniLM-L6-v2 by default). Cheap to clone;
/// thread-safe (calls are serialised on one ONNX Runtime session, which itself runs on
/// several intra-op threads). The name is historical: fastembed loaded it once.
#[derive(Clone)]
pub struct FastEmbedder {
    inner: Arc<Loaded>,
}

impl std::fmt::Debug for FastEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastEmbedder").field("dir", &self.inner.dir).field("name", &self.inner.name).finish()
    }
}

/// How [`FastEmbedder::embed_with`] groups texts into model calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batching {
    /// Padded tokens (rows × longest row) per call.
    pub token_budget: usize,
    /// Rows per call at most.
    pub max_rows: usize,
}

impl Default for Batching {
    fn default() -> Self {
        Batching { token_budget: TOKEN_BUDGET, max_rows: MAX_ROWS }
    }
}

impl FastEmbedder {
    /// Load the model from `paths`, or return the one this process already loaded from that
    /// folder. Fails with [`Error::Model`] naming the file at fault when a file is missing or
    /// unreadable, the ONNX Runtime library cannot be loaded or is older than 1.24, or the
    /// model or tokenizer does not parse.
    pub fn load(paths: &ModelPaths) -> Result<Self> {
        static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Loaded>>>> = OnceLock::new();
        let dir = std::fs::canonicalize(&paths.dir).map_err(|e| Error::Model {
            what: format!(
                "model folder {} is not readable (run scripts/fetch-models.sh, or set {MODEL_DIR_ENV})",
                paths.dir.display()
            ),
            source: Some(Box::new(e)),
        })?;
        let cache = CACHE.get_or_init(Default::default);
        // Held across the load so two threads never load the same folder twice.
        let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(loaded) = cache.get(&dir) {
            return Ok(FastEmbedder { inner: Arc::clone(loaded) });
        }
        let loaded = Arc::new(load_uncached(&dir)?);
        cache.insert(dir, Arc::clone(&loaded));
        Ok(FastEmbedder { inner: loaded })
    }

    /// The (canonical) folder the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The longest input in tokens (`memtree-model.json`'s `max_tokens`, else the default's);
    /// longer texts are truncated. A reference run of the same model needs the same limit.
    pub fn max_tokens(&self) -> usize {
        self.inner.max_tokens
    }

    /// Like [`Embedder::embed`] with other batching (for measurements; a text's vector does
    /// not depend on its batch beyond float rounding: padding is masked out of attention and
    /// out of the mean).
    pub fn embed_with(&self, texts: &[&str], batching: Batching) -> Result<Vec<Vec<f32>>> {
        if batching.token_budget == 0 || batching.max_rows == 0 {
            return Err(Error::invalid("batching", "the token budget and the rows per call must be at least 1"));
        }
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let l = &*self.inner;
        let tokens = tokens::encode(&l.tokenizer, texts)?;
        let mut vectors = vec![Vec::new(); texts.len()];
        let mut session = l
            .session
            .lock()
            .map_err(|_| Error::model("the model is unusable after an earlier failure in this process"))?;
        for call in tokens::plan(&tokens, batching.token_budget, batching.max_rows) {
            let batch = tokens::Batch::pad(&tokens, &call, l.pad_id);
            let (shape, rows) =
                catch_unwind(AssertUnwindSafe(|| run(&mut session, &l.io, &batch))).map_err(|p| {
                    Error::model(format!("ONNX Runtime panicked while embedding: {}", panic_message(&*p)))
                })??;
            let want = [batch.rows as i64, batch.len as i64, l.dim as i64];
            if shape[..] != want[..] {
                return Err(Error::model(format!("the model returned a {shape:?} output, expected {want:?}")));
            }
            for (k, &i) in call.iter().enumerate() {
                let row = &rows[k * batch.len * l.dim..(k + 1) * batch.len * l.dim];
                vectors[i] = pool::mean_unit(row, tokens[i].ids.len(), l.dim, i)?;
            }
        }
        Ok(vectors)
    }
}

/// The graph's inputs and the output to read.
struct Io {
    /// Whether the graph takes `token_type_ids` (BERT does, MPNet does not).
    type_ids: bool,
    /// The output holding the token vectors.
    output: String,
}

/// One model call: the token vectors of `batch`, row-major, and their shape (`[rows, len,
/// dim]` for a well-formed model; the caller checks).
fn run(session: &mut Session, io: &Io, batch: &tokens::Batch) -> Result<(Vec<i64>, Vec<f32>)> {
    runtime::run(session, batch, io.type_ids, &io.output).map_err(|e| Error::Model {
        what: format!("embedding a batch of {} text(s) of {} tokens failed", batch.rows, batch.len),
        source: Some(Box::new(e)),
    })
}

impl Embedder for FastEmbedder {
    fn name(&self) -> &str {
        &self.inner.name
    }

    fn dim(&self) -> usize {
        self.inner.dim
    }

    fn manifest(&self) -> &str {
        &self.inner.manifest
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_with(texts, Batching::default())
    }

    fn reads(&self, text: &str) -> Result<usize> {
        tokens::bytes_read(&self.inner.tokenizer, text)
    }
}

/// Reads a file of the model folder, naming it when it cannot.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::Model {
        what: format!("cannot read {} (run scripts/fetch-models.sh)", path.display()),
        source: Some(Box::new(e)),
    })
}

fn load_uncached(dir: &Path) -> Result<Loaded> {
    for name in VECTOR_FILES {
        let path = dir.join(name);
        if !path.is_file() {
            return Err(Error::model(format!("{} is missing (run scripts/fetch-models.sh)", path.display())));
        }
    }
    let settings = identity::settings(dir)?;
    let (tokenizer, pad_id) = tokens::load_tokenizer(dir, settings.max_tokens)?;
    let manifest = identity::manifest_hash(dir)?;
    let library = ModelPaths::new(dir).ort_library().ok_or_else(|| {
        Error::model(format!(
            "no ONNX Runtime library: expected {} (run scripts/fetch-models.sh), or set ORT_DYLIB_PATH",
            dir.join(ORT_LIBRARY_FILE).display()
        ))
    })?;
    let (library, env) = runtime::init(&library)?;
    let model = dir.join(MODEL_FILE);
    let opts = runtime::SessionOptions { threads: intra_threads(), quiet: false };
    let mut session = catch_unwind(AssertUnwindSafe(|| runtime::session(&env, &model, opts))).map_err(|p| {
        Error::model(format!(
            "ONNX Runtime {} panicked while loading {}: {}",
            library.display(),
            model.display(),
            panic_message(&*p)
        ))
    })??;
    let inputs: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
    for needed in ["input_ids", "attention_mask"] {
        if !inputs.contains(&needed) {
            return Err(Error::model(format!("{} has no `{needed}` input (it has {inputs:?})", model.display())));
        }
    }
    let type_ids = inputs.contains(&"token_type_ids");
    let outputs: Vec<&str> = session.outputs().iter().map(|o| o.name()).collect();
    let output = match outputs.iter().find(|&&o| o == "last_hidden_state").or(outputs.first()) {
        Some(o) => o.to_string(),
        None => return Err(Error::model(format!("{} has no output", model.display()))),
    };
    let io = Io { type_ids, output };
    // The output dimension, from one call on the empty text (the graph may leave it symbolic).
    let probe = tokens::encode(&tokenizer, &[""])?;
    let batch = tokens::Batch::pad(&probe, &[0], pad_id);
    let (shape, _) = run(&mut session, &io, &batch)?;
    let dim = match shape[..] {
        [1, len, dim] if len == batch.len as i64 && dim > 0 => dim as usize,
        _ => {
            return Err(Error::model(format!(
                "{}: output `{}` is {shape:?}; memtree needs token vectors [batch, tokens, dim]",
                model.display(),
                io.output
            )));
        }
    };
    Ok(Loaded {
        session: Mutex::new(session),
        tokenizer,
        pad_id,
        io,
        name: settings.name,
        dim,
        max_tokens: settings.max_tokens,
        manifest,
        dir: dir.to_path_buf(),
    })
}

/// Intra-op threads: `MEMTREE_EMBED_THREADS` when set to a positive number, else the number of
/// cores, at most 4 (MiniLM gains little past that and the engine has other work).
pub(crate) fn intra_threads() -> usize {
    std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()).min(4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_folder_is_a_model_error_naming_it() {
        let err = FastEmbedder::load(&ModelPaths::new("/nonexistent/memtree-model")).unwrap_err();
        assert!(matches!(err, Error::Model { .. }));
        assert!(err.to_string().contains("/nonexistent/memtree-model"), "{err}");
    }

    #[test]
    fn missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(MODEL_FILE), b"not a model").unwrap();
        let err = FastEmbedder::load(&ModelPaths::new(dir.path())).unwrap_err();
        assert!(err.to_string().contains(TOKENIZER_FILE), "{err}");
    }

    #[test]
    fn paths_helpers() {
        let p = ModelPaths::default_in_repo();
        assert!(p.dir.ends_with("models/all-minilm-l6-v2"));
        assert_eq!(p.model_file(), p.dir.join("model.onnx"));
    }
}
