//! `Derived`: the in-memory state derived from the record — the gazetteer of entity surfaces
//! and the node vectors — and how it is loaded from the store and the registry. A writer and
//! its readers share one; a reader of another process's store loads its own.

use crate::embed::{Embedder, VectorMatrix};
use crate::entities::{Gazetteer, Registry};
use crate::error::Result;
use crate::store::{EntityReads, Store, VectorReads};

/// The in-memory state derived from the store: the gazetteer of indexed surfaces and the
/// node vectors. Shared by a writer and its readers; the writer updates it after each
/// commit. It is a hint for finding candidates — every hit's content is read from the
/// reader's SQLite snapshot, so a lag here can cost a candidate, never mix versions.
pub struct Derived {
    gazetteer: Gazetteer,
    vectors: Option<VectorMatrix>,
    /// The store generation this state reflects: a reader that finds the store further on
    /// (another process wrote) reloads it.
    generation: u64,
}

impl Derived {
    /// Build from the store: every entity surface (plus the registry's names) and every
    /// stored vector of `embedder`, at the store's current generation. Call it inside one read
    /// snapshot so that the three agree.
    pub(crate) fn load(store: &Store, registry: &Registry, embedder: Option<&dyn Embedder>) -> Result<Derived> {
        let generation = store.generation()?;
        let vectors = match embedder {
            Some(e) => Some(load_vectors(store, e)?),
            None => None,
        };
        Ok(Derived { gazetteer: load_gazetteer(store, registry)?, vectors, generation })
    }

    pub(crate) fn new(gazetteer: Gazetteer, vectors: Option<VectorMatrix>, generation: u64) -> Derived {
        Derived { gazetteer, vectors, generation }
    }

    /// The store generation this state reflects.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn set_generation(&mut self, g: u64) {
        self.generation = g;
    }

    /// The gazetteer of indexed entity surfaces.
    pub fn gazetteer(&self) -> &Gazetteer {
        &self.gazetteer
    }

    /// The node vectors, when a model is configured.
    pub fn vectors(&self) -> Option<&VectorMatrix> {
        self.vectors.as_ref()
    }

    pub(crate) fn set_gazetteer(&mut self, g: Gazetteer) {
        self.gazetteer = g;
    }

    pub(crate) fn vectors_mut(&mut self) -> Option<&mut VectorMatrix> {
        self.vectors.as_mut()
    }

    pub(crate) fn set_vectors(&mut self, v: Option<VectorMatrix>) {
        self.vectors = v;
    }
}

/// The gazetteer of a store: registry names, then every entity's surface and the surface
/// part of its id ("person:caroline" is findable as "caroline").
pub(crate) fn load_gazetteer(store: &impl EntityReads, registry: &Registry) -> Result<Gazetteer> {
    let mut g = alias_gazetteer(registry);
    for e in store.all_entities()? {
        g.insert(e.kind, &e.surface, &e.entity_id);
        if let Some((_, s)) = e.entity_id.as_str().split_once(':') {
            g.insert(e.kind, s, &e.entity_id);
        }
    }
    Ok(g)
}

/// Every stored vector of `embedder` as a matrix.
pub(crate) fn load_vectors(store: &Store, embedder: &dyn Embedder) -> Result<VectorMatrix> {
    let mut m = VectorMatrix::new(embedder.dim());
    store.for_each_vector(embedder.name(), |id, v| m.upsert(id.as_str(), &v))?;
    Ok(m)
}

/// The registry's names (display name, aliases, handle values) → their entity ids.
/// Unreadable files are skipped: the vault must never stop the engine.
pub(crate) fn alias_gazetteer(registry: &Registry) -> Gazetteer {
    let mut g = Gazetteer::new();
    for r in registry.all().unwrap_or_default() {
        g.insert(r.kind, &r.display_name, &r.id);
        for a in &r.aliases {
            g.insert(r.kind, a, &r.id);
        }
        for h in &r.handles {
            g.insert(r.kind, &h.value, &r.id);
        }
    }
    g
}
