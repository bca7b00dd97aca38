//! Passage vectors of long leaves (issue 44, item 2): a leaf longer than the model's window
//! gets a vector per passage past it, stored with the leaf, loaded by a fresh open and by a
//! reader catching up with another writer, found densely by what only a later passage says,
//! and gone with the leaf. The model here is the hashing embedder with a 120-word window.

use crate::tests::common::{Fixture, MIN, T0, chat};
use crate::store::{NodeReads, StatsReads};
use crate::{Config, HashEmbedder, Memory, MemoryReader, OpenOptions, SourceId};
use std::sync::Arc;

/// Wide enough that the hashed words of a passage rarely share a bucket with the question's.
const DIM: usize = 1024;

/// Words the test model reads of a text: less than a message, more than a passage.
const WINDOW: usize = 120;

/// A message of three 100-word paragraphs whose last one ends with `tail`.
fn long_message(seed: &str, tail: &str) -> String {
    let para = |p: usize| (0..100).map(|i| format!("{seed}{p}w{i}")).collect::<Vec<_>>().join(" ") + ".";
    format!("{}\n\n{}\n\n{} {tail}.", para(0), para(1), para(2))
}

fn options(fx: &Fixture) -> OpenOptions {
    OpenOptions { embedder: Some(Arc::new(HashEmbedder::windowed(DIM, WINDOW))), ..fx.options() }
}

/// The passage vectors the store holds, and those the reader's matrix holds.
fn passages(r: &MemoryReader) -> (u64, usize) {
    let stored = r.store().counts().unwrap().passage_vectors;
    (stored, r.dense().expect("a model").vectors().passage_rows())
}

/// The leaf nearest `q` by its best vector, own or passage's. No discount: the hashing
/// embedder's cosines are a fraction of the model's, so the model's discount would not mean
/// the same here (the discount has its own property test, `embed::vectors`).
fn top(r: &MemoryReader, q: &str) -> String {
    let q = crate::Embedder::embed(&HashEmbedder::windowed(DIM, WINDOW), &[q]).unwrap().remove(0);
    r.read(|r| Ok(r.dense().expect("a model").vectors().top_k_by_passage(&q, 1, 0.0))).unwrap().remove(0).0
}

#[test]
fn a_long_leaf_is_found_by_a_passage_past_the_window() {
    let fx = Fixture::new(Config::default());
    let mut mem = Memory::open_with(fx.dir.path(), options(&fx)).unwrap();
    let mut items = vec![chat("chat:a", "Ann", T0, &long_message("a", "the zeppelin hangar reopens"))];
    for i in 0..5 {
        items.push(chat("chat:b", "Bo", T0 + i * MIN, &format!("short note {i} about lunch")));
    }
    mem.ingest(items).unwrap();
    // Three passages: the first is the leaf's own vector's, the two after it are past the
    // window and get theirs.
    assert_eq!(passages(mem.as_reader()), (2, 2));
    let long = top(mem.as_reader(), "zeppelin hangar");
    assert!(mem.as_reader().store().node(&long).unwrap().unwrap().content.contains("zeppelin"));
    // It is found by its last passage, which its own vector does not read.
    let q = crate::Embedder::embed(&HashEmbedder::windowed(DIM, WINDOW), &["zeppelin hangar"]).unwrap().remove(0);
    let (_, slot) = mem.as_reader().dense().unwrap().vectors().best_cosine(&q, &long, 0.0).unwrap();
    assert_eq!(slot, 2);

    // A reader in its own right catches up with the writer's next long leaf by the rows
    // written since it looked, passages included.
    let reader = MemoryReader::open(fx.dir.path(), options(&fx)).unwrap();
    assert_eq!(passages(&reader), (2, 2));
    mem.ingest(vec![chat("chat:c", "Cy", T0 + HOUR_AND, &long_message("c", "the glacier observatory"))]).unwrap();
    let glacier = top(&reader, "glacier observatory");
    assert_ne!(glacier, long);
    assert_eq!(passages(&reader), (4, 4));
    drop(mem);

    // A fresh open loads them from the store.
    let mut mem = Memory::open_with(fx.dir.path(), options(&fx)).unwrap();
    assert_eq!(passages(mem.as_reader()), (4, 4));
    assert_eq!(top(mem.as_reader(), "zeppelin hangar"), long);

    // Forgetting the source drops its passages, in the store and in memory.
    mem.delete_source(&SourceId::from("chat:a")).unwrap();
    assert_eq!(passages(mem.as_reader()), (2, 2));
    assert_ne!(top(mem.as_reader(), "zeppelin hangar"), long);
}

/// One hour and a minute: the second write lands in a new session of its own source.
const HOUR_AND: i64 = 61 * MIN;

/// When no passage holds a word of the question as the index reads it, the snippet is the
/// passage whose vector found the leaf (it was the first passage). The question is one word
/// longer than the index keeps a term (72 bytes), which the test model still reads.
#[test]
fn the_snippet_is_the_passage_that_found_the_leaf_when_words_choose_none() {
    let fx = Fixture::new(Config::default());
    let mut mem = Memory::open_with(fx.dir.path(), options(&fx)).unwrap();
    let word = "glacierobservatory".repeat(5);
    let items = vec![
        chat("chat:a", "Ann", T0, &long_message("a", &word)),
        chat("chat:b", "Bo", T0 + MIN, "short note about lunch"),
    ];
    mem.ingest(items).unwrap();
    let args = crate::WalkArgs {
        limit: 1,
        // No discount: see `top`.
        params: crate::WalkParams { answers: false, passage_discount: 0.0, ..crate::WalkParams::default() },
        ..crate::WalkArgs::new(&word)
    };
    let r = crate::walk(mem.as_reader(), &args, &crate::Scope::all()).unwrap();
    let hit = &r.hits[0];
    assert!(hit.content.contains(&word));
    assert_eq!(hit.explain.as_ref().unwrap()["signals"]["passage"], 2, "{:?}", hit.explain);
    let snippet = hit.snippet.as_ref().expect("a long leaf's snippet");
    assert!(snippet.text.contains(&word), "{snippet:?}");
}
