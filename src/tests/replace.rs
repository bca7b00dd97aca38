//! The write path of a replace or delete updates the shared derived state in place (the
//! vector matrix loses the dropped rows, the gazetteer is the one the write rebuilt) instead
//! of reloading it: the state after the writes must equal a fresh load from the store, and
//! so must every answer.

use crate::tests::common::{Fixture, HOUR, T0, chat};
use crate::{Config, Document, MemoryReader, Scope, SourceId, tool};

fn note(i: usize, text: &str) -> Document {
    Document {
        source_id: format!("doc:notes/n{i}.md").as_str().into(),
        title: format!("Note {i}"),
        body: text.to_string(),
        modified_ms: Some(T0 + i as i64 * HOUR),
        source_ref: None,
        provider: None,
    }
}

const QUESTIONS: &[&str] = &[
    "who owns the Phoenix launch?",
    "what did Priya say about the Lisbon offsite?",
    "Heron migration budget",
    "when is the design review with Marco?",
    "what did Bob decide?",
];

/// Every question's walk answer and a search_entities per name, as JSON text.
fn answers(r: &MemoryReader) -> Vec<String> {
    let mut out = Vec::new();
    for q in QUESTIONS {
        let call = serde_json::json!({"mode": "walk", "query": q, "limit": 10}).to_string();
        out.push(tool::call_read_json(r, &call, &Scope::all()).unwrap().to_string());
    }
    for name in ["priya", "marco", "heron", "bob", "phoenix"] {
        let call = serde_json::json!({"mode": "search_entities", "query": name, "limit": 20}).to_string();
        out.push(tool::call_read_json(r, &call, &Scope::all()).unwrap().to_string());
    }
    out
}

#[test]
fn replaces_and_deletes_leave_the_state_a_fresh_load_would_have() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let texts = [
        "Priya owns the Phoenix launch. The Lisbon offsite is in May.",
        "Marco runs the design review on Thursday with Bob.",
        "The Heron migration budget is 40k; Bob signs it off.",
        "Priya said the Lisbon offsite moves to June.",
        "Bob decided to ship Phoenix behind a flag.",
        "Marco and Priya pair on the Heron migration.",
    ];
    for (i, t) in texts.iter().enumerate() {
        mem.ingest_document(note(i, t)).unwrap();
    }
    mem.ingest([
        chat("slack:#eng", "Bob", T0, "Phoenix launch checklist is done"),
        chat("slack:#eng", "Priya", T0 + 60_000, "Heron budget review tomorrow with Marco"),
    ])
    .unwrap();
    mem.flush().unwrap();
    // Replaces that drop names (Marco leaves note 1; Heron leaves note 2), add new ones, keep
    // one text as it was (the same ids written again), and a delete.
    let r1 = mem.ingest_document(note(1, "Dana runs the design review on Friday.")).unwrap();
    let r2 = mem.ingest_document(note(2, "The Osprey budget is 50k; Dana signs it off.")).unwrap();
    let r3 = mem.ingest_document(note(3, texts[3])).unwrap();
    let r4 = mem.delete_source(&SourceId::from("doc:notes/n5.md")).unwrap();
    assert!(r1.removed > 0 && r2.removed > 0 && r3.removed > 0 && r4.removed > 0);

    let fresh = MemoryReader::open(fx.dir.path(), fx.options()).unwrap();
    let (mine, theirs) = (mem.as_reader().derived(), fresh.derived());
    let (a, b) = (mine.vectors().unwrap(), theirs.vectors().unwrap());
    assert_eq!((a.len(), a.sessions()), (b.len(), b.sessions()));
    let ids: Vec<String> = {
        use crate::store::NodeReads;
        let mut ids = Vec::new();
        fresh
            .store()
            .for_each_node(|n| {
                ids.push(n.node_id.to_string());
                Ok(())
            })
            .unwrap();
        ids
    };
    assert_eq!(a.len(), ids.len(), "one vector per stored node");
    assert_eq!(mine.gazetteer().len(), theirs.gazetteer().len());
    // Node by node: the same vectors (a dropped row left none behind, a kept one moved intact).
    for id in &ids {
        assert_eq!(a.get(id), b.get(id), "{id}");
    }
    drop((mine, theirs));
    assert_eq!(answers(mem.as_reader()), answers(&fresh));
    let gone = answers(mem.as_reader()).join("\n");
    assert!(!gone.contains("n5.md"), "a deleted note is still found");
}
