//! The entity registry: one Markdown file per entity at `<content_root>/entities/<kind>/<slug>.md`,
//! YAML front matter for the identity, then a free-form notes body that belongs to the user.
//!
//! The vault is the source of truth for identities: every read goes to the files, so an alias a
//! user types into Obsidian resolves at the next lookup. Writes are atomic (temp file + rename in
//! the same folder), keep the notes body byte for byte, keep front-matter keys this module does
//! not know (Obsidian `tags`, `cssclasses`, …), and never leave the registry's root: a file name
//! is a slug of `[a-z0-9._-]` that cannot start with a dot, under a folder named by a known
//! [`EntityKind`].
//!
//! Only the file at an id's canonical path ([`Registry::path_for`]) counts for that id: a copy
//! or a renamed file is ignored by [`Registry::get`], [`Registry::all`] and
//! [`Registry::lookup_alias`] alike, so the three always agree.
//!
//! Here: the registry's operations and records. `slug` turns ids into file names, `file_format`
//! reads and writes the Markdown, `atomic` places the files.

mod atomic;
mod file_format;
mod slug;

/// The `---` front-matter splitter, shared with the Markdown importer (one reading of a note).
pub(crate) use file_format::split_front_matter;

use crate::error::{Error, Result};
use crate::types::{EntityId, EntityKind};
use atomic::{WriteMode, atomic_write, read_optional};
use file_format::{corrupt, parse_file, render, rfc3339_ms};
use serde_norway::Mapping;
use slug::{check_kind, id_tail, slug_for};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The registry's folder under the content root.
const ENTITIES_DIR: &str = "entities";

/// A registry of entity identities stored as Markdown files, one per entity.
///
/// ```
/// use memtree::{EntityRecord, Registry};
/// use memtree::{EntityId, EntityKind};
/// let dir = tempfile::tempdir().unwrap();
/// let reg = Registry::open(dir.path()).unwrap();
/// let mut alice = EntityRecord::new(EntityId::from("person:alice"), EntityKind::Person, "Alice Liddell");
/// alice.aliases.push("Ally".into());
/// reg.put(&alice, 1_683_504_000_000).unwrap(); // the caller's clock: 2023-05-08
/// assert_eq!(reg.lookup_alias(None, "ally").unwrap(), vec![EntityId::from("person:alice")]);
/// assert!(reg.path_for(&alice.id).unwrap().ends_with("entities/person/alice.md"));
/// ```
#[derive(Debug, Clone)]
pub struct Registry {
    /// `<content_root>/entities`.
    root: PathBuf,
}

/// An account on some platform: `kind` names the platform (`slack`, `github`, …), `value` the
/// account as the platform spells it (`alice`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Handle {
    /// The platform, e.g. `slack`.
    pub kind: String,
    /// The account name on that platform, e.g. `alice`.
    pub value: String,
}

impl Handle {
    /// A handle `value` on platform `kind`.
    pub fn new(kind: impl Into<String>, value: impl Into<String>) -> Self {
        Handle { kind: kind.into(), value: value.into() }
    }
}

/// One entity file: its front matter fields and its notes body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityRecord {
    /// Canonical id, `<kind>:<normalised surface>`; names the file.
    pub id: EntityId,
    /// The entity's kind; always the kind prefix of `id`.
    pub kind: EntityKind,
    /// The name shown to the user.
    pub display_name: String,
    /// Other names the entity goes by.
    pub aliases: Vec<String>,
    /// E-mail addresses.
    pub emails: Vec<String>,
    /// Accounts on chat and other platforms.
    pub handles: Vec<Handle>,
    /// When the file was first written (RFC 3339); kept by [`Registry::put`] once set.
    pub created_at: String,
    /// When the file was last written by the engine (RFC 3339); set by [`Registry::put`].
    pub updated_at: String,
    /// The Markdown body after the front matter, byte for byte. Empty in a record handed to
    /// [`Registry::put`] means "keep the body on disk".
    pub notes: String,
}

impl EntityRecord {
    /// A record with only an id, a kind and a display name; lists, timestamps and notes empty.
    pub fn new(id: EntityId, kind: EntityKind, display_name: impl Into<String>) -> Self {
        EntityRecord {
            id,
            kind,
            display_name: display_name.into(),
            aliases: Vec::new(),
            emails: Vec::new(),
            handles: Vec::new(),
            created_at: String::new(),
            updated_at: String::new(),
            notes: String::new(),
        }
    }

    /// True when `needle_lower` (already trimmed and lower-cased) equals, ignoring case and
    /// surrounding blanks, one of the aliases, e-mails, handle values or the display name.
    fn answers_to(&self, needle_lower: &str) -> bool {
        let hit = |s: &str| s.trim().to_lowercase() == needle_lower;
        hit(&self.display_name)
            || self.aliases.iter().any(|a| hit(a))
            || self.emails.iter().any(|e| hit(e))
            || self.handles.iter().any(|h| hit(&h.value))
    }
}

/// What [`Registry::fingerprint`] sums up of the vault's files. Comparing two tells whether
/// the vault changed between them without reading a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VaultFingerprint {
    /// Entity files.
    pub files: usize,
    /// Newest modification time, ns since the epoch.
    pub newest_ns: u128,
    /// Their total size.
    pub bytes: u64,
}

impl Registry {
    /// Open (creating it when missing) the registry under `<content_root>/entities`.
    pub fn open(content_root: &Path) -> Result<Registry> {
        let root = content_root.join(ENTITIES_DIR);
        fs::create_dir_all(&root).map_err(|e| Error::io(&root, e))?;
        Ok(Registry { root })
    }

    /// The registry's folder, `<content_root>/entities`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of `id`: `<root>/<kind>/<slug>.md`.
    ///
    /// The slug is the id's tail (after `<kind>:`) lower-cased, with every character outside
    /// `[a-z0-9._-]` replaced by `_`, runs of `_` collapsed, leading dots and underscores
    /// trimmed and the result capped at 120 bytes. Whenever that changed anything (or the
    /// result could be mistaken for a changed slug, or is a Windows device name), `-` and 8
    /// hex digits of `blake3(id)` are appended, so distinct ids get distinct files. The path
    /// never leaves `<root>/<kind>/`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the id has no known kind prefix or its slug is empty.
    pub fn path_for(&self, id: &EntityId) -> Result<PathBuf> {
        let (kind, slug) = slug_for(id)?;
        Ok(self.root.join(kind.as_str()).join(format!("{slug}.md")))
    }

    /// The record of `id`, or `None` when it has no file.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the file's front matter does not parse or names another id;
    /// [`Error::InvalidArgument`] for an id [`Registry::path_for`] refuses.
    pub fn get(&self, id: &EntityId) -> Result<Option<EntityRecord>> {
        let path = self.path_for(id)?;
        let Some(bytes) = read_optional(&path)? else {
            return Ok(None);
        };
        let parsed = parse_file(&bytes).map_err(|reason| corrupt(&path, reason))?;
        if parsed.record.id != *id {
            return Err(corrupt(&path, format!("front matter names `{}`, not `{}`", parsed.record.id, id)));
        }
        Ok(Some(parsed.record))
    }

    /// Write `rec` to its file, atomically (temp file + rename in the same folder).
    ///
    /// An existing file keeps its `created_at`, its notes body when `rec.notes` is empty, and
    /// any front-matter keys this module does not know; `updated_at` is set to `now_ms` (the
    /// caller's clock: the registry reads none), and so is `created_at` of a new file. A
    /// non-empty notes body that lacks a final newline gets one, so every file ends with `\n`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a refused id, a `kind` that is not the id's, or a
    /// `now_ms` outside chrono's range;
    /// [`Error::Corrupt`] when the existing file cannot be parsed or belongs to another id (it
    /// is left alone rather than overwritten: the user may be half-way through an edit);
    /// [`Error::Io`] when the write fails.
    pub fn put(&self, rec: &EntityRecord, now_ms: i64) -> Result<()> {
        let path = self.path_for(&rec.id)?;
        check_kind(&rec.id, rec.kind)?;
        let now = rfc3339_ms(now_ms)?;
        let mut out = rec.clone();
        out.updated_at = now.clone();
        let mut extras = Mapping::new();
        if let Some(bytes) = read_optional(&path)? {
            let existing = parse_file(&bytes).map_err(|reason| corrupt(&path, reason))?;
            if existing.record.id != rec.id {
                let reason = format!("front matter names `{}`, not `{}`", existing.record.id, rec.id);
                return Err(corrupt(&path, reason));
            }
            if !existing.record.created_at.is_empty() {
                out.created_at = existing.record.created_at;
            }
            if out.notes.is_empty() {
                out.notes = existing.record.notes;
            }
            extras = existing.extras;
        }
        if out.created_at.is_empty() {
            out.created_at = now;
        }
        let text = render(&out, &extras)?;
        atomic_write(&path, text.as_bytes(), WriteMode::Replace).map(|_| ())
    }

    /// Create a minimal record for `id` when it has no file yet; an existing file (even one
    /// that does not parse) is never touched. Returns true when the file was created.
    ///
    /// The new record's display name is `surface` (the id's tail when `surface` is blank), an
    /// `email:` entity lists its address under `emails`, and any other entity whose tail
    /// differs from the display name lists the tail as an alias; both timestamps are `now_ms`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a refused id, a `kind` that is not the id's, or a
    /// `now_ms` outside chrono's range; [`Error::Io`] when the write fails.
    pub fn upsert_seen(&self, id: &EntityId, kind: EntityKind, surface: &str, now_ms: i64) -> Result<bool> {
        let path = self.path_for(id)?;
        check_kind(id, kind)?;
        match fs::symlink_metadata(&path) {
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
        let stamp = rfc3339_ms(now_ms)?;
        let tail = id_tail(id);
        let display = if surface.trim().is_empty() { tail } else { surface.trim() };
        let mut rec = EntityRecord::new(id.clone(), kind, display);
        if kind == EntityKind::Email {
            rec.emails.push(tail.to_string());
        } else if tail.to_lowercase() != display.to_lowercase() {
            rec.aliases.push(tail.to_string());
        }
        rec.created_at = stamp.clone();
        rec.updated_at = stamp;
        let text = render(&rec, &Mapping::new())?;
        atomic_write(&path, text.as_bytes(), WriteMode::CreateNew)
    }

    /// The ids of the entities (of `kind`, when given) whose aliases, e-mails, handle values or
    /// display name equal `needle`, ignoring case and surrounding blanks; sorted. A blank
    /// needle matches nothing.
    ///
    /// Reads the files on every call: the vault is the source of truth, so an alias typed in by
    /// hand resolves at the next lookup. Files that do not parse are skipped.
    pub fn lookup_alias(&self, kind: Option<EntityKind>, needle: &str) -> Result<Vec<EntityId>> {
        let needle = needle.trim().to_lowercase();
        if needle.is_empty() {
            return Ok(Vec::new());
        }
        let mut ids: Vec<EntityId> =
            self.scan(kind)?.into_iter().filter(|r| r.answers_to(&needle)).map(|r| r.id).collect();
        ids.dedup();
        Ok(ids)
    }

    /// Every parseable record at its canonical path, sorted by id. Files that do not parse
    /// (or cannot be read, or sit at a path that is not their id's) are skipped, not fatal.
    pub fn all(&self) -> Result<Vec<EntityRecord>> {
        self.all_records()
    }

    /// A cheap summary of the vault's state: when it changes, something was added, edited or
    /// removed by hand.
    pub fn fingerprint(&self) -> VaultFingerprint {
        let mut fp = VaultFingerprint::default();
        let Ok(kinds) = std::fs::read_dir(&self.root) else { return fp };
        for k in kinds.flatten() {
            let Ok(files) = std::fs::read_dir(k.path()) else { continue };
            for f in files.flatten() {
                if let Ok(m) = f.metadata() {
                    let t = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_nanos());
                    fp.files += 1;
                    fp.newest_ns = fp.newest_ns.max(t);
                    fp.bytes += m.len();
                }
            }
        }
        fp
    }

    fn all_records(&self) -> Result<Vec<EntityRecord>> {
        self.scan(None)
    }

    /// The parseable records of `kind` (every kind when `None`), sorted by id.
    fn scan(&self, kind: Option<EntityKind>) -> Result<Vec<EntityRecord>> {
        let kinds: Vec<EntityKind> = match kind {
            Some(k) => vec![k],
            None => EntityKind::ALL.to_vec(),
        };
        let mut out = Vec::new();
        for kind in kinds {
            let dir = self.root.join(kind.as_str());
            let entries = match fs::read_dir(&dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&dir, e)),
            };
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(&dir, e))?;
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                // Dot files are our temp files (and editors' swap files), never entities.
                if !name.ends_with(".md") || name.starts_with('.') {
                    continue;
                }
                let path = entry.path();
                let Ok(bytes) = fs::read(&path) else { continue };
                let Ok(parsed) = parse_file(&bytes) else { continue };
                // A copy or a renamed file is not the entity's file: `get` would not see it.
                if parsed.record.kind != kind || self.path_for(&parsed.record.id).ok().as_deref() != Some(&path) {
                    continue;
                }
                out.push(parsed.record);
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }
}
