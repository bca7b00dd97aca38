//! `memory_recall`: namespaced key–value facts (SPEC §6) — put, update, forget by key, and a
//! scored search for exact fact lookups — with its ops' field table (the same machinery as
//! `memory_tree`'s modes, in `spec.rs`).

use super::args::{Args, ECHO};
use super::field::{FieldSpec, Ty, f, int};
use super::parse_input;
use super::spec::{self, Checks, ModeSpec, ToolSpec, mode_names, name_count};
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::store::RecallReads;
use crate::text::{clip, content_words};
use serde::Serialize;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub enum RecallRequest {
    /// Scored lookup; `namespace` `None` = every namespace.
    #[allow(missing_docs)] // the fields are the tool's, documented in its schema
    Search { namespace: Option<String>, query: String, limit: usize },
    /// Insert or update.
    #[allow(missing_docs)]
    Put { namespace: String, key: String, content: String },
    /// Delete by key.
    #[allow(missing_docs)]
    Forget { namespace: String, key: String },
    /// Every fact of a namespace.
    #[allow(missing_docs)]
    List { namespace: String },
}

/// A fact with its score (search) or 1.0 (list).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallHit {
    /// `global`, `background`, `autocomplete` or `skill-<id>`.
    pub namespace: String,
    /// The fact's key within its namespace.
    pub key: String,
    /// The fact.
    pub content: String,
    /// Match score (search), or 1.0 (list).
    pub score: f64,
    /// Last write, RFC 3339 UTC.
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
        Err(err(format!("unknown namespace `{}`: use global, background, autocomplete or skill-<id>", clip(ns, ECHO))))
    }
}

const NAMESPACE: FieldSpec = f("namespace", Ty::Str, true, "global, background, autocomplete or skill-<id>.");
const KEY: FieldSpec = f("key", Ty::Str, true, "The fact's key (non-blank).");

/// Every op, `search` (the default) first.
pub const OPS: &[ModeSpec<RecallRequest>] = &[
    ModeSpec {
        mode: "search",
        when: "Before answering about the user: what they asked you to remember (preferences, facts).",
        aliases: &[],
        doc: "Facts whose key or content shares content words with `query`, best first.",
        fields: &[
            f(
                "namespace",
                Ty::Str,
                false,
                "Only this namespace (global, background, autocomplete or skill-<id>); every namespace when absent.",
            ),
            f("query", Ty::Str, false, "What to look for."),
            int("limit", 5, 100, "Maximum matches (default 5, cap 100)."),
        ],
        primary: Some("query"),
        parse: search,
    },
    ModeSpec {
        mode: "put",
        when: "The user asks you to remember something.",
        aliases: &[],
        doc: "Store a fact, replacing the content of an existing key.",
        fields: &[NAMESPACE, KEY, f("content", Ty::Str, true, "The fact (non-blank).")],
        primary: None,
        parse: put,
    },
    ModeSpec {
        mode: "forget",
        when: "The user asks you to forget a stored fact.",
        aliases: &[],
        doc: "Delete a fact by key.",
        fields: &[NAMESPACE, KEY],
        primary: None,
        parse: forget,
    },
    ModeSpec {
        mode: "list",
        when: "Review every fact of a namespace.",
        aliases: &[],
        doc: "Every fact of a namespace.",
        fields: &[NAMESPACE],
        primary: None,
        parse: list,
    },
];

/// The `memory_recall` tool.
pub static RECALL: ToolSpec<RecallRequest> = ToolSpec {
    name: "memory_recall",
    doc: "Namespaced key-value facts and preferences (\"does the user prefer dark mode?\"): search, put, forget, list.",
    selector: "op",
    default: Some("search"),
    checks: Checks::Shared,
    modes: OPS,
    names: &mode_names::<RecallRequest, { name_count(OPS) }>(OPS),
};

impl RecallRequest {
    /// Parse `{op, namespace, key, content, query, limit}`.
    pub fn from_json(v: &Value) -> Result<RecallRequest> {
        spec::parse(&RECALL, v)
    }

    /// Whether the operation writes (`put`, `forget`): a read of a missing store creates
    /// nothing, a write makes the store.
    pub fn is_write(&self) -> bool {
        matches!(self, RecallRequest::Put { .. } | RecallRequest::Forget { .. })
    }
}

/// Parse a `memory_recall` call (oversized or malformed JSON refused with a clear message),
/// for a host that must know whether it writes before it opens the store.
pub fn parse_recall(input: &str) -> Result<RecallRequest> {
    RecallRequest::from_json(&super::parse_input("memory_recall", input)?)
}

/// A namespace to write or list: present, non-blank and well-formed.
fn namespace(a: &Args<'_>) -> Result<String> {
    let ns = a.filled("namespace")?;
    check_namespace(&ns)?;
    Ok(ns)
}

fn search(a: &Args<'_>) -> Result<RecallRequest> {
    let limit = a.int("limit")? as usize;
    let namespace = a.opt_str("namespace")?;
    if let Some(ns) = &namespace {
        check_namespace(ns)?;
    }
    Ok(RecallRequest::Search { namespace, query: a.opt_str("query")?.unwrap_or_default(), limit })
}

fn put(a: &Args<'_>) -> Result<RecallRequest> {
    Ok(RecallRequest::Put { namespace: namespace(a)?, key: a.filled("key")?, content: a.filled("content")? })
}

fn forget(a: &Args<'_>) -> Result<RecallRequest> {
    Ok(RecallRequest::Forget { namespace: namespace(a)?, key: a.filled("key")? })
}

fn list(a: &Args<'_>) -> Result<RecallRequest> {
    Ok(RecallRequest::List { namespace: namespace(a)? })
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
            let rows = mem.as_reader().store().recall_namespace(&namespace)?;
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
                Some(ns) => mem.as_reader().store().recall_namespace(ns)?,
                None => mem.as_reader().store().recall_all()?,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A call of `op` with every field of its row filled in.
    fn full(op: &ModeSpec<RecallRequest>) -> serde_json::Map<String, Value> {
        let mut o = serde_json::Map::new();
        o.insert("op".into(), json!(op.mode));
        for f in op.fields {
            let v = match (f.name, f.ty) {
                ("namespace", _) => json!("global"),
                (_, Ty::Int) => json!(3),
                _ => json!("x"),
            };
            o.insert(f.name.into(), v);
        }
        o
    }

    #[test]
    fn the_table_says_what_each_op_requires() {
        assert_eq!(RECALL.names, ["search", "put", "forget", "list"]);
        for op in OPS {
            assert!(RecallRequest::from_json(&Value::Object(full(op))).is_ok(), "{}", op.mode);
            for f in op.fields.iter().filter(|f| f.required) {
                for missing in [None, Some(json!(null)), Some(json!("  "))] {
                    let mut o = full(op);
                    match missing {
                        None => o.remove(f.name),
                        Some(v) => o.insert(f.name.into(), v),
                    };
                    let e = RecallRequest::from_json(&Value::Object(o)).unwrap_err();
                    assert_eq!(e.to_string(), format!("memory_recall: `{}` is required", f.name), "{}", op.mode);
                }
            }
        }
    }

    #[test]
    fn keys_of_another_op_are_ignored_not_refused() {
        let v = json!({"op": "list", "namespace": "global", "limit": "many", "query": 5});
        assert_eq!(RecallRequest::from_json(&v).unwrap(), RecallRequest::List { namespace: "global".into() });
        let e = RecallRequest::from_json(&json!({"op": "list", "namespace": "global", "nope": 1})).unwrap_err();
        assert_eq!(e.to_string(), "memory_recall: unknown field `nope`");
    }
}
