//! The real embedder: all-MiniLM-L6-v2 (int8 ONNX) through fastembed's user-defined model API
//! and an ONNX Runtime shared library loaded at run time.
//!
//! Nothing here touches the network: every file comes from a model folder that
//! `scripts/fetch-models.sh` fills (see `models/README.md`). The folder holds
//!
//! | file | what |
//! | --- | --- |
//! | `model.onnx` | the transformer, output `last_hidden_state` `[batch, seq, 384]` |
//! | `tokenizer.json`, `config.json`, `special_tokens_map.json`, `tokenizer_config.json` | the BERT WordPiece tokenizer |
//! | `libonnxruntime.so.1.31.1` | ONNX Runtime (any `libonnxruntime.so*` ≥ 1.24 works) |
//!
//! Pooling is the attention-masked mean of the token vectors, then L2 normalisation (the
//! model's sentence-transformers recipe; fastembed's default CLS pooling would be wrong).
//! Texts are truncated at [`MAX_TOKENS`] tokens; the shipped `tokenizer.json` pads and
//! truncates to a fixed 128, which fastembed replaces with batch-longest padding and our limit.
//!
//! A model folder is loaded once per process: [`FastEmbedder::load`] keeps the loaded model in
//! a process-wide cache keyed by the folder, and every `FastEmbedder` for that folder shares it.

use super::Embedder;
use crate::error::{Error, Result, panic_message};
use fastembed::{InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The model's name as stored beside the vectors.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// Output dimension of all-MiniLM-L6-v2.
pub const DIM: usize = 384;
/// Longest input in tokens (including `[CLS]` and `[SEP]`); longer texts are truncated.
/// The model was trained on 128-token windows and accepts 512 positions; 256 keeps a
/// paragraph whole at a modest cost.
pub const MAX_TOKENS: usize = 256;
/// Texts per ONNX Runtime call.
pub const BATCH_SIZE: usize = 32;
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
/// The ONNX Runtime library the fetch script installs.
const ORT_LIBRARY_FILE: &str = "libonnxruntime.so.1.31.1";

/// Where the model files live (see `models/README.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPaths {
    /// Folder holding `model.onnx`, the tokenizer files and `libonnxruntime.so*`.
    pub dir: PathBuf,
}

impl ModelPaths {
    /// A model folder at `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ModelPaths { dir: dir.into() }
    }

    /// `models/all-minilm-l6-v2` in this crate's checkout (where `scripts/fetch-models.sh`
    /// puts the files). The path is fixed at compile time.
    pub fn default_in_repo() -> Self {
        ModelPaths::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(MODEL_SUBDIR))
    }

    /// The folder named by `MEMTREE_MODEL_DIR`, when that variable is set and not empty.
    pub fn from_env() -> Option<Self> {
        std::env::var_os(MODEL_DIR_ENV).filter(|v| !v.is_empty()).map(ModelPaths::new)
    }

    /// `MEMTREE_MODEL_DIR` when set, else [`ModelPaths::default_in_repo`]. Does not check that
    /// the files exist: see [`ModelPaths::is_present`] and [`ModelPaths::discover`].
    pub fn from_env_or_default() -> Self {
        Self::from_env().unwrap_or_else(Self::default_in_repo)
    }

    /// Like [`ModelPaths::from_env_or_default`], but `None` when that folder has no
    /// `model.onnx` (the dense signal is then off; the caller says so once).
    pub fn discover() -> Option<Self> {
        Some(Self::from_env_or_default()).filter(ModelPaths::is_present)
    }

    /// True when the folder holds `model.onnx` (the other files are checked by `load`).
    pub fn is_present(&self) -> bool {
        self.model_file().is_file()
    }

    /// `model.onnx`.
    pub fn model_file(&self) -> PathBuf {
        self.dir.join(MODEL_FILE)
    }

    /// The ONNX Runtime library to load: `libonnxruntime.so.1.31.1` in the folder, else any
    /// other `libonnxruntime.so*` there (highest name first), else the file named by
    /// `ORT_DYLIB_PATH`. `None` when there is none.
    pub fn ort_library(&self) -> Option<PathBuf> {
        let preferred = self.dir.join(ORT_LIBRARY_FILE);
        if preferred.is_file() {
            return Some(preferred);
        }
        let prefix = format!("{}onnxruntime{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
        let mut found: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix)))
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        if let Some(p) = found.pop() {
            return Some(p);
        }
        std::env::var_os("ORT_DYLIB_PATH").filter(|v| !v.is_empty()).map(PathBuf::from)
    }
}

/// The loaded model, shared by every [`FastEmbedder`] on the same folder.
struct Loaded {
    /// fastembed's `embed` takes `&mut self`.
    model: Mutex<TextEmbedding>,
    dir: PathBuf,
}

/// all-MiniLM-L6-v2 via fastembed. Cheap to clone; thread-safe (calls are serialised on one
/// ONNX Runtime session, which itself runs on several intra-op threads).
#[derive(Clone)]
pub struct FastEmbedder {
    inner: Arc<Loaded>,
}

impl std::fmt::Debug for FastEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastEmbedder").field("dir", &self.inner.dir).finish()
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

    /// Like [`Embedder::embed`] with `batch_size` texts per ONNX Runtime call instead of
    /// [`BATCH_SIZE`] (for measurements; vectors do not depend on the batch size).
    pub fn embed_batched(&self, texts: &[&str], batch_size: usize) -> Result<Vec<Vec<f32>>> {
        if batch_size == 0 {
            return Err(Error::invalid("batch_size", "must be at least 1"));
        }
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut model = self
            .inner
            .model
            .lock()
            .map_err(|_| Error::model("the model is unusable after an earlier failure in this process"))?;
        // Batches are padded to their longest text, so when there is more than one batch,
        // group texts of similar length (by bytes, a cheap proxy for tokens) and put the
        // vectors back in the caller's order afterwards. A text's vector does not depend on
        // its batch: padding is masked out of attention and out of the mean.
        let order: Option<Vec<usize>> = (texts.len() > batch_size).then(|| {
            let mut order: Vec<usize> = (0..texts.len()).collect();
            order.sort_by_key(|&i| texts[i].len());
            order
        });
        let sorted: Vec<&str>;
        let input: &[&str] = match &order {
            Some(order) => {
                sorted = order.iter().map(|&i| texts[i]).collect();
                &sorted
            }
            None => texts,
        };
        let out = catch_unwind(AssertUnwindSafe(|| model.embed(input, Some(batch_size))))
            .map_err(|p| Error::model(format!("ONNX Runtime panicked while embedding: {}", panic_message(&*p))))?
            .map_err(|e| Error::Model {
                what: format!("embedding {} text(s) failed", texts.len()),
                source: Some(Box::new(e)),
            })?;
        drop(model);
        if out.len() != texts.len() {
            return Err(Error::model(format!("got {} vectors for {} texts", out.len(), texts.len())));
        }
        let mut vectors = vec![Vec::new(); texts.len()];
        for (k, v) in out.into_iter().enumerate() {
            let i = order.as_ref().map_or(k, |order| order[k]);
            vectors[i] = unit(v, i)?;
        }
        Ok(vectors)
    }
}

impl Embedder for FastEmbedder {
    fn name(&self) -> &str {
        MODEL_NAME
    }

    fn dim(&self) -> usize {
        DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_batched(texts, BATCH_SIZE)
    }
}

/// Checks dimension and renormalises in f64, so a vector is unit-norm to f32 precision.
/// A zero or non-finite vector is an error, never returned.
fn unit(mut v: Vec<f32>, index: usize) -> Result<Vec<f32>> {
    if v.len() != DIM {
        return Err(Error::model(format!("text {index}: got a {}-dimensional vector, expected {DIM}", v.len())));
    }
    let norm = v.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
    if !norm.is_finite() || norm < 1e-6 {
        return Err(Error::model(format!("text {index}: the model produced a degenerate vector (norm {norm})")));
    }
    for x in &mut v {
        *x = (f64::from(*x) / norm) as f32;
    }
    Ok(v)
}

fn load_uncached(dir: &Path) -> Result<Loaded> {
    let read = |name: &str| -> Result<Vec<u8>> {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|e| Error::Model {
            what: format!("cannot read {} (run scripts/fetch-models.sh)", path.display()),
            source: Some(Box::new(e)),
        })
    };
    let onnx = read(MODEL_FILE)?;
    let tokenizer_files = TokenizerFiles {
        tokenizer_file: read(TOKENIZER_FILE)?,
        config_file: read(CONFIG_FILE)?,
        special_tokens_map_file: read(SPECIAL_TOKENS_FILE)?,
        tokenizer_config_file: read(TOKENIZER_CONFIG_FILE)?,
    };
    let paths = ModelPaths::new(dir);
    let library = paths.ort_library().ok_or_else(|| {
        Error::model(format!(
            "no ONNX Runtime library: expected {} (run scripts/fetch-models.sh), or set ORT_DYLIB_PATH",
            dir.join(ORT_LIBRARY_FILE).display()
        ))
    })?;
    let library = init_ort(&library)?;

    let model = UserDefinedEmbeddingModel::new(onnx, tokenizer_files).with_pooling(Pooling::Mean);
    // ONNX Runtime's pool threads spin for a while after each call, waiting for the next one;
    // on two cores that spinning takes the CPU from the rest of the query (walk after its
    // query embedding ran ~2× slower than the same work without the model: BENCHMARKS.md).
    let options = InitOptionsUserDefined::new()
        .with_max_length(MAX_TOKENS)
        .with_intra_threads(intra_threads())
        .with_session_config("session.intra_op.allow_spinning", "0")
        .with_session_config("session.inter_op.allow_spinning", "0");
    let built =
        catch_unwind(AssertUnwindSafe(|| TextEmbedding::try_new_from_user_defined(model, options))).map_err(|p| {
            Error::model(format!("ONNX Runtime panicked while loading {}: {}", dir.display(), panic_message(&*p)))
        })?;
    let text_embedding = built.map_err(|e| {
        let what = match &e {
            fastembed::Error::TokenizerConfig(_) | fastembed::Error::Io(_) => format!(
                "cannot load the tokenizer from {} ({TOKENIZER_FILE}, {CONFIG_FILE}, {SPECIAL_TOKENS_FILE}, {TOKENIZER_CONFIG_FILE})",
                dir.display()
            ),
            _ => format!("cannot load {} with ONNX Runtime {}", dir.join(MODEL_FILE).display(), library.display()),
        };
        Error::Model { what, source: Some(Box::new(e)) }
    })?;
    Ok(Loaded { model: Mutex::new(text_embedding), dir: dir.to_path_buf() })
}

/// Loads the ONNX Runtime library once per process. `ort` keeps the first library it loads;
/// a failure is remembered so that later loads report it instead of letting `ort` fall back to
/// searching the system for a library (which panics when there is none).
/// Returns the library actually in use (the first one loaded in this process).
fn init_ort(library: &Path) -> Result<PathBuf> {
    static ORT: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    let outcome = ORT.get_or_init(|| {
        let absolute = std::path::absolute(library).unwrap_or_else(|_| library.to_path_buf());
        match catch_unwind(|| ort::init_from(&absolute).map(drop)) {
            Ok(Ok(())) => Ok(absolute),
            Ok(Err(e)) => Err(format!(
                "cannot load ONNX Runtime from {}: {e} (memtree needs ONNX Runtime >= 1.{}; run scripts/fetch-models.sh)",
                absolute.display(),
                ort::MINOR_VERSION
            )),
            Err(p) => Err(format!("loading ONNX Runtime from {} panicked: {}", absolute.display(), panic_message(&*p))),
        }
    });
    match outcome {
        Ok(path) => Ok(path.clone()),
        Err(what) => Err(Error::model(what.clone())),
    }
}

/// Intra-op threads: `MEMTREE_EMBED_THREADS` when set to a positive number, else the number of
/// cores, at most 4 (MiniLM gains little past that and the engine has other work).
fn intra_threads() -> usize {
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
    fn unit_rejects_zero_and_wrong_dimension() {
        assert!(unit(vec![0.0; DIM], 0).is_err());
        assert!(unit(vec![1.0; 3], 0).is_err());
        let v = unit(vec![2.0; DIM], 0).unwrap();
        let n: f64 = v.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
        assert!((n - 1.0).abs() < 1e-6, "{n}");
    }

    #[test]
    fn paths_helpers() {
        let p = ModelPaths::default_in_repo();
        assert!(p.dir.ends_with("models/all-minilm-l6-v2"));
        assert_eq!(p.model_file(), p.dir.join("model.onnx"));
    }
}
