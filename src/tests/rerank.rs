//! The rerank stage after walk (issue 35): the cross-encoder folder checked at load, the
//! stage's plumbing (which hits it re-scores, the fused order, `explain.rerank`), what it
//! leaves alone (history and time-only answers, the time window, walk without a reranker),
//! and the harness's `walk+rerank` system.
//!
//! The ONNX tests load the tiny cross-encoder of `tests/data/reranker/` (a one-layer BERT
//! with random weights, `scripts/make-test-reranker.py`) on the ONNX Runtime that
//! `scripts/fetch-models.sh` fetches; without it they print a skip line and pass, except
//! under `CI=true`, where a missing runtime is a failure. The stage's logic is tested with a
//! deterministic scorer as well, which needs no runtime.

use crate::tests::common::*;
use crate::{
    Config, CrossEncoder, CrossScorer, Error, Memory, OpenOptions, QueryResponse, Reranker, Scope, WalkArgs,
    fuse_ranks, walk,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reranker").join(name)
}

/// Whether the ONNX Runtime library is here (else the ONNX tests skip, outside CI).
fn runtime_present(test: &str) -> bool {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-minilm-l6-v2");
    let present = crate::ModelPaths::new(&dir).ort_library().is_some_and(|p| p.is_file());
    if !present {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{test}: no ONNX Runtime in {} under CI=true: run scripts/fetch-models.sh first", dir.display());
        }
        eprintln!("skipped {test}: no ONNX Runtime in {} (run scripts/fetch-models.sh)", dir.display());
    }
    present
}

fn load_err(dir: &Path) -> String {
    match CrossEncoder::load(dir) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => {
            assert!(matches!(e, Error::Reranker { .. }), "{e:?}");
            e.chain()
        }
    }
}

#[test]
fn a_folder_without_a_model_is_refused_naming_what_is_missing() {
    let err = load_err(Path::new("/nonexistent/memtree-reranker"));
    assert!(err.contains("/nonexistent/memtree-reranker"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let err = load_err(dir.path());
    assert!(err.contains("model.onnx is missing"), "{err}");
    std::fs::write(dir.path().join("model.onnx"), b"not a model").unwrap();
    let err = load_err(dir.path());
    assert!(err.contains("tokenizer.json is missing"), "{err}");
    std::fs::write(dir.path().join("tokenizer.json"), b"{").unwrap();
    let err = load_err(dir.path());
    assert!(err.contains("is not a tokenizer"), "{err}");
}

#[test]
fn a_model_that_is_not_a_cross_encoder_or_not_onnx_is_refused_at_load() {
    if !runtime_present("a_model_that_is_not_a_cross_encoder_or_not_onnx_is_refused_at_load") {
        return;
    }
    // Token vectors out, not one score per pair.
    let err = load_err(&fixture("embedder"));
    assert!(err.contains("one score per pair") && err.contains("last_hidden_state"), "{err}");
    // Bytes that are not a graph.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("tiny/tokenizer.json"), dir.path().join("tokenizer.json")).unwrap();
    std::fs::write(dir.path().join("model.onnx"), b"not a model").unwrap();
    let err = load_err(dir.path());
    assert!(err.contains("cannot load") && err.contains("model.onnx"), "{err}");
}

#[test]
fn a_tokenizer_of_another_vocabulary_is_refused_at_load() {
    if !runtime_present("a_tokenizer_of_another_vocabulary_is_refused_at_load") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("tiny/model.onnx"), dir.path().join("model.onnx")).unwrap();
    std::fs::copy(fixture("big-vocab/tokenizer.json"), dir.path().join("tokenizer.json")).unwrap();
    let err = load_err(dir.path());
    assert!(err.contains("vocabulary") && err.contains("does not fit"), "{err}");
}

#[test]
fn a_bad_settings_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["model.onnx", "tokenizer.json"] {
        std::fs::copy(fixture("tiny").join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(dir.path().join(crate::RERANKER_SETTINGS_FILE), r#"{"max_tokens": 3}"#).unwrap();
    let err = load_err(dir.path());
    assert!(err.contains("max_tokens"), "{err}");
}

#[test]
fn the_tiny_cross_encoder_scores_every_pair_deterministically() {
    if !runtime_present("the_tiny_cross_encoder_scores_every_pair_deterministically") {
        return;
    }
    let ce = CrossEncoder::load(&fixture("tiny")).unwrap();
    assert_eq!(ce.name(), "tiny-test-cross-encoder");
    assert_eq!(ce.max_tokens(), 64);
    assert!(ce.score("anything", &[]).unwrap().is_empty());
    let long = "the project launch ".repeat(2_000);
    let passages = ["alice: the phoenix launch moves to may", "bob: lunch?", "", long.as_str(), "ünïcödé ✓ 東京"];
    let a = ce.score("when is the phoenix launch?", &passages).unwrap();
    assert_eq!(a.len(), passages.len());
    assert!(a.iter().all(|s| s.is_finite()), "{a:?}");
    // Batched or one at a time, the same scores (padding is masked).
    for (i, p) in passages.iter().enumerate() {
        let one = ce.score("when is the phoenix launch?", &[p]).unwrap();
        assert!((one[0] - a[i]).abs() < 1e-4, "{i}: {} vs {}", one[0], a[i]);
    }
    assert_eq!(a, ce.score("when is the phoenix launch?", &passages).unwrap());
}

/// A scorer that prefers passages containing `word` (1 for those, 0 for the rest), and
/// counts its calls.
struct Prefers {
    word: &'static str,
    calls: std::sync::atomic::AtomicUsize,
}

impl CrossScorer for Prefers {
    fn name(&self) -> &str {
        "prefers"
    }
    fn score(&self, _query: &str, passages: &[&str]) -> crate::Result<Vec<f32>> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(passages.iter().map(|p| if p.contains(self.word) { 1.0 } else { 0.0 }).collect())
    }
}

/// Forty messages about the Phoenix build, one an hour from 2023-05-08 00:00 UTC; the one
/// that says "kestrel" is the scorer's.
fn store_with(reranker: Option<Reranker>) -> (Fixture, Memory) {
    let fx = Fixture::new(Config::default());
    let opts = OpenOptions { reranker, ..fx.options() };
    let mut mem = Memory::open_with(fx.dir.path(), opts).unwrap();
    let mut items = Vec::new();
    for i in 0..40 {
        let text = if i == 7 {
            "the Phoenix build broke on the kestrel rig".to_string()
        } else {
            format!("note {i}: the Phoenix build is green again, Phoenix build {i}")
        };
        items.push(chat("slack:#eng", if i % 2 == 0 { "Alice" } else { "Bob" }, T0 + i * HOUR, &text));
    }
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    (fx, mem)
}

fn ask(mem: &Memory, q: &str, limit: usize, rerank: bool) -> QueryResponse {
    let args = WalkArgs { limit, rerank, ..WalkArgs::new(q) };
    walk(mem.as_reader(), &args, &Scope::all()).unwrap()
}

fn ids(r: &QueryResponse) -> Vec<&str> {
    r.hits.iter().map(|h| h.node_id.as_str()).collect()
}

#[test]
fn the_stage_reorders_walks_top_n_by_fused_rank_and_says_so() {
    let scorer = Arc::new(Prefers { word: "kestrel", calls: Default::default() });
    let (_fx, mem) = store_with(Some(Reranker::new(scorer.clone(), 20)));
    let q = "how is the Phoenix build?";
    let plain = ask(&mem, q, 30, false);
    let reranked = ask(&mem, q, 30, true);
    assert_eq!(scorer.calls.load(std::sync::atomic::Ordering::SeqCst), 1, "one model call per walk");
    assert_eq!(plain.total, reranked.total);
    // The first 20 of walk, reordered as the fusion says; hits past 20 keep walk's order.
    let walk_top: Vec<&str> = ids(&plain)[..20].to_vec();
    let scores: Vec<f32> =
        plain.hits[..20].iter().map(|h| if h.content.contains("kestrel") { 1.0 } else { 0.0 }).collect();
    let want: Vec<&str> = fuse_ranks(&scores).iter().map(|&(i, _, _)| walk_top[i]).collect();
    assert_eq!(&ids(&reranked)[..20], &want[..]);
    assert_eq!(&ids(&reranked)[20..], &ids(&plain)[20..]);
    // Scores fall down the list; the re-scored hits say how they were ranked.
    assert!(reranked.hits.windows(2).all(|p| p[0].score >= p[1].score), "scores fall");
    for (k, h) in reranked.hits.iter().enumerate() {
        let rr = &h.explain.as_ref().unwrap()["rerank"];
        if k < 20 {
            assert_eq!(rr["model"], "prefers");
            let walk_rank = rr["walk_rank"].as_u64().unwrap() as usize;
            assert_eq!(walk_top[walk_rank - 1], h.node_id);
            assert!(rr["rank"].as_u64().unwrap() >= 1);
        } else {
            assert!(rr.is_null(), "hit {k} past the top 20 is not re-scored");
        }
    }
    // The kestrel message is the model's first: it ranks no lower than walk put it.
    let pos = |r: &QueryResponse| r.hits.iter().position(|h| h.content.contains("kestrel"));
    if let (Some(before), Some(after)) = (pos(&plain), pos(&reranked))
        && before < 20
    {
        assert!(after <= before, "kestrel at {before} before, {after} after");
    }
    // Asked for fewer hits, the first ones are the same: the top N is re-scored whatever the limit.
    let five = ask(&mem, q, 5, true);
    assert_eq!(ids(&five), ids(&reranked)[..5].to_vec());
}

#[test]
fn without_a_reranker_or_with_the_stage_off_walk_answers_as_before() {
    let (_fx, bare) = store_with(None);
    let scorer = Arc::new(Prefers { word: "kestrel", calls: Default::default() });
    let (_fx2, with) = store_with(Some(Reranker::new(scorer.clone(), 20)));
    for q in ["how is the Phoenix build?", "what broke on the kestrel rig?", "Alice and Bob"] {
        let a = serde_json::to_value(ask(&bare, q, 10, true)).unwrap();
        let b = serde_json::to_value(ask(&with, q, 10, false)).unwrap();
        // Node ids differ between stores only if content does: same items, same ids.
        assert_eq!(a, b, "{q}");
        assert!(!a.to_string().contains("\"rerank\""));
    }
    assert_eq!(scorer.calls.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[test]
fn history_and_time_only_answers_keep_their_order_and_a_window_still_bounds() {
    let scorer = Arc::new(Prefers { word: "kestrel", calls: Default::default() });
    let (fx, mem) = store_with(Some(Reranker::new(scorer.clone(), 20)));
    // A time-only question: the timeline, never re-scored.
    fx.clock.set(T0 + 40 * HOUR);
    let q = "what happened today?";
    let a = serde_json::to_value(ask(&mem, q, 10, true)).unwrap();
    let b = serde_json::to_value(ask(&mem, q, 10, false)).unwrap();
    assert_eq!(a, b);
    assert_eq!(scorer.calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    // A history question: sessions in time order, never re-scored.
    let q = "In what order did the Phoenix build break and go green?";
    let a = ask(&mem, q, 5, true);
    if a.explain.as_ref().is_some_and(|e| e.get("history").is_some()) {
        assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(ask(&mem, q, 5, false)).unwrap());
        assert_eq!(scorer.calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    }
    // A question with a window and a topic: re-scored, and every hit inside the window.
    let q = "how was the Phoenix build yesterday?";
    let r = ask(&mem, q, 10, true);
    let window = r.explain.as_ref().unwrap()["time_window"].as_array().cloned().expect("a window");
    let (since, until) = (window[0].as_str().unwrap(), window[1].as_str().unwrap());
    assert!(!r.hits.is_empty());
    for h in &r.hits {
        assert!(h.time_range_end.as_str() >= since && h.time_range_start.as_str() <= until, "{h:?}");
    }
    assert!(r.hits[0].explain.as_ref().unwrap().get("rerank").is_some());
}

#[test]
fn the_onnx_stage_runs_inside_walk() {
    if !runtime_present("the_onnx_stage_runs_inside_walk") {
        return;
    }
    let (_fx, mem) = store_with(Some(Reranker::load(&fixture("tiny"), 20).unwrap()));
    let r = ask(&mem, "how is the Phoenix build?", 10, true);
    assert_eq!(r.hits.len(), 10);
    let first = &r.hits[0].explain.as_ref().unwrap()["rerank"];
    assert_eq!(first["model"], "tiny-test-cross-encoder");
    assert!(first["score"].as_f64().unwrap().is_finite());
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        serde_json::to_value(ask(&mem, "how is the Phoenix build?", 10, true)).unwrap()
    );
}

#[test]
fn a_standing_instruction_keeps_its_place_and_the_rest_is_reranked_around_it() {
    let fx = Fixture::new(Config::default());
    // The model prefers draft 3 and has nothing for the instruction (it scores 0).
    let scorer = Arc::new(Prefers { word: "draft 3", calls: Default::default() });
    let opts = OpenOptions { reranker: Some(Reranker::new(scorer, 20)), ..fx.options() };
    let mut mem = Memory::open_with(fx.dir.path(), opts).unwrap();
    let mut items = vec![chat(
        "app:a",
        "User",
        T0,
        "Always show code with syntax highlighting when I ask about implementation details.",
    )];
    for i in 0..4 {
        items.push(chat(
            "app:a",
            "User",
            T0 + (i + 1) * MIN,
            &format!("the login page of my app, draft {i}: the login feature"),
        ));
    }
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let q = "how do I implement the login feature, in detail?";
    let plain = ask(&mem, q, 10, false);
    let reranked = ask(&mem, q, 10, true);
    let at = |r: &QueryResponse, s: &str| r.hits.iter().position(|h| h.content.contains(s));
    let instruction = at(&plain, "syntax highlighting").expect("walk brings the instruction");
    assert_eq!(at(&reranked, "syntax highlighting"), Some(instruction), "pinned where walk put it");
    let pinned = &reranked.hits[instruction];
    assert!(pinned.explain.as_ref().unwrap().get("rerank").is_none(), "not scored: {pinned:?}");
    // The others were re-scored among themselves, around it, as the fusion says.
    let free: Vec<&str> =
        plain.hits.iter().enumerate().filter(|&(i, _)| i != instruction).map(|(_, h)| h.node_id.as_str()).collect();
    let scores: Vec<f32> = plain
        .hits
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != instruction)
        .map(|(_, h)| if h.content.contains("draft 3") { 1.0 } else { 0.0 })
        .collect();
    let mut want: Vec<&str> = fuse_ranks(&scores).iter().map(|&(i, _, _)| free[i]).collect();
    want.insert(instruction, plain.hits[instruction].node_id.as_str());
    assert_eq!(ids(&reranked), want);
    assert!(reranked.hits.windows(2).all(|p| p[0].score >= p[1].score), "scores fall");
}
