//! The tests that drive the programs as a user or a host does (the `memtree` CLI, the REPL,
//! the MCP server, several of them at once on one store), one binary: the helpers that run a
//! program (`support`) and speak MCP to it (`mcp_client`) are shared as modules. `limits` and
//! `crash` stay binaries of their own (each runs itself as a child process per scenario).

#[path = "../support/mcp_client.rs"]
mod mcp_client;
#[path = "../support/cli.rs"]
mod support;

mod archive;
mod cli;
mod dates;
mod edges;
mod forget_holds;
mod imports;
mod mcp;
mod mcp_background;
mod repl;
mod rerank;
mod sync;
mod terminal;
mod writers;
