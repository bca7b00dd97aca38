//! Forgetting leaves inside one write: the leaves go with their entity mentions, topics and
//! vectors, and every summary above them is re-sealed without them. Summaries are immutable
//! once sealed, so a re-seal writes a new summary over the remaining children (text,
//! envelope, tokens, entities and topics recomputed, the old one's place in its level kept)
//! and deletes the old one; a summary left with no child goes without a successor.

use super::WriteBatch;
use crate::error::Result;
use crate::store::{EntityReads, NodeKey, NodeReads, NodeRow};
use crate::types::{EntityId, NodeId, TreeId};
use std::collections::{BTreeSet, HashMap};

/// What forgetting some leaves of one tree removed and re-sealed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Forgotten {
    /// The leaves removed, by id.
    pub leaves: Vec<NodeId>,
    /// Every summary removed: those re-sealed and those left with no child.
    pub summaries: Vec<NodeId>,
    /// Each re-sealed summary and the one that replaces it.
    pub resealed: Vec<Resealed>,
    /// Entities no node mentions any more: their rows went too.
    pub entities: Vec<EntityId>,
}

/// A summary re-sealed without forgotten leaves.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Resealed {
    /// The summary removed.
    pub old: NodeId,
    /// The summary over its remaining children.
    pub new: NodeId,
    /// Its level.
    pub level: u32,
    /// How many children it has now.
    pub children: usize,
}

impl WriteBatch<'_, '_> {
    /// The leaves of a tree, in append order.
    pub fn tree_leaves(&self, tree: &TreeId) -> Result<Vec<NodeId>> {
        Ok(self.tx.tree_nodes(tree)?.into_iter().filter(NodeRow::is_leaf).map(|n| n.node_id).collect())
    }

    /// Remove a source's row and tree once nothing of it is left (its nodes went one by one,
    /// each with its index document).
    pub fn remove_source_rows(&mut self, source: &crate::types::SourceId) -> Result<()> {
        self.tx.delete_source_rows(source)?;
        self.trees.remove(&TreeId::for_source(source));
        Ok(())
    }

    /// Forget `leaves` of `tree` (ids of other trees, or of summaries, are not touched: the
    /// caller resolves them) and re-seal every summary above them, bottom up.
    pub fn forget_leaves(&mut self, tree: &TreeId, leaves: &[NodeId]) -> Result<Forgotten> {
        let nodes: HashMap<NodeId, NodeRow> =
            self.tx.tree_nodes(tree)?.into_iter().map(|n| (n.node_id.clone(), n)).collect();
        let gone: BTreeSet<NodeId> =
            leaves.iter().filter(|l| nodes.get(*l).is_some_and(NodeRow::is_leaf)).cloned().collect();
        if gone.is_empty() {
            return Ok(Forgotten::default());
        }
        // Every ancestor of a forgotten leaf, walked up through the parents.
        let mut above: BTreeSet<NodeId> = BTreeSet::new();
        for leaf in &gone {
            let mut at = nodes.get(leaf).and_then(|n| n.parent_id.clone());
            while let Some(p) = at {
                if !above.insert(p.clone()) {
                    break;
                }
                at = nodes.get(&p).and_then(|n| n.parent_id.clone());
            }
        }
        let removed: Vec<NodeId> = gone.iter().chain(&above).cloned().collect();
        let mut mentioned: BTreeSet<EntityId> = BTreeSet::new();
        for id in &gone {
            mentioned.extend(self.tx.node_entities(id)?);
        }
        self.tx.detach_entities(&removed)?;
        self.tx.delete_nodes(&removed)?;
        crate::crash::point("forget_dropped");
        self.report.removed += gone.len();
        self.dropped_nodes.extend(removed.iter().cloned());
        // The buffers' cached counts no longer hold for this tree.
        self.buffers.retain(|(t, _), _| t != tree);

        // Bottom up: a summary's children are re-sealed before it is.
        let mut order: Vec<&NodeRow> = above.iter().filter_map(|id| nodes.get(id)).collect();
        order.sort_by(|a, b| (a.level, a.seq, &a.node_id).cmp(&(b.level, b.seq, &b.node_id)));
        let mut successor: HashMap<NodeId, Option<NodeId>> = HashMap::new();
        let mut out = Forgotten { leaves: gone.iter().cloned().collect(), ..Forgotten::default() };
        for old in order {
            let kept: Vec<NodeId> = old
                .child_ids
                .iter()
                .filter(|c| !gone.contains(*c))
                .filter_map(|c| match successor.get(c) {
                    Some(next) => next.clone(),
                    None => Some(c.clone()),
                })
                .collect();
            out.summaries.push(old.node_id.clone());
            if kept.is_empty() {
                successor.insert(old.node_id.clone(), None);
                continue;
            }
            let (keys, children): (Vec<NodeKey>, Vec<NodeRow>) = self.tx.nodes_keyed(&kept)?.into_iter().unzip();
            crate::crash::point("forget_reseal");
            // The successor takes the old summary's place in its level's order; its parent,
            // an ancestor too, is re-sealed next and adopts it (set_parent), or it stays in its
            // level's open buffer as the old one did.
            let (row, tree_row, entities, topics) =
                self.write_summary(tree, old.level - 1, &keys, &children, old.seq)?;
            out.resealed.push(Resealed {
                old: old.node_id.clone(),
                new: row.node_id.clone(),
                level: row.level,
                children: row.child_ids.len(),
            });
            successor.insert(old.node_id.clone(), Some(row.node_id.clone()));
            self.remember(row, tree_row, entities, topics);
        }
        out.entities = self.unname(mentioned)?;
        Ok(out)
    }
}
