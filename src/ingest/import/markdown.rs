//! `--format markdown`: a folder of notes, one document each (`doc:<relative path>`).

use super::read_utf8;
use crate::error::{Error, Result};
use crate::ingest::Document;
use std::path::Path;

/// Read every `*.md` file under `dir` (recursively, sorted by path) as a document. A single
/// file path is accepted too.
pub fn read_markdown_dir(dir: &Path) -> Result<Vec<Document>> {
    let mut files = Vec::new();
    if dir.is_file() {
        files.push(dir.to_path_buf());
    } else {
        collect(dir, &mut files)?;
    }
    files.sort();
    let root = if dir.is_file() { dir.parent().unwrap_or(dir) } else { dir };
    let mut out = Vec::new();
    for f in files {
        let body = read_utf8(&f)?;
        if body.trim().is_empty() {
            continue; // an empty note has nothing to index
        }
        let rel = f.strip_prefix(root).unwrap_or(&f).to_string_lossy().replace('\\', "/");
        let title = body
            .lines()
            .find_map(|l| l.strip_prefix("# ").map(|t| t.trim().to_string()))
            .unwrap_or_else(|| f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
        let modified_ms = std::fs::metadata(&f)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        let doc = Document {
            source_id: format!("doc:{rel}").into(),
            title,
            body,
            modified_ms: Some(modified_ms),
            source_ref: Some(f.to_string_lossy().into_owned()),
            provider: Some("markdown".into()),
        };
        // Validate now: the CLI ingests one note at a time, so a note that ingest refuses (a
        // source id over 1024 bytes from a deep path) must fail the import before the notes
        // ahead of it are written.
        doc.validate().map_err(|e| Error::ImportFormat { path: f.clone(), line: 0, reason: e.to_string() })?;
        out.push(doc);
    }
    Ok(out)
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for e in entries {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let p = e.path();
        let ft = e.file_type().map_err(|err| Error::io(&p, err))?;
        if ft.is_dir() {
            collect(&p, out)?;
        } else if ft.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md")) {
            out.push(p);
        }
    }
    Ok(())
}
