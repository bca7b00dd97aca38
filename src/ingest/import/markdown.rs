//! `--format markdown`: a folder of notes (`*.md`, `*.markdown`), one document each, its
//! source id `doc:<path relative to its root>`. The root is the one given (`--root`) for
//! every note; else each note's is the innermost of: the nearest folder holding `.obsidian/`
//! above the path, a vault (a folder holding `.obsidian/`) inside it, a root the store
//! remembers, and the folder passed. So a note is named the same whichever folder it is read
//! through: importing `notes/projects/` after `notes/` names each note as `notes/` did, and
//! importing the parent of a vault once names the vault's later notes as before (a sync then
//! keys stored notes by their file, see `memory::note_identity`). Front matter is metadata
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
    /// The root every source id is relative to; must contain the path imported. Default:
    /// each note's own root, the innermost holding it of the nearest folder with `.obsidian/`
    /// above the path (else the innermost of `known_roots` holding the path, else the folder
    /// passed), the vaults inside the path and `known_roots`.
    pub root: Option<PathBuf>,
    /// Fail on the first unreadable note (nothing is written) instead of skipping it.
    pub strict: bool,
    /// The roots earlier imports named their notes relative to (resolved; the store's
    /// `note_roots`): without `root`, a note inside one is named relative to the innermost
    /// such root, so an import of a wider folder names it as before.
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
    /// The import's root: the ids of notes inside no deeper root are relative to it.
    pub root: PathBuf,
    /// Vaults (folders holding `.obsidian/`) found inside the folder, whose notes are named
    /// relative to them; remembered as roots like `root`.
    pub vaults: Vec<PathBuf>,
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
                // Innermost: the root a note inside it was named relative to (a wider one
                // remembered later must not rename what is read through the narrower).
                innermost(&opts.known_roots, &folder)
            })
            .map(Path::to_path_buf)
            .unwrap_or_else(|| folder.clone()),
    };
    // Ids come from the resolved path (the root is found there), files are read and named
    // under the path as given: an error names the file the user pointed at.
    let base = if single { path.parent().unwrap_or(Path::new("")) } else { path };
    let abs_base = if single { folder.as_path() } else { abs.as_path() };
    let mut files = Vec::new();
    let mut unlisted = Vec::new();
    let mut vaults = Vec::new();
    if single {
        files.push(path.to_path_buf());
    } else {
        collect(path, &mut Listing { files: &mut files, unlisted: &mut unlisted, vaults: &mut vaults }, opts.strict)?;
    }
    files.sort();
    let vaults: Vec<PathBuf> = vaults.iter().map(|v| abs_base.join(v.strip_prefix(base).unwrap_or(v))).collect();
    // Each note's root: the one given, else the innermost of the roots that hold it.
    let roots: Vec<PathBuf> = match opts.root {
        Some(_) => vec![root.clone()],
        None => std::iter::once(root.clone()).chain(opts.known_roots.iter().cloned()).chain(vaults.clone()).collect(),
    };
    let id_of = |f: &Path| {
        let rel = abs_base.join(f.strip_prefix(base).unwrap_or(f));
        let mine = innermost(&roots, &rel).unwrap_or(&root);
        format!("doc:{}", rel.strip_prefix(mine).unwrap_or(&rel).to_string_lossy().replace('\\', "/"))
    };
    let mut out = NoteFolder {
        root: root.clone(),
        vaults: vaults.into_iter().filter(|v| *v != root).collect(),
        notes: Vec::new(),
        skipped: Vec::new(),
        empty: 0,
        within: abs.clone(),
    };
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

/// The innermost (deepest) of `roots` that holds `path`.
fn innermost<'a>(roots: &'a [PathBuf], path: &Path) -> Option<&'a Path> {
    roots.iter().filter(|r| path.starts_with(r)).max_by_key(|r| r.components().count()).map(PathBuf::as_path)
}

/// What [`collect`] finds.
struct Listing<'a> {
    /// Note files.
    files: &'a mut Vec<PathBuf>,
    /// Folders that could not be listed, with the reason.
    unlisted: &'a mut Vec<(PathBuf, String)>,
    /// Folders holding `.obsidian/`.
    vaults: &'a mut Vec<PathBuf>,
}

/// `*.md` and `*.markdown` files under `dir`, recursively. Folders starting with `.`
/// (`.obsidian/`, `.git/`, `.trash/`) hold no notes; one holding `.obsidian/` is a vault. A
/// folder that cannot be listed fails the read when `strict`, else is listed as unlisted
/// with the reason.
fn collect(dir: &Path, out: &mut Listing<'_>, strict: bool) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if strict => return Err(Error::io(dir, e)),
        Err(e) => {
            out.unlisted.push((dir.to_path_buf(), e.to_string()));
            return Ok(());
        }
    };
    for e in entries {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let p = e.path();
        let ft = e.file_type().map_err(|err| Error::io(&p, err))?;
        let hidden = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if ft.is_dir() && p.file_name().is_some_and(|n| n == ".obsidian") {
            out.vaults.push(dir.to_path_buf());
        } else if ft.is_dir() && !hidden {
            collect(&p, out, strict)?;
        } else if ft.is_file()
            && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("md") || x.eq_ignore_ascii_case("markdown"))
        {
            out.files.push(p);
        }
    }
    Ok(())
}
