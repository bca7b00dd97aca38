//! `memory_forget`, served only when the host starts the server with forgetting allowed
//! (`memtree mcp --allow-forget`, [`super::McpServer::allow_forget`]): the model may then
//! forget one leaf, one source, or a source's leaves in a time range, and gets the receipt.

use crate::error::{Error, Result};
use crate::memory::{Forget, Memory};
use serde_json::{Value, json};

/// The tool's name.
pub const NAME: &str = "memory_forget";

/// The tool definition, shaped as `tool::memory_tree_schema()` is.
pub fn schema() -> Value {
    json!({
        "name": NAME,
        "description": "Forget part of the memory for good, with everything derived from it (summaries above \
            a forgotten leaf are re-sealed without it). Give `leaf_id` (a hit's node_id of level 0), or \
            `source_id` alone (the whole source), or `source_id` with `since_ms`/`until_ms` (its leaves in \
            that window, epoch ms, inclusive). Returns a receipt of what was removed and re-sealed. A forget \
            holds: a record of what went (ids and a hash, never text) keeps later imports of the same \
            content out until the user takes it back (`memtree forget --undo`). Only when the user asks to \
            forget something.",
        "input_schema": {
            "type": "object",
            "properties": {
                "leaf_id": {"type": "string", "description": "One leaf's node_id."},
                "source_id": {"type": "string", "description": "A source id."},
                "since_ms": {"type": "integer", "description": "With source_id: the window's start, epoch ms."},
                "until_ms": {"type": "integer", "description": "With source_id: the window's end, epoch ms."}
            },
            "additionalProperties": false
        }
    })
}

/// Run one `memory_forget` call.
pub fn call(mem: &mut Memory, args: &Value) -> Result<Value> {
    let obj = args
        .as_object()
        .ok_or_else(|| Error::InvalidRequest { message: format!("{NAME}: arguments must be an object") })?;
    if let Some(k) = obj.keys().find(|k| !["leaf_id", "source_id", "since_ms", "until_ms"].contains(&k.as_str())) {
        return Err(Error::InvalidRequest { message: format!("{NAME}: unknown field `{k}`") });
    }
    let text = |k: &str| -> Result<Option<&str>> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.as_str())),
            Some(_) => Err(Error::invalid(format!("{NAME}.{k}"), "must be a non-blank string")),
        }
    };
    let ms = |k: &str| -> Result<Option<i64>> {
        match obj.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| Error::invalid(format!("{NAME}.{k}"), "must be an integer (epoch ms)")),
        }
    };
    let (since, until) = (ms("since_ms")?, ms("until_ms")?);
    let what = match (text("leaf_id")?, text("source_id")?) {
        (Some(l), None) if since.is_none() && until.is_none() => Forget::Leaf(l.into()),
        (None, Some(s)) if since.is_none() && until.is_none() => Forget::Source(s.into()),
        (None, Some(s)) => {
            Forget::Range { source: s.into(), since_ms: since.unwrap_or(i64::MIN), until_ms: until.unwrap_or(i64::MAX) }
        }
        _ => {
            return Err(Error::InvalidRequest {
                message: format!("{NAME}: give `leaf_id` alone, or `source_id` with optional `since_ms`/`until_ms`"),
            });
        }
    };
    Ok(serde_json::to_value(mem.forget(&what)?)?)
}

#[cfg(test)]
mod tests {
    use crate::{ChatMessage, Item, McpServer, Memory, Role, Scope, ToolOutcome};

    /// `memory_forget` exists only when the host allows it; the read tools are the same.
    #[test]
    fn forget_is_served_only_when_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let mut mem = Memory::open(dir.path()).unwrap();
        let msg = |t: &str, ts| {
            Item::Chat(ChatMessage {
                source_id: "slack:#a".into(),
                author: "Ada".into(),
                ts_ms: ts,
                text: t.into(),
                source_ref: None,
                participants: vec![],
                tags: vec![],
                role: Role::Person,
                title: None,
            })
        };
        mem.ingest(vec![msg("one", 1_000), msg("two", 2_000)]).unwrap();
        let off = McpServer::new(mem, Scope::all());
        assert_eq!(off.published().len(), 2);
        let args = serde_json::json!({"source_id": "slack:#a", "since_ms": 0, "until_ms": 1_500});
        let args = args.as_object().cloned();
        assert!(matches!(off.call(super::NAME, args.clone()), ToolOutcome::UnknownTool(_)));
        let on = off.allow_forget(true);
        assert_eq!(on.published().len(), 3);
        match on.call(super::NAME, args) {
            ToolOutcome::Ok(v) => assert_eq!(v["leaves"].as_array().map(Vec::len), Some(1), "{v}"),
            other => panic!("{other:?}"),
        }
        let bad = serde_json::json!({"leaf_id": "x", "source_id": "y"}).as_object().cloned();
        assert!(matches!(on.call(super::NAME, bad), ToolOutcome::Failed(_)));
    }

    /// The model is told that a forget holds (issue 32), so it does not promise the user that
    /// a re-import brings the content back, nor expect one to.
    #[test]
    fn the_tool_says_a_forget_holds() {
        let d = super::schema()["description"].as_str().unwrap().to_string();
        assert!(d.contains("A forget holds") && d.contains("memtree forget --undo"), "{d}");
    }
}
