//! The engine's tests that read its insides (the store's rows, the index, the derived
//! state), beside the code: shared fixtures and invariant checks in `common`; a few drive
//! the `memtree` binary (`support`). The default build's features run all but `crash`, which
//! needs the kill points: `cargo test --release --no-default-features --features failpoints
//! --lib tests::crash`.

#[cfg(all(feature = "cli", feature = "mcp"))]
mod background;
// The kill points exist only with `failpoints` (and SIGKILL is Unix).
#[cfg_attr(not(all(feature = "cli", feature = "mcp")), allow(dead_code))]
mod common;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod concurrency;
#[cfg(all(feature = "failpoints", unix))]
mod crash;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod dates;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod demo_questions;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod extraction;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod forget;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod fuzz;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod hostile;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod large_write;
// Reads the peak memory from /proc.
#[cfg(all(feature = "cli", feature = "mcp", target_os = "linux"))]
mod limits;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod mail;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod model;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod model_choice;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod privacy;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod registry;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod replace;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod rerank;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod schema_edges;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod snippet;
#[cfg(all(feature = "cli", feature = "mcp"))]
#[path = "../../tests/support/cli.rs"]
mod support;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod tool;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod tree;
#[cfg(all(feature = "cli", feature = "mcp"))]
mod walk;
