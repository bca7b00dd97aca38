//! The published JSON Schemas of the tools (for LLM function calling), generated from the
//! same field tables the parser uses.

use super::field::Ty;
use super::modes::TREE;
use super::recall::RECALL;
use super::spec::ToolSpec;
use crate::types::{EntityKind, SourceKind};
use serde_json::{Map, Value, json};

/// The `memory_tree` tool definition: name, description and `input_schema` (JSON Schema
/// draft 2020-12). Properties are the union of every mode's fields; each says which modes
/// use it, with the default and cap.
pub fn memory_tree_schema() -> Value {
    tool_schema(&TREE)
}

/// The `memory_recall` tool definition, in the same form (`op` for `mode`).
pub fn memory_recall_schema() -> Value {
    tool_schema(&RECALL)
}

fn tool_schema<R>(tool: &ToolSpec<R>) -> Value {
    let sel = tool.selector;
    let mut lines: Vec<String> = tool.modes.iter().map(|m| format!("{}: {}", m.mode, m.doc)).collect();
    for m in tool.modes {
        lines.extend(m.aliases.iter().map(|a| format!("{a}: alias of {}.", m.mode)));
    }
    if let Some(d) = tool.default {
        lines.push(format!("Default: {d}."));
    }
    let mut props = Map::new();
    props.insert(sel.into(), json!({"type": "string", "enum": tool.names, "description": lines.join("\n")}));
    for m in tool.modes {
        for f in m.fields {
            let entry = props.entry(f.name.to_string()).or_insert_with(|| {
                let mut p = json!({"type": f.ty.json_type(), "description": ""});
                if f.ty == Ty::StrArray {
                    p["items"] = json!({"type": "string"});
                }
                // What `Args` refuses, and nothing more: below the minimum is an error; 0 is
                // the default (or no window); above a cap is clamped, so no `maximum`.
                if f.ty == Ty::Num || f.ty == Ty::Int && f.default.is_some() {
                    p["minimum"] = json!(0);
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
            closed_values(f.name, entry);
        }
    }
    let per_mode: Vec<Value> = tool
        .modes
        .iter()
        .map(|m| {
            let mut e = Map::new();
            e.insert(sel.into(), json!(m.mode));
            e.insert(
                "required".into(),
                json!(m.fields.iter().filter(|f| f.required).map(|f| f.name).collect::<Vec<_>>()),
            );
            e.insert(
                "fields".into(),
                m.fields
                    .iter()
                    .map(|f| {
                        json!({
                            "name": f.name, "type": f.ty.json_type(), "required": f.required,
                            "default": f.default, "cap": f.cap, "min": f.min,
                        })
                    })
                    .collect(),
            );
            Value::Object(e)
        })
        .collect();
    let required: Vec<&str> = if tool.default.is_none() { vec![sel] } else { Vec::new() };
    let mut input = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    });
    input[format!("x-{sel}s")] = Value::Array(per_mode);
    json!({"name": tool.name, "description": description(tool), "input_schema": input})
}

/// The fields whose values are a closed set get it in the schema, from the types that parse
/// them, so a caller that validates against the schema is refused nothing more by the parser.
fn closed_values(name: &str, p: &mut Value) {
    match name {
        "source_kind" => p["enum"] = json!(SourceKind::ALL.map(SourceKind::as_str)),
        "kinds" => p["items"]["enum"] = json!(EntityKind::ALL.map(EntityKind::as_str)),
        // `recall::check_namespace`'s rule.
        "namespace" => p["pattern"] = json!("^(global|background|autocomplete|skill-[a-z0-9_-]{1,64})$"),
        _ => {}
    }
}

/// The tool's description: its doc, then one line per mode on when to use it (what the host's
/// model reads to pick a mode; the selector's own description says what each mode does).
fn description<R>(tool: &ToolSpec<R>) -> String {
    let mut s = format!("{}\nWhen to use each `{}`:", tool.doc, tool.selector);
    for m in tool.modes {
        let also = if m.aliases.is_empty() { String::new() } else { format!(" (also {})", m.aliases.join(", ")) };
        s.push_str(&format!("\n- {}{also}: {}", m.mode, m.when));
    }
    s
}
