//! `memtree mcp`: the `memory_tree` and `memory_recall` tools served over the Model Context
//! Protocol on stdio (newline-delimited JSON-RPC), with `rmcp`, the protocol's Rust SDK.
//!
//! Tool input schemas are the dispatcher's own ([`crate::tool::memory_tree_schema`],
//! [`crate::tool::memory_recall_schema`]). A bad call (unknown mode, missing field, wrong type)
//! comes back as a tool result with `isError: true` and the engine's message; an unparsable
//! line from the client is skipped by the transport and the session goes on. Nothing is
//! printed: stdout belongs to the protocol.
//!
//! With a [`crate::BackgroundEmbedder`] ([`McpServer::with_background`]) a write returns before
//! its vectors exist; the worker makes them between calls.
//!
//! One prompt, `memory_agent` (`prompt.rs`): the retrieval strategy (which mode for which
//! request) and the tool allow-list, for a host to hand to the model that works the memory.

mod forget;
mod handler;
mod prompt;

/// The two tool names this server publishes.
pub const TOOL_NAMES: [&str; 2] = ["memory_tree", "memory_recall"];

pub use handler::{McpServer, ToolOutcome};

use rmcp::ServiceExt;

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The async runtime could not be started.
    #[error("starting the MCP runtime")]
    Runtime(#[source] std::io::Error),
    /// The client did not complete the `initialize` handshake.
    #[error("MCP handshake")]
    Handshake(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The session task failed.
    #[error("MCP session")]
    Session(#[source] tokio::task::JoinError),
}

/// Serve `server` ([`McpServer::new`]) over MCP on this process's stdin/stdout until the client
/// closes the stream. Blocks; builds its own (small) async runtime, so the caller needs none.
/// A background worker stops at its next model call when the server is dropped (the write
/// in flight rolls back, to be made again later).
pub fn serve_stdio(server: McpServer) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ServeError::Runtime)?;
    rt.block_on(async move {
        let service = server.serve(rmcp::transport::stdio()).await.map_err(|e| ServeError::Handshake(Box::new(e)))?;
        service.waiting().await.map_err(ServeError::Session)?;
        Ok(())
    })
}
