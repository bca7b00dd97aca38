//! Coverage of the question (issue 44 item 1), as a property over a real corpus: a rare
//! phrase of two to four words taken from any message of a real Slack export (the vendored
//! `tests/data/slack/mesos-magellan`, MIT) finds that message among walk's first ten. Rare:
//! at most [`RARE`] messages hold all of its words. Without a model, as a user without one
//! asks: the words alone decide.

use crate::store::NodeReads;
use crate::tests::common::*;
use crate::text::content_words;
use crate::{Config, Format, ImportOptions, Memory, OpenOptions, Scope, WalkArgs, walk};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, RngSeed, TestRunner};
use std::collections::BTreeSet;
use std::path::Path;

/// A phrase whose words all lie in at most this many messages is rare.
const RARE: usize = 3;

#[test]
fn a_rare_phrase_from_a_message_finds_it_in_the_top_ten() {
    let fx = Fixture::new(Config::default());
    let mut mem = Memory::open_with(fx.dir.path(), OpenOptions { embedder: None, ..fx.options() }).unwrap();
    let export = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/slack/mesos-magellan");
    mem.import_with(Format::Slack, &export, &ImportOptions::default(), |_| {}).unwrap();
    mem.flush().unwrap();
    let mut leaves: Vec<(String, Vec<String>)> = Vec::new();
    mem.as_reader()
        .store()
        .for_each_node(|n| {
            if n.is_leaf() {
                leaves.push((n.node_id.0.clone(), content_words(&n.content).collect()));
            }
            Ok(())
        })
        .unwrap();
    let sets: Vec<BTreeSet<&str>> = leaves.iter().map(|(_, w)| w.iter().map(String::as_str).collect()).collect();
    let mut runner = TestRunner::new(RunnerConfig {
        cases: 96,
        rng_seed: RngSeed::Fixed(0x0063_6f76_6572),
        failure_persistence: None,
        ..RunnerConfig::default()
    });
    let strategy = (0..leaves.len(), any::<prop::sample::Index>(), 2usize..=4);
    let asked = std::cell::Cell::new(0);
    runner
        .run(&strategy, |(leaf, start, len)| {
            let (id, words) = &leaves[leaf];
            prop_assume!(words.len() >= len);
            let at = start.index(words.len() - len + 1);
            let phrase = &words[at..at + len];
            let holders = sets.iter().filter(|s| phrase.iter().all(|w| s.contains(w.as_str()))).count();
            prop_assume!(holders <= RARE);
            let q = phrase.join(" ");
            let r = walk(mem.as_reader(), &WalkArgs::new(&q), &Scope::all()).unwrap();
            let top: Vec<&str> = r.hits.iter().take(10).map(|h| h.node_id.as_str()).collect();
            prop_assert!(top.contains(&id.as_str()), "{q:?} ({holders} messages hold it): {id} not in {top:?}");
            asked.set(asked.get() + 1);
            Ok(())
        })
        .unwrap();
    // The property held over real questions, not over cases all assumed away.
    assert!(asked.get() >= 48, "only {} phrases were rare enough to ask", asked.get());
}
