//! What the harness asks over: the samples of a LoCoMo-shaped JSON file, each either a
//! conversation given turn by turn (LoCoMo, BEAM) or files imported the way a user imports
//! them (the demo's question set over `examples/demo/`), with its `qa` list.

use crate::error::{Error, Result};
use crate::ingest::import::Format;
use crate::ingest::import::locomo::{self, Conversation, Question};
use crate::store::NodeRow;
use std::path::{Path, PathBuf};

/// The question set shipped for the demo corpus, relative to the crate's root: the harness's
/// default corpus, so that `memtree bench recall` runs on a fresh clone.
pub const DEMO_QUESTIONS: &str = "examples/demo/questions.json";

/// One file a sample imports, with the importer it goes through.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportFile {
    /// The importer.
    pub format: Format,
    /// The file or folder, resolved against the corpus file's folder.
    pub path: PathBuf,
}

/// A sample whose content is imported from files: `{"sample_id", "import": [{"format",
/// "path"}], "qa": [...]}`. Its evidence ids name leaves by [`evidence_key`].
#[derive(Debug, Clone, PartialEq)]
pub struct FileSample {
    /// The sample's id.
    pub sample_id: String,
    /// What to import, in order.
    pub files: Vec<ImportFile>,
    /// Its questions.
    pub questions: Vec<Question>,
}

/// One sample of a corpus.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// LoCoMo's shape: the turns are in the file; evidence ids are `dia_id`s.
    Conversation(Conversation),
    /// Files imported as a user would; evidence ids are [`evidence_key`]s.
    Files(FileSample),
}

impl Sample {
    /// The sample's id.
    pub fn sample_id(&self) -> &str {
        match self {
            Sample::Conversation(c) => &c.sample_id,
            Sample::Files(f) => &f.sample_id,
        }
    }

    /// Its questions.
    pub fn questions(&self) -> &[Question] {
        match self {
            Sample::Conversation(c) => &c.questions,
            Sample::Files(f) => &f.questions,
        }
    }
}

/// Read a corpus: a JSON array of samples, each with a `conversation` (LoCoMo) or an `import`
/// list (paths relative to the corpus file).
///
/// # Errors
/// [`Error::ImportFormat`] for a file that is not such an array, a sample without
/// `sample_id`, an unknown format or a missing `path`; the LoCoMo reader's errors.
pub fn read_corpus(path: &Path) -> Result<Vec<Sample>> {
    let entries = locomo::read_samples(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out = Vec::with_capacity(entries.len());
    for (ci, c) in entries.iter().enumerate() {
        let Some(list) = c.get("import") else {
            out.push(Sample::Conversation(locomo::conversation(path, ci, c)?));
            continue;
        };
        let sample_id = locomo::sample_id(path, ci, c)?.to_string();
        let bad = |reason: String| Error::ImportFormat { path: path.to_path_buf(), line: 0, reason };
        let list = list.as_array().ok_or_else(|| bad(format!("{sample_id}: `import` is not a list")))?;
        let mut files = Vec::with_capacity(list.len());
        for f in list {
            let format = f["format"].as_str().ok_or_else(|| bad(format!("{sample_id}: an import without `format`")))?;
            let format: Format = format.parse().map_err(|e| bad(format!("{sample_id}: {e}")))?;
            let rel = f["path"].as_str().ok_or_else(|| bad(format!("{sample_id}: an import without `path`")))?;
            files.push(ImportFile { format, path: base.join(rel) });
        }
        // A key names a note by its path (`doc:Getting started/Sync your notes.md`), which may
        // hold spaces and commas: it is read whole, where LoCoMo's "D1:3; D2:4" lists are split.
        let mut questions = locomo::questions(c);
        let raw = c["qa"].as_array().map(Vec::as_slice).unwrap_or_default();
        for (q, r) in questions.iter_mut().zip(raw) {
            let keys = r["evidence"].as_array().map(Vec::as_slice).unwrap_or_default();
            q.evidence = keys.iter().filter_map(|e| e.as_str()).map(|e| e.trim().to_string()).collect();
        }
        out.push(Sample::Files(FileSample { sample_id, files, questions }));
    }
    Ok(out)
}

/// How a question over imported files names a leaf: a note by its source id (`doc:team.md`:
/// any part of the note counts), a message by its `source_ref` when the importer keeps one
/// (`mid:<message-id>` for e-mail, the permalink for Slack), else by source and time
/// (`slack:#eng@2023-05-10T14:11:00Z`, the chat-jsonl line's own `ts`).
pub fn evidence_key(n: &NodeRow) -> String {
    let scope = n.tree_id.scope();
    if scope.starts_with("doc:") {
        return scope.to_string();
    }
    if let Some(r) = &n.source_ref {
        return r.clone();
    }
    let ts = chrono::DateTime::from_timestamp_millis(n.time_start_ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    format!("{scope}@{ts}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_of_both_shapes_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.json");
        std::fs::write(
            &p,
            r#"[{"sample_id":"a","conversation":{"session_1_date_time":"1:56 pm on 8 May, 2023",
                "session_1":[{"speaker":"Ann","dia_id":"D1:1","text":"hello"}]},
                "qa":[{"question":"q?","evidence":["D1:1"],"category":4}]},
               {"sample_id":"b","import":[{"format":"chat-jsonl","path":"sub/chat.jsonl"}],
                "qa":[{"question":"r?","evidence":["mid:x@y", "doc:Getting started/A, B.md"],"category":2}]}]"#,
        )
        .unwrap();
        let s = read_corpus(&p).unwrap();
        assert!(matches!(&s[0], Sample::Conversation(c) if c.turns.len() == 1));
        let Sample::Files(f) = &s[1] else { panic!("expected an import sample") };
        assert_eq!(f.files, vec![ImportFile { format: Format::ChatJsonl, path: dir.path().join("sub/chat.jsonl") }]);
        // A note's key is read whole: its spaces and commas split nothing.
        assert_eq!(s[1].questions()[0].evidence, ["mid:x@y", "doc:Getting started/A, B.md"]);
        std::fs::write(&p, r#"[{"sample_id":"b","import":[{"format":"pdf","path":"x"}]}]"#).unwrap();
        assert!(read_corpus(&p).unwrap_err().to_string().contains("pdf"));
    }
}
