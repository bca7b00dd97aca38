//! The MCP server handler: tool definitions from the dispatcher's own schemas, and `tools/call`
//! routed to `memory_tree` / `memory_recall`, with every engine error returned as a tool error
//! (`isError: true`) rather than a protocol failure or a crash; and the `memory_agent` prompt
//! (`prompt.rs`) through `prompts/list` and `prompts/get`.

use super::{TOOL_NAMES, prompt};
use crate::error::Error;
use crate::memory::{BackgroundEmbedder, Memory};
use crate::retrieval::Scope;
use crate::tool::{self, RecallRequest, Request};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    Implementation, JsonObject, ListPromptsResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use std::sync::{Arc, Mutex, PoisonError};

const INSTRUCTIONS: &str = "memtree holds the user's long-term memory (chat, e-mail, documents) as a tree of \
leaves and summaries. Use `memory_tree` with mode `walk` for a question in plain words, `search_entities` \
to find people, projects, hashtags and addresses, `drill_down`/`fetch_leaves` to open a hit, and \
`cover_window` for what happened between two dates. `memory_recall` stores and looks up key-value facts \
and preferences. The prompt `memory_agent` gives the full strategy: which mode for which request.";

/// The MCP face of one open store. Cheap to clone (the store is shared behind a mutex: the
/// engine has one writer, and calls are short).
#[derive(Clone)]
pub struct McpServer {
    mem: Arc<Mutex<Memory>>,
    scope: Arc<Scope>,
    /// Makes the vectors of `ingest_document` calls after they return (see
    /// [`McpServer::with_background`]).
    background: Option<Arc<BackgroundEmbedder>>,
    /// Whether `memory_forget` is served (the host's choice; off by default).
    forget: bool,
}

/// What a tool call produced: a JSON value, a caller/engine error (a tool error), or a tool
/// name this server does not have (a protocol error).
#[derive(Debug)]
pub enum ToolOutcome {
    /// The tool's result.
    Ok(Value),
    /// The tool ran and refused or failed; the text is what the model sees.
    Failed(String),
    /// No such tool.
    UnknownTool(String),
}

impl McpServer {
    /// Serve `mem`, gating every read by `scope` (SPEC §1; `Scope::all()` for everything).
    pub fn new(mem: Memory, scope: Scope) -> McpServer {
        McpServer { mem: Arc::new(Mutex::new(mem)), scope: Arc::new(scope), background: None, forget: false }
    }

    /// Nudge `worker` after every write call, so an `ingest_document` returns once its leaves
    /// are durable and lexically searchable and its vectors follow. `mem` should be open with
    /// [`crate::Embedding::Deferred`] (or the write embeds them itself) and the worker's
    /// [`BackgroundEmbedder::host_options`] (or a question may wait behind its backlog). Until they exist, walk
    /// ranks with the vectors there are: a leaf without one has no dense score (BM25 still
    /// finds it), which is what a reader of a store under import sees too.
    pub fn with_background(mut self, worker: BackgroundEmbedder) -> McpServer {
        self.background = Some(Arc::new(worker));
        self
    }

    /// Serve `memory_forget` too (`allowed`), the one tool that removes what the user wrote:
    /// a host turns it on when its user may ask the model to forget; the read tools are the
    /// same either way.
    pub fn allow_forget(mut self, allowed: bool) -> McpServer {
        self.forget = allowed;
        self
    }

    /// The tools this server publishes: [`McpServer::tools`], and `memory_forget` when
    /// allowed.
    pub fn published(&self) -> Vec<Tool> {
        let mut tools = McpServer::tools();
        if self.forget {
            let def = super::forget::schema();
            let schema: JsonObject = def["input_schema"].as_object().cloned().unwrap_or_default();
            tools.push(Tool::new(
                super::forget::NAME,
                def["description"].as_str().unwrap_or_default().to_string(),
                Arc::new(schema),
            ));
        }
        tools
    }

    /// The background worker, when there is one (its [`BackgroundEmbedder::status`], or
    /// [`BackgroundEmbedder::wait_idle`] for a host that needs every vector).
    pub fn background(&self) -> Option<&BackgroundEmbedder> {
        self.background.as_deref()
    }

    /// The published tools: `memory_tree` and `memory_recall`, whose input schemas are exactly
    /// `memory_tree_schema()["input_schema"]` and `memory_recall_schema()["input_schema"]`.
    pub fn tools() -> Vec<Tool> {
        [tool::memory_tree_schema(), tool::memory_recall_schema()]
            .into_iter()
            .map(|def| {
                let name = def["name"].as_str().unwrap_or_default().to_string();
                let description = def["description"].as_str().unwrap_or_default().to_string();
                let schema: JsonObject = match &def["input_schema"] {
                    Value::Object(o) => o.clone(),
                    _ => JsonObject::new(),
                };
                Tool::new(name, description, Arc::new(schema))
            })
            .collect()
    }

    /// Run one tool call synchronously (the async handler runs this on the blocking pool).
    pub fn call(&self, name: &str, arguments: Option<JsonObject>) -> ToolOutcome {
        let forget = self.forget && name == super::forget::NAME;
        if !TOOL_NAMES.contains(&name) && !forget {
            return ToolOutcome::UnknownTool(name.to_string());
        }
        let args = Value::Object(arguments.unwrap_or_default());
        // A panic while the lock was held leaves the engine as its last committed write left
        // it (every write is one transaction), so the poisoned guard is safe to reuse.
        let mut mem = self.mem.lock().unwrap_or_else(PoisonError::into_inner);
        let result: Result<Value, Error> = match name {
            "memory_tree" => Request::from_json(&args)
                .and_then(|req| {
                    let write = req.is_write();
                    let r = tool::call(&mut mem, req, &self.scope);
                    // After the call, so the worker finds the new nodes; also after a failed
                    // write, which may have committed part of its work.
                    if let (true, Some(bg)) = (write, &self.background) {
                        bg.nudge();
                    }
                    r
                })
                .and_then(|r| Ok(serde_json::to_value(r)?)),
            "memory_recall" => RecallRequest::from_json(&args).and_then(|req| tool::memory_recall(&mut mem, req)),
            _ => {
                let r = super::forget::call(&mut mem, &args);
                // Re-sealed summaries need vectors.
                if let Some(bg) = &self.background {
                    bg.nudge();
                }
                r
            }
        };
        match result {
            Ok(v) => ToolOutcome::Ok(v),
            Err(e) => ToolOutcome::Failed(e.chain()),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().build())
            .with_server_info(Implementation::new("memtree", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.published()))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompt::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let now_ms = self.mem.lock().unwrap_or_else(PoisonError::into_inner).as_reader().now_ms();
        match prompt::get(&request.name, request.arguments.as_ref(), now_ms) {
            Ok(r) => Ok(r.into()),
            Err(e) => Err(ErrorData::invalid_params(e.to_string(), None)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let this = self.clone();
        let name = request.name.to_string();
        let outcome = tokio::task::spawn_blocking(move || this.call(&name, request.arguments)).await;
        let result = match outcome {
            Ok(ToolOutcome::Ok(v)) => CallToolResult::success(vec![ContentBlock::text(v.to_string())]),
            Ok(ToolOutcome::Failed(msg)) => CallToolResult::error(vec![ContentBlock::text(msg)]),
            Ok(ToolOutcome::UnknownTool(n)) => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{n}`; this server has {}", TOOL_NAMES.join(", ")),
                    None,
                ));
            }
            // A panic in the engine is a bug, but the session goes on: report it as the tool's
            // failure.
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("internal error in the tool call: {e}"))]),
        };
        Ok(result.into())
    }
}
