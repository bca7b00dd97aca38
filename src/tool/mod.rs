//! The `memory_tree` tool: one JSON object in (`mode` picks the primitive), JSON out. A
//! typed [`Request`] for Rust callers, [`call_json`] for tool calls straight from an LLM,
//! the published JSON Schema, and the separate `memory_recall` key–value tool.

mod args;
mod field;
mod mode;
mod modes;
mod recall;
mod schema;
mod spec;

pub use field::{FieldSpec, Ty};
pub use modes::{MODE_NAMES, MODES, mode};
pub use recall::OPS as RECALL_OPS;
pub use recall::{RecallHit, RecallRequest, memory_recall, memory_recall_json, parse_recall};
pub use schema::{memory_recall_schema, memory_tree_schema};
pub use spec::ModeSpec;

use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::reader::MemoryReader;
use crate::retrieval::{EntityMatch, QueryResponse, RetrievalHit, Scope};
use mode::{AnyCall, Target};
use serde::Serialize;
use serde_json::Value;

/// The tool's name.
pub(crate) const TREE_NAME: &str = "memory_tree";

/// Largest JSON input accepted by [`call_json`] (a 50 MB document plus envelope).
pub const MAX_INPUT_BYTES: usize = 64 * 1024 * 1024;

/// One parsed `memory_tree` call: its mode and arguments, checked. Build it with
/// [`Request::from_json`] or [`parse_call`]; run it with [`call`] or [`call_read`].
pub struct Request(Box<dyn AnyCall>);

impl Clone for Request {
    fn clone(&self) -> Self {
        Request(self.0.clone_box())
    }
}

impl PartialEq for Request {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_call(other.0.as_ref())
    }
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.debug(f)
    }
}

/// Confirmation of `ingest_document`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IngestConfirmation {
    /// Always `ok` (a failure is an error, not a confirmation).
    pub status: &'static str,
    /// The document's source id, trimmed.
    pub source_id: String,
    /// Leaves written.
    pub leaves: usize,
    /// Summaries sealed over them.
    pub summaries: usize,
    /// Leaves of the earlier version that were replaced (0 when new).
    pub replaced_leaves: usize,
    /// Leaves left out because the user forgot them (a forget holds); absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub forgotten_leaves: usize,
    /// The same in one sentence, for a model to read.
    pub message: String,
}

/// What a call returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Response {
    /// `search_entities`.
    Entities(Vec<EntityMatch>),
    /// `query_source`, `drill_down`, `cover_window`, `walk`.
    Query(QueryResponse),
    /// `fetch_leaves`.
    Leaves(Vec<RetrievalHit>),
    /// `ingest_document`.
    Ingested(IngestConfirmation),
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn invalid(message: String) -> Error {
    Error::InvalidRequest { message }
}

impl Request {
    /// Parse a tool call. Errors are the exact strings of SPEC §3 for `mode`, and name the
    /// mode and the field otherwise.
    pub fn from_json(v: &Value) -> Result<Request> {
        spec::parse(&modes::TREE, v)
    }

    /// True for the one mode that writes.
    pub fn is_write(&self) -> bool {
        self.0.writes()
    }

    /// The mode's name (an alias reads as its mode: `smart_walk` is `walk`).
    pub fn mode(&self) -> &'static str {
        self.0.mode()
    }
}

/// Run a request. `scope` is the host's gate (SPEC §1), applied by every read mode; a read
/// runs on the writer's reader in one snapshot of the store.
pub fn call(mem: &mut Memory, req: Request, scope: &Scope) -> Result<Response> {
    if req.is_write() {
        return req.0.run(Target::Writer(mem), scope);
    }
    call_read(mem.as_reader(), req, scope)
}

/// Run a read-only request on a reader, in one snapshot of the store
/// (an `ingest_document` request is refused).
pub fn call_read(mem: &MemoryReader, req: Request, scope: &Scope) -> Result<Response> {
    if req.is_write() {
        return Err(mode::read_only(req.mode()));
    }
    mem.read(|m| req.0.run(Target::Reader(m), scope))
}

/// [`call_json`] for a reader: read modes only (`ingest_document` is refused).
pub fn call_read_json(mem: &MemoryReader, input: &str, scope: &Scope) -> Result<Value> {
    Ok(serde_json::to_value(call_read(mem, parse_call(input)?, scope)?)?)
}

/// The tool's one JSON entry point: parse `input`, run it, return the result as JSON.
pub fn call_json(mem: &mut Memory, input: &str, scope: &Scope) -> Result<Value> {
    Ok(serde_json::to_value(call(mem, parse_call(input)?, scope)?)?)
}

/// Parse a `memory_tree` call (oversized or malformed JSON refused with a clear message, then
/// the request itself): for a host that must know whether a call writes
/// ([`Request::is_write`]) before it opens the store, and then runs it with [`call`] or
/// [`call_read`] without parsing it again.
pub fn parse_call(input: &str) -> Result<Request> {
    Request::from_json(&parse_input("memory_tree", input)?)
}

/// Parse a tool input, refusing oversized or malformed JSON with a clear message; a UTF-8
/// byte order mark before it (a file saved by a Windows editor, piped in) is dropped.
pub(crate) fn parse_input(tool: &str, input: &str) -> Result<Value> {
    let input = input.strip_prefix('\u{feff}').unwrap_or(input);
    if input.len() > MAX_INPUT_BYTES {
        return Err(invalid(format!(
            "{tool}: the input is {} bytes, more than the {MAX_INPUT_BYTES} accepted",
            input.len()
        )));
    }
    if input.trim().is_empty() {
        return Err(invalid(format!("{tool}: the input is empty; expected a JSON object")));
    }
    serde_json::from_str(input).map_err(|e| invalid(format!("{tool}: invalid JSON: {e}")))
}
