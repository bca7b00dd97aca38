//! `--format markdown`: a folder of notes (`*.md`, `*.markdown`), one document each, its
//! source id `doc:<path relative to the vault root>`. The vault root is the one given
//! (`--root`), else the nearest folder holding `.obsidian/`, else the outermost folder the
//! store remembers importing that holds the path, else the folder passed: so importing
//! `notes/projects/` after `notes/` names each note the same way (a sync then keys stored
//! notes by their file, see `memory::note_identity`). Front matter is metadata
//! (dates, tags, aliases; see `frontmatter`), and each note carries a hash of its bytes so a
//! re-import can tell unchanged notes from changed ones.

use super::frontmatter;
use super::read_utf8;
use crate::error::{Error, Result};
use crate::ingest::Document;
use crate::types::SourceId;
use std::path::{Path, PathBuf};

/// How to read a notes folder.
#[derive(Debug, Clone, Default)]
pub struct NoteOptions {
    /// The vault root that source ids are relative to (default: the nearest folder with
    /// `.obsidian/`, else the outermost of `known_roots` holding the path, else the folder
    /// passed). Must contain the path imported.
    pub root: Option<PathBuf>,
    /// Fail on the first unreadable note (nothing is written) instead of skipping it.
    pub strict: bool,
    /// The roots earlier imports named their notes relative to (resolved; the store's
    /// `note_roots`): without `root` or `.obsidian/`, a path inside one is named relative to
    /// the outermost such root.
    pub known_roots: Vec<PathBuf>,
}

/// One note, read and not yet written.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    /// The document: front matter removed from the body, dated by it.
    pub doc: Document,
    /// Front-matter `tags` (`#` dropped): the leaves' tags and `hashtag:` entities.
    pub tags: Vec<String>,
    /// Front-matter `aliases`: the engine has no entity for a note to hang an alias on, so
    /// an alias is a leaf tag (kept, never an entity).
    pub aliases: Vec<String>,
    /// BLAKE3 of the file's bytes, hex: equal hashes mean an unchanged note.
    pub hash: String,
    /// A warning to pass on (malformed front matter, a date that is not one); the note is
    /// imported regardless.
    pub warning: Option<String>,
}

/// A file and what is wrong with it: skipped, or imported with a warning.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileIssue {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub reason: String,
}

/// A notes folder, read.
#[derive(Debug, Clone, PartialEq)]
pub struct NoteFolder {
    /// The vault root the ids are relative to.
    pub root: PathBuf,
    /// The notes, sorted by path.
    pub notes: Vec<Note>,
    /// Files skipped (never with `strict`), with their would-be ids so that a note that
    /// cannot be read this time is not mistaken for one that vanished (a folder that could
    /// not be listed has its id prefix, ending in `/`).
    pub skipped: Vec<(SourceId, FileIssue)>,
    /// Notes left out because they hold nothing (blank, or front matter only).
    pub empty: usize,
    /// The folder (or the one file) imported, resolved: a stored note counts as vanished only
    /// when the file it was read from lies inside it (another folder's notes, which may share
    /// the id prefix when no vault root is known, are never pruned by this import).
    pub within: PathBuf,
}

/// Read every note under `dir` (recursively, sorted by path) as a document; a single file
/// path is accepted too. All-or-nothing: the first unreadable note fails the read. Front
/// matter is removed and dates the note (see [`read_notes`]).
pub fn read_markdown_dir(dir: &Path) -> Result<Vec<Document>> {
    // Ids relative to the folder given, as this reader always named them (no vault search:
    // the demo's and the harness's ids must not depend on where the checkout sits).
    let root = if dir.is_file() { dir.parent().map(Path::to_path_buf) } else { Some(dir.to_path_buf()) };
    let folder = read_notes(dir, &NoteOptions { root, strict: true, ..NoteOptions::default() })?;
    Ok(folder.notes.into_iter().map(|n| n.doc).collect())
}

/// Read the notes at `path` (a folder or one file). A note's time is its front matter's
/// `date`, else `created`, else a date its file name opens with (`2023-05-13 Standup.md`),
/// else `updated`, else the file's modification time: the first two and the daily-note name
/// say when the note happened, `updated` only when it was last touched. Without `strict`, a
/// note that cannot be read (I/O error, not UTF-8, refused by ingest) is skipped and named in
/// [`NoteFolder::skipped`]; empty notes are left out (nothing to index).
///
/// # Errors
/// [`Error::PathNotFound`]; [`Error::InvalidArgument`] for a `root` that does not contain
/// `path`; with `strict`, the first unreadable note's error.
pub fn read_notes(path: &Path, opts: &NoteOptions) -> Result<NoteFolder> {
    let abs = std::fs::canonicalize(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::PathNotFound { path: path.to_path_buf() },
        _ => Error::io(path, e),
    })?;
    let single = abs.is_file();
    let folder = if single { abs.parent().map(Path::to_path_buf).unwrap_or_else(|| abs.clone()) } else { abs.clone() };
    let root = match &opts.root {
        Some(r) => {
            let r = std::fs::canonicalize(r).map_err(|e| Error::io(r, e))?;
            if !abs.starts_with(&r) {
                return Err(Error::invalid(
                    "root",
                    format!("{} is not inside the root {}", path.display(), r.display()),
                ));
            }
            r
        }
        None => folder
            .ancestors()
            .find(|a| a.join(".obsidian").is_dir())
            .or_else(|| {
                // Outermost: the widest folder imported before names the most notes alike.
                opts.known_roots
                    .iter()
                    .filter(|r| folder.starts_with(r))
                    .min_by_key(|r| r.components().count())
                    .map(PathBuf::as_path)
            })
            .map(Path::to_path_buf)
            .unwrap_or_else(|| folder.clone()),
    };
    // Ids come from the resolved path (the root is found there), files are read and named
    // under the path as given: an error names the file the user pointed at.
    let base = if single { path.parent().unwrap_or(Path::new("")) } else { path };
    let abs_base = if single { folder.as_path() } else { abs.as_path() };
    let id_of = |f: &Path| {
        let rel = abs_base.join(f.strip_prefix(base).unwrap_or(f));
        format!("doc:{}", rel.strip_prefix(&root).unwrap_or(&rel).to_string_lossy().replace('\\', "/"))
    };
    let mut files = Vec::new();
    let mut unlisted = Vec::new();
    if single {
        files.push(path.to_path_buf());
    } else {
        collect(path, &mut files, &mut unlisted, opts.strict)?;
    }
    files.sort();
    let mut out =
        NoteFolder { root: root.clone(), notes: Vec::new(), skipped: Vec::new(), empty: 0, within: abs.clone() };
    // A folder that could not be listed: its id prefix (ending in `/`) keeps every note
    // stored under it from counting as vanished.
    for (dir, reason) in unlisted {
        out.skipped.push((format!("{}/", id_of(&dir)).into(), FileIssue { path: dir, reason }));
    }
    for f in files {
        let id = id_of(&f);
        // The note records the file it came from, resolved, so a later sync can tell whose it is.
        let resolved = abs_base.join(f.strip_prefix(base).unwrap_or(&f));
        match read_note(&f, &resolved, id.clone()) {
            Ok(Some(n)) => out.notes.push(n),
            Ok(None) => out.empty += 1,
            Err(e) if !opts.strict => {
                let reason = match e {
                    // The path is in `path` already; keep the line.
                    Error::ImportFormat { line, reason, .. } if line > 0 => format!("line {line}: {reason}"),
                    Error::ImportFormat { reason, .. } => reason,
                    Error::Io { source, .. } => source.to_string(),
                    other => other.chain(),
                };
                out.skipped.push((id.into(), FileIssue { path: f, reason }));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// One note file as a [`Note`]; `None` when it is empty.
fn read_note(f: &Path, resolved: &Path, id: String) -> Result<Option<Note>> {
    let text = read_utf8(f)?;
    let hash = blake3::hash(text.as_bytes()).to_hex().to_string();
    let fm = frontmatter::parse(&text);
    if fm.body.trim().is_empty() {
        return Ok(None); // an empty note has nothing to index
    }
    let body = fm.body.to_string();
    let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    // Front matter's `title`, else the first heading outside code blocks, else the file name.
    let title = fm.title.clone().or_else(|| frontmatter::first_heading(&body)).unwrap_or_else(|| stem.clone());
    let file_ms = || {
        std::fs::metadata(f)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    };
    let modified_ms =
        fm.date_ms.or_else(|| frontmatter::file_name_date(&stem)).or(fm.updated_ms).unwrap_or_else(file_ms);
    let doc = Document {
        source_id: id.into(),
        title,
        body,
        modified_ms: Some(modified_ms),
        source_ref: Some(resolved.to_string_lossy().into_owned()),
        provider: Some("markdown".into()),
    };
    // Validate now: nothing is written before every note is read, so a note that ingest
    // refuses (a source id over 1024 bytes from a deep path) is refused here.
    doc.validate().map_err(|e| Error::ImportFormat { path: f.to_path_buf(), line: 0, reason: e.to_string() })?;
    Ok(Some(Note { doc, tags: fm.tags, aliases: fm.aliases, hash, warning: fm.warning }))
}

/// `*.md` and `*.markdown` files under `dir`, recursively. Folders starting with `.`
/// (`.obsidian/`, `.git/`, `.trash/`) hold no notes. A folder that cannot be listed fails
/// the read when `strict`, else goes to `unlisted` with the reason.
fn collect(dir: &Path, out: &mut Vec<PathBuf>, unlisted: &mut Vec<(PathBuf, String)>, strict: bool) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if strict => return Err(Error::io(dir, e)),
        Err(e) => {
            unlisted.push((dir.to_path_buf(), e.to_string()));
            return Ok(());
        }
    };
    for e in entries {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let p = e.path();
        let ft = e.file_type().map_err(|err| Error::io(&p, err))?;
        let hidden = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if ft.is_dir() && !hidden {
            collect(&p, out, unlisted, strict)?;
        } else if ft.is_file()
            && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md") || x.eq_ignore_ascii_case("markdown"))
        {
            out.push(p);
        }
    }
    Ok(())
}
