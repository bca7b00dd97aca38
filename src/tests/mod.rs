//! The engine's tests that read its insides (the store's rows, the index, the derived
//! state), beside the code: shared fixtures and invariant checks in `common`; a few drive
//! the `memtree` binary (`support`). The default build's features run all but `crash`, which
//! needs the kill points: `cargo test --release --no-default-features --features failpoints
//! --lib tests::crash`.

// The kill points exist only with `failpoints` (and SIGKILL is Unix).
#[cfg_attr(not(all(feature = "cli", feature = "mcp")), allow(dead_code))]
mod common;
#[cfg(all(feature = "failpoints", unix))]
mod crash;
// Reads the peak memory from /proc.
#[cfg(all(feature = "cli", feature = "mcp", target_os = "linux"))]
mod limits;
#[cfg(all(feature = "cli", feature = "mcp"))]
#[path = "../../tests/support/cli.rs"]
mod support;

/// The modules the default build's features compile (the MCP server, the binary's crates).
macro_rules! with_default_features {
    ($($m:item)*) => { $(#[cfg(all(feature = "cli", feature = "mcp"))] $m)* };
}

with_default_features! {
    mod archive;
    mod background;
    mod concurrency;
    mod coverage;
    mod dates;
    mod demo_questions;
    mod extraction;
    mod forget;
    mod fuzz;
    mod hostile;
    mod identifiers;
    mod large_write;
    mod mail;
    mod model;
    mod model_choice;
    mod own_words;
    mod passages;
    mod privacy;
    mod registry;
    mod replace;
    mod rerank;
    mod schema_edges;
    mod snippet;
    mod tool;
    mod tree;
    mod two_clocks;
    mod walk;
}
