//! Where a model's files are: [`ModelPaths`], the folder `scripts/fetch-models.sh` fills (or
//! any folder with the same files), and the ONNX Runtime library to load with it.

use super::{MODEL_DIR_ENV, MODEL_FILE, MODEL_SUBDIR, ORT_LIBRARY_FILE};
use std::path::{Path, PathBuf};

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
