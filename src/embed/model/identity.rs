//! Which model a folder holds: its name, the optional settings file beside the weights, and
//! the manifest hash that tells one set of weights from another. A store keeps the three
//! beside its vectors (`store::models`), so vectors of two models never mix.

use crate::error::{Error, Result};
use std::path::Path;

/// The optional settings file of a model folder (`memtree-model.json`): `{"name": "…",
/// "max_tokens": N}`. Without it the folder is all-MiniLM-L6-v2 with a 256-token window (the
/// in-repo default, so stores made before the file existed keep their vectors).
pub const SETTINGS_FILE: &str = "memtree-model.json";

/// What a model folder says about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The model's name, stored beside its vectors.
    pub name: String,
    /// Longest input in tokens, `[CLS]` and `[SEP]` included.
    pub max_tokens: usize,
}

/// Reads `memtree-model.json` in `dir`, or the defaults when there is none.
pub fn settings(dir: &Path) -> Result<Settings> {
    let path = dir.join(SETTINGS_FILE);
    let default = Settings { name: super::MODEL_NAME.to_string(), max_tokens: super::MAX_TOKENS };
    if !path.is_file() {
        return Ok(default);
    }
    let bad = |why: String| Error::model(format!("{}: {why}", path.display()));
    let v: serde_json::Value = serde_json::from_slice(&super::read_file(&path)?).map_err(|e| bad(e.to_string()))?;
    let name = match &v["name"] {
        serde_json::Value::Null => default.name,
        serde_json::Value::String(s) if !s.trim().is_empty() && s.len() <= 100 => s.trim().to_string(),
        _ => return Err(bad("`name` must be a non-empty string of at most 100 bytes".into())),
    };
    let max_tokens = match &v["max_tokens"] {
        serde_json::Value::Null => default.max_tokens,
        n => n
            .as_u64()
            .filter(|&n| (2..=8192).contains(&n))
            .ok_or_else(|| bad("`max_tokens` must be a whole number from 2 to 8192".into()))? as usize,
    };
    Ok(Settings { name, max_tokens })
}

/// The manifest hash: BLAKE3 over the name, length and bytes of every file that decides a
/// vector (the weights, the four tokenizer files, the settings file when there is one), as
/// 16 hex digits. Not the ONNX Runtime library: another build of the runtime computes the
/// same vectors to float precision.
pub fn manifest_hash(dir: &Path) -> Result<String> {
    let mut h = blake3::Hasher::new();
    for name in super::VECTOR_FILES.iter().copied().chain(std::iter::once(SETTINGS_FILE)) {
        let path = dir.join(name);
        if name == SETTINGS_FILE && !path.is_file() {
            continue;
        }
        let file = std::fs::File::open(&path).map_err(|e| Error::Model {
            what: format!("cannot read {} (run scripts/fetch-models.sh)", path.display()),
            source: Some(Box::new(e)),
        })?;
        h.update(name.as_bytes());
        h.update(&file.metadata().map(|m| m.len()).unwrap_or(0).to_le_bytes());
        h.update_reader(file)
            .map_err(|e| Error::Model { what: format!("cannot read {}", path.display()), source: Some(Box::new(e)) })?;
    }
    Ok(h.finalize().to_hex()[..16].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_default_without_the_file_and_reject_bad_values() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path()).unwrap();
        assert_eq!((s.name.as_str(), s.max_tokens), (super::super::MODEL_NAME, super::super::MAX_TOKENS));
        std::fs::write(dir.path().join(SETTINGS_FILE), r#"{"name": "all-mpnet-base-v2", "max_tokens": 384}"#).unwrap();
        let s = settings(dir.path()).unwrap();
        assert_eq!((s.name.as_str(), s.max_tokens), ("all-mpnet-base-v2", 384));
        for bad in [r#"{"max_tokens": 0}"#, r#"{"name": ""}"#, r#"{"name": 3}"#, "not json"] {
            std::fs::write(dir.path().join(SETTINGS_FILE), bad).unwrap();
            let err = settings(dir.path()).unwrap_err();
            assert!(err.to_string().contains(SETTINGS_FILE), "{bad}: {err}");
        }
    }

    #[test]
    fn manifest_hash_changes_with_any_vector_file() {
        let dir = tempfile::tempdir().unwrap();
        for f in super::super::VECTOR_FILES {
            std::fs::write(dir.path().join(f), f.as_bytes()).unwrap();
        }
        let a = manifest_hash(dir.path()).unwrap();
        assert_eq!(a.len(), 16);
        assert_eq!(a, manifest_hash(dir.path()).unwrap());
        std::fs::write(dir.path().join(super::super::TOKENIZER_FILE), b"other").unwrap();
        assert_ne!(a, manifest_hash(dir.path()).unwrap());
        std::fs::remove_file(dir.path().join(super::super::MODEL_FILE)).unwrap();
        assert!(manifest_hash(dir.path()).is_err());
    }
}
