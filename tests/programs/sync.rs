//! A folder of Markdown notes is synced, not re-imported (issue #13 §4, and the Markdown
//! part of §3): driven through the `memtree` binary as a user runs it, on a temp store,
//! without the dense model. Unchanged notes are not written; a changed note is replaced and
//! leaves the counts a forget-then-import would; vanished notes are reported and pruned on
//! `--prune`; ids are relative to the vault root; unreadable notes are skipped unless
//! `--strict`; front matter is metadata (dates, tags), not body text.

use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use support::{memtree, repl_bin};

/// 2023-05-13T00:00:00Z, epoch ms, and as `memtree sources` prints it.
const MAY_13: &str = "2023-05-13T00:00:00.000Z";

fn demo_notes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/notes")
}

/// A vault: the demo's six notes, a daily note, a note with front matter, and a `projects/`
/// subfolder with a `.md` and a `.markdown` note.
fn vault(dir: &Path) -> PathBuf {
    let v = dir.join("vault");
    std::fs::create_dir_all(v.join("projects")).unwrap();
    for e in std::fs::read_dir(demo_notes()).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, v.join(p.file_name().unwrap())).unwrap();
        pin_time(&v.join(p.file_name().unwrap()));
    }
    write(
        &v,
        "2023-05-13 Standup.md",
        "# Standup\nQuentin moved the planning to Friday. Hannah Kim reviewed the Atlas cutover with Jonas Berg.\n",
    );
    write(
        &v,
        "cutover.md",
        "---\ndate: 2023-05-13\ntags: [ops, \"#atlas\"]\naliases: [Cutover plan]\n---\n# Cutover\nJonas Berg ran the Atlas cutover on Saturday.\n",
    );
    write(&v, "projects/heron.md", "# Heron\nPriya Shah ships the Heron driver app. Hannah Kim tests it.\n");
    write(
        &v,
        "projects/lisbon.markdown",
        "# Lisbon offsite\nThe team meets in Lisbon in June for the planning days.\n",
    );
    v
}

/// Write a note with a fixed file time (2026-01-01), so that two vaults written a moment
/// apart date their undated notes alike.
fn write(dir: &Path, rel: &str, text: &str) {
    std::fs::write(dir.join(rel), text).unwrap();
    pin_time(&dir.join(rel));
}

fn pin_time(path: &Path) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_767_225_600);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(t).unwrap();
}

/// `a == b`, naming the lines only one of them has.
fn assert_same(a: &[String], b: &[String], what: &str) {
    let only_a: Vec<&String> = a.iter().filter(|l| !b.contains(l)).collect();
    let only_b: Vec<&String> = b.iter().filter(|l| !a.contains(l)).collect();
    assert!(a == b, "{what}: only in the first {only_a:?}, only in the second {only_b:?}");
}

fn ingest(store: &Path, path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["ingest", "--format", "markdown"];
    args.extend_from_slice(extra);
    let p = path.to_string_lossy().into_owned();
    args.push(&p);
    memtree(store, &args, None).json()
}

fn sources(store: &Path) -> Vec<String> {
    let v = memtree(store, &["sources"], None).json();
    v.as_array().unwrap().iter().map(|s| s["source_id"].as_str().unwrap().to_string()).collect()
}

fn source(store: &Path, id: &str) -> Value {
    let v = memtree(store, &["sources"], None).json();
    v.as_array().unwrap().iter().find(|s| s["source_id"] == id).unwrap_or_else(|| panic!("no {id} in {v}")).clone()
}

/// Everything a sync must leave exactly as it was: the entity rows with their mention
/// counts, the edges with their weights, the nodes (ids, content, times, tags), the sources
/// with their hashes, the vectors, read straight from the record.
fn record(store: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(store.join("memtree.db")).unwrap();
    let mut out = Vec::new();
    for sql in [
        "SELECT entity_id || ' ' || kind || ' ' || mention_count || ' ' || last_seen_ms FROM entities ORDER BY 1",
        "SELECT MIN(x.entity_id, y.entity_id) || ' ' || MAX(x.entity_id, y.entity_id) || ' ' || weight FROM edges \
         JOIN entities x ON x.entity_key = a JOIN entities y ON y.entity_key = b ORDER BY 1",
        "SELECT node_id || ' ' || content || ' ' || time_start_ms || ' ' || tags FROM nodes ORDER BY 1",
        "SELECT source_id || ' ' || COALESCE(content_hash, '-') || ' ' || updated_ms FROM sources ORDER BY 1",
        "SELECT node_id FROM vectors ORDER BY 1",
    ] {
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        out.push(format!("-- {sql}"));
        out.extend(rows.map(Result::unwrap));
    }
    out
}

/// Entities and edges only (what a replace must leave as a forget-then-import does).
fn graph(store: &Path) -> Vec<String> {
    record(store).into_iter().take_while(|l| !l.starts_with("-- SELECT node_id")).collect()
}

fn entity_ids(store: &Path, query: &str) -> Vec<String> {
    let call = json!({"mode": "search_entities", "query": query, "limit": 100}).to_string();
    let v = memtree(store, &["tool", &call], None).json();
    v.as_array().unwrap().iter().map(|e| e["canonical_id"].as_str().unwrap().to_string()).collect()
}

/// The file a note's first leaf points to (`source_ref`): `query_source` gives the note's
/// summary, `fetch_leaves` its first leaf.
fn leaf_file(store: &Path, source_id: &str) -> Value {
    let call = json!({"mode": "query_source", "source_id": source_id, "limit": 1}).to_string();
    let top = memtree(store, &["tool", &call], None).json()["hits"][0].clone();
    let leaf = if top["level"] == 0 { top["node_id"].clone() } else { top["child_ids"][0].clone() };
    let call = json!({"mode": "fetch_leaves", "chunk_ids": [leaf]}).to_string();
    let v = memtree(store, &["tool", &call], None).json();
    assert_eq!(v[0]["level"], 0, "{v}");
    v[0]["source_ref"].clone()
}

fn contents(store: &Path, source_id: &str) -> String {
    let call = json!({"mode": "query_source", "source_id": source_id, "limit": 50}).to_string();
    let v = memtree(store, &["tool", &call], None).json();
    v["hits"].as_array().unwrap().iter().map(|h| h["content"].as_str().unwrap()).collect::<Vec<_>>().join("\n")
}

#[test]
fn an_unchanged_folder_is_not_written_again() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    let first = ingest(&s, &v, &[]);
    assert_eq!((first["added"].as_u64(), first["unchanged"].as_u64()), (Some(10), Some(0)), "{first}");
    assert_eq!(first["removed"], 0);
    // Byte sizes aside (SQLite may checkpoint its log on open): every count is the same.
    let counts = |s: &Path| {
        let mut v = memtree(s, &["stats"], None).json();
        v.as_object_mut().unwrap().retain(|k, _| !k.ends_with("_bytes"));
        v
    };
    let stats = counts(&s);
    let before = record(&s);
    let again = ingest(&s, &v, &[]);
    assert_eq!(
        again,
        json!({"sources": 0, "leaves": 0, "summaries": 0, "duplicate_leaves": 0, "removed": 0, "forgotten_leaves": 0, "added": 0, "replaced": 0, "held": 0,
               "unchanged": 10, "vanished": [], "pruned": [], "merged": [], "skipped": [], "warnings": [], "vectors": 0,
               "notes": {"read": 10, "written": 0, "duplicates": 10, "forgotten": 0, "skipped": {}}}),
    );
    assert_same(&record(&s), &before, "a re-import of unchanged notes changed the record");
    assert_eq!(counts(&s), stats);
}

/// The daily note after an edit.
const NEW_STANDUP: &str = "# Quentin review\nTomás Silva moved the quokka review to Friday.\n";

#[test]
fn a_changed_note_is_replaced_as_a_forget_then_import_would_leave_it() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    ingest(&s, &v, &[]);
    // The new text drops the people the old one named and names others. `Quentin`, a name
    // only the old text gave, is in the new title, where names are not discovered: it must
    // not be matched there because the old text taught it.
    assert_eq!(entity_ids(&s, "quentin"), ["misc:quentin"]);
    write(&v, "2023-05-13 Standup.md", NEW_STANDUP);
    let r = ingest(&s, &v, &[]);
    assert_eq!((r["replaced"].as_u64(), r["unchanged"].as_u64(), r["added"].as_u64()), (Some(1), Some(9), Some(0)));
    assert_eq!(r["removed"], 1, "{r}");
    let text = contents(&s, "doc:2023-05-13 Standup.md");
    assert!(text.contains("quokka review") && !text.contains("Hannah Kim reviewed"), "{text}");
    assert_eq!(entity_ids(&s, "quentin"), Vec::<String>::new(), "the old text's name is gone");
    let walk = memtree(&s, &["tool", r#"{"mode":"walk","query":"quokka review","limit":3}"#], None).json();
    assert_eq!(walk["hits"][0]["tree_scope"], "doc:2023-05-13 Standup.md", "{walk}");

    // The reference: the same first import, the note forgotten (and the forget taken back, so
    // that it does not hold the note out), then the new folder synced (the note is added, not
    // replaced).
    let (v2, s2) = (vault(&d.path().join("ref")), d.path().join("ref-store"));
    ingest(&s2, &v2, &[]);
    let receipt = memtree(&s2, &["forget", "--source", "doc:2023-05-13 Standup.md"], None).json();
    memtree(&s2, &["forget", "--undo", &receipt["record"].to_string()], None).json();
    write(&v2, "2023-05-13 Standup.md", NEW_STANDUP);
    assert_eq!(ingest(&s2, &v2, &[])["added"], 1);
    assert_same(&graph(&s), &graph(&s2), "entity counts or edges differ from a forget-then-import");
}

#[test]
fn a_vanished_note_is_reported_then_pruned_on_request() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    ingest(&s, &v, &[]);
    std::fs::remove_file(v.join("team.md")).unwrap();
    let r = ingest(&s, &v, &[]);
    assert_eq!(r["vanished"], json!(["doc:team.md"]), "{r}");
    assert_eq!((r["pruned"].clone(), r["unchanged"].as_u64()), (json!([]), Some(9)));
    assert!(sources(&s).contains(&"doc:team.md".to_string()), "reported, not removed");
    let r = ingest(&s, &v, &["--prune"]);
    assert_eq!((r["vanished"].clone(), r["pruned"].clone()), (json!(["doc:team.md"]), json!(["doc:team.md"])));
    assert!(r["removed"].as_u64().unwrap() >= 1, "{r}");
    assert!(!sources(&s).contains(&"doc:team.md".to_string()));
    assert_eq!(ingest(&s, &v, &["--prune"])["vanished"], json!([]));
}

#[test]
fn a_subfolder_import_names_notes_as_the_vault_import_does() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    std::fs::create_dir(v.join(".obsidian")).unwrap();
    ingest(&s, &v, &[]);
    let all = sources(&s);
    assert!(
        all.contains(&"doc:projects/heron.md".to_string()) && all.contains(&"doc:projects/lisbon.markdown".to_string())
    );
    let r = ingest(&s, &v.join("projects"), &[]);
    assert_eq!(
        (r["unchanged"].as_u64(), r["added"].as_u64(), r["leaves"].as_u64()),
        (Some(2), Some(0), Some(0)),
        "{r}"
    );
    assert_eq!(sources(&s), all, "no duplicates");
    // A prune of the subfolder prunes only there: the notes outside it are not vanished.
    std::fs::remove_file(v.join("projects/heron.md")).unwrap();
    std::fs::remove_file(v.join("team.md")).unwrap();
    let r = ingest(&s, &v.join("projects"), &["--prune"]);
    assert_eq!(r["pruned"], json!(["doc:projects/heron.md"]), "{r}");
    let now = sources(&s);
    assert!(now.contains(&"doc:team.md".to_string()) && !now.contains(&"doc:projects/heron.md".to_string()));
}

#[test]
fn root_is_found_by_obsidian_or_given_with_root() {
    let d = tempfile::tempdir().unwrap();
    let v = vault(d.path());
    // Without `.obsidian/` or `--root`, ids are relative to the folder passed.
    let plain = d.path().join("plain");
    ingest(&plain, &v.join("projects"), &[]);
    assert_eq!(sources(&plain), ["doc:heron.md", "doc:lisbon.markdown"]);
    // `--root` names the vault; a root that does not contain the path is refused.
    let given = d.path().join("given");
    ingest(&given, &v.join("projects"), &["--root", &v.to_string_lossy()]);
    assert_eq!(sources(&given), ["doc:projects/heron.md", "doc:projects/lisbon.markdown"]);
    let bad = memtree(
        &given,
        &["ingest", "--format", "markdown", "--root", &v.join("projects").to_string_lossy(), &v.to_string_lossy()],
        None,
    );
    assert_eq!(bad.code, Some(1));
    assert!(bad.err.contains("is not inside the root"), "{}", bad.err);
    // `.obsidian/` anywhere above the path marks the root.
    std::fs::create_dir(v.join(".obsidian")).unwrap();
    write(&v, ".obsidian/stray.md", "# Not a note\nObsidian's own folder is never imported.\n");
    let found = d.path().join("found");
    ingest(&found, &v.join("projects"), &[]);
    assert_eq!(sources(&found), ["doc:projects/heron.md", "doc:projects/lisbon.markdown"]);
    ingest(&found, &v, &[]);
    assert!(!sources(&found).iter().any(|s| s.contains("stray")));
    // The ingest options are for notes folders only.
    let chat = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/chat.jsonl");
    let wrong = memtree(&found, &["ingest", "--format", "chat-jsonl", "--prune", &chat.to_string_lossy()], None);
    assert_eq!(wrong.code, Some(1));
    assert!(wrong.err.contains("only a markdown import"), "{}", wrong.err);
}

#[test]
fn an_unreadable_note_is_skipped_and_named_unless_strict() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    std::fs::write(v.join("latin1.md"), b"# Caf\xe9\nNot UTF-8.\n").unwrap();
    let strict = memtree(&s, &["ingest", "--format", "markdown", "--strict", &v.to_string_lossy()], None);
    assert_eq!(strict.code, Some(1));
    assert!(strict.err.contains("latin1.md") && strict.err.contains("invalid UTF-8"), "{}", strict.err);
    assert!(!s.exists(), "a failed strict import into a new store leaves nothing behind");
    let run = memtree(&s, &["ingest", "--format", "markdown", &v.to_string_lossy()], None);
    let r = run.json();
    assert_eq!(r["added"], 10);
    let skipped = r["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{r}");
    assert!(skipped[0]["path"].as_str().unwrap().ends_with("latin1.md"));
    assert!(skipped[0]["reason"].as_str().unwrap().contains("invalid UTF-8"), "{r}");
    assert!(run.err.contains("skipped") && run.err.contains("latin1.md"), "stderr names it: {}", run.err);
    // Skipped is not vanished, and a prune leaves it alone.
    let r = ingest(&s, &v, &["--prune"]);
    assert_eq!((r["vanished"].clone(), r["unchanged"].as_u64()), (json!([]), Some(10)));
    // An existing store: a strict failure writes nothing.
    let before = record(&s);
    write(&v, "new.md", "# New\nA note that must not be written.\n");
    let strict = memtree(&s, &["ingest", "--format", "markdown", "--strict", &v.to_string_lossy()], None);
    assert_eq!(strict.code, Some(1));
    assert_same(&record(&s), &before, "a refused strict import changed the record");
}

#[test]
fn front_matter_is_metadata_and_dates_the_note() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    write(&v, "broken.md", "---\ndate: [unclosed\n---\n# Broken header\nThe header is kept as text.\n");
    write(
        &v,
        "updated.md",
        "---\nupdated: 2023-06-01T10:00:00Z\ntags: \"#later, misc\"\n---\n# Later\nSomething changed.\n",
    );
    let run = memtree(&s, &["ingest", "--format", "markdown", &v.to_string_lossy()], None);
    let r = run.json();
    assert_eq!((r["added"].as_u64(), r["skipped"].clone()), (Some(12), json!([])), "{r}");
    assert!(run.err.contains("broken.md") && run.err.contains("not YAML"), "a warning names it: {}", run.err);

    // `date` dates the note; the front matter is not body text and yields no entity.
    assert_eq!(source(&s, "doc:cutover.md")["first"], MAY_13);
    let text = contents(&s, "doc:cutover.md");
    assert!(
        !text.contains("date:") && !text.contains("aliases") && text.contains("Jonas Berg ran the Atlas"),
        "{text}"
    );
    let ents = entity_ids(&s, "cutover");
    assert!(ents.iter().all(|e| !e.contains("jonas") && !e.contains("date")), "junk entities: {ents:?}");
    // Tags are the leaves' tags and hashtag entities; aliases are tags only.
    let conn = rusqlite::Connection::open(s.join("memtree.db")).unwrap();
    let tags: String = conn
        .query_row(
            "SELECT n.tags FROM nodes n JOIN trees t ON t.tree_id = n.tree_id \
             WHERE t.tree_scope = 'doc:cutover.md' AND n.level = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&tags).unwrap(), json!(["ops", "atlas", "Cutover plan"]));
    assert!(entity_ids(&s, "ops").contains(&"hashtag:ops".to_string()));
    assert!(entity_ids(&s, "later").contains(&"hashtag:later".to_string()));
    // `updated` dates a note without `date`/`created` or a dated file name.
    assert_eq!(source(&s, "doc:updated.md")["first"], "2023-06-01T10:00:00.000Z");
    // A daily note's file name dates it.
    assert_eq!(source(&s, "doc:2023-05-13 Standup.md")["first"], MAY_13);
    // Malformed front matter: the note is imported as it is.
    assert!(contents(&s, "doc:broken.md").contains("date: [unclosed"));
}

#[test]
fn the_repl_imports_through_the_same_sync_as_the_cli() {
    let d = tempfile::tempdir().unwrap();
    let v = vault(d.path());
    std::fs::write(v.join("latin1.md"), b"# Caf\xe9\n").unwrap();
    let (cli, repl) = (d.path().join("cli"), d.path().join("repl"));
    ingest(&cli, &v, &[]);
    // A REPL opens only a store that exists (reads never create one): a memory_recall put and
    // forget make it without a source, node or entity.
    let put = r#"{"op":"put","namespace":"global","key":"k","content":"c"}"#;
    assert_eq!(memtree(&repl, &["recall", put], None).code, Some(0));
    assert_eq!(memtree(&repl, &["recall", r#"{"op":"forget","namespace":"global","key":"k"}"#], None).code, Some(0));
    let line = format!(":import markdown {}\n", v.display());
    let run = support::run(support::command(repl_bin(), &repl, &[] as &[&str]), Some(&format!("{line}{line}")));
    assert_eq!(run.code, Some(0), "{}", run.err);
    assert!(run.out.contains("notes: 10 added, 0 replaced, 0 unchanged, 0 vanished, 1 skipped"), "{}", run.out);
    assert!(run.out.contains("notes: 0 added, 0 replaced, 10 unchanged, 0 vanished, 1 skipped"), "{}", run.out);
    assert!(run.err.contains("latin1.md"), "the skipped file is named: {}", run.err);
    // Same ids, same dates, same counts.
    let listing = |s: &Path| memtree(s, &["sources"], None).json();
    assert_eq!(listing(&repl), listing(&cli));
    assert_same(&graph(&repl), &graph(&cli), "the REPL's import differs from the CLI's");
}

/// Without a vault root, two unrelated folders both name their notes from `doc:`: a prune of
/// one must not take the other's notes for vanished, and a one-file prune is that file only.
#[test]
fn a_prune_only_removes_notes_read_from_inside_what_it_imports() {
    let d = tempfile::tempdir().unwrap();
    let (a, b, s) = (d.path().join("a"), d.path().join("b"), d.path().join("store"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    write(&a, "plan.md", "# Plan\nThe Heron pilot starts in June.\n");
    write(&a, "a.md", "# A\nA note whose id starts the next ones'.\n");
    write(&a, "a.md.md", "# Doubled\nA note whose name starts like another's.\n");
    write(&a, "a.md.tmp.md", "# Tmp\nStays.\n");
    write(&b, "todo.md", "# Todo\nBook the Lisbon hotel.\n");
    ingest(&s, &a, &[]);
    let r = ingest(&s, &b, &["--prune"]);
    assert_eq!((r["vanished"].clone(), r["pruned"].clone()), (json!([]), json!([])), "{r}");
    for id in ["doc:plan.md", "doc:a.md", "doc:a.md.md", "doc:a.md.tmp.md", "doc:todo.md"] {
        assert!(sources(&s).contains(&id.to_string()), "{id} kept: {:?}", sources(&s));
    }
    // One file imported with --prune: nothing else under its id prefix is its to prune.
    let r = ingest(&s, &a.join("a.md"), &["--prune"]);
    assert_eq!((r["vanished"].clone(), r["unchanged"].as_u64()), (json!([]), Some(1)), "{r}");
    assert!(sources(&s).contains(&"doc:a.md.md".to_string()) && sources(&s).contains(&"doc:a.md.tmp.md".to_string()));
    // The folder's own vanished note is still found and pruned.
    std::fs::remove_file(a.join("plan.md")).unwrap();
    let r = ingest(&s, &a, &["--prune"]);
    assert_eq!(r["pruned"], json!(["doc:plan.md"]), "{r}");
    assert!(sources(&s).contains(&"doc:todo.md".to_string()), "the other folder's note stays");
}

/// A note is the file it was read from (issue 26): a vault without `.obsidian/`, imported
/// whole, then a subfolder, one file, and the parent folder, holds each note once.
#[test]
fn a_note_is_the_same_note_whichever_folder_is_passed() {
    let d = tempfile::tempdir().unwrap();
    let parent = d.path().join("parent");
    let v = parent.join("vault");
    std::fs::create_dir_all(v.join("Sync")).unwrap();
    std::fs::write(v.join("Home.md"), "# Home\nWelcome, see [[Sync/Plans]].\n").unwrap();
    std::fs::write(v.join("Sync/Plans.md"), "# Plans\nThe Standard plan syncs one vault.\n").unwrap();
    std::fs::write(v.join("Sync/Setup.md"), "# Setup\nTurn on Sync in the settings.\n").unwrap();
    let s = d.path().join("store");
    let sources = |s: &Path| memtree(s, &["stats"], None).json()["sources"].as_u64().unwrap();
    let first = memtree(&s, &["ingest", "--format", "markdown", v.to_str().unwrap()], None).json();
    assert_eq!(first["added"], 3);
    for p in [v.join("Sync"), v.join("Sync/Plans.md"), parent.clone()] {
        let r = memtree(&s, &["ingest", "--format", "markdown", p.to_str().unwrap()], None).json();
        assert_eq!(r["added"], 0, "{}: {r}", p.display());
        assert_eq!(sources(&s), 3, "{}", p.display());
    }
    // A change is still seen through another folder, under the note's first id.
    std::fs::write(v.join("Sync/Plans.md"), "# Plans\nThe Plus plan syncs ten vaults.\n").unwrap();
    let r = memtree(&s, &["ingest", "--format", "markdown", v.join("Sync").to_str().unwrap()], None).json();
    assert_eq!((r["added"].as_u64(), r["replaced"].as_u64()), (Some(0), Some(1)), "{r}");
    let list = memtree(&s, &["sources"], None).json();
    assert!(list.as_array().unwrap().iter().any(|e| e["source_id"] == "doc:Sync/Plans.md"), "{list}");
}

/// The store remembers the folders it named notes from: after the whole vault (no
/// `.obsidian/`), a note new in a subfolder, imported through that subfolder, is named from
/// the vault as its siblings are, and so is a single file of it.
#[test]
fn a_new_note_in_a_subfolder_is_named_from_the_remembered_vault() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    ingest(&s, &v, &[]);
    write(&v, "projects/osprey.md", "# Osprey\nA new project note.\n");
    let r = ingest(&s, &v.join("projects"), &[]);
    assert_eq!((r["added"].as_u64(), r["unchanged"].as_u64()), (Some(1), Some(2)), "{r}");
    assert!(sources(&s).contains(&"doc:projects/osprey.md".to_string()), "{:?}", sources(&s));
    write(&v, "projects/kite.md", "# Kite\nAnother one.\n");
    ingest(&s, &v.join("projects/kite.md"), &[]);
    let all = sources(&s);
    assert!(all.contains(&"doc:projects/kite.md".to_string()) && !all.contains(&"doc:kite.md".to_string()), "{all:?}");
    // The parent of the vault, imported: nothing is new.
    let r = ingest(&s, d.path(), &[]);
    assert_eq!((r["added"].as_u64(), r["leaves"].as_u64()), (Some(0), Some(0)), "{r}");
    assert_eq!(sources(&s), all);
}

/// Two folders that are not one vault, holding a note of the same name: the second does not
/// replace the first; it is stored under an id naming its folder, and the import says so.
#[test]
fn the_same_name_in_two_folders_is_two_notes() {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("store");
    let (a, b) = (d.path().join("work"), d.path().join("home"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    write(&a, "todo.md", "# Todo\nShip the Atlas release notes.\n");
    write(&b, "todo.md", "# Todo\nBuy oat milk and fix the bike.\n");
    ingest(&s, &a, &[]);
    let r = ingest(&s, &b, &[]);
    assert_eq!((r["added"].as_u64(), r["replaced"].as_u64()), (Some(1), Some(0)), "{r}");
    let warn = r["warnings"].to_string();
    assert!(warn.contains("doc:todo.md is the id of another file") && warn.contains("doc:home/todo.md"), "{r}");
    assert_eq!(sources(&s), ["doc:home/todo.md", "doc:todo.md"]);
    assert!(contents(&s, "doc:todo.md").contains("Atlas"));
    assert!(contents(&s, "doc:home/todo.md").contains("oat milk"));
    // Both again: nothing changes, each file keeps its id.
    for f in [&a, &b] {
        let r = ingest(&s, f, &[]);
        assert_eq!(
            (r["unchanged"].as_u64(), r["added"].as_u64(), r["warnings"].clone()),
            (Some(1), Some(0), json!([]))
        );
    }
}

/// A vault moved to another folder and imported from there is the same vault: nothing is
/// added, and the notes now point at their new files.
#[test]
fn a_moved_vault_is_the_same_vault() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    ingest(&s, &v, &[]);
    let before = sources(&s);
    let moved = d.path().join("moved-vault");
    std::fs::rename(&v, &moved).unwrap();
    let r = ingest(&s, &moved, &[]);
    assert_eq!((r["added"].as_u64(), r["leaves"].as_u64(), r["vanished"].clone()), (Some(0), Some(0), json!([])));
    assert_eq!(sources(&s), before);
    let at = std::fs::canonicalize(moved.join("projects/heron.md")).unwrap();
    assert_eq!(leaf_file(&s, "doc:projects/heron.md"), json!(at.to_string_lossy()));
}

/// A store written before notes kept one id per file: a note recorded with the relative path
/// it was imported by is matched by the end of its path, and the same file stored under two
/// ids (the subfolder, then the vault) is merged into one by the next sync.
#[test]
fn an_older_stores_relative_and_doubled_notes_are_mended_by_a_sync() {
    let d = tempfile::tempdir().unwrap();
    let (v, s) = (vault(d.path()), d.path().join("store"));
    ingest(&s, &v.join("projects"), &[]);
    let set_file = |id: &str, file: &str| {
        let conn = rusqlite::Connection::open(s.join("memtree.db")).unwrap();
        conn.execute("UPDATE nodes SET source_ref = ?2 WHERE tree_id = 'source:' || ?1 AND level = 0", [id, file])
            .unwrap();
    };
    // Recorded relative to where the user stood (so no root was remembered for it): the
    // vault's import keeps its id.
    set_file("doc:lisbon.markdown", "vault/projects/lisbon.markdown");
    let conn = rusqlite::Connection::open(s.join("memtree.db")).unwrap();
    conn.execute("DELETE FROM note_roots", []).unwrap();
    drop(conn);
    let r = ingest(&s, &v, &[]);
    assert_eq!((r["added"].as_u64(), r["unchanged"].as_u64()), (Some(8), Some(2)), "{r}");
    let all = sources(&s);
    assert!(all.contains(&"doc:lisbon.markdown".to_string()) && !all.iter().any(|id| id.contains("projects/")));
    let at = std::fs::canonicalize(v.join("projects/lisbon.markdown")).unwrap();
    assert_eq!(leaf_file(&s, "doc:lisbon.markdown"), json!(at.to_string_lossy()), "adopted");

    // Doubled: a record no file matches lets the vault's import add the note again…
    set_file("doc:heron.md", "somewhere/else.md");
    let r = ingest(&s, &v, &[]);
    assert_eq!(r["added"].as_u64(), Some(1), "{r}");
    assert!(sources(&s).contains(&"doc:projects/heron.md".to_string()));
    // …and once both records name the same file, the next sync keeps one.
    let heron = std::fs::canonicalize(v.join("projects/heron.md")).unwrap();
    set_file("doc:heron.md", &heron.to_string_lossy());
    let r = ingest(&s, &v.join("projects"), &[]);
    assert_eq!((r["merged"].clone(), r["added"].as_u64()), (json!(["doc:heron.md"]), Some(0)), "{r}");
    let now = sources(&s);
    assert!(
        !now.contains(&"doc:heron.md".to_string()) && now.contains(&"doc:projects/heron.md".to_string()),
        "{now:?}"
    );
    assert_eq!(now.len(), all.len());
    let r = ingest(&s, &v, &[]);
    assert_eq!((r["added"].as_u64(), r["merged"].clone(), r["unchanged"].as_u64()), (Some(0), json!([]), Some(10)));
}

/// Every source of the store with the file its first leaf points to (`None`: written by the
/// app without one), straight from the record.
fn notes_and_files(store: &Path) -> Vec<(String, Option<String>)> {
    let conn = rusqlite::Connection::open(store.join("memtree.db")).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT s.source_id, (SELECT n.source_ref FROM nodes n WHERE n.tree_id = 'source:' || s.source_id \
             AND n.level = 0 LIMIT 1) FROM sources s ORDER BY 1",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// Every order of four steps: sync the vault, sync its subfolder, sync its parent, and the
/// app writes the subfolder's note through `ingest_document` (as `doc:<path in the vault>`).
fn orders() -> Vec<[char; 4]> {
    let mut out = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                let d = 6 - a - b - c;
                if a != b && b != c && a != c && (0..4).contains(&d) && d != a && d != b && d != c {
                    out.push([a, b, c, d].map(|i| ['V', 'S', 'P', 'D'][i]));
                }
            }
        }
    }
    assert_eq!(out.len(), 24);
    out
}

/// One note, one source (issue 33 item 6): in each of the 24 orders of syncing a vault, its
/// subfolder, its parent and writing the subfolder's note through `ingest_document`, the
/// store ends with one source per file, the note every file's; the parent's import names no
/// note, now or later, from the parent; with `.obsidian/` the ids are the vault's in every
/// order.
#[test]
fn an_app_note_and_its_vault_file_are_one_source_in_every_order() {
    for obsidian in [true, false] {
        for order in orders() {
            let d = tempfile::tempdir().unwrap();
            let parent = std::fs::canonicalize(d.path()).unwrap().join("parent");
            let v = parent.join("vault");
            std::fs::create_dir_all(v.join("Plugins")).unwrap();
            if obsidian {
                std::fs::create_dir_all(v.join(".obsidian")).unwrap();
            }
            write(&v, "Home.md", "# Home\nWelcome to the help vault.\n");
            let random = "# Random note\nThe Random note plugin opens a note at random.\n";
            write(&v, "Plugins/Random note.md", random);
            write(&parent, "Other.md", "# Other\nA note beside the vault.\n");
            let s = d.path().join("store");
            let app = json!({"mode": "ingest_document", "source_id": "doc:Plugins/Random note.md",
                "title": "Random note", "body": random, "provider": "obsidian"})
            .to_string();
            let mut subfolder_before_vault = false;
            for (i, step) in order.iter().enumerate() {
                match step {
                    'V' => ingest(&s, &v, &[]),
                    'S' => {
                        subfolder_before_vault = !order[..i].contains(&'V');
                        ingest(&s, &v.join("Plugins"), &[])
                    }
                    'P' => ingest(&s, &parent, &[]),
                    _ => {
                        let r = memtree(&s, &["tool", &app], None).json();
                        assert_eq!(r["status"], "ok", "{order:?}: {r}");
                        r
                    }
                };
            }
            let what = format!("{order:?}, .obsidian: {obsidian}");
            let notes = notes_and_files(&s);
            let files: Vec<&str> = notes.iter().filter_map(|(_, f)| f.as_deref()).collect();
            assert_eq!(notes.len(), 3, "{what}: {notes:?}");
            for f in [v.join("Home.md"), v.join("Plugins/Random note.md"), parent.join("Other.md")] {
                let f = f.to_string_lossy();
                assert_eq!(files.iter().filter(|x| **x == f).count(), 1, "{what}: {f} in {notes:?}");
            }
            let ids: Vec<&str> = notes.iter().map(|(id, _)| id.as_str()).collect();
            if obsidian {
                assert_eq!(ids, ["doc:Home.md", "doc:Other.md", "doc:Plugins/Random note.md"], "{what}");
            }
            // A note new to the subfolder, synced through the parent, is named as the first of
            // the three folders synced named its notes: the vault's, the subfolder's (synced
            // before the vault, without `.obsidian/`), or the parent's only when the parent came
            // first. A parent synced after the vault or the subfolder changes nothing.
            write(&v, "Plugins/Backlinks.md", "# Backlinks\nThe Backlinks pane lists what links here.\n");
            ingest(&s, &parent, &[]);
            let first = order.iter().copied().find(|c| *c != 'D').unwrap();
            let expect = match (obsidian, first, subfolder_before_vault) {
                (true, ..) => "doc:Plugins/Backlinks.md",
                (false, 'P', _) => "doc:vault/Plugins/Backlinks.md",
                (false, _, true) => "doc:Backlinks.md",
                (false, ..) => "doc:Plugins/Backlinks.md",
            };
            assert!(notes_and_files(&s).iter().any(|(id, _)| id == expect), "{what}: {:?}", notes_and_files(&s));
            assert_eq!(notes_and_files(&s).len(), 4, "{what}");
        }
    }
}
