//! Export and restore through the library (issue 32), with a model: the vectors are made
//! again on restore and walk answers as the exported store did (dense signal included); the
//! registry's files travel byte for byte; another model than the archive names is refused
//! with nothing created.

use super::common::{Fixture, HOUR, T0, chat};
use crate::tool::call_json;
use crate::{Config, Error, ExportFilter, Memory, RestoreOptions, Scope};
use crate::{EntityId, EntityKind, EntityRecord, Registry};

fn walks(mem: &mut Memory) -> Vec<serde_json::Value> {
    ["garden peas", "who talked about the boat", "Dana", "what happened last week"]
        .iter()
        .map(|q| call_json(mem, &serde_json::json!({"mode": "walk", "query": q}).to_string(), &Scope::all()).unwrap())
        .collect()
}

#[test]
fn a_restore_with_the_model_answers_as_the_store_did() {
    let f = Fixture::new(Config::default());
    let mut mem = f.open();
    let texts = ["the peas go along the fence", "Dana bought a boat", "the boat needs paint", "Dana sails on Sunday"];
    let items: Vec<_> = (0..40)
        .map(|i| chat(if i % 2 == 0 { "slack:#a" } else { "slack:#b" }, "Dana", T0 + i * HOUR, texts[i as usize % 4]))
        .collect();
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let reg = Registry::open(&f.dir.path().join(crate::CONTENT_DIR)).unwrap();
    let mut dana = EntityRecord::new(EntityId::from("person:dana"), EntityKind::Person, "Dana");
    dana.aliases.push("the captain".into());
    reg.put(&dana, T0).unwrap();
    let file = reg.path_for(&dana.id).unwrap();
    let mut archive = Vec::new();
    let counts = mem.export(&mut archive, &ExportFilter::default(), |_| {}).unwrap();
    assert_eq!((counts.leaves, counts.registry), (40, 1));
    assert!(String::from_utf8_lossy(&archive).contains("\"model\":\"hash-bow\""));

    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("restored");
    let report = Memory::restore(&dir, &archive[..], f.options(), &RestoreOptions::default(), |_| {}).unwrap();
    assert_eq!(report.vectors as u64, counts.leaves + counts.summaries, "{report:?}");
    let mut back = Memory::open_with(&dir, f.options()).unwrap();
    assert_eq!(walks(&mut mem), walks(&mut back));
    let copied = dir.join(file.strip_prefix(f.dir.path()).unwrap());
    assert_eq!(std::fs::read(&file).unwrap(), std::fs::read(copied).unwrap());

    // Another model than the archive names: refused, nothing created.
    let other = String::from_utf8(archive).unwrap().replacen("\"model\":\"hash-bow\"", "\"model\":\"another\"", 1);
    let dir2 = out.path().join("other");
    let e = Memory::restore(&dir2, other.as_bytes(), f.options(), &RestoreOptions::default(), |_| {}).unwrap_err();
    assert!(matches!(e, Error::ArchiveModel { .. }), "{e}");
    assert!(!dir2.exists());
}
