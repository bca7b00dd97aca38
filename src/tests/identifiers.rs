//! Identifiers as terms (issue 44 item 3): a question that writes a version number, a file
//! name or a snake_case name finds the memory that holds it first, among others that hold
//! its parts. The records are the shape of a project's commit log read as a chat (tantivy's,
//! where "Bumped tantivy version to 0.15" lost to a commit about "tantivy-grammar version"),
//! the questions the shape of the real-data check's ("What changed about X?").

use crate::tests::common::*;
use crate::{Config, Memory, OpenOptions, Scope, WalkArgs, walk};

/// Each identifier's commit and the commits holding its parts lie apart, as in a real log
/// (walk reads a chat message with its neighbours: three commits about "setup" in a row
/// would lend each other their words).
const COMMITS: &[&str] = &[
    "Bumped tantivy to 0.15",
    "Simpler setup of the py bindings",
    "Lowered the max tokens a leaf holds in the config",
    "Moved the code to src/core/segment.rs",
    "Version 0.14 fixed 15 things in the query parser",
    "Fixed the wheel build in setup.py",
    "Split the segment code in the core folder of src",
    "Moved 15 tests to version 0 of the format",
    "Renamed max_leaf_tokens in the config",
    "Removed setup and py folders that held nothing",
];

#[test]
fn a_question_that_writes_an_identifier_finds_it_first() {
    // Without a model, as the real-data check ran: the words alone decide (the test
    // embedder hashes words, and would find some of these by their parts' hashes).
    let fx = Fixture::new(Config::default());
    let mut mem = Memory::open_with(fx.dir.path(), OpenOptions { embedder: None, ..fx.options() }).unwrap();
    let items: Vec<_> =
        COMMITS.iter().enumerate().map(|(i, c)| chat("chat:commits", "dev", T0 + i as i64 * MIN, c)).collect();
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    for (id, want) in [
        ("0.15", "Bumped tantivy to 0.15"),
        ("setup.py", "Fixed the wheel build"),
        ("max_leaf_tokens", "Renamed max_leaf_tokens"),
        ("src/core/segment.rs", "Moved the code"),
    ] {
        let q = format!("What changed about {id}?");
        let r = walk(mem.as_reader(), &WalkArgs::new(&q), &Scope::all()).unwrap();
        let first = r.hits.first().map(|h| h.content.as_str()).unwrap_or_default();
        assert!(first.contains(want), "{q}: first is {first:?}");
    }
}
