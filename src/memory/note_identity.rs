//! Which stored note an imported file is. A note is its file: a stored note read from the
//! same resolved path keeps its id whichever folder of the vault is passed now, duplicates of
//! one file (stores written before notes kept one id per file) are merged into one, a stored
//! note whose file is gone hands its id to the file now read under it (the vault moved), and a
//! note whose id belongs to another file that still exists is given a longer id instead of
//! replacing that file's note. A note stored without its file (written by the app through
//! `ingest_document` as `doc:<path in the vault>`) is the file at that path under one of the
//! store's roots: the app's note and the vault's file are one source, whichever came first.

use crate::ingest::import::{FileIssue, Note};
use crate::store::StoredNote;
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// What [`identify`] decided beyond the ids it set on the notes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Identity {
    /// Stored ids that are the same file as the id kept for it: to be removed.
    pub merged: Vec<String>,
    /// Stored notes now read from another path (a moved vault, a relative path recorded by an
    /// older import): `(id, resolved file)`, to record.
    pub refile: Vec<(String, String)>,
    /// Notes named otherwise than their folder would name them, and why.
    pub renamed: Vec<FileIssue>,
}

/// Set each note's id to the stored note that is its file, or to a free id; `root` is the
/// folder the notes' ids are relative to, `roots` every root a note may be named relative
/// to (a stored note without its file is the file its id names under one of them), `exists`
/// whether a stored file is still there.
pub(super) fn identify(
    notes: &mut [Note],
    stored: &[StoredNote],
    root: &Path,
    roots: &[PathBuf],
    exists: impl Fn(&Path) -> bool,
) -> Identity {
    let file_of = |n: &Note| n.doc.source_ref.clone().unwrap_or_default();
    let files: Vec<String> = notes.iter().map(file_of).collect();
    let by_path: HashMap<&str, usize> = files.iter().enumerate().map(|(i, f)| (f.as_str(), i)).collect();
    // A relative file (recorded before imports resolved paths) is matched by the end of the
    // path now read; looked up by file name so a large vault is not compared pairwise.
    let mut by_name: HashMap<&std::ffi::OsStr, Vec<usize>> = HashMap::new();
    if stored.iter().any(|s| s.file.as_deref().is_some_and(|f| !Path::new(f).is_absolute())) {
        for (i, f) in files.iter().enumerate() {
            if let Some(name) = Path::new(f).file_name() {
                by_name.entry(name).or_default().push(i);
            }
        }
    }
    // The folder read now is a root too: every file read lies under it.
    let all_roots: Vec<PathBuf> = roots.iter().cloned().chain([root.to_path_buf()]).collect();
    let mut owners: Vec<Vec<&StoredNote>> = vec![Vec::new(); notes.len()];
    let mut owned: HashSet<&str> = HashSet::new();
    for s in stored {
        let Some(f) = s.file.as_deref() else {
            // Written without its file: the file read now that its id names, as the app's
            // write found it (`app_note_file`).
            let found = id_path(&s.id).and_then(|rel| {
                under_roots(rel, &all_roots)
                    .into_iter()
                    .find_map(|f| by_path.get(f.as_str()).copied())
                    .or_else(|| one_ending_with(rel, &all_roots, files.iter().map(String::as_str)).map(|f| by_path[f]))
            });
            if let Some(i) = found {
                owners[i].push(s);
                owned.insert(&s.id);
            }
            continue;
        };
        let p = Path::new(f);
        let found = if p.is_absolute() {
            by_path.get(f).copied()
        } else {
            let tail = without_leading_dots(p);
            let hits: Vec<usize> = p
                .file_name()
                .and_then(|n| by_name.get(n))
                .map(|c| c.iter().copied().filter(|&i| Path::new(&files[i]).ends_with(&tail)).collect())
                .unwrap_or_default();
            // Two files ending alike: which one was meant cannot be told, so neither.
            if hits.len() == 1 { Some(hits[0]) } else { None }
        };
        if let Some(i) = found {
            owners[i].push(s);
            owned.insert(&s.id);
        }
    }

    let by_id: HashMap<&str, &StoredNote> = stored.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut taken: HashSet<String> = stored.iter().map(|s| s.id.clone()).collect();
    let mut out = Identity::default();
    let mut to_rename = Vec::new();
    // Ids this import gives notes new to the store: two files named alike relative to two
    // roots (`a.md` of the folder and of a vault inside it) must not become one source.
    let mut fresh: HashMap<String, usize> = HashMap::new();
    for (i, n) in notes.iter_mut().enumerate() {
        let computed = n.doc.source_id.as_str().to_string();
        if !owners[i].is_empty() {
            // The id this import would give it if stored under it, else the one named from the
            // widest root (most path segments): the others are the same file twice.
            let mut mine = std::mem::take(&mut owners[i]);
            mine.sort_by(|a, b| {
                (b.id == computed, b.id.matches('/').count()).cmp(&(a.id == computed, a.id.matches('/').count()))
            });
            let keep = mine[0];
            out.merged.extend(mine[1..].iter().map(|s| s.id.clone()));
            if keep.file.as_deref() != Some(files[i].as_str()) {
                out.refile.push((keep.id.clone(), files[i].clone()));
            }
            n.doc.source_id = keep.id.as_str().into();
            continue;
        }
        match by_id.get(computed.as_str()) {
            None => match fresh.get(&computed) {
                Some(&j) => to_rename.push((i, files[j].clone())),
                None => {
                    fresh.insert(computed.clone(), i);
                }
            },
            // Another file of this import is stored under the id.
            Some(s) if owned.contains(s.id.as_str()) => to_rename.push((i, s.file.clone().unwrap_or_default())),
            Some(s) => match s.file.as_deref() {
                // Recorded without its file: taken to be this one, as imports always did.
                None => {}
                Some(f) if exists(Path::new(f)) => to_rename.push((i, f.to_string())),
                // Its file is gone and this one is read under its id: the vault moved here.
                Some(_) => out.refile.push((computed.clone(), files[i].clone())),
            },
        }
        taken.insert(computed);
    }
    for (i, other) in to_rename {
        let n = &mut notes[i];
        let computed = n.doc.source_id.as_str().to_string();
        let id = free_id(root, &computed, &taken);
        taken.insert(id.clone());
        out.renamed.push(FileIssue {
            path: files[i].clone().into(),
            reason: format!("{computed} is the id of another file ({other}); this note is {id}"),
        });
        n.doc.source_id = id.into();
    }
    out
}

/// The first free id for `computed` (`doc:<rel>`) naming more of the path: `doc:<root's
/// folder>/<rel>`, then one folder further up, …, then a numbered one.
fn free_id(root: &Path, computed: &str, taken: &HashSet<String>) -> String {
    let rel = computed.strip_prefix("doc:").unwrap_or(computed);
    let names: Vec<String> = root
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    for k in 1..=names.len() {
        let id = format!("doc:{}/{rel}", names[names.len() - k..].join("/"));
        if !taken.contains(&id) {
            return id;
        }
    }
    (2..).map(|n| format!("{computed}~{n}")).find(|id| !taken.contains(id)).unwrap_or_default()
}

/// The path inside a root that a note id `doc:<path>` names: `None` unless it is a plain
/// relative path (not empty, no `..`, no root), which cannot climb out of the root.
pub(super) fn id_path(id: &str) -> Option<&Path> {
    let rel = Path::new(id.strip_prefix("doc:")?);
    let plain = |c: Component<'_>| matches!(c, Component::Normal(_));
    (!rel.as_os_str().is_empty() && rel.components().all(plain)).then_some(rel)
}

/// Where the file a note path names would be: under each root, the innermost first (a vault
/// inside a synced folder is where the app names its paths from).
pub(super) fn under_roots(rel: &Path, roots: &[PathBuf]) -> Vec<String> {
    let mut inner_first: Vec<&PathBuf> = roots.iter().collect();
    inner_first.sort_by_key(|r| std::cmp::Reverse(r.components().count()));
    inner_first.into_iter().map(|r| r.join(rel).to_string_lossy().into_owned()).collect()
}

/// When no root is the vault the app names paths in (its parent was synced, without
/// `.obsidian/`, or a folder inside it): the one file of `files` under a root whose path ends
/// with `rel`; none when two do, since which one the app meant cannot be told.
pub(super) fn one_ending_with<'f>(
    rel: &Path,
    roots: &[PathBuf],
    files: impl IntoIterator<Item = &'f str>,
) -> Option<&'f str> {
    let mut hits = files.into_iter().filter(|f| {
        let f = Path::new(f);
        f.ends_with(rel) && roots.iter().any(|r| f.starts_with(r))
    });
    match (hits.next(), hits.next()) {
        (Some(f), None) => Some(f),
        _ => None,
    }
}

/// `./notes/a.md` and `../v/a.md` as the path they end with (`notes/a.md`, `v/a.md`).
fn without_leading_dots(p: &Path) -> std::path::PathBuf {
    p.components().skip_while(|c| matches!(c, Component::CurDir | Component::ParentDir)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Document;

    fn note(id: &str, file: &str) -> Note {
        Note {
            doc: Document {
                source_id: id.into(),
                title: "t".into(),
                body: "b".into(),
                modified_ms: Some(0),
                source_ref: Some(file.into()),
                provider: Some("markdown".into()),
            },
            tags: vec![],
            aliases: vec![],
            hash: "h".into(),
            warning: None,
        }
    }

    fn stored(id: &str, file: Option<&str>) -> StoredNote {
        StoredNote { id: id.into(), hash: Some("h".into()), file: file.map(str::to_string) }
    }

    fn ids(notes: &[Note]) -> Vec<&str> {
        notes.iter().map(|n| n.doc.source_id.as_str()).collect()
    }

    #[test]
    fn a_stored_file_keeps_its_id_and_its_duplicates_merge() {
        let mut notes = vec![note("doc:Plans.md", "/v/Sync/Plans.md"), note("doc:Other.md", "/v/Sync/Other.md")];
        let s = vec![
            stored("doc:Plans.md", Some("/v/Sync/Plans.md")),
            stored("doc:Sync/Plans.md", Some("/v/Sync/Plans.md")),
            stored("doc:Sync/Other.md", Some("/v/Sync/Other.md")),
        ];
        let out = identify(&mut notes, &s, Path::new("/v/Sync"), &[], |_| true);
        // The id this import computes wins when stored; else the stored one.
        assert_eq!(ids(&notes), ["doc:Plans.md", "doc:Sync/Other.md"]);
        assert_eq!(out.merged, ["doc:Sync/Plans.md"]);
        assert!(out.refile.is_empty() && out.renamed.is_empty(), "{out:?}");
    }

    #[test]
    fn another_live_file_under_the_id_gives_this_note_a_longer_one() {
        let mut notes = vec![note("doc:x.md", "/b/B/x.md")];
        let s = vec![stored("doc:x.md", Some("/a/A/x.md")), stored("doc:B/x.md", Some("/elsewhere/B/x.md"))];
        let out = identify(&mut notes, &s, Path::new("/b/B"), &[], |_| true);
        assert_eq!(ids(&notes), ["doc:b/B/x.md"]);
        assert!(out.renamed[0].reason.contains("/a/A/x.md"), "{out:?}");
        assert!(out.merged.is_empty());
    }

    #[test]
    fn a_gone_file_hands_its_id_to_the_file_read_under_it() {
        let mut notes = vec![note("doc:x.md", "/new/v/x.md")];
        let s = vec![stored("doc:x.md", Some("/old/v/x.md"))];
        let out = identify(&mut notes, &s, Path::new("/new/v"), &[], |_| false);
        assert_eq!(ids(&notes), ["doc:x.md"]);
        assert_eq!(out.refile, [("doc:x.md".to_string(), "/new/v/x.md".to_string())]);
    }

    #[test]
    fn a_relative_file_of_an_older_import_is_matched_by_its_end() {
        let mut notes =
            vec![note("doc:a.md", "/home/u/notes/projects/a.md"), note("doc:b.md", "/home/u/notes/projects/b.md")];
        let s = vec![
            stored("doc:projects/a.md", Some("./notes/projects/a.md")),
            // Ends like no file read now: left alone.
            stored("doc:projects/c.md", Some("notes/projects/c.md")),
        ];
        let out = identify(&mut notes, &s, Path::new("/home/u/notes/projects"), &[], |_| true);
        assert_eq!(ids(&notes), ["doc:projects/a.md", "doc:b.md"]);
        assert_eq!(out.refile, [("doc:projects/a.md".to_string(), "/home/u/notes/projects/a.md".to_string())]);
    }

    #[test]
    fn an_id_of_another_note_in_this_import_is_not_reused() {
        // `y/x.md` was stored (from /v/y/x.md) as `doc:x.md`; now /v is imported: its own
        // `x.md` computes `doc:x.md`, which is y/x.md's.
        let mut notes = vec![note("doc:x.md", "/v/x.md"), note("doc:y/x.md", "/v/y/x.md")];
        let s = vec![stored("doc:x.md", Some("/v/y/x.md"))];
        let out = identify(&mut notes, &s, Path::new("/v"), &[], |_| true);
        assert_eq!(ids(&notes), ["doc:v/x.md", "doc:x.md"]);
        assert_eq!(out.renamed.len(), 1);
    }

    #[test]
    fn an_app_note_without_its_file_is_the_file_its_id_names() {
        let roots = [PathBuf::from("/p/vault")];
        // Under a root: the vault's file, whatever id this import computes for it.
        let mut notes = vec![note("doc:vault/Plugins/R.md", "/p/vault/Plugins/R.md")];
        let s = vec![stored("doc:Plugins/R.md", None)];
        let out = identify(&mut notes, &s, Path::new("/p"), &roots, |_| true);
        assert_eq!(ids(&notes), ["doc:Plugins/R.md"]);
        assert_eq!(out.refile, [("doc:Plugins/R.md".to_string(), "/p/vault/Plugins/R.md".to_string())]);
        // No root holds it: the one file read whose path ends with the id's.
        let mut notes = vec![note("doc:vault/Plugins/R.md", "/p/vault/Plugins/R.md"), note("doc:a.md", "/p/a.md")];
        identify(&mut notes, &s, Path::new("/p"), &[], |_| true);
        assert_eq!(ids(&notes), ["doc:Plugins/R.md", "doc:a.md"]);
        // Two such files: which one the app meant cannot be told, so neither.
        let mut notes =
            vec![note("doc:en/Plugins/R.md", "/p/en/Plugins/R.md"), note("doc:de/Plugins/R.md", "/p/de/Plugins/R.md")];
        identify(&mut notes, &s, Path::new("/p"), &[], |_| true);
        assert_eq!(ids(&notes), ["doc:en/Plugins/R.md", "doc:de/Plugins/R.md"]);
    }

    #[test]
    fn two_new_files_named_alike_from_two_roots_are_two_notes() {
        // `/v/x.md` (the folder's) and `/v/inner/x.md` (a vault inside it) both compute `doc:x.md`.
        let mut notes = vec![note("doc:x.md", "/v/inner/x.md"), note("doc:x.md", "/v/x.md")];
        let out = identify(&mut notes, &[], Path::new("/v"), &[], |_| true);
        assert_eq!(ids(&notes), ["doc:x.md", "doc:v/x.md"]);
        assert!(out.renamed[0].reason.contains("/v/inner/x.md"), "{out:?}");
    }
}
