//! The `memory_tree` tool: one JSON object in (`mode` picks the primitive), JSON out. A
//! typed [`Request`] for Rust callers, [`call_json`] for tool calls straight from an LLM,
//! the published JSON Schema, and the separate `memory_recall` key–value tool.

mod args;
mod ingest_document;
mod recall;
mod schema;
// The modes' rows in `retrieval/` are written in the table's terms.
pub(crate) mod spec;

pub use recall::OPS as RECALL_OPS;
pub use recall::{RecallHit, RecallRequest, memory_recall, memory_recall_json, parse_recall};
pub use schema::{memory_recall_schema, memory_tree_schema};
pub use spec::{FieldSpec, MODE_NAMES, MODES, ModeSpec, Ty, mode};

use crate::error::{Error, Result};
use crate::ingest::Document;
use crate::memory::Memory;
use crate::reader::MemoryReader;
use crate::retrieval::{
    CoverWindowArgs, DrillDownArgs, EntityMatch, FetchLeavesArgs, QueryResponse, QuerySourceArgs, RetrievalHit, Scope,
    SearchEntitiesArgs, WalkArgs, cover_window, drill_down, fetch_leaves, query_source, search_entities, walk,
};
use serde::Serialize;
use serde_json::Value;
use spec::INGEST_DOCUMENT;

/// Largest JSON input accepted by [`call_json`] (a 50 MB document plus envelope).
pub const MAX_INPUT_BYTES: usize = 64 * 1024 * 1024;

/// One `memory_tree` call, typed: one variant per row of [`MODES`] (an alias shares its
/// mode's variant).
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `search_entities`.
    SearchEntities(SearchEntitiesArgs),
    /// `query_source`.
    QuerySource(QuerySourceArgs),
    /// `drill_down`.
    DrillDown(DrillDownArgs),
    /// `cover_window`.
    CoverWindow(CoverWindowArgs),
    /// `fetch_leaves`.
    FetchLeaves(FetchLeavesArgs),
    /// `ingest_document` (the one write).
    IngestDocument(Document),
    /// `walk` and its alias `smart_walk`.
    Walk(WalkArgs),
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

fn invalid(message: String) -> Error {
    Error::InvalidRequest { message }
}

impl Request {
    /// Parse a tool call. Errors are the exact strings of SPEC §3 for `mode`, and name the
    /// mode and the field otherwise.
    pub fn from_json(v: &Value) -> Result<Request> {
        args::parse(&spec::TREE, v)
    }

    /// True for the one mode that writes.
    pub fn is_write(&self) -> bool {
        matches!(self, Request::IngestDocument(_))
    }
}

/// Run a typed request. `scope` is the host's gate (SPEC §1), applied by every read mode.
pub fn call(mem: &mut Memory, req: Request, scope: &Scope) -> Result<Response> {
    Ok(match req {
        Request::IngestDocument(d) => {
            let source_id = d.source_id.0.clone();
            // The write path names the field; the tool's caller also needs the mode (SPEC §3).
            let r = mem.ingest_document(d).map_err(|e| args::in_mode(e, spec::TREE.name, INGEST_DOCUMENT))?;
            let message = if r.removed > 0 {
                format!("replaced document `{source_id}`: {} leaves written ({} replaced)", r.leaves, r.removed)
            } else {
                format!("ingested document `{source_id}`: {} leaves written", r.leaves)
            };
            Response::Ingested(IngestConfirmation {
                status: "ok",
                source_id,
                leaves: r.leaves,
                summaries: r.summaries,
                replaced_leaves: r.removed,
                message,
            })
        }
        read => call_read(mem.as_reader(), read, scope)?,
    })
}

/// Run a read-only request on a reader, in one snapshot of the store
/// (an `ingest_document` request is refused).
pub fn call_read(mem: &MemoryReader, req: Request, scope: &Scope) -> Result<Response> {
    mem.read(|m| read_mode(m, req, scope))
}

fn read_mode(mem: &MemoryReader, req: Request, scope: &Scope) -> Result<Response> {
    Ok(match req {
        Request::SearchEntities(a) => Response::Entities(search_entities(mem, &a, scope)?),
        Request::QuerySource(a) => Response::Query(query_source(mem, &a, scope)?),
        Request::DrillDown(a) => Response::Query(drill_down(mem, &a, scope)?),
        Request::CoverWindow(a) => Response::Query(cover_window(mem, &a, scope)?),
        Request::FetchLeaves(a) => Response::Leaves(fetch_leaves(mem, &a, scope)?),
        Request::Walk(a) => Response::Query(walk(mem, &a, scope)?),
        Request::IngestDocument(_) => {
            return Err(invalid(format!("{}: {INGEST_DOCUMENT}: this handle is read-only", spec::TREE.name)));
        }
    })
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
