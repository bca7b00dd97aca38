//! The published JSON Schemas of the tools (for LLM function calling), generated from the
//! same field table the parser uses.

use super::spec::{MODE_NAMES, MODES, Ty};
use serde_json::{Map, Value, json};

/// The `memory_tree` tool definition: name, description and `input_schema` (JSON Schema
/// draft 2020-12). Properties are the union of every mode's fields; each says which modes
/// use it, with the default and cap.
pub fn memory_tree_schema() -> Value {
    let mut props = Map::new();
    props.insert(
        "mode".into(),
        json!({"type": "string", "enum": MODE_NAMES, "description": MODES.iter().map(|m| format!("{}: {}", m.mode, m.doc)).chain(std::iter::once("smart_walk: alias of walk.".to_string())).collect::<Vec<_>>().join("\n")}),
    );
    for m in MODES {
        for f in m.fields {
            let entry = props.entry(f.name.to_string()).or_insert_with(|| {
                let mut p = json!({"type": f.ty.json_type(), "description": ""});
                if f.ty == Ty::StrArray {
                    p["items"] = json!({"type": "string"});
                }
                if f.ty == Ty::Num {
                    p["exclusiveMinimum"] = json!(0);
                }
                p
            });
            let mut line = format!("[{}] {}", m.mode, f.doc);
            if f.required {
                line.push_str(" Required.");
            }
            let d = entry["description"].as_str().unwrap_or_default().to_string();
            entry["description"] = Value::String(if d.is_empty() { line } else { format!("{d}\n{line}") });
            if let Some(min) = f.min {
                entry["minimum"] = json!(min);
            }
        }
    }
    let per_mode: Vec<Value> = MODES
        .iter()
        .map(|m| {
            json!({
                "mode": m.mode,
                "required": m.fields.iter().filter(|f| f.required).map(|f| f.name).collect::<Vec<_>>(),
                "fields": m.fields.iter().map(|f| json!({
                    "name": f.name, "type": f.ty.json_type(), "required": f.required,
                    "default": f.default, "cap": f.cap, "min": f.min,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "name": "memory_tree",
        "description": "Deterministic retrieval over the user's long-term memory (chat, e-mail, documents): pick a `mode`. No language model runs behind it; answers come in milliseconds.",
        "input_schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": props,
            "required": ["mode"],
            "additionalProperties": false,
            "x-modes": per_mode,
        }
    })
}

/// The `memory_recall` tool definition.
pub fn memory_recall_schema() -> Value {
    json!({
        "name": "memory_recall",
        "description": "Namespaced key-value facts and preferences (\"does the user prefer dark mode?\"): search, put, forget, list.",
        "input_schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "op": {"type": "string", "enum": ["search", "put", "forget", "list"], "description": "What to do (default search)."},
                "namespace": {"type": "string", "description": "global, background, autocomplete or skill-<id>. Required for put/forget/list; search looks in every namespace when absent."},
                "key": {"type": "string", "description": "The fact's key (put, forget)."},
                "content": {"type": "string", "description": "The fact (put)."},
                "query": {"type": "string", "description": "What to look for (search)."},
                "limit": {"type": "integer", "description": "Maximum matches (default 5, cap 100)."}
            },
            "required": [],
            "additionalProperties": false
        }
    })
}
