//! The node ids of each index segment, read once from its `node_id` column, and the cache
//! of them an index handle shares with its clones: searches map candidate ids to docs and
//! hit docs to ids through these maps, never through stored documents.

use crate::error::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tantivy::columnar::Cardinality;
use tantivy::index::SegmentId;
use tantivy::{DocId, SegmentReader};

/// An index that does not hold what its schema promises.
pub(super) fn corrupt(reason: String) -> crate::error::Error {
    crate::error::Error::Corrupt { what: "full-text index".into(), reason }
}

/// An I/O error of the index files, as an index error.
fn io(e: std::io::Error) -> crate::error::Error {
    tantivy::TantivyError::from(e).into()
}

/// Node ids of one segment, read once from its `node_id` column. Searches map candidate ids
/// to docs and hit docs to ids through it, with no dictionary lookup or stored-document read
/// per id: the column's dictionary is zstd-compressed blocks, and decoding them once per
/// segment instead of once per query is most of the saving.
pub(super) struct SegmentNodeIds {
    /// Every node id of the segment, sorted (the column's dictionary, in ordinal order),
    /// concatenated; id `t` is `text[bounds[t]..bounds[t + 1]]`.
    text: String,
    bounds: Vec<u32>,
    /// Per id, its first eight bytes as a big-endian number (zero-padded): comparing these
    /// first orders ids as their text does, and settles almost every comparison of random
    /// hex ids without touching the text.
    heads: Vec<u64>,
    /// Per doc, the ordinal of its id (`u32::MAX` for a doc without one).
    by_doc: Vec<u32>,
    /// Per ordinal, its docs (deleted ones included), ascending: `docs[starts[t]..starts[t + 1]]`.
    starts: Vec<u32>,
    docs: Vec<DocId>,
}

impl SegmentNodeIds {
    /// Read the `node_id` column of a segment.
    fn build(reader: &SegmentReader, field_name: &str) -> Result<SegmentNodeIds> {
        let col = reader.fast_fields().str(field_name)?.ok_or_else(|| {
            corrupt(format!("segment {} has no `{field_name}` column", reader.segment_id().short_uuid_string()))
        })?;
        let dict = col.dictionary();
        let mut text = String::new();
        let mut bounds = vec![0u32];
        let mut stream = dict.stream().map_err(io)?;
        while stream.advance() {
            if stream.term_ord() as usize + 1 != bounds.len() {
                return Err(corrupt(format!("`{field_name}` dictionary out of order")));
            }
            text.push_str(&String::from_utf8_lossy(stream.key()));
            bounds.push(text.len() as u32);
        }
        let num_terms = bounds.len() - 1;
        let max_doc = reader.max_doc();
        let mut by_doc = vec![u32::MAX; max_doc as usize];
        let ords = col.ords();
        if ords.get_cardinality() == Cardinality::Full {
            // One value per doc: decode the column in blocks.
            let mut buf = vec![0u64; 1024];
            let mut start: DocId = 0;
            while start < max_doc {
                let n = (max_doc - start).min(buf.len() as DocId) as usize;
                ords.values.get_range(u64::from(start), &mut buf[..n]);
                for (k, &ord) in buf[..n].iter().enumerate() {
                    by_doc[start as usize + k] = ord as u32;
                }
                start += n as DocId;
            }
        } else {
            for doc in 0..max_doc {
                if let Some(ord) = col.term_ords(doc).next() {
                    by_doc[doc as usize] = ord as u32;
                }
            }
        }
        // Docs per ordinal by a counting sort (docs come out ascending).
        let mut starts = vec![0u32; num_terms + 1];
        for &t in &by_doc {
            if let Some(c) = starts.get_mut(t as usize + 1) {
                *c += 1;
            }
        }
        for t in 0..num_terms {
            starts[t + 1] += starts[t];
        }
        let mut next: Vec<u32> = starts[..num_terms].to_vec();
        let mut docs = vec![0 as DocId; starts[num_terms] as usize];
        for (doc, &t) in by_doc.iter().enumerate() {
            if let Some(n) = next.get_mut(t as usize) {
                docs[*n as usize] = doc as DocId;
                *n += 1;
            }
        }
        let heads = (0..num_terms).map(|t| head(&text[bounds[t] as usize..bounds[t + 1] as usize])).collect();
        Ok(SegmentNodeIds { text, bounds, heads, by_doc, starts, docs })
    }

    fn term(&self, t: usize) -> &str {
        &self.text[self.bounds[t] as usize..self.bounds[t + 1] as usize]
    }

    fn num_terms(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The id of a doc.
    pub(super) fn id_of(&self, doc: DocId) -> Option<&str> {
        let t = *self.by_doc.get(doc as usize)?;
        (t != u32::MAX).then(|| self.term(t as usize))
    }

    /// Order of id `t` against `id` (whose head is `h`).
    fn cmp_term(&self, t: usize, id: &str, h: u64) -> std::cmp::Ordering {
        self.heads[t].cmp(&h).then_with(|| self.term(t).cmp(id))
    }

    /// For each of `ids` (sorted, unique) present in the segment, `f(index in ids, its docs)`,
    /// in id order: a merge when the ids are many, a binary search each when few.
    pub(super) fn find_sorted(&self, ids: &[&str], mut f: impl FnMut(usize, &[DocId])) {
        let n = self.num_terms();
        let docs_of = |t: usize| &self.docs[self.starts[t] as usize..self.starts[t + 1] as usize];
        if ids.len().saturating_mul(16) < n {
            for (j, id) in ids.iter().enumerate() {
                let h = head(id);
                let (mut lo, mut hi) = (0, n);
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if self.cmp_term(mid, id, h).is_lt() {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                if lo < n && self.cmp_term(lo, id, h).is_eq() {
                    f(j, docs_of(lo));
                }
            }
            return;
        }
        let (mut j, mut t) = (0, 0);
        let mut h = ids.first().map_or(0, |id| head(id));
        while j < ids.len() && t < n {
            match self.cmp_term(t, ids[j], h) {
                std::cmp::Ordering::Less => t += 1,
                std::cmp::Ordering::Greater => {
                    j += 1;
                    h = ids.get(j).map_or(0, |id| head(id));
                }
                std::cmp::Ordering::Equal => {
                    f(j, docs_of(t));
                    t += 1;
                    j += 1;
                    h = ids.get(j).map_or(0, |id| head(id));
                }
            }
        }
    }

    /// Docs covered (its size is about 60 bytes per doc), for the cache's budget.
    fn docs_held(&self) -> usize {
        self.by_doc.len()
    }
}

/// The first eight bytes of `s` as a big-endian number, zero-padded.
fn head(s: &str) -> u64 {
    let mut b = [0u8; 8];
    let n = s.len().min(8);
    b[..n].copy_from_slice(&s.as_bytes()[..n]);
    u64::from_be_bytes(b)
}

/// The [`SegmentNodeIds`] of an index's segments, keyed by segment id. One per index handle,
/// shared by its clones (the writer's handle and every reader of it, in every thread), so a
/// map is built once per segment whoever searches first. Segments never change (deletes only
/// mark docs), so an entry is valid as long as its segment exists and a reload needs no
/// invalidation; entries of segments no searcher uses any more (merged away, the index
/// rebuilt) are evicted, least recently used first, once the cache holds more than twice the
/// docs of the searcher at hand (and at least a million).
#[derive(Clone, Default)]
pub(super) struct NodeIdCache(Arc<Mutex<Cache>>);

struct Entry {
    map: Arc<SegmentNodeIds>,
    last_used: u64,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<SegmentId, Entry>,
    clock: u64,
}

const MIN_BUDGET_DOCS: usize = 1_000_000;

impl NodeIdCache {
    /// The map of `reader`'s segment, built if absent. `live`: the segments of the searcher
    /// asking (never evicted by this call).
    pub(super) fn get(
        &self,
        reader: &SegmentReader,
        field_name: &str,
        live: Vec<SegmentId>,
    ) -> Result<Arc<SegmentNodeIds>> {
        let id = reader.segment_id();
        {
            // A panic elsewhere while holding the lock leaves a usable cache: take it anyway.
            let mut cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
            cache.clock += 1;
            let now = cache.clock;
            if let Some(e) = cache.entries.get_mut(&id) {
                e.last_used = now;
                return Ok(e.map.clone());
            }
        }
        // Built outside the lock: two threads may build the same map; both are identical.
        let map = Arc::new(SegmentNodeIds::build(reader, field_name)?);
        let mut cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
        cache.clock += 1;
        let now = cache.clock;
        cache.entries.insert(id, Entry { map: map.clone(), last_used: now });
        let live_docs: usize = live.iter().filter_map(|s| cache.entries.get(s)).map(|e| e.map.docs_held()).sum();
        let budget = (2 * live_docs).max(MIN_BUDGET_DOCS);
        let mut held: usize = cache.entries.values().map(|e| e.map.docs_held()).sum();
        if held > budget {
            let mut old: Vec<(u64, SegmentId, usize)> = cache
                .entries
                .iter()
                .filter(|(s, _)| !live.contains(s))
                .map(|(s, e)| (e.last_used, *s, e.map.docs_held()))
                .collect();
            old.sort_unstable_by_key(|o| o.0);
            for (_, s, n) in old {
                if held <= budget {
                    break;
                }
                cache.entries.remove(&s);
                held -= n;
            }
        }
        Ok(map)
    }
}
