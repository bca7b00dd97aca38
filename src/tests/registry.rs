//! The entity registry (SPEC §4): Markdown files as the source of truth, notes that survive
//! engine writes, hand-edited aliases, and ids that cannot climb out of the registry.

use crate::tests::common::{T0, files_under, open_registry};
use crate::{EntityId, EntityKind, Error};
use crate::{EntityRecord, Handle, Registry};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path};
use tempfile::tempdir;

fn id(s: &str) -> EntityId {
    EntityId::from(s)
}

fn alice() -> EntityRecord {
    let mut rec = EntityRecord::new(id("person:alice"), EntityKind::Person, "Alice Liddell");
    rec.aliases = vec!["Ally".into(), "A. Liddell".into()];
    rec.emails = vec!["alice@example.com".into()];
    rec.handles = vec![Handle::new("slack", "alice"), Handle::new("github", "ali-ce")];
    rec.notes = "# Alice\n\nMet at RustConf.\n".into();
    rec
}

fn is_rfc3339(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

/// Replace `from` by `to` in the file at `path`, insisting that `from` is there.
fn edit(path: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from:?} not in\n{text}");
    fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn registry_put_then_get_round_trips_every_field() {
    let (_dir, reg) = open_registry(tempdir().unwrap());
    assert_eq!(reg.get(&id("person:alice")).unwrap(), None);
    let rec = alice();
    reg.put(&rec, T0).unwrap();

    let path = reg.path_for(&rec.id).unwrap();
    assert_eq!(path, reg.root().join("person").join("alice.md"));
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("---\nid: person:alice\nkind: person\ndisplay_name: Alice Liddell\n"), "{text}");
    assert!(text.ends_with("---\n# Alice\n\nMet at RustConf.\n"), "{text}");

    let got = reg.get(&rec.id).unwrap().unwrap();
    assert!(is_rfc3339(&got.created_at) && is_rfc3339(&got.updated_at), "{got:?}");
    let expected = EntityRecord { created_at: got.created_at.clone(), updated_at: got.updated_at.clone(), ..rec };
    assert_eq!(got, expected);
    assert_eq!(reg.all().unwrap(), vec![got]);
    // No temp files are left behind.
    assert_eq!(files_under(reg.root()), vec![path]);
}

#[test]
fn registry_put_keeps_hand_edited_notes_created_at_and_unknown_keys() {
    let (_dir, reg) = open_registry(tempdir().unwrap());
    let mut rec = alice();
    rec.created_at = "2020-01-01T00:00:00Z".into();
    rec.updated_at = "2020-01-01T00:00:00Z".into();
    reg.put(&rec, T0).unwrap();
    let path = reg.path_for(&rec.id).unwrap();

    // The user edits the body in Obsidian (CRLF, a `---` rule, no final newline) and adds a
    // property of their own.
    let body = "# Alice\r\n\r\n---\r\nLikes *tea*; see [[Bob]].\r\nüñí ✓";
    let text = fs::read_to_string(&path).unwrap();
    let (front, _) = text.split_at(text.find("---\n#").unwrap() + 4);
    fs::write(&path, format!("{front}{body}")).unwrap();
    edit(&path, "kind: person\n", "kind: person\ntags:\n- friend\n");

    // The engine writes the entity again with an empty notes field and a stale created_at.
    let mut update = alice();
    update.notes = String::new();
    update.created_at = "2099-01-01T00:00:00Z".into();
    update.display_name = "Alice P. Liddell".into();
    reg.put(&update, T0).unwrap();

    let text = fs::read_to_string(&path).unwrap();
    assert!(text.ends_with(&format!("---\n{body}\n")), "body kept, plus the final newline:\n{text}");
    assert!(text.contains("tags:\n- friend\n"), "unknown key kept:\n{text}");
    let got = reg.get(&update.id).unwrap().unwrap();
    assert_eq!(got.display_name, "Alice P. Liddell");
    assert_eq!(got.created_at, "2020-01-01T00:00:00Z", "created_at of the existing file wins");
    assert_ne!(got.updated_at, "2020-01-01T00:00:00Z", "updated_at is set by put");
    assert_eq!(got.updated_at, "2023-05-08T00:00:00Z", "from the caller's clock, not the system's");
    assert!(is_rfc3339(&got.updated_at));
    assert_eq!(got.notes, format!("{body}\n"));

    // A body that already ends with a newline is kept byte for byte, again and again.
    let body = got.notes.clone();
    reg.put(&update, T0).unwrap();
    reg.put(&update, T0).unwrap();
    assert_eq!(reg.get(&update.id).unwrap().unwrap().notes, body);

    // A non-empty notes field replaces the body.
    update.notes = "New notes.\n".into();
    reg.put(&update, T0).unwrap();
    assert!(fs::read_to_string(&path).unwrap().ends_with("---\nNew notes.\n"));
}

#[test]
fn registry_alias_added_by_hand_resolves_at_the_next_lookup() {
    let (_dir, reg) = open_registry(tempdir().unwrap());
    let rec = EntityRecord::new(id("person:alice"), EntityKind::Person, "Alice");
    reg.put(&rec, T0).unwrap();
    let path = reg.path_for(&rec.id).unwrap();
    assert_eq!(reg.lookup_alias(None, "White Rabbit Chaser").unwrap(), Vec::<EntityId>::new());

    edit(&path, "aliases: []\n", "aliases:\n  - White Rabbit Chaser\n");
    assert_eq!(reg.lookup_alias(None, "white rabbit chaser").unwrap(), vec![rec.id.clone()]);

    // Obsidian also accepts a single alias as a plain string.
    edit(&path, "aliases:\n  - White Rabbit Chaser\n", "aliases: Wonderland Girl\n");
    assert_eq!(reg.lookup_alias(Some(EntityKind::Person), "WONDERLAND GIRL").unwrap(), vec![rec.id.clone()]);
    assert_eq!(reg.lookup_alias(None, "White Rabbit Chaser").unwrap(), Vec::<EntityId>::new(), "removed by hand");
    assert_eq!(reg.get(&rec.id).unwrap().unwrap().aliases, vec!["Wonderland Girl".to_string()]);
}

#[test]
fn registry_lookup_is_case_insensitive_and_exact_over_every_identity_field() {
    let (_dir, reg) = open_registry(tempdir().unwrap());
    reg.put(&alice(), T0).unwrap();
    reg.put(&EntityRecord::new(id("person:bob"), EntityKind::Person, "Bob"), T0).unwrap();
    let alice_only = vec![id("person:alice")];
    for needle in ["ally", "A. LIDDELL", "Alice@Example.COM"] {
        assert_eq!(reg.lookup_alias(None, needle).unwrap(), alice_only, "needle {needle:?}");
    }
    assert_eq!(reg.lookup_alias(None, "ALICE").unwrap(), alice_only, "handle value");
    assert_eq!(reg.lookup_alias(None, "Ali-Ce").unwrap(), alice_only, "second handle value");
    assert_eq!(reg.lookup_alias(None, "alice liddell").unwrap(), alice_only, "display name");
    assert_eq!(reg.lookup_alias(None, "  Alice Liddell \n").unwrap(), alice_only, "needle trimmed");
    assert_eq!(reg.lookup_alias(None, "bob").unwrap(), vec![id("person:bob")]);
    // Exact, not substring; the handle's platform, the id and the notes are not names.
    for needle in ["Alic", "Alice Liddell Jr", "slack", "person:alice", "RustConf", "", "   "] {
        assert_eq!(reg.lookup_alias(None, needle).unwrap(), Vec::<EntityId>::new(), "needle {needle:?}");
    }
}

#[test]
fn registry_lookup_filters_by_kind_and_sorts_ids() {
    let (_dir, reg) = open_registry(tempdir().unwrap());
    for (i, k) in [("product:jordan", EntityKind::Product), ("person:jordan", EntityKind::Person)] {
        reg.put(&EntityRecord::new(id(i), k, "Jordan"), T0).unwrap();
    }
    let mut loc = EntityRecord::new(id("location:jordan-country"), EntityKind::Location, "Hashemite Kingdom");
    loc.aliases.push("jordan".into());
    reg.put(&loc, T0).unwrap();

    assert_eq!(
        reg.lookup_alias(None, "Jordan").unwrap(),
        vec![id("location:jordan-country"), id("person:jordan"), id("product:jordan")]
    );
    assert_eq!(reg.lookup_alias(Some(EntityKind::Person), "jordan").unwrap(), vec![id("person:jordan")]);
    assert_eq!(reg.lookup_alias(Some(EntityKind::Location), "JORDAN").unwrap(), vec![id("location:jordan-country")]);
    assert_eq!(reg.lookup_alias(Some(EntityKind::Organization), "jordan").unwrap(), Vec::<EntityId>::new());
    let all: Vec<EntityId> = reg.all().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(all, vec![id("location:jordan-country"), id("person:jordan"), id("product:jordan")]);
}

/// `path` exists and, with every link resolved, sits directly in `<root>/<kind>/`.
fn assert_inside(reg: &Registry, kind: &str, path: &Path) {
    let folder = reg.root().join(kind).canonicalize().unwrap();
    let real = path.canonicalize().unwrap();
    assert_eq!(real.parent(), Some(folder.as_path()), "{} escaped {}", real.display(), folder.display());
    let name = real.file_name().unwrap().to_str().unwrap();
    assert!(name.ends_with(".md") && !name.starts_with('.'), "{name}");
}

#[test]
fn registry_hostile_ids_stay_inside_the_root_and_never_collide() {
    let (dir, reg) = open_registry(tempdir().unwrap());
    let long_a = format!("person:{}", "a".repeat(10_000));
    let long_b = format!("person:{}b", "a".repeat(10_000));
    let climb = format!("person:{}etc/passwd", "../".repeat(3_400));
    let pure_climb = format!("person:{}", "../".repeat(3_400));
    let hostile = [
        "person:../../etc/passwd",
        "person:..%2f..%2fetc%2fpasswd",
        "person:/abs",
        "person:/etc/passwd",
        "person:a\0b",
        "person:a\0c",
        "person:CON",
        "person:con",
        "person:nul.txt",
        "person:LPT1",
        "person:a/b",
        "person:a\\b",
        "person:a_b",
        "person:A_B",
        "person:C:\\Windows\\system32",
        "person:.hidden",
        "person:~root",
        "person:alice\n---\nid: person:mallory\nkind: person",
        "person:\u{202e}gnp.exe",
        "person:Ünïcödé name",
        long_a.as_str(),
        long_b.as_str(),
        climb.as_str(),
    ];
    let mut paths = BTreeSet::new();
    for (i, raw) in hostile.iter().enumerate() {
        let eid = id(raw);
        let path = reg.path_for(&eid).unwrap_or_else(|e| panic!("{raw:?} refused: {e}"));
        let rel = path.strip_prefix(reg.root().join("person")).unwrap();
        assert!(matches!(rel.components().collect::<Vec<_>>()[..], [Component::Normal(_)]), "{}", rel.display());
        assert!(reg.upsert_seen(&eid, EntityKind::Person, raw, T0 + i as i64).unwrap(), "{raw:?} created");
        assert_inside(&reg, "person", &path);
        // The id is stored as data, not spliced into the YAML: it reads back exactly.
        assert_eq!(reg.get(&eid).unwrap().unwrap().id, eid, "{raw:?}");
        assert!(paths.insert(path), "{raw:?} collides with an earlier id");
    }
    assert_eq!(reg.all().unwrap().len(), hostile.len(), "every hostile id is its own entity");
    // Nothing was written outside the registry, nor outside `person/`.
    let root = reg.root().canonicalize().unwrap();
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "only `entities/` in the content root");
    for file in files_under(&root) {
        assert_eq!(file.parent().unwrap(), root.join("person"), "{}", file.display());
    }
    assert_eq!(reg.get(&id("person:mallory")).unwrap(), None, "no YAML injection through the id");

    // Ids that cannot name a file are refused, not sanitised into someone else's.
    let refused =
        ["person:", "person:..", "person:/", "person:../..", "person:中文", "../person:x", "nokind", "Person:x", ""];
    for raw in refused.iter().copied().chain([pure_climb.as_str()]) {
        match reg.path_for(&id(raw)) {
            Err(Error::InvalidArgument { .. }) => {}
            other => panic!("{raw:?} gave {other:?}"),
        }
        assert!(matches!(reg.get(&id(raw)), Err(Error::InvalidArgument { .. })));
        assert!(matches!(reg.upsert_seen(&id(raw), EntityKind::Person, "x", T0), Err(Error::InvalidArgument { .. })));
    }
    // A record whose kind is not its id's is refused: the id decides the folder.
    let wrong = EntityRecord::new(id("person:eve"), EntityKind::Organization, "Eve");
    assert!(matches!(reg.put(&wrong, T0), Err(Error::InvalidArgument { .. })));
}

#[test]
fn registry_malformed_front_matter_is_skipped_by_all_and_corrupt_for_get() {
    let (_dir, reg) = open_registry(tempdir().unwrap());
    reg.put(&alice(), T0).unwrap();
    let bob = id("person:bob");
    let bob_path = reg.path_for(&bob).unwrap();
    let cases = [
        "---\nid: person:bob\nkind: person\naliases: [unclosed\n---\nnotes\n",
        "no front matter at all\n",
        "---\nid: person:bob\nkind: person\n",
        "---\n---\n",
        "---\nid: person:bob\nkind: organization\n---\n",
        "---\nid: person:carol\nkind: person\n---\n",
        "---\n- just\n- a list\n---\n",
    ];
    for text in cases {
        fs::write(&bob_path, text).unwrap();
        let ids: Vec<EntityId> = reg.all().unwrap().into_iter().map(|r| r.id).collect();
        assert_eq!(ids, vec![id("person:alice")], "{text:?}");
        match reg.get(&bob) {
            Err(Error::Corrupt { what, .. }) => assert!(what.contains("bob.md"), "{what}"),
            other => panic!("{text:?} gave {other:?}"),
        }
        assert_eq!(reg.lookup_alias(None, "bob").unwrap(), Vec::<EntityId>::new());
        // Neither engine write clobbers a file the user may be half-way through editing.
        assert!(matches!(
            reg.put(&EntityRecord::new(bob.clone(), EntityKind::Person, "Bob"), T0),
            Err(Error::Corrupt { .. })
        ));
        assert!(!reg.upsert_seen(&bob, EntityKind::Person, "Bob", T0).unwrap());
        assert_eq!(fs::read_to_string(&bob_path).unwrap(), text);
    }
    // Non-UTF-8 bytes, and a valid file copied to a name that is not its id's, are skipped too.
    fs::write(&bob_path, b"---\nid: person:bob\xff\n---\n").unwrap();
    assert!(matches!(reg.get(&bob), Err(Error::Corrupt { .. })));
    fs::remove_file(&bob_path).unwrap();
    fs::copy(reg.path_for(&id("person:alice")).unwrap(), reg.root().join("person/Alice copy.md")).unwrap();
    assert_eq!(reg.all().unwrap().len(), 1);
    assert_eq!(reg.lookup_alias(None, "ally").unwrap(), vec![id("person:alice")]);
}

#[test]
fn registry_upsert_seen_creates_once_and_never_touches_an_existing_file() {
    let (_dir, reg) = open_registry(tempdir().unwrap());
    let carol = id("person:carol");
    assert!(reg.upsert_seen(&carol, EntityKind::Person, "Carol", T0).unwrap());
    let got = reg.get(&carol).unwrap().unwrap();
    assert_eq!(got.display_name, "Carol");
    assert_eq!((got.created_at.as_str(), got.updated_at.as_str()), ("2023-05-08T00:00:00Z", "2023-05-08T00:00:00Z"));
    assert_eq!(got.notes, "");
    assert!(fs::read_to_string(reg.path_for(&carol).unwrap()).unwrap().ends_with("---\n"));

    let path = reg.path_for(&carol).unwrap();
    fs::write(&path, fs::read_to_string(&path).unwrap() + "Carol's notes.\n").unwrap();
    let before = fs::read(&path).unwrap();
    assert!(!reg.upsert_seen(&carol, EntityKind::Person, "CAROL!!", T0 + 1).unwrap());
    assert_eq!(fs::read(&path).unwrap(), before);

    // A file written by put is not touched either.
    reg.put(&alice(), T0).unwrap();
    let alice_path = reg.path_for(&id("person:alice")).unwrap();
    let before = fs::read(&alice_path).unwrap();
    assert!(!reg.upsert_seen(&id("person:alice"), EntityKind::Person, "Someone Else", T0).unwrap());
    assert_eq!(fs::read(&alice_path).unwrap(), before);

    // Minimal records of other kinds are findable by the id's own spelling.
    assert!(reg.upsert_seen(&id("email:dan@example.com"), EntityKind::Email, "Dan <dan@example.com>", T0).unwrap());
    assert_eq!(
        reg.lookup_alias(Some(EntityKind::Email), "DAN@example.com").unwrap(),
        vec![id("email:dan@example.com")]
    );
    assert!(reg.upsert_seen(&id("handle:dan"), EntityKind::Handle, "@dan", T0).unwrap());
    assert_eq!(reg.lookup_alias(None, "dan").unwrap(), vec![id("handle:dan")]);
    assert!(matches!(
        reg.upsert_seen(&id("handle:x"), EntityKind::Person, "x", T0),
        Err(Error::InvalidArgument { .. })
    ));
}

/// Ids that are mostly well-formed, with hostile tails, plus anything at all.
fn any_id() -> impl Strategy<Value = String> {
    let kind = prop::sample::select(vec!["person", "email", "url", "topic", "bogus", "", "Person", "../person"]);
    let tail = prop_oneof![
        any::<String>(),
        "[a-z0-9._-]{0,12}",
        "(\\.\\./|/|\\\\|\\.|%2f|\\x00|:|[A-Z]){0,40}",
        prop::collection::vec(any::<char>(), 100..400).prop_map(|cs| cs.into_iter().collect()),
    ];
    prop_oneof![(kind, tail).prop_map(|(k, t)| format!("{k}:{t}")), any::<String>()]
}

/// Two ids: unrelated, or the second a near miss of the first (the same tail up to case,
/// separators or a trailing character), the pairs a lossy slug would merge.
fn id_pair() -> impl Strategy<Value = (String, String)> {
    any_id().prop_flat_map(|a| {
        let (kind, tail) = a.split_once(':').unwrap_or(("person", a.as_str()));
        let near = [
            tail.to_uppercase(),
            tail.replace('_', "/"),
            tail.replace(['.', '-'], "_"),
            format!("{tail}_"),
            format!("{tail}\0"),
            format!(".{tail}"),
            format!("_{tail}"),
            format!("{tail}é"),
        ]
        .map(|t| format!("{kind}:{t}"))
        .to_vec();
        (Just(a), prop_oneof![any_id(), prop::sample::select(near)])
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x7265_6769_7374_7279),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn registry_arbitrary_ids_error_or_stay_inside_the_root((a, b) in id_pair()) {
        let (_dir, reg) = open_registry(tempdir().unwrap());
        let mut placed = Vec::new();
        for raw in [&a, &b] {
            let eid = EntityId::from(raw.as_str());
            let Ok(path) = reg.path_for(&eid) else { continue };
            let kind = raw.split_once(':').map(|(k, _)| k).unwrap();
            prop_assert!(EntityKind::parse(kind).is_some());
            let folder = reg.root().join(kind);
            prop_assert_eq!(path.parent(), Some(folder.as_path()));
            let created = reg.upsert_seen(&eid, EntityKind::parse(kind).unwrap(), raw, T0).unwrap();
            prop_assert!(created || a == b);
            assert_inside(&reg, kind, &path);
            placed.push((raw.clone(), path));
        }
        if let [(ra, pa), (rb, pb)] = placed.as_slice() {
            prop_assert_eq!(ra == rb, pa == pb, "distinct ids share a file, or one id has two");
        }
    }
}
