//! `memory_recall`: namespaced key–value facts (SPEC §6) — put, update, forget by key, and a
//! scored search for exact fact lookups.

use super::args::{kind, truncate};
use super::parse_input;
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::store::RecallReads;
use crate::text::content_words;
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub enum RecallRequest {
    /// Scored lookup; `namespace` `None` = every namespace.
    Search { namespace: Option<String>, query: String, limit: usize },
    /// Insert or update.
    Put { namespace: String, key: String, content: String },
    /// Delete by key.
    Forget { namespace: String, key: String },
    /// Every fact of a namespace.
    List { namespace: String },
}

/// A fact with its score (search) or 1.0 (list).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallHit {
    pub namespace: String,
    pub key: String,
    pub content: String,
    pub score: f64,
    pub updated_at: String,
}

fn err(m: String) -> Error {
    Error::InvalidRequest { message: format!("memory_recall: {m}") }
}

/// A namespace must be `global`, `background`, `autocomplete` or `skill-<id>` with an id of
/// 1–64 characters from `[a-z0-9_-]`.
pub fn check_namespace(ns: &str) -> Result<()> {
    let ok = matches!(ns, "global" | "background" | "autocomplete")
        || ns.strip_prefix("skill-").is_some_and(|id| {
            !id.is_empty()
                && id.len() <= 64
                && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        });
    if ok {
        Ok(())
    } else {
        Err(err(format!("unknown namespace `{}`: use global, background, autocomplete or skill-<id>", truncate(ns))))
    }
}

impl RecallRequest {
    /// Parse `{op, namespace, key, content, query, limit}`.
    pub fn from_json(v: &Value) -> Result<RecallRequest> {
        let Value::Object(o) = v else { return Err(err(format!("the input must be a JSON object, got {}", kind(v)))) };
        for k in o.keys() {
            if !["op", "namespace", "key", "content", "query", "limit"].contains(&k.as_str()) {
                return Err(err(format!("unknown field `{}`", truncate(k))));
            }
        }
        let s = |name: &str| -> Result<Option<String>> {
            match o.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(v) => Err(err(format!("`{name}` must be a string, got {}", kind(v)))),
            }
        };
        let need = |name: &str| -> Result<String> {
            s(name)?.filter(|x| !x.trim().is_empty()).ok_or_else(|| err(format!("`{name}` is required")))
        };
        let op = s("op")?.unwrap_or_else(|| "search".into());
        Ok(match op.as_str() {
            "search" => {
                let limit = match o.get("limit") {
                    None | Some(Value::Null) => 5,
                    Some(Value::Number(n)) => match n.as_f64() {
                        Some(x) if x <= 0.0 => 5,
                        Some(x) => (x as usize).min(100),
                        None => 5,
                    },
                    Some(v) => return Err(err(format!("`limit` must be an integer, got {}", kind(v)))),
                };
                let namespace = s("namespace")?;
                if let Some(ns) = &namespace {
                    check_namespace(ns)?;
                }
                RecallRequest::Search { namespace, query: s("query")?.unwrap_or_default(), limit }
            }
            "put" => {
                let namespace = need("namespace")?;
                check_namespace(&namespace)?;
                RecallRequest::Put { namespace, key: need("key")?, content: need("content")? }
            }
            "forget" => {
                let namespace = need("namespace")?;
                check_namespace(&namespace)?;
                RecallRequest::Forget { namespace, key: need("key")? }
            }
            "list" => {
                let namespace = need("namespace")?;
                check_namespace(&namespace)?;
                RecallRequest::List { namespace }
            }
            other => return Err(err(format!("unknown op `{}`. Valid: search, put, forget, list", truncate(other)))),
        })
    }
}

/// Run one `memory_recall` operation. Search scores each fact by the IDF-weighted overlap of
/// the query's content words with the fact's key and content (IDF within the searched
/// facts), plus 1 when the key itself is named in the query; zero-score facts are omitted.
pub fn memory_recall(mem: &mut Memory, req: RecallRequest) -> Result<Value> {
    match req {
        RecallRequest::Put { namespace, key, content } => {
            let created = mem.recall_put(&namespace, &key, &content)?;
            Ok(serde_json::json!({"status": "ok", "namespace": namespace, "key": key, "created": created}))
        }
        RecallRequest::Forget { namespace, key } => {
            let existed = mem.recall_forget(&namespace, &key)?;
            Ok(serde_json::json!({"status": "ok", "namespace": namespace, "key": key, "forgotten": existed}))
        }
        RecallRequest::List { namespace } => {
            let rows = mem.store().recall_namespace(&namespace)?;
            let hits: Vec<RecallHit> = rows
                .into_iter()
                .map(|r| RecallHit {
                    namespace: r.namespace,
                    key: r.key,
                    content: r.content,
                    score: 1.0,
                    updated_at: crate::retrieval::rfc3339(r.updated_ms),
                })
                .collect();
            Ok(serde_json::to_value(hits)?)
        }
        RecallRequest::Search { namespace, query, limit } => {
            let rows = match &namespace {
                Some(ns) => mem.store().recall_namespace(ns)?,
                None => mem.store().recall_all()?,
            };
            let q: HashSet<String> = content_words(&query).collect();
            if q.is_empty() || rows.is_empty() {
                return Ok(Value::Array(Vec::new()));
            }
            let docs: Vec<HashSet<String>> = rows
                .iter()
                .map(|r| content_words(&format!("{} {}", r.key.replace(['_', '-', '.'], " "), r.content)).collect())
                .collect();
            let mut df: HashMap<&str, usize> = HashMap::new();
            for d in &docs {
                for w in d {
                    *df.entry(w.as_str()).or_default() += 1;
                }
            }
            let n = rows.len() as f64;
            let ql = query.to_lowercase();
            let mut hits: Vec<RecallHit> = rows
                .into_iter()
                .zip(&docs)
                .filter_map(|(r, d)| {
                    let mut score: f64 =
                        q.iter().filter(|w| d.contains(*w)).map(|w| (1.0 + n / df[w.as_str()] as f64).ln()).sum();
                    if score > 0.0 && ql.contains(&r.key.to_lowercase()) {
                        score += 1.0;
                    }
                    (score > 0.0).then(|| RecallHit {
                        namespace: r.namespace,
                        key: r.key,
                        content: r.content,
                        score,
                        updated_at: crate::retrieval::rfc3339(r.updated_ms),
                    })
                })
                .collect();
            hits.sort_by(|a, b| {
                b.score.total_cmp(&a.score).then_with(|| (&a.namespace, &a.key).cmp(&(&b.namespace, &b.key)))
            });
            hits.truncate(limit);
            Ok(serde_json::to_value(hits)?)
        }
    }
}

/// JSON entry point of `memory_recall`.
pub fn memory_recall_json(mem: &mut Memory, input: &str) -> Result<Value> {
    let v = parse_input("memory_recall", input)?;
    memory_recall(mem, RecallRequest::from_json(&v)?)
}
