//! A write of more text than a batch keeps in memory (8 MiB) lets its nodes' texts go once
//! stored and reads them back for the vectors and the index (issue 28): every node must still
//! be indexed with its text and carry the vector of its text, in memory and after a reopen.

use crate::store::NodeReads;
use crate::tests::common::{Fixture, T0, check_invariants};
use crate::{
    Config, Document, Embedder, HashEmbedder, Memory, MemoryReader, OpenOptions, Scope, SourceId, TreeId, tool,
};

/// `n` words that are each in one slice only (~9 bytes a word), then `last`.
fn body(n: usize, last: &str) -> String {
    let mut words: Vec<String> = (0..n).map(|i| format!("tok{i:06}")).collect();
    words.push(last.to_string());
    words.join(" ")
}

/// Every node's vector (in the open matrix) is the vector of its stored text.
fn vectors_follow_texts(mem: &Memory) {
    let emb = HashEmbedder::new(64);
    let reader = mem.as_reader();
    let dense = reader.dense().expect("a model is configured");
    let nodes = reader.store().tree_nodes(&TreeId::for_source(&SourceId::from("doc:big.md"))).unwrap();
    assert!(nodes.len() > 1000, "{} nodes", nodes.len());
    for n in &nodes {
        let v = emb.embed(&[n.content.as_str()]).unwrap().remove(0);
        let c = dense.vectors().cosine(&v, n.node_id.as_str()).unwrap_or_else(|| panic!("{} has no vector", n.node_id));
        assert!(c > 0.99, "{}: cosine {c} with its own text", n.node_id);
    }
}

#[test]
fn a_write_past_the_kept_text_reads_its_texts_back() {
    let cfg = Config::default();
    let fx = Fixture::new(cfg.clone());
    let mut mem = fx.open();
    // ~12 MB of text: the nodes after the first 8 MiB are read back.
    let words = 1_300_000;
    let report = mem
        .ingest_document(Document {
            source_id: "doc:big.md".into(),
            title: "Big".into(),
            body: body(words, "marzipan"),
            modified_ms: Some(T0),
            source_ref: None,
            provider: None,
        })
        .unwrap();
    assert!(report.leaves > 1000, "{report:?}");
    check_invariants(&mem, &cfg);
    vectors_follow_texts(&mem);
    drop(mem);
    let mem = fx.open();
    vectors_follow_texts(&mem);
    // The index holds the last slice's words too (its text was read back for it): a lexical
    // walk (a reader without the model) finds it by its last word.
    let lexical = MemoryReader::open(fx.dir.path(), OpenOptions { embedder: None, ..fx.options() }).unwrap();
    let call = serde_json::json!({"mode": "walk", "query": "marzipan", "limit": 1}).to_string();
    let hits = tool::call_read_json(&lexical, &call, &Scope::all()).unwrap();
    let top = hits["hits"][0]["content"].as_str().unwrap_or_default();
    assert!(top.ends_with(" marzipan"), "walk for the last word: {}", &hits.to_string()[..300]);
}
