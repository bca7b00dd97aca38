//! Read modes of the `memory_tree` tool: one file per mode, plus the shapes they return and
//! the rerank they share. Retrieval never writes.

mod cover_window;
mod drill_down;
pub(crate) mod fetch_leaves;
mod hit;
mod query_source;
mod rerank;
mod search_entities;
mod snippet;
pub mod walk;

pub use cover_window::{CoverWindowArgs, cover_window};
pub use drill_down::{DrillDownArgs, drill_down};
pub use fetch_leaves::{FetchLeavesArgs, fetch_leaves};
#[cfg(feature = "harness")]
pub use hit::parse_rfc3339;
pub use hit::{EntityMatch, QueryResponse, RetrievalHit, Scope, Snippet, rfc3339};
pub use query_source::{QuerySourceArgs, query_source};
// The harness's hybrid baseline fuses as `query_source` does.
#[cfg(feature = "harness")]
pub use rerank::Fusion;
pub use search_entities::{SearchEntitiesArgs, search_entities};
pub use walk::{WalkArgs, WalkParams, walk};
