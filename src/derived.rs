//! `Derived`: the in-memory state derived from the record — the gazetteer of entity surfaces
//! and the node vectors — and how it is loaded from the store and the registry. A writer and
//! its readers share one; a reader of another process's store loads its own.

use crate::embed::{Embedder, VectorMatrix};
use crate::entities::{Gazetteer, Mention, Registry};
use crate::error::Result;
use crate::store::{BatchReads, EntityReads, ModelReads, NewVector, Store, VectorMark, VectorReads};
use crate::types::{EntityId, EntityKind, NodeId};
use std::collections::{BTreeSet, HashMap};

/// The in-memory state derived from the store: the gazetteer of indexed surfaces and the
/// node vectors. Shared by a writer and its readers; the writer updates it after each
/// commit. It is a hint for finding candidates — every hit's content is read from the
/// reader's SQLite snapshot, so a lag here can cost a candidate, never mix versions.
pub struct Derived {
    gazetteer: Gazetteer,
    vectors: Option<VectorMatrix>,
    /// Where the stored vectors stood when `vectors` last matched the store: a load, a
    /// catch-up, or this process's writer after its own commit (`set_mark`).
    mark: VectorMark,
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
        let (vectors, mark) = match embedder {
            Some(e) => {
                let (m, mark) = load_vectors(store, e)?;
                (Some(m), mark)
            }
            None => (None, VectorMark::default()),
        };
        Ok(Derived { gazetteer: load_gazetteer(store, registry)?, vectors, mark, generation })
    }

    pub(crate) fn new(gazetteer: Gazetteer, vectors: Option<VectorMatrix>, generation: u64) -> Derived {
        Derived { gazetteer, vectors, mark: VectorMark::default(), generation }
    }

    /// Where the stored vectors stood when they were last loaded.
    pub(crate) fn mark(&self) -> VectorMark {
        self.mark
    }

    /// Record that the held vectors now reflect the store up to `mark`: a writer after its
    /// own commit, under the writer lock (so that its next catch-up reads only what other
    /// processes wrote, not its own rows again).
    pub(crate) fn set_mark(&mut self, mark: VectorMark) {
        self.mark = mark;
    }

    /// Bring the state to `delta`'s generation: its gazetteer, and its vectors added to the
    /// held ones (with the session vectors they change).
    pub(crate) fn apply(&mut self, delta: Delta) {
        self.gazetteer = delta.gazetteer;
        if let Some(m) = self.vectors.as_mut() {
            for v in &delta.vectors {
                match v.slot {
                    0 => m.upsert_codes(v.node_id.as_str(), v.scale, &v.codes),
                    slot => m.upsert_passage(v.node_id.as_str(), slot, v.scale, &v.codes),
                }
            }
            for (summary, children) in &delta.sessions {
                m.set_session(summary.as_str(), children.iter().map(String::as_str));
            }
        }
        self.mark = delta.mark;
        self.generation = delta.generation;
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

    pub(crate) fn gazetteer_mut(&mut self) -> &mut Gazetteer {
        &mut self.gazetteer
    }

    pub(crate) fn vectors_mut(&mut self) -> Option<&mut VectorMatrix> {
        self.vectors.as_mut()
    }

    pub(crate) fn set_vectors(&mut self, v: Option<VectorMatrix>, mark: VectorMark) {
        self.vectors = v;
        self.mark = mark;
    }
}

/// The gazetteer of a store: registry names, then every entity's names ([`insert_entity`]).
pub(crate) fn load_gazetteer(store: &impl EntityReads, registry: &Registry) -> Result<Gazetteer> {
    let mut g = alias_gazetteer(registry);
    for e in store.all_entities()? {
        insert_entity(&mut g, e.kind, &e.surface, &e.entity_id);
    }
    Ok(g)
}

/// What an entity row gives the gazetteer: the surface it keeps (the first one seen) and the
/// surface part of its id ("person:caroline" is findable as "caroline").
fn insert_entity(g: &mut Gazetteer, kind: EntityKind, surface: &str, id: &EntityId) {
    g.insert(kind, surface, id);
    if let Some((_, s)) = id.as_str().split_once(':') {
        g.insert(kind, s, id);
    }
}

/// The write path's gazetteer: after every change of the record it equals what
/// [`load_gazetteer`] would read from the store (`memory::commit`'s tests check exactly that),
/// without reading the store again. A new entity row adds its names ([`insert_entity`]) and a
/// deleted one takes them away, except those the registry gives; rows never change their kind
/// or surface (`Tx::attach_entities` keeps the first one seen), so nothing else moves. A
/// replace or a forget thus costs the gazetteer its own entities, not a reload of every one;
/// and the readers' copy is brought up to date with the same changes ([`WriteGazetteer::publish`]),
/// not replaced by a copy of the whole.
pub(crate) struct WriteGazetteer {
    names: Gazetteer,
    /// The registry's names alone ([`alias_gazetteer`]): no row's removal takes them away.
    aliases: Gazetteer,
    /// Every entity row `names` holds, with its kind and surface: what its removal undoes.
    rows: HashMap<EntityId, (EntityKind, String)>,
    /// The rows added and removed since the readers' copy was last brought up to date, in
    /// order.
    unpublished: Vec<RowChange>,
}

/// An entity row that came or went: (kind, surface, id).
enum RowChange {
    Added(EntityKind, String, EntityId),
    Removed(EntityKind, String, EntityId),
}

impl WriteGazetteer {
    /// Read from the store and the registry (a load, a reload when another writer moved the
    /// store or the vault changed, a rollback). The caller hands the readers a copy.
    pub(crate) fn load(store: &impl EntityReads, registry: &Registry) -> Result<WriteGazetteer> {
        let aliases = alias_gazetteer(registry);
        let mut names = aliases.clone();
        let mut rows = HashMap::new();
        for e in store.all_entities()? {
            insert_entity(&mut names, e.kind, &e.surface, &e.entity_id);
            rows.insert(e.entity_id, (e.kind, e.surface));
        }
        Ok(WriteGazetteer { names, aliases, rows, unpublished: Vec::new() })
    }

    /// The gazetteer a write extracts with.
    pub(crate) fn gazetteer(&self) -> &Gazetteer {
        &self.names
    }

    /// `m` is about to be attached to a leaf: when its entity has no row yet, the attach
    /// creates one with `m`'s kind and surface, and its names join the gazetteer (so that the
    /// rest of the write reads with them, as a reload would). Call it in the order the
    /// mentions are attached, so that the first surface is the one the row keeps.
    pub(crate) fn add_row(&mut self, m: &Mention) {
        if self.rows.contains_key(&m.id) {
            return;
        }
        insert_entity(&mut self.names, m.kind, &m.surface, &m.id);
        self.rows.insert(m.id.clone(), (m.kind, m.surface.clone()));
        self.unpublished.push(RowChange::Added(m.kind, m.surface.clone(), m.id.clone()));
    }

    /// The row of `id` was deleted (no node names it any more): its names leave the
    /// gazetteer, except those the registry gives.
    pub(crate) fn remove_row(&mut self, id: &EntityId) {
        let Some((kind, surface)) = self.rows.remove(id) else { return };
        remove_entity(&mut self.names, kind, &surface, id, &self.aliases);
        self.unpublished.push(RowChange::Removed(kind, surface, id.clone()));
    }

    /// Bring `readers` (the readers' copy, equal to this gazetteer as it was when they last
    /// got it) up to date: the rows added and removed since, in order. Each change leaves
    /// its entries as this gazetteer has them whatever they were, so a copy the readers
    /// reloaded from the store meanwhile ends equal too.
    pub(crate) fn publish(&mut self, readers: &mut Gazetteer) {
        for change in self.unpublished.drain(..) {
            match change {
                RowChange::Added(kind, surface, id) => insert_entity(readers, kind, &surface, &id),
                RowChange::Removed(kind, surface, id) => remove_entity(readers, kind, &surface, &id, &self.aliases),
            }
        }
    }
}

/// Undo [`insert_entity`], except the entries `keep` (the registry's names) holds.
fn remove_entity(g: &mut Gazetteer, kind: EntityKind, surface: &str, id: &EntityId, keep: &Gazetteer) {
    g.remove(kind, surface, id, keep);
    if let Some((_, s)) = id.as_str().split_once(':') {
        g.remove(kind, s, id, keep);
    }
}

/// Every stored vector of `embedder` as a matrix, with the session vector of every level-1
/// summary made from its children's, and where the stored vectors stood.
pub(crate) fn load_vectors(store: &Store, embedder: &dyn Embedder) -> Result<(VectorMatrix, VectorMark)> {
    let mark = store.vector_mark()?;
    let mut m = VectorMatrix::new(embedder.dim());
    // Another model's vectors under this name (a reader opened with a new model before a
    // writer re-embedded): none are scored; the dense signal is off until they are remade.
    if !store.vectors_usable(embedder.name(), embedder.dim(), embedder.manifest())? {
        return Ok((m, mark));
    }
    store.for_each_vector(embedder.name(), |id, scale, codes| m.upsert_codes(id, scale, codes))?;
    store
        .for_each_passage_vector(embedder.name(), |id, slot, scale, codes| m.upsert_passage(id, slot, scale, codes))?;
    store.for_each_session(|summary, children| m.set_session(summary, children.iter().copied()))?;
    Ok((m, mark))
}

/// What another process's writes added since a [`Derived`] was loaded, when they only added
/// vectors: read from the store without holding the state's lock, then applied under it.
pub(crate) struct Delta {
    gazetteer: Gazetteer,
    vectors: Vec<NewVector>,
    /// The summaries whose session vectors the new vectors change, with their children.
    sessions: Vec<(NodeId, Vec<String>)>,
    mark: VectorMark,
    generation: u64,
}

impl Delta {
    /// The vectors written after `since` and the current gazetteer, if the store's vectors
    /// only grew since then (`None`: some were deleted, reload them all). One read snapshot.
    pub(crate) fn read(
        store: &Store,
        registry: &Registry,
        embedder: &dyn Embedder,
        since: VectorMark,
    ) -> Result<Option<Delta>> {
        let generation = store.generation()?;
        let mark = store.vector_mark()?;
        if mark.deleted != since.deleted {
            return Ok(None);
        }
        let vectors = if store.vectors_usable(embedder.name(), embedder.dim(), embedder.manifest())? {
            store.vectors_since(embedder.name(), since.seq)?
        } else {
            Vec::new()
        };
        // A new level-1 summary's session is made of its children; a leaf's new vector changes
        // its parent's.
        let affected: BTreeSet<NodeId> = vectors
            .iter()
            .filter(|v| v.slot == 0)
            .filter_map(|v| match v.level {
                0 => v.parent_id.clone(),
                1 => Some(v.node_id.clone()),
                _ => None,
            })
            .collect();
        let mut sessions = Vec::with_capacity(affected.len());
        if mark.sessions != since.sessions {
            // Sessions were sealed (perhaps over leaves embedded earlier, with no new vector
            // row to point at them): remake every session vector.
            store.for_each_session(|summary, children| {
                sessions.push((NodeId(summary.to_string()), children.iter().map(|c| c.to_string()).collect()));
            })?;
        } else {
            store.for_each_child_list(&affected.into_iter().collect::<Vec<_>>(), |summary, children| {
                sessions.push((NodeId(summary.to_string()), children.iter().map(|c| c.to_string()).collect()));
                Ok(())
            })?;
        }
        Ok(Some(Delta { gazetteer: load_gazetteer(store, registry)?, vectors, sessions, mark, generation }))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn mention(kind: EntityKind, surface: &str) -> Mention {
        Mention { id: crate::entities::canonical_id(kind, surface).unwrap(), kind, surface: surface.into() }
    }

    #[test]
    fn the_readers_copy_ends_equal_from_the_last_copy_or_from_a_reload() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let registry = Registry::open(&dir.path().join("content")).unwrap();
        let mut w = WriteGazetteer::load(&store, &registry).unwrap();
        let maya = mention(EntityKind::Person, "Maya Okafor");
        w.add_row(&mention(EntityKind::Person, "Lena Marsh"));
        w.add_row(&maya);
        // The readers got a copy of this (as an open hands them).
        let mut last = w.gazetteer().clone();
        w.unpublished.clear();
        // A write takes Maya away, brings her back and away again, and adds Bluefin.
        w.remove_row(&maya.id);
        w.add_row(&maya);
        w.remove_row(&maya.id);
        w.add_row(&mention(EntityKind::Organization, "Bluefin Logistics"));
        // The readers' copy after a reload from the store (after a failed index commit) already
        // holds all of that: replaying the changes leaves it so.
        let mut reloaded = w.gazetteer().clone();
        let changes = w.unpublished.len();
        w.publish(&mut last);
        assert_eq!(last.entries(), w.gazetteer().entries());
        assert!(w.unpublished.is_empty() && changes == 4);
        w.remove_row(&maya.id); // no row: nothing to undo or publish
        assert!(w.unpublished.is_empty());
        // Replayed onto the reloaded copy: the write's net changes, in order.
        w.unpublished = vec![
            RowChange::Removed(maya.kind, maya.surface.clone(), maya.id.clone()),
            RowChange::Added(
                EntityKind::Organization,
                "Bluefin Logistics".into(),
                "organization:bluefin logistics".into(),
            ),
        ];
        w.publish(&mut reloaded);
        assert_eq!(reloaded.entries(), w.gazetteer().entries());
        assert!(w.gazetteer().get("maya").next().is_none() && w.gazetteer().get("bluefin").next().is_some());
    }
}
