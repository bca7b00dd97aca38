//! Where a leaf stands among its siblings: its parent summary's children in order while
//! sealed, else its tree's open buffer. The scorer reads a candidate's neighbouring turns
//! from it (`score.rs`), and a question hit its reply (`answer.rs`).

use crate::error::Result;
use crate::reader::MemoryReader;
use crate::store::BatchReads;
use crate::types::{NodeId, TreeId};
use std::collections::HashMap;

/// A leaf whose siblings are asked for.
pub(super) struct Leaf<'a> {
    pub id: &'a NodeId,
    /// The summary that sealed it; `None` while it is in its tree's open buffer.
    pub parent: Option<&'a NodeId>,
    pub tree: &'a TreeId,
}

/// Calls `f(i, siblings, at, sealed)` for each leaf `i` of `leaves` found among its siblings
/// (`siblings[at]` is the leaf; `sealed` when they are a summary's children). One statement
/// reads every parent's child list, one read each open buffer; a leaf not found among them
/// (its parent not in the store) is skipped.
pub(super) fn among_siblings(
    mem: &MemoryReader,
    leaves: &[Leaf<'_>],
    mut f: impl FnMut(usize, &[&str], usize, bool),
) -> Result<()> {
    let mut by_parent: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut by_buffer: HashMap<&TreeId, Vec<usize>> = HashMap::new();
    for (i, l) in leaves.iter().enumerate() {
        match l.parent {
            Some(p) => by_parent.entry(p.as_str()).or_default().push(i),
            None => by_buffer.entry(l.tree).or_default().push(i),
        }
    }
    let mut place = |siblings: &[&str], members: &[usize], sealed: bool| {
        for &i in members {
            if let Some(at) = siblings.iter().position(|x| *x == leaves[i].id.as_str()) {
                f(i, siblings, at, sealed);
            }
        }
    };
    let parent_ids: Vec<NodeId> = by_parent.keys().map(|p| NodeId(p.to_string())).collect();
    mem.store().for_each_child_list(&parent_ids, |parent, children| {
        if let Some(members) = by_parent.get(parent) {
            place(children, members, true);
        }
        Ok(())
    })?;
    for (tree, members) in &by_buffer {
        let ids = mem.store().buffer_ids(tree, 0)?;
        place(&ids.iter().map(NodeId::as_str).collect::<Vec<_>>(), members, false);
    }
    Ok(())
}
