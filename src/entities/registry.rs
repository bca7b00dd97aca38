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

use crate::error::{Error, Result};
use crate::types::{EntityId, EntityKind};
use serde_norway::{Mapping, Value};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The registry's folder under the content root.
const ENTITIES_DIR: &str = "entities";
/// Longest slug kept from an id before the hash suffix, in bytes (all ASCII by then).
const SLUG_MAX: usize = 120;
/// Hex digits of `blake3(id)` appended to a slug that is not the id's tail verbatim.
const HASH_HEX: usize = 8;
/// Device names Windows reserves whatever the extension; a slug whose stem is one gets a hash.
const WINDOWS_RESERVED: [&str; 4] = ["con", "prn", "aux", "nul"];

/// A registry of entity identities stored as Markdown files, one per entity.
///
/// ```
/// use memtree::entities::{EntityRecord, Registry};
/// use memtree::{EntityId, EntityKind};
/// let dir = tempfile::tempdir().unwrap();
/// let reg = Registry::open(dir.path()).unwrap();
/// let mut alice = EntityRecord::new(EntityId::from("person:alice"), EntityKind::Person, "Alice Liddell");
/// alice.aliases.push("Ally".into());
/// reg.put(&alice).unwrap();
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
    /// any front-matter keys this module does not know; `updated_at` is set to now. A
    /// non-empty notes body that lacks a final newline gets one, so every file ends with `\n`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a refused id or a `kind` that is not the id's;
    /// [`Error::Corrupt`] when the existing file cannot be parsed or belongs to another id (it
    /// is left alone rather than overwritten: the user may be half-way through an edit);
    /// [`Error::Io`] when the write fails.
    pub fn put(&self, rec: &EntityRecord) -> Result<()> {
        let path = self.path_for(&rec.id)?;
        check_kind(&rec.id, rec.kind)?;
        let now = rfc3339_now();
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

    /// A cheap summary of the vault's state (file count, newest modification, total size):
    /// when it changes, something was added, edited or removed by hand.
    pub fn fingerprint(&self) -> (usize, u128, u64) {
        let mut fp = (0usize, 0u128, 0u64);
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
                    fp = (fp.0 + 1, fp.1.max(t), fp.2 + m.len());
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

// ---- slugs --------------------------------------------------------------------------------

/// The kind and file stem of `id` (see [`Registry::path_for`]).
fn slug_for(id: &EntityId) -> Result<(EntityKind, String)> {
    let full = id.as_str();
    let Some((kind, tail)) = full.split_once(':') else {
        return Err(Error::invalid("id", format!("{} has no `<kind>:` prefix", quote(full))));
    };
    let Some(kind) = EntityKind::parse(kind) else {
        return Err(Error::invalid("id", format!("{} has an unknown entity kind", quote(full))));
    };
    let mut slug = String::with_capacity(SLUG_MAX + 2 + HASH_HEX);
    for c in tail.chars() {
        let c = c.to_ascii_lowercase();
        let c = if matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '-') { c } else { '_' };
        // Leading dots and underscores are trimmed, runs of `_` collapsed, as we go.
        if (slug.is_empty() && matches!(c, '.' | '_')) || (c == '_' && slug.ends_with('_')) {
            continue;
        }
        slug.push(c);
        if slug.len() > SLUG_MAX {
            // The rest cannot survive the cap; the hash below still covers the whole id.
            break;
        }
    }
    slug.truncate(SLUG_MAX);
    if slug.is_empty() {
        return Err(Error::invalid("id", format!("{} leaves nothing to name a file after", quote(full))));
    }
    // A verbatim slug never ends like a hashed one, so a hostile id cannot spell out the file
    // of another (`person:alice-<hash of person:Alice>`).
    if slug != tail || looks_hashed(&slug) || is_windows_reserved(&slug) {
        slug.push('-');
        slug.push_str(&blake3::hash(full.as_bytes()).to_hex()[..HASH_HEX]);
    }
    Ok((kind, slug))
}

/// True when `slug` ends with `-` and [`HASH_HEX`] lower-case hex digits.
fn looks_hashed(slug: &str) -> bool {
    let b = slug.as_bytes();
    b.len() > HASH_HEX
        && b[b.len() - HASH_HEX - 1] == b'-'
        && b[b.len() - HASH_HEX..].iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// True when the part of `slug` before its first dot is a Windows device name (`con`,
/// `com1`, …), which Windows refuses as a file name whatever the extension.
fn is_windows_reserved(slug: &str) -> bool {
    let stem = slug.split('.').next().unwrap_or(slug);
    WINDOWS_RESERVED.contains(&stem)
        || ((stem.starts_with("com") || stem.starts_with("lpt"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit())
}

/// The part of an id after `<kind>:` (the whole id when it has no colon).
fn id_tail(id: &EntityId) -> &str {
    id.as_str().split_once(':').map_or(id.as_str(), |(_, tail)| tail)
}

/// `kind` must be the id's own kind: the id, not the record, decides the folder.
fn check_kind(id: &EntityId, kind: EntityKind) -> Result<()> {
    let own = id.as_str().split_once(':').and_then(|(k, _)| EntityKind::parse(k));
    if own == Some(kind) {
        Ok(())
    } else {
        Err(Error::invalid("kind", format!("`{kind}` is not the kind of {}", quote(id.as_str()))))
    }
}

/// A hostile id (10 kB, control characters) shown in an error: escaped and shortened.
fn quote(s: &str) -> String {
    const MAX_CHARS: usize = 80;
    let mut short: String = s.chars().take(MAX_CHARS).collect();
    if short.len() < s.len() {
        short.push('…');
    }
    format!("{short:?}")
}

// ---- the file format ----------------------------------------------------------------------

/// A parsed entity file: the record and the front-matter keys this module does not own.
struct Parsed {
    record: EntityRecord,
    extras: Mapping,
}

/// Split a file into its YAML front matter and its body: the file opens with a `---` line
/// (after an optional byte-order mark) and the front matter ends at the next `---` or `...`
/// line; the body is every byte after that line. Tolerates CRLF line ends.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, mut rest) = next_line(text)?;
    if first.trim_end() != "---" {
        return None;
    }
    let yaml_start = text.len() - rest.len();
    loop {
        let line_start = text.len() - rest.len();
        let (line, after) = next_line(rest)?;
        if matches!(line.trim_end(), "---" | "...") {
            return Some((&text[yaml_start..line_start], after));
        }
        rest = after;
    }
}

/// The first line of `s` without its `\n`, and what follows it; `None` when `s` is empty.
fn next_line(s: &str) -> Option<(&str, &str)> {
    if s.is_empty() {
        return None;
    }
    Some(match s.find('\n') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    })
}

/// Parse an entity file. Lenient where Obsidian users are (a single alias written as a plain
/// string, an empty list left as `aliases:`, a number as a display name); strict about `id`
/// and `kind`, which decide where the file belongs.
fn parse_file(bytes: &[u8]) -> std::result::Result<Parsed, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let (yaml, body) = split_front_matter(text).ok_or("no front matter between `---` lines")?;
    let mut map = match serde_norway::from_str::<Value>(yaml) {
        Ok(Value::Mapping(map)) => map,
        Ok(Value::Null) => return Err("empty front matter".into()),
        Ok(_) => return Err("front matter is not a mapping of keys to values".into()),
        Err(e) => return Err(format!("front matter: {e}")),
    };
    let id = scalar(map.shift_remove("id"), "id")?;
    if id.is_empty() {
        return Err("front matter has no `id`".into());
    }
    let kind_text = scalar(map.shift_remove("kind"), "kind")?;
    let kind = EntityKind::parse(kind_text.trim()).ok_or_else(|| format!("unknown `kind` {kind_text:?}"))?;
    let id = EntityId(id);
    check_kind(&id, kind).map_err(|e| e.to_string())?;
    let record = EntityRecord {
        id,
        kind,
        display_name: scalar(map.shift_remove("display_name"), "display_name")?,
        aliases: string_list(map.shift_remove("aliases"), "aliases")?,
        emails: string_list(map.shift_remove("emails"), "emails")?,
        handles: handle_list(map.shift_remove("handles"))?,
        created_at: scalar(map.shift_remove("created_at"), "created_at")?,
        updated_at: scalar(map.shift_remove("updated_at"), "updated_at")?,
        notes: body.to_string(),
    };
    Ok(Parsed { record, extras: map })
}

/// A plain YAML value as text; missing and `null` are empty.
fn scalar(v: Option<Value>, field: &str) -> std::result::Result<String, String> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(Value::Tagged(t)) => scalar(Some(t.value), field),
        Some(_) => Err(format!("`{field}` must be a plain value, not a list or mapping")),
    }
}

/// A list of plain values (a single plain value counts as a one-item list); blank items are
/// dropped.
fn string_list(v: Option<Value>, field: &str) -> std::result::Result<Vec<String>, String> {
    let items = match v {
        Some(Value::Sequence(items)) => items,
        Some(Value::Tagged(t)) => return string_list(Some(t.value), field),
        other => vec![other.unwrap_or(Value::Null)],
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let s = scalar(Some(item), field)?;
        if !s.trim().is_empty() {
            out.push(s);
        }
    }
    Ok(out)
}

/// `handles`: a list of `{kind, value}` mappings; a plain item is a value of no stated kind.
fn handle_list(v: Option<Value>) -> std::result::Result<Vec<Handle>, String> {
    let items = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Sequence(items)) => items,
        Some(other) => vec![other],
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let handle = match item {
            Value::Mapping(mut m) => Handle {
                kind: scalar(m.shift_remove("kind"), "handles.kind")?,
                value: scalar(m.shift_remove("value"), "handles.value")?,
            },
            other => Handle { kind: String::new(), value: scalar(Some(other), "handles")? },
        };
        if !handle.value.trim().is_empty() {
            out.push(handle);
        }
    }
    Ok(out)
}

/// The file text of `rec`: front matter in a fixed key order, then `extras` (keys kept from the
/// file on disk), then the notes body; always ending with a newline.
fn render(rec: &EntityRecord, extras: &Mapping) -> Result<String> {
    let s = |v: &str| Value::String(v.to_string());
    let list = |vs: &[String]| Value::Sequence(vs.iter().map(|v| s(v)).collect());
    let mut m = Mapping::new();
    m.insert(s("id"), s(rec.id.as_str()));
    m.insert(s("kind"), s(rec.kind.as_str()));
    m.insert(s("display_name"), s(&rec.display_name));
    m.insert(s("aliases"), list(&rec.aliases));
    m.insert(s("emails"), list(&rec.emails));
    let handles = rec
        .handles
        .iter()
        .map(|h| {
            let mut hm = Mapping::new();
            hm.insert(s("kind"), s(&h.kind));
            hm.insert(s("value"), s(&h.value));
            Value::Mapping(hm)
        })
        .collect();
    m.insert(s("handles"), Value::Sequence(handles));
    m.insert(s("created_at"), s(&rec.created_at));
    m.insert(s("updated_at"), s(&rec.updated_at));
    for (k, v) in extras {
        if !m.contains_key(k) {
            m.insert(k.clone(), v.clone());
        }
    }
    let yaml = serde_norway::to_string(&Value::Mapping(m))
        .map_err(|e| Error::Corrupt { what: format!("entity {}", quote(rec.id.as_str())), reason: e.to_string() })?;
    let mut text = String::with_capacity(yaml.len() + rec.notes.len() + 10);
    text.push_str("---\n");
    text.push_str(&yaml);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("---\n");
    text.push_str(&rec.notes);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// [`Error::Corrupt`] naming the entity file at `path`.
fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::Corrupt { what: format!("entity file {}", path.display()), reason: reason.into() }
}

// ---- time ---------------------------------------------------------------------------------

/// The wall clock as RFC 3339 UTC, to the second (what a person reads in the front matter).
fn rfc3339_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Epoch milliseconds as RFC 3339 UTC, to the second.
fn rfc3339_ms(ms: i64) -> Result<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .ok_or_else(|| Error::invalid("now_ms", format!("{ms} is outside the representable time range")))
}

// ---- files --------------------------------------------------------------------------------

/// The file's bytes, or `None` when it does not exist.
fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// How [`atomic_write`] places the finished temp file.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WriteMode {
    /// Replace whatever is at the path.
    Replace,
    /// Only if nothing is at the path (checked atomically where hard links exist).
    CreateNew,
}

/// Write `bytes` to a temp file beside `path`, flush it to disk, then move it into place and
/// flush the folder, so a reader (or a crash) sees the old file or the new one, never half of
/// one. Returns false when `mode` is `CreateNew` and the path was taken.
fn atomic_write(path: &Path, bytes: &[u8], mode: WriteMode) -> Result<bool> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().expect("entity paths have a parent folder");
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).expect("entity file names are ASCII");
    // A dot file: Obsidian and `scan` ignore it, and no slug starts with a dot.
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed)));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    let placed = match mode {
        WriteMode::Replace => fs::rename(&tmp, path).map(|()| true),
        // A hard link fails when the target exists, which makes "create unless present"
        // atomic; file systems without hard links fall back to check-then-rename.
        WriteMode::CreateNew => match fs::hard_link(&tmp, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(_) if fs::symlink_metadata(path).is_ok() => Ok(false),
            Err(_) => fs::rename(&tmp, path).map(|()| true),
        },
    };
    // After a rename the temp name is gone already; after a hard link or a failure it is not.
    let _ = fs::remove_file(&tmp);
    let placed = placed.map_err(|e| Error::io(path, e))?;
    if placed {
        sync_dir(dir)?;
    }
    Ok(placed)
}

/// Make a rename in `dir` durable (the folder's entry list is flushed on Unix; elsewhere the
/// rename itself is as durable as the platform makes it).
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(dir, e))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slug(id: &str) -> Result<String> {
        slug_for(&EntityId::from(id)).map(|(_, s)| s)
    }

    fn hash8(id: &str) -> String {
        blake3::hash(id.as_bytes()).to_hex()[..HASH_HEX].to_string()
    }

    #[test]
    fn registry_slug_keeps_clean_tails_verbatim() {
        assert_eq!(slug("person:alice").unwrap(), "alice");
        assert_eq!(
            slug("email:alice@example.com").unwrap(),
            format!("alice_example.com-{}", hash8("email:alice@example.com"))
        );
        assert_eq!(slug("hashtag:launch-q2").unwrap(), "launch-q2");
        assert_eq!(slug("artifact:roadmap.md").unwrap(), "roadmap.md");
    }

    #[test]
    fn registry_slug_marks_every_change_with_a_hash() {
        assert_eq!(slug("person:Alice").unwrap(), format!("alice-{}", hash8("person:Alice")));
        assert_eq!(slug("person:a  b").unwrap(), format!("a_b-{}", hash8("person:a  b")));
        assert_eq!(slug("person:a__b").unwrap(), format!("a_b-{}", hash8("person:a__b")));
        assert_eq!(slug("person:zoë").unwrap(), format!("zo_-{}", hash8("person:zoë")));
        assert_eq!(slug("person:..hidden").unwrap(), format!("hidden-{}", hash8("person:..hidden")));
        // A verbatim tail that looks hashed is hashed again, so it cannot name another's file.
        let forged = format!("person:alice-{}", hash8("person:Alice"));
        assert_ne!(slug(&forged).unwrap(), slug("person:Alice").unwrap());
        assert!(slug("person:con").unwrap().starts_with("con-"));
        assert!(slug("person:com1.txt").unwrap().starts_with("com1.txt-"));
        assert_eq!(slug("person:console").unwrap(), "console");
    }

    #[test]
    fn registry_slug_caps_long_ids_and_refuses_empty_or_unknown() {
        let long = format!("person:{}", "a".repeat(10_000));
        let s = slug(&long).unwrap();
        assert_eq!(s.len(), SLUG_MAX + 1 + HASH_HEX);
        assert_ne!(s, slug(&format!("{long}b")).unwrap(), "ids past the cap still differ");
        let climb = format!("person:{}etc/passwd", "../".repeat(3_400));
        assert_eq!(slug(&climb).unwrap(), format!("etc_passwd-{}", hash8(&climb)));
        for bad in ["person:", "person:...", "person:_", "person:中文", "nokind", "bogus:alice", "Person:alice", ""] {
            assert!(matches!(slug(bad), Err(Error::InvalidArgument { .. })), "{bad:?} should be refused");
        }
    }

    #[test]
    fn registry_front_matter_split_tolerates_bom_crlf_and_dashes_in_body() {
        let (yaml, body) = split_front_matter("\u{feff}---\r\nid: person:a\r\n---\r\nbody\n---\nmore").unwrap();
        assert_eq!((yaml, body), ("id: person:a\r\n", "body\n---\nmore"));
        assert_eq!(split_front_matter("---\nid: x\n...\n"), Some(("id: x\n", "")));
        assert_eq!(split_front_matter("---\nid: x\n---"), Some(("id: x\n", "")));
        assert_eq!(split_front_matter("id: x\n---\n"), None);
        assert_eq!(split_front_matter("---\nid: x\n"), None);
    }

    #[test]
    fn registry_parse_is_lenient_about_lists_and_strict_about_identity() {
        let p = parse_file(b"---\nid: person:a\nkind: person\ndisplay_name: 2024\naliases: Ally\nemails:\nhandles:\n  - alice\ntags: [friend]\n---\n").unwrap();
        assert_eq!(p.record.display_name, "2024");
        assert_eq!(p.record.aliases, vec!["Ally".to_string()]);
        assert!(p.record.emails.is_empty());
        assert_eq!(p.record.handles, vec![Handle::new("", "alice")]);
        assert!(p.extras.contains_key("tags"));
        assert!(parse_file(b"---\nid: person:a\nkind: organization\n---\n").is_err(), "kind must match the id");
        assert!(parse_file(b"---\nkind: person\n---\n").is_err(), "id is required");
        assert!(parse_file(b"---\nid: person:a\nkind: person\naliases: {x: 1}\n---\n").is_err());
    }

    #[test]
    fn registry_render_round_trips_through_parse() {
        let mut rec = EntityRecord::new(EntityId::from("person:a"), EntityKind::Person, "yes");
        rec.aliases = ["null", "true", "1.0", "0x1F", "~", "  padded ", "multi\nline", "---", "# not", "a\0b", "'q\""]
            .map(String::from)
            .to_vec();
        rec.handles = vec![Handle::new("slack", "@a: b")];
        rec.notes = "body\n".into();
        let text = render(&rec, &Mapping::new()).unwrap();
        assert!(text.starts_with("---\nid: person:a\n"), "{text}");
        assert_eq!(parse_file(text.as_bytes()).unwrap().record, rec);
    }
}
