//! Where the shipped cross-encoder is: `models/reranker/` of the source tree (committed, not
//! downloaded: README "Reranking"), or the folder `MEMTREE_RERANKER_DIR` names, and how a
//! program's `--reranker` argument names it (the word `default`).

use std::path::{Path, PathBuf};

/// Names the folder [`default_reranker_dir`] returns instead of the source tree's.
pub const RERANKER_DIR_ENV: &str = "MEMTREE_RERANKER_DIR";
/// The shipped reranker's folder under `models/`.
pub const RERANKER_SUBDIR: &str = "reranker";
/// What a program's `--reranker` takes to mean the shipped model (a folder of that name is
/// `./default`).
pub const DEFAULT_RERANKER_ARG: &str = "default";

/// `$MEMTREE_RERANKER_DIR` when set and not empty, else `models/reranker` of this crate's
/// checkout (fixed at compile time, as the embedding model's folder is). Not checked: loading
/// says what is missing.
pub fn default_reranker_dir() -> PathBuf {
    match std::env::var_os(RERANKER_DIR_ENV).filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join(RERANKER_SUBDIR),
    }
}

/// The folder a `--reranker` argument names: [`default_reranker_dir`] for the word
/// [`DEFAULT_RERANKER_ARG`], else the argument itself.
pub fn reranker_dir(arg: &Path) -> PathBuf {
    if arg == Path::new(DEFAULT_RERANKER_ARG) { default_reranker_dir() } else { arg.to_path_buf() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_default_names_the_shipped_folder_and_a_path_names_itself() {
        assert_eq!(reranker_dir(Path::new("default")), default_reranker_dir());
        assert_eq!(reranker_dir(Path::new("./default")), PathBuf::from("./default"));
        assert_eq!(reranker_dir(Path::new("/x/y")), PathBuf::from("/x/y"));
    }
}
