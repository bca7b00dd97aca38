//! The crate's one error type, grouped by fault: the caller's input, the model, storage, I/O.

use std::path::PathBuf;

/// Result alias used across memtree.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in memtree. Variants are structured so callers can match on
/// them. One chain policy: `Display` says what failed, and a variant with a cause exposes it
/// through `source()` only, never in its own message, so a chain printer ([`Error::chain`],
/// anyhow's `{:#}`) names each cause once. What a tool caller (an LLM or a person) sees is
/// [`Error::chain`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // ---- the caller's input -------------------------------------------------------------
    /// A tool request that is malformed: missing/unknown mode, missing or mistyped field.
    #[error("{message}")]
    InvalidRequest {
        /// Human-readable text, the exact strings of SPEC §3 where it defines them.
        message: String,
    },
    /// A field value that is well-typed but unacceptable (blank body, reversed window, …).
    #[error("{field}: {reason}")]
    InvalidArgument {
        /// The field (or mode.field) at fault.
        field: String,
        /// Why it was refused.
        reason: String,
    },
    /// A node id that names no stored node of the kind asked for.
    #[error("no leaf `{id}` in the store")]
    NodeNotFound {
        /// The id asked for.
        id: String,
    },
    /// A source id the store does not hold.
    #[error("no source `{id}` in the store")]
    SourceNotFound {
        /// The id asked for.
        id: String,
    },
    /// A forget record id (`memtree forget --undo`) that names no record.
    #[error("no forget record {id}")]
    ForgetRecordNotFound {
        /// The id asked for.
        id: i64,
    },
    /// An archive (`memtree export`'s JSON Lines) that cannot be read: truncated, corrupted,
    /// or not an archive; nothing was restored.
    #[error("archive line {line}: {reason}")]
    Archive {
        /// 1-based line of the archive (0: the archive as a whole).
        line: u64,
        /// What is wrong.
        reason: String,
    },
    /// An archive written by a newer memtree, in a format version this build cannot read.
    #[error(
        "archive format version {found} is newer than this memtree reads (up to {supported}): restore it with a newer memtree"
    )]
    ArchiveVersion {
        /// The archive's version.
        found: u32,
        /// The newest this build reads.
        supported: u32,
    },
    /// A restore with another embedding model than the one the archive names: its vectors
    /// would be another model's than the store it came from.
    #[error(
        "the archive was exported with model `{archive}`, this restore runs with `{given}`: restore with the archive's model, or without a model and re-embed with the new one afterwards"
    )]
    ArchiveModel {
        /// The model the archive names.
        archive: String,
        /// The model of the restore.
        given: String,
    },
    /// A restore into a store that already holds something, without a merge.
    #[error("the store at {dir} is not empty: restore into a new store, or merge the archive into this one")]
    StoreNotEmpty {
        /// The store directory.
        dir: PathBuf,
    },
    /// An import path (file or folder) with nothing at it.
    #[error("{path}: no such file or directory")]
    PathNotFound {
        /// The path given.
        path: PathBuf,
    },
    /// An import input that is plainly of another format than the one asked for.
    #[error("{path}: this is {found}, not {format} input{}", suggest.as_ref().map(|f| format!("; import it as format `{f}`")).unwrap_or_default())]
    WrongFormat {
        /// The input given.
        path: PathBuf,
        /// The format asked for.
        format: String,
        /// What the input looks like instead.
        found: String,
        /// The format that reads it, when one does.
        suggest: Option<String>,
    },
    /// An import file that cannot be parsed, naming the file and the line.
    #[error("{path}:{line}: {reason}")]
    ImportFormat {
        /// The file being imported.
        path: PathBuf,
        /// 1-based line (0 when the fault is not tied to a line).
        line: usize,
        /// What is wrong.
        reason: String,
    },

    // ---- the model ----------------------------------------------------------------------
    /// The embedding model could not be loaded or run.
    #[error("embedding model: {what}")]
    Model {
        /// What failed, in words.
        what: String,
        /// The underlying cause, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },

    /// The reranker (a cross-encoder, `crate::reranker`) could not be loaded or run.
    #[error("reranker: {what}")]
    Reranker {
        /// What failed, in words.
        what: String,
        /// The underlying cause, when there is one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },

    // ---- storage ------------------------------------------------------------------------
    /// A read of a store that does not exist: reads never create one (an import does).
    #[error("no store at {dir}")]
    NoStore {
        /// The store directory asked for.
        dir: PathBuf,
    },
    /// The SQLite system of record failed.
    #[error("store")]
    Sqlite(#[from] rusqlite::Error),
    /// The tantivy full-text index failed.
    #[error("full-text index")]
    Index(#[from] tantivy::TantivyError),
    /// The store on disk has a schema this build does not know how to open.
    #[error("store schema: {reason}")]
    Schema {
        /// Why the store or its schema file cannot be used.
        reason: String,
    },
    /// Another writer (a handle in this or another process) held the store's writer lock
    /// for longer than the lock timeout (`OpenOptions::lock_timeout`).
    #[error("store is locked by another writer: {path} (waited {waited_ms} ms)")]
    Locked {
        /// The store directory.
        path: PathBuf,
        /// How long this writer waited before giving up.
        waited_ms: u64,
    },
    /// The background embedder was asked to stop: its model refused the next slice and the
    /// write in flight rolled back (a later run makes it again). Never a failure.
    #[error("background embedding stopped")]
    EmbeddingStopped,
    /// The background embedder's thread panicked (a bug); it has ended, and the store is as
    /// its last commit left it.
    #[error("the background embedder panicked: {message}")]
    WorkerPanicked {
        /// The panic's message.
        message: String,
    },
    /// A stored value failed to decode (corruption or a bug), naming the row.
    #[error("corrupt record {what}: {reason}")]
    Corrupt {
        /// Which record.
        what: String,
        /// Why it could not be read.
        reason: String,
    },

    // ---- I/O ----------------------------------------------------------------------------
    /// A file-system operation failed on `path`.
    #[error("{path}")]
    Io {
        /// The path being read or written.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// JSON (de)serialisation failed.
    #[error("json")]
    Json(#[from] serde_json::Error),
}

/// The message a caught panic carried (`panic!` with a literal or a formatted string), for
/// the error that reports it.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

impl Error {
    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidArgument { field: field.into(), reason: reason.into() }
    }

    /// Shorthand for [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// Shorthand for [`Error::Reranker`] without a cause.
    pub fn reranker(what: impl Into<String>) -> Self {
        Error::Reranker { what: what.into(), source: None }
    }

    /// Shorthand for [`Error::Model`] without a cause.
    pub fn model(what: impl Into<String>) -> Self {
        Error::Model { what: what.into(), source: None }
    }

    /// The message and its causes, `: `-separated: what a model needs to correct its call, or
    /// a status line to show whole.
    pub fn chain(&self) -> String {
        let mut s = self.to_string();
        let mut src = std::error::Error::source(self);
        while let Some(c) = src {
            s.push_str(": ");
            s.push_str(&c.to_string());
            src = c.source();
        }
        s
    }

    /// True when the fault is the caller's (bad request or argument), not the engine's.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            Error::InvalidRequest { .. }
                | Error::InvalidArgument { .. }
                | Error::PathNotFound { .. }
                | Error::ImportFormat { .. }
                | Error::ForgetRecordNotFound { .. }
                | Error::Archive { .. }
                | Error::ArchiveVersion { .. }
                | Error::ArchiveModel { .. }
                | Error::StoreNotEmpty { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain policy: a variant with a source names it once in the chain, and its own
    /// message does not quote it.
    #[test]
    fn a_chain_names_each_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::IsADirectory, "Is a directory");
        let e = Error::io("/tmp", io);
        assert_eq!(e.to_string(), "/tmp");
        assert_eq!(e.chain(), "/tmp: Is a directory");
        let sql = Error::from(rusqlite::Error::InvalidQuery);
        assert_eq!(sql.chain().matches("Query is not read-only").count(), 1, "{}", sql.chain());
        assert!(sql.chain().starts_with("store: "), "{}", sql.chain());
        // Every variant with a source: its message does not contain the source's.
        let json = Error::from(serde_json::from_str::<u8>("x").unwrap_err());
        for e in [e, sql, json] {
            let cause = std::error::Error::source(&e).unwrap().to_string();
            assert!(!e.to_string().contains(&cause), "{e} repeats {cause}");
        }
    }
}
