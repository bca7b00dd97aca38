//! Identifiers as terms (issue 44 item 3): a question that writes a version number, a file
//! name, a snake_case or CamelCase name finds the memory that holds it first, among others
//! that hold its parts. The records are the shape of a project's commit log read as a chat
//! (tantivy's, where "Bumped tantivy version to 0.15" lost to a commit about
//! "tantivy-grammar version").

use crate::tests::common::*;
use crate::{Config, Scope, WalkArgs, walk};

const COMMITS: &[&str] = &[
    "Bumped tantivy-grammar version to 0.16 and updated the query parser",
    "Bumped tantivy version to 0.15",
    "Version bump: 0.14.1 with 15 fixes to the tantivy index",
    "Removed the python bindings from setup and the py folder",
    "Fixed the wheel build in setup.py for python 3.9",
    "Added FuzzyQuery support to the query parser",
    "Fuzzy matching for the term query now handles transpositions",
    "Renamed max_leaf_tokens in the config",
    "The max number of tokens per leaf is configurable now",
    "Moved the segment code to src/core/segment.rs",
];

#[test]
fn a_question_that_writes_an_identifier_finds_it_first() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let items: Vec<_> =
        COMMITS.iter().enumerate().map(|(i, c)| chat("chat:commits", "dev", T0 + i as i64 * MIN, c)).collect();
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    for (q, want) in [
        ("Bumped tantivy version to 0.15", "Bumped tantivy version to 0.15"),
        ("When was setup.py fixed?", "Fixed the wheel build in setup.py"),
        ("Who added FuzzyQuery?", "Added FuzzyQuery support"),
        ("where was max_leaf_tokens renamed", "Renamed max_leaf_tokens"),
        ("what moved to src/core/segment.rs", "Moved the segment code"),
    ] {
        let r = walk(mem.as_reader(), &WalkArgs::new(q), &Scope::all()).unwrap();
        let first = r.hits.first().map(|h| h.content.as_str()).unwrap_or_default();
        assert!(first.contains(want), "{q}: first is {first:?}");
    }
}
