//! `Mention`: one entity found on a node (its canonical id, kind and the surface as
//! written): what extraction produces and what the store attaches to the node.

use crate::types::{EntityId, EntityKind};

/// An entity mention to attach to a node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mention {
    /// Canonical id.
    pub id: EntityId,
    /// Kind.
    pub kind: EntityKind,
    /// Surface as written.
    pub surface: String,
}
