//! The co-occurrence graph, derived from the entity index (no separate triple store): two
//! entities share an edge weighted by the number of distinct leaves mentioning both.

use crate::error::Result;
use crate::store::{EdgeRow, EntityReads, Reader};
use crate::types::EntityId;
use std::collections::{HashMap, VecDeque};

/// Neighbours expanded per entity during a BFS. Hubs (a chat's two speakers co-occur with
/// everything) would otherwise make every search touch the whole graph.
const BFS_FANOUT: usize = 256;

/// Edges of `subject`, by weight descending then object id.
pub fn co_occurring_entities(r: &impl Reader, subject: &EntityId, limit: usize) -> Result<Vec<EdgeRow>> {
    r.co_occurring(subject, limit)
}

/// Ids of `subject`'s neighbours, strongest first.
pub fn neighbors(r: &impl Reader, subject: &EntityId, limit: usize) -> Result<Vec<EntityId>> {
    Ok(r.co_occurring(subject, limit)?.into_iter().map(|e| e.object).collect())
}

/// Hop distance between `a` and `b` if at most `max_hops` (bounded BFS from `a`, which may
/// pass through entities of any kind); `None` when farther or unrelated.
pub fn hop_distance(r: &impl Reader, a: &EntityId, b: &EntityId, max_hops: u32) -> Result<Option<u32>> {
    if a == b {
        return Ok(Some(0));
    }
    let mut seen: HashMap<EntityId, u32> = HashMap::from([(a.clone(), 0)]);
    let mut queue = VecDeque::from([a.clone()]);
    while let Some(x) = queue.pop_front() {
        let d = seen[&x];
        if d >= max_hops {
            continue;
        }
        for y in neighbors(r, &x, BFS_FANOUT)? {
            if y == *b {
                return Ok(Some(d + 1));
            }
            if !seen.contains_key(&y) {
                seen.insert(y.clone(), d + 1);
                queue.push_back(y);
            }
        }
    }
    Ok(None)
}

/// Every pair of `entities` related within `max_hops`, with its distance, sorted.
pub fn related_pairs(r: &impl Reader, entities: &[EntityId], max_hops: u32) -> Result<Vec<(EntityId, EntityId, u32)>> {
    let mut out = Vec::new();
    for i in 0..entities.len() {
        for j in i + 1..entities.len() {
            if let Some(d) = hop_distance(r, &entities[i], &entities[j], max_hops)? {
                out.push((entities[i].clone(), entities[j].clone(), d));
            }
        }
    }
    Ok(out)
}
