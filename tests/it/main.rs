//! Integration tests, one binary: shared fixtures and invariant checks in `common`.

mod background;
mod common;
mod concurrency;
mod dates;
mod demo_questions;
mod extraction;
mod forget;
mod fuzz;
mod hostile;
mod large_write;
mod mail;
mod model;
mod model_choice;
mod privacy;
mod registry;
mod replace;
mod rerank;
mod schema_edges;
mod snippet;
#[path = "../support/cli.rs"]
mod support;
mod tool;
mod tree;
mod walk;
