//! The demo corpus's labelled questions (`examples/demo/questions.json`, the harness's
//! default corpus): every evidence id names a leaf the importers produce, and the harness
//! answers all of them over the demo imported as a user imports it.

use crate::OpenOptions;
use crate::WalkParams;
use crate::eval::recall::{RecallConfig, replay, run};
use crate::eval::{DEMO_QUESTIONS, Sample, read_corpus};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn every_demo_question_has_all_its_evidence_in_the_demo_store() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEMO_QUESTIONS);
    let samples = read_corpus(&corpus).expect("the demo question set reads");
    let [Sample::Files(demo)] = samples.as_slice() else { panic!("one sample that imports the demo files") };
    assert!(demo.questions.len() >= 40, "about 40 questions: {}", demo.questions.len());
    let work = tempfile::tempdir().unwrap();
    let cfg = RecallConfig {
        ks: vec![5, 10, 25],
        pooled: false,
        systems: vec!["walk".into(), "bm25".into()],
        walk: WalkParams::default(),
        reuse_stores: false,
        candidates: false,
        now_ms: None,
        time_min_turns: 0,
    };
    let report = run(&samples, work.path(), &OpenOptions::default(), &cfg, |_| {}).unwrap();
    // The harness keeps only the evidence ids that name a leaf: all of them must survive, or a
    // typo in the file (or an importer that renamed its leaves) would silently shrink it.
    assert_eq!(report.questions, demo.questions.len());
    for d in report.per_question.iter().filter(|d| d.system == "walk") {
        let q = demo.questions.iter().find(|q| q.question == d.question).unwrap();
        let want: BTreeSet<&String> = q.evidence.iter().collect();
        let got: BTreeSet<&String> = d.evidence.iter().collect();
        assert_eq!(got, want, "{}", d.question);
    }
    // The demo is small: lexical search alone finds most of the evidence in the top 25.
    let bm25 = &report.systems["bm25"].overall;
    assert!(bm25["recall@25"] > 0.8, "bm25 {bm25:?}");
}

#[test]
fn dumped_candidates_replay_to_walks_own_ranking() {
    // The `--candidates` file is only useful if it holds every input of walk's ranking:
    // replayed at the default weights, each question's candidates must rank exactly as walk
    // ranked its hits (order and summary questions are reordered after the scorer, and
    // the demo has none).
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEMO_QUESTIONS);
    let samples = read_corpus(&corpus).expect("the demo question set reads");
    let work = tempfile::tempdir().unwrap();
    let cfg = RecallConfig {
        ks: vec![10],
        pooled: false,
        systems: vec!["walk".into()],
        walk: WalkParams::default(),
        reuse_stores: false,
        candidates: true,
        now_ms: None,
        time_min_turns: 0,
    };
    let report = run(&samples, work.path(), &OpenOptions::default(), &cfg, |_| {}).unwrap();
    let walked: Vec<_> = report.per_question.iter().filter(|d| d.system == "walk").collect();
    assert_eq!(report.candidates.len(), walked.len());
    let mut compared = 0;
    for (c, d) in report.candidates.iter().zip(&walked) {
        assert_eq!(c.question, d.question);
        assert_eq!(c.turns.len(), c.walk.rows.len());
        // What follows the scorer is not replayed: a history answer, a first mention moved
        // to the front.
        if c.walk.asks_order || c.walk.asks_summary || c.walk.asks_first {
            continue;
        }
        let turn: std::collections::HashMap<_, _> = c.walk.rows.iter().map(|r| &r.node_id).zip(&c.turns).collect();
        // A reply carried as its question's `answer` is not listed again lower down.
        let carried: Vec<&Option<String>> = d.answers.iter().filter(|a| a.is_some()).collect();
        let replayed: Vec<Option<String>> = replay(&c.walk.rows, &c.walk.question, &WalkParams::default())
            .iter()
            .map(|id| turn[id].clone())
            .filter(|t| !carried.contains(&t))
            .collect();
        assert!(!d.top.is_empty(), "{}", d.question);
        assert_eq!(&replayed[..d.top.len()], d.top.as_slice(), "{}", d.question);
        compared += 1;
    }
    assert!(compared >= 40, "{compared} questions compared");
    // A different weight replays to a different ranking somewhere: the signals are not inert.
    let moved = report.candidates.iter().any(|c| {
        let at = |p: &WalkParams| replay(&c.walk.rows, &c.walk.question, p);
        at(&WalkParams::default()) != at(&WalkParams { window: 0.0, parent: 0.0, ..WalkParams::default() })
    });
    assert!(moved, "no ranking moved without the neighbours' and the sessions' scores");
}
