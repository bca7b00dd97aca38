//! The batch writer: appends leaves inside one store transaction, seals buffers into
//! summaries (token budget, content-clock age, fan-out cascade) and remembers what the
//! derived indexes must add or drop once the transaction commits.

use super::IngestReport;
use super::canonical::{LeafDraft, Role};
use crate::config::Config;
use crate::derived::WriteGazetteer;
use crate::entities::{ExtractOptions, Extractor, Mention, canonical_id};
use crate::error::{Error, Result};
use crate::store::{BufferStats, EntityReads, NodeKey, NodeReads, NodeRow, SourceRow, TreeRow, Tx};
use crate::tree::{Summariser, SummaryChild, SummaryRequest, topics_of};
use crate::types::{EntityId, NodeId, SourceId, TreeId};
use std::collections::{BTreeSet, HashMap, HashSet};

mod forget;
mod held;
pub use forget::Resealed;
use held::Held;
pub(crate) use held::content_hash;

/// Topics kept per summary.
const TOPICS_PER_SUMMARY: usize = 6;

/// Text of its written nodes a batch keeps in memory for the vectors and the index that
/// follow the insert; past this, a node's text is let go of once stored and read back from
/// the store a chunk at a time ([`restore_texts`]). A batch of 2,000 chat messages keeps all
/// its text; one 50 MB message (issue 28) is not held here as well as in the store's page
/// cache and, after the commit, in the index's queue.
const KEPT_TEXT_BYTES: usize = 8 << 20;

/// What [`WriteBatch::append_leaf`] did with a leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Appended {
    /// Written.
    Written,
    /// The same content is stored (or came earlier in the batch): nothing written.
    Duplicate,
    /// A forget holds it back: nothing written.
    Forgotten,
}

/// One write in progress. Everything goes through `tx`; nothing is visible until the caller
/// commits it. The batch remembers what it wrote ([`Written`]), so that the index and the
/// vectors, which follow the commit, need not read the same rows back.
pub(crate) struct WriteBatch<'a, 't> {
    tx: &'a Tx<'t>,
    ctx: WriteContext<'a>,
    /// Nodes written by this batch, in write order.
    written: Vec<WrittenNode>,
    /// Trees whose old nodes this batch deleted (replace/delete).
    dropped_trees: Vec<TreeId>,
    /// Nodes this batch deleted: with their trees (replace, delete) or one by one (forget).
    dropped_nodes: Vec<NodeId>,
    report: IngestReport,
    buffers: HashMap<(TreeId, u32), BufferStats>,
    next_seq: HashMap<TreeId, i64>,
    seen: HashSet<NodeId>,
    sources: BTreeSet<SourceId>,
    trees: HashMap<TreeId, TreeRow>,
    /// Bytes of text `written` holds.
    kept_text: usize,
    /// The forget records, read at the batch's first leaf (`held.rs`).
    held: Option<Held>,
}

/// What a batch writes with: the thresholds, the summariser, the extractor, the write path's
/// gazetteer (the batch adds the names of the entities it creates and takes away those of the
/// entities it deletes) and the wall-clock time of the write.
pub(crate) struct WriteContext<'a> {
    pub cfg: &'a Config,
    pub summariser: &'a dyn Summariser,
    pub extractor: &'a Extractor,
    pub gazetteer: &'a mut WriteGazetteer,
    pub now_ms: i64,
}

/// A node a batch wrote, with what the derived indexes need of it: the row, its tree, its
/// entity ids and its topics (each sorted and distinct, as the store returns them).
pub(crate) struct WrittenNode {
    /// The row; its `content` is empty when `text_in_store` (until [`restore_texts`]).
    pub row: NodeRow,
    pub tree: TreeRow,
    pub entities: Vec<EntityId>,
    pub topics: Vec<String>,
    /// The batch let go of the row's text once stored (it had kept [`KEPT_TEXT_BYTES`]).
    pub text_in_store: bool,
}

/// Read back from `reads` (the write's transaction, or the store after its commit) the texts
/// that `nodes` let go of, to use them and let them go again with [`release_texts`]: a chunk
/// at a time, so that a large write holds a chunk's texts, not all of them.
/// Returns whether it read any.
pub(crate) fn restore_texts(reads: &impl NodeReads, nodes: &mut [WrittenNode]) -> Result<bool> {
    let mut read = false;
    for w in nodes.iter_mut().filter(|w| w.text_in_store) {
        w.row.content = reads.content(&w.row.node_id)?.ok_or_else(|| Error::Corrupt {
            what: format!("nodes[{}]", w.row.node_id),
            reason: "a node this write stored is gone".into(),
        })?;
        read = true;
    }
    Ok(read)
}

/// Let go again of the texts [`restore_texts`] read back.
pub(crate) fn release_texts(nodes: &mut [WrittenNode]) {
    for w in nodes.iter_mut().filter(|w| w.text_in_store) {
        w.row.content = String::new();
    }
}

/// What a finished batch wrote.
pub(crate) struct Written {
    /// The counts, with the number of distinct sources.
    pub report: IngestReport,
    /// The nodes written, in write order (without those a later drop in the batch removed).
    pub nodes: Vec<WrittenNode>,
    /// Trees whose earlier nodes were deleted: the index drops their documents first.
    pub dropped_trees: Vec<TreeId>,
    /// The nodes deleted with those trees (replace, delete) and those forgotten one by one
    /// (with the summaries above them): the index drops their documents, and the vector
    /// matrix removes their rows before it takes this batch's vectors (a replace may write a
    /// deleted id again).
    pub dropped_nodes: Vec<NodeId>,
}

impl<'a, 't> WriteBatch<'a, 't> {
    pub fn new(tx: &'a Tx<'t>, ctx: WriteContext<'a>) -> Self {
        WriteBatch {
            tx,
            ctx,
            written: Vec::new(),
            dropped_trees: Vec::new(),
            dropped_nodes: Vec::new(),
            report: IngestReport::default(),
            buffers: HashMap::new(),
            next_seq: HashMap::new(),
            seen: HashSet::new(),
            sources: BTreeSet::new(),
            trees: HashMap::new(),
            kept_text: 0,
            held: None,
        }
    }

    /// Remember a node just stored, keeping its text while the batch holds less than
    /// [`KEPT_TEXT_BYTES`] (the derived indexes read it back otherwise).
    fn remember(&mut self, mut row: NodeRow, tree: TreeRow, entities: Vec<EntityId>, topics: Vec<String>) {
        let text_in_store = self.kept_text + row.content.len() > KEPT_TEXT_BYTES;
        if text_in_store {
            row.content = String::new();
        } else {
            self.kept_text += row.content.len();
        }
        self.written.push(WrittenNode { row, tree, entities, topics, text_in_store });
    }

    /// Finish: what the batch wrote, with the number of distinct sources in the report.
    pub fn finish(mut self) -> Written {
        self.report.sources = self.sources.len();
        Written {
            report: self.report,
            nodes: self.written,
            dropped_trees: self.dropped_trees,
            dropped_nodes: self.dropped_nodes,
        }
    }

    /// Delete a source's nodes with their entity mentions and edges (a replace's first step,
    /// or a delete); counts the leaves that went in the report and returns them.
    pub fn drop_source(&mut self, source: &SourceId) -> Result<usize> {
        let tree = TreeId::for_source(source);
        let nodes = self.tx.tree_nodes(&tree)?;
        if nodes.is_empty() {
            return Ok(0);
        }
        let leaves = nodes.iter().filter(|n| n.is_leaf()).count();
        // The entities its leaves name (a summary names its leaves' entities): those no other
        // node names lose their rows in the detach, and their names below.
        let mut named = BTreeSet::new();
        for n in nodes.iter().filter(|n| n.is_leaf()) {
            named.extend(self.tx.node_entities(&n.node_id)?);
        }
        let ids: Vec<NodeId> = nodes.into_iter().map(|n| n.node_id).collect();
        self.tx.detach_entities(&ids)?;
        self.tx.delete_source_rows(source)?;
        // What this batch knew of the tree is gone with it.
        self.written.retain(|w| w.row.tree_id != tree);
        self.buffers.retain(|(t, _), _| *t != tree);
        self.next_seq.remove(&tree);
        self.trees.remove(&tree);
        self.dropped_trees.push(tree);
        self.dropped_nodes.extend(ids);
        self.report.removed += leaves;
        // What the dropped nodes taught the gazetteer goes with them: a replaced document's
        // new text is read as a first import into the store without the old text would read
        // it, not with the old version's names still matching (the counts would drift).
        self.unname(named)?;
        Ok(leaves)
    }

    /// Of the entities in `named`, those a detach just deleted (no node names them any more),
    /// in id order; their names leave the gazetteer, as a reload from the store would not
    /// find them.
    fn unname(&mut self, named: BTreeSet<EntityId>) -> Result<Vec<EntityId>> {
        let mut gone = Vec::new();
        for e in named {
            if self.tx.entity(e.as_str())?.is_none() {
                self.ctx.gazetteer.remove_row(&e);
                gone.push(e);
            }
        }
        Ok(gone)
    }

    /// Record a source's content hash (a Markdown note's, for the next sync).
    pub fn set_source_hash(&mut self, source: &SourceId, hash: &str) -> Result<()> {
        self.tx.set_source_hash(source, hash)
    }

    /// Record a source's row (kind, provider, title), creating its tree when new.
    pub fn upsert_source(&mut self, src: &SourceRow) -> Result<()> {
        self.tx.upsert_source(src, self.ctx.now_ms)?;
        Ok(())
    }

    fn stats(&mut self, tree: &TreeId, level: u32) -> Result<BufferStats> {
        if let Some(s) = self.buffers.get(&(tree.clone(), level)) {
            return Ok(*s);
        }
        let s = self.tx.buffer_stats(tree, level)?;
        self.buffers.insert((tree.clone(), level), s);
        Ok(s)
    }

    fn seq(&mut self, tree: &TreeId) -> Result<i64> {
        let next = match self.next_seq.get(tree) {
            Some(n) => *n,
            None => self.tx.max_seq(tree)? + 1,
        };
        self.next_seq.insert(tree.clone(), next + 1);
        Ok(next)
    }

    /// Append one leaf, skipping it when the same content is already stored or a forget holds
    /// it back; says which (an import counts its records by it).
    pub fn append_leaf(&mut self, d: LeafDraft) -> Result<Appended> {
        crate::crash::point("leaf_appended");
        // A forget holds: what the user forgot is not written again (issue 32).
        if self.held_back(&d)? {
            self.report.forgotten += 1;
            return Ok(Appended::Forgotten);
        }
        if !self.seen.insert(d.node_id.clone()) || self.tx.node_exists(&d.node_id)? {
            self.sources.insert(d.source_id.clone());
            self.report.duplicates += 1;
            return Ok(Appended::Duplicate);
        }
        // One source upsert per source and batch.
        let tree = TreeId::for_source(&d.source_id);
        if self.sources.insert(d.source_id.clone()) || !self.trees.contains_key(&tree) {
            let src = SourceRow {
                source_id: d.source_id.clone(),
                source_kind: d.source_kind,
                provider: None,
                title: d.title.clone(),
            };
            self.tx.upsert_source(&src, self.ctx.now_ms)?;
        }
        let tree_row = self.tree_row(&tree)?;
        // Content clock: an item more than the flush age after the buffer's oldest seals the
        // buffer first, so a historical import seals what a live stream would have.
        let st = self.stats(&tree, 0)?;
        if st.count > 0 && d.ts_ms > st.oldest_content_ms.saturating_add(self.ctx.cfg.flush_age_ms) {
            self.seal(&tree, 0)?;
        }
        let tokens = crate::config::approx_tokens(&d.content) as u64;
        let instruction = crate::text::leaf_holds_instruction(&d.content, d.author.as_deref());
        let seq = self.seq(&tree)?;
        let row = NodeRow {
            node_id: d.node_id.clone(),
            tree_id: tree.clone(),
            level: 0,
            seq,
            content: d.content,
            author: d.author,
            participants: d.participants,
            tags: d.tags,
            source_ref: d.source_ref,
            time_start_ms: d.ts_ms,
            time_end_ms: d.ts_ms,
            tokens,
            parent_id: None,
            child_ids: Vec::new(),
            flags: (if d.split { NodeRow::FLAG_SPLIT } else { 0 })
                | (if d.role == Role::Assistant { NodeRow::FLAG_ASSISTANT } else { 0 })
                | (if d.role != Role::Assistant && instruction { NodeRow::FLAG_INSTRUCTION } else { 0 }),
            appended_ms: self.ctx.now_ms,
        };
        let key = self.tx.insert_node(&row)?;
        // A mail's entities are those of its own words: the people and things a reply quotes
        // are the quoted message's (`NodeRow::ranked_text`).
        let mentions = self.leaf_mentions(&row.ranked_text(tree_row.source_kind), &d.structured);
        self.tx.attach_entities(key, row.time_end_ms, &mentions)?;
        self.report.leaves += 1;
        let s = self.count_appended(&tree, 0, &row)?;
        self.remember(row, tree_row, entity_ids(&mentions), Vec::new());
        if s.tokens >= self.ctx.cfg.seal_token_budget {
            self.seal(&tree, 0)?;
        }
        Ok(Appended::Written)
    }

    fn leaf_mentions(&mut self, content: &str, structured: &[(crate::types::EntityKind, String)]) -> Vec<Mention> {
        let mut out: Vec<Mention> = structured
            .iter()
            .filter_map(|(kind, surface)| {
                canonical_id(*kind, surface).map(|id| Mention { id, kind: *kind, surface: surface.trim().to_string() })
            })
            .collect();
        // Structured names join the gazetteer first, so the text can mention them. In the
        // order they are attached (sorted; the text's own mentions are of other entities), so
        // that a new entity's names are those of the surface its row keeps.
        out.sort();
        for m in &out {
            self.ctx.gazetteer.add_row(m);
        }
        let found = self.ctx.extractor.extract(
            content,
            self.ctx.gazetteer.gazetteer(),
            ExtractOptions { case_insensitive: false, discover_names: true },
        );
        for m in found {
            if !out.iter().any(|o| o.id == m.id) {
                self.ctx.gazetteer.add_row(&m);
                out.push(m);
            }
        }
        out.sort();
        out
    }

    /// Seal every non-empty level-0 buffer of `tree`-level pairs given.
    pub fn seal_level0(&mut self, trees: &[TreeId]) -> Result<()> {
        for t in trees {
            self.seal(t, 0)?;
        }
        Ok(())
    }

    /// Seal the open buffer of `(tree, level)` into a summary at `level + 1`, cascading
    /// upwards when that level's buffer reaches the fan-out. An empty buffer is a no-op.
    pub fn seal(&mut self, tree: &TreeId, level: u32) -> Result<()> {
        let (child_keys, children): (Vec<NodeKey>, Vec<NodeRow>) =
            self.tx.buffer_keyed(tree, level)?.into_iter().unzip();
        if children.is_empty() {
            return Ok(());
        }
        crate::crash::point("seal");
        let seq = self.seq(tree)?;
        let (row, tree_row, entities, topics) = self.write_summary(tree, level, &child_keys, &children, seq)?;
        self.buffers.insert((tree.clone(), level), BufferStats::default());
        let up = self.count_appended(tree, level + 1, &row)?;
        self.remember(row, tree_row, entities, topics);
        if up.count >= self.ctx.cfg.fanout {
            self.seal(tree, level + 1)?;
        }
        Ok(())
    }

    /// Write the summary at `level + 1` over `children` (with their keys, in order) at `seq`:
    /// its text from the summariser, its envelope, tokens, entities (the children's union) and
    /// topics; the children name it as their parent. Returns the row, its tree, its entity ids
    /// and its topics (sorted, distinct), as [`WrittenNode`] holds them.
    fn write_summary(
        &mut self,
        tree: &TreeId,
        level: u32,
        child_keys: &[NodeKey],
        children: &[NodeRow],
        seq: i64,
    ) -> Result<(NodeRow, TreeRow, Vec<EntityId>, Vec<String>)> {
        let tree_row = self.tree_row(tree)?;
        let req = SummaryRequest {
            tree_scope: &tree_row.tree_scope,
            level: level + 1,
            children: children
                .iter()
                .map(|c| SummaryChild {
                    content: &c.content,
                    author: if level == 0 { c.author.as_deref() } else { None },
                })
                .collect(),
            max_tokens: self.ctx.cfg.summary_tokens,
        };
        let text = self.ctx.summariser.summarise(&req)?;
        let child_ids: Vec<NodeId> = children.iter().map(|c| c.node_id.clone()).collect();
        let mut parts: Vec<&[u8]> = vec![tree.0.as_bytes()];
        let lvl = (level + 1).to_le_bytes();
        parts.push(&lvl);
        parts.extend(child_ids.iter().map(|c| c.0.as_bytes()));
        let id = NodeId::derive('S', &parts);
        let row = NodeRow {
            node_id: id.clone(),
            tree_id: tree.clone(),
            level: level + 1,
            seq,
            content: text,
            author: None,
            participants: Vec::new(),
            tags: Vec::new(),
            source_ref: None,
            time_start_ms: children.iter().map(|c| c.time_start_ms).min().unwrap_or(0),
            time_end_ms: children.iter().map(|c| c.time_end_ms).max().unwrap_or(0),
            tokens: children.iter().map(|c| c.tokens).sum(),
            parent_id: None,
            child_ids,
            flags: 0,
            appended_ms: self.ctx.now_ms,
        };
        let key = self.tx.insert_node(&row)?;
        self.tx.set_parent(child_keys, &id)?;
        // A summary's entities are the union of its children's.
        let entities = self.tx.attach_union(key, child_keys)?;
        let mut topics = topics_of(children.iter().map(|c| c.content.as_str()), TOPICS_PER_SUMMARY);
        self.tx.insert_topics(&id, &topics)?;
        self.report.summaries += 1;
        topics.sort();
        topics.dedup();
        Ok((row, tree_row, entities, topics))
    }

    /// The tree's row, cached for the batch.
    fn tree_row(&mut self, tree: &TreeId) -> Result<TreeRow> {
        if let Some(t) = self.trees.get(tree) {
            return Ok(t.clone());
        }
        let t = self
            .tx
            .tree(tree)?
            .ok_or_else(|| Error::Corrupt { what: format!("trees[{tree}]"), reason: "buffer without a tree".into() })?;
        self.trees.insert(tree.clone(), t.clone());
        Ok(t)
    }

    /// Account for `row`, just inserted into the buffer of `(tree, level)`: bump the cached
    /// stats, or load them from the store (which already holds the row).
    fn count_appended(&mut self, tree: &TreeId, level: u32, row: &NodeRow) -> Result<BufferStats> {
        let key = (tree.clone(), level);
        if let Some(s) = self.buffers.get_mut(&key) {
            if s.count == 0 {
                s.oldest_content_ms = row.time_start_ms;
                s.oldest_appended_ms = row.appended_ms;
            } else {
                s.oldest_content_ms = s.oldest_content_ms.min(row.time_start_ms);
                s.oldest_appended_ms = s.oldest_appended_ms.min(row.appended_ms);
            }
            s.count += 1;
            s.tokens += row.tokens;
            return Ok(*s);
        }
        let s = self.tx.buffer_stats(tree, level)?;
        self.buffers.insert(key, s);
        Ok(s)
    }
}

/// The distinct entity ids of `mentions`, sorted: what the store's `node_entities` holds for
/// the node (`attach_entities` ignores a repeated mention).
fn entity_ids(mentions: &[Mention]) -> Vec<EntityId> {
    let mut ids: Vec<EntityId> = mentions.iter().map(|m| m.id.clone()).collect();
    ids.sort();
    ids.dedup();
    ids
}
