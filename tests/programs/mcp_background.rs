//! `memtree mcp` writes without waiting for the model: an `ingest_document` call returns once
//! the document is durable and lexically searchable, and (with the model) the server's
//! background worker makes its vectors after, saying so on stderr. The model test needs the
//! files of `scripts/fetch-models.sh` (or `MEMTREE_MODEL_DIR`) and is skipped without them,
//! except under `CI=true`, as in `src/tests/model.rs`.

use crate::mcp_client;
use crate::support;

use mcp_client::McpClient;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::memtree_bin;

fn runbook() -> Value {
    let body: String = (0..30)
        .map(|i| format!("Step {i}: restart the kestrel relay on host relay{i} and check the heron queue.\n\n"))
        .collect();
    json!({"mode": "ingest_document", "source_id": "doc:runbooks/kestrel.md", "title": "Kestrel relay runbook",
           "body": body})
}

/// The first hit's content of a walk through `client`.
fn first_hit(client: &mut McpClient, query: &str) -> String {
    let out = client.call("memory_tree", json!({"mode": "walk", "query": query})).unwrap();
    out["hits"][0]["content"].as_str().unwrap_or_default().to_string()
}

#[test]
fn an_ingest_document_call_returns_and_a_later_walk_finds_it_lexically() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // A new store: the server may make it (--create), as a host's first run does.
    let mut client = McpClient::from_command(support::command(memtree_bin(), &store, &["mcp", "--create"]));
    let out = client.call("memory_tree", runbook()).unwrap();
    assert!(out["message"].as_str().unwrap().contains("ingested document"), "{out}");
    assert!(first_hit(&mut client, "which host is relay17?").contains("relay17"));
}

fn model_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("MEMTREE_MODEL_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("models").join("all-minilm-l6-v2"),
    };
    if dir.join("model.onnx").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("model files missing in {} under CI=true: run scripts/fetch-models.sh first", dir.display());
    }
    eprintln!("skipped: no model in {} (run scripts/fetch-models.sh)", dir.display());
    None
}

fn with_model(store: &Path, model: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(memtree_bin());
    cmd.arg("--store").arg(store).arg("--model").arg(model).args(args);
    cmd
}

#[test]
fn with_the_model_the_server_embeds_a_written_document_in_the_background() {
    let Some(model) = model_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut cmd = with_model(&store, &model, &["mcp", "--create"]);
    cmd.stderr(Stdio::piped());
    let mut client = McpClient::from_command(cmd);
    let stderr = BufReader::new(client.take_stderr().unwrap());
    let out = client.call("memory_tree", runbook()).unwrap();
    assert!(out["message"].as_str().unwrap().contains("ingested document"), "{out}");
    assert!(first_hit(&mut client, "which host is relay17?").contains("relay17"));
    // The worker's own signal: its log line at the end of the run that made the vectors.
    let mut log = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        // A failed run is logged and the server lives on: stop reading there too.
        let done = line.starts_with("memtree: embedded ") || line.starts_with("memtree: background embedding failed");
        log.push(line);
        if done {
            break;
        }
    }
    assert!(log.iter().any(|l| l.starts_with("memtree: embedding ")), "{log:?}");
    assert!(!log.iter().any(|l| l.contains("failed")), "{log:?}");
    let stats = support::run(with_model(&store, &model, &["stats"]), None).json();
    assert_eq!(stats["vectors_pending"], json!(0), "{stats}");
    // Every leaf and summary has its vector.
    assert_eq!(stats["vectors"], stats["index_docs"], "{stats}");
    // The server's walk now has the dense signal too.
    let out = client.call("memory_tree", json!({"mode": "walk", "query": "which host is relay17?"})).unwrap();
    let hit = &out["hits"][0];
    assert!(hit["content"].as_str().unwrap_or_default().contains("relay17"), "{out}");
    // Min-max normalised over the candidates: some hit, not necessarily the first, scores.
    let dense = out["hits"].as_array().unwrap().iter().filter_map(|h| h["explain"]["signals"]["dense"].as_f64());
    assert!(dense.fold(0.0f64, f64::max) > 0.0, "{out}");
}
