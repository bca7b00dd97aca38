//! A bound on the text waiting in tantivy's queue for its indexing thread. `add_document`
//! only queues a document (tantivy's queue takes 10,000), and a write reads its nodes back
//! far faster than one thread indexes them: a 50 MB message's 10,169 leaves were all queued
//! at once, 102 MB of documents (issue 28). Each document carries a ticket for its text's
//! bytes, given back when the indexing thread drops the document, and a writer waits for
//! tickets before it queues more than [`QUEUED_BYTES`].

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tantivy::{Document, TantivyDocument};

/// Text bytes queued for indexing at most (one document more may pass the bound: a
/// document larger than it is queued alone).
const QUEUED_BYTES: usize = 4 << 20;

/// The longest a writer waits for the indexing thread to take documents. Pacing is only a
/// memory bound: an indexing thread that died never gives tickets back, and the writer must
/// then reach tantivy's own error instead of waiting for ever.
const STALL: Duration = Duration::from_secs(10);

/// A document with its ticket.
pub(super) struct PacedDoc {
    doc: TantivyDocument,
    _ticket: Ticket,
}

impl Document for PacedDoc {
    type Value<'a> = <TantivyDocument as Document>::Value<'a>;
    type FieldsValuesIter<'a> = <TantivyDocument as Document>::FieldsValuesIter<'a>;

    fn iter_fields_and_values(&self) -> Self::FieldsValuesIter<'_> {
        self.doc.iter_fields_and_values()
    }
}

/// The bytes of text queued by one index writer.
#[derive(Clone, Default)]
pub(super) struct Pacer(Arc<(Mutex<usize>, Condvar)>);

impl Pacer {
    /// `doc`, holding `bytes` of text, with its ticket: once fewer than [`QUEUED_BYTES`] are
    /// queued (or after [`STALL`]).
    pub(super) fn pace(&self, doc: TantivyDocument, bytes: usize) -> PacedDoc {
        let (queued, taken) = &*self.0;
        let mut q = queued.lock().unwrap_or_else(PoisonError::into_inner);
        let deadline = Instant::now() + STALL;
        while *q > 0 && *q + bytes > QUEUED_BYTES {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            q = taken.wait_timeout(q, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        *q += bytes;
        PacedDoc { doc, _ticket: Ticket { pacer: self.clone(), bytes } }
    }

    /// Bytes queued now (for tests).
    #[cfg(test)]
    fn queued(&self) -> usize {
        *self.0.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A queued document's bytes, given back when it is dropped.
struct Ticket {
    pacer: Pacer,
    bytes: usize,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let (queued, taken) = &*self.pacer.0;
        let mut q = queued.lock().unwrap_or_else(PoisonError::into_inner);
        *q = q.saturating_sub(self.bytes);
        taken.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_given_back_when_documents_drop() {
        let p = Pacer::default();
        let a = p.pace(TantivyDocument::default(), 1000);
        let b = p.pace(TantivyDocument::default(), 500);
        assert_eq!(p.queued(), 1500);
        drop(a);
        assert_eq!(p.queued(), 500);
        drop(b);
        assert_eq!(p.queued(), 0);
    }

    #[test]
    fn a_full_queue_waits_for_the_indexing_thread() {
        let p = Pacer::default();
        let big = p.pace(TantivyDocument::default(), QUEUED_BYTES);
        let (tx, rx) = std::sync::mpsc::channel();
        let p2 = p.clone();
        let waiter = std::thread::spawn(move || {
            let d = p2.pace(TantivyDocument::default(), 10);
            tx.send(()).unwrap();
            d
        });
        // Still waiting while the big document is queued.
        assert!(rx.recv_timeout(Duration::from_millis(200)).is_err());
        drop(big);
        rx.recv_timeout(Duration::from_secs(5)).expect("queued once the first was taken");
        drop(waiter.join().unwrap());
        assert_eq!(p.queued(), 0);
    }

    #[test]
    fn a_document_larger_than_the_bound_passes_alone() {
        let p = Pacer::default();
        let huge = p.pace(TantivyDocument::default(), QUEUED_BYTES * 3);
        assert_eq!(p.queued(), QUEUED_BYTES * 3);
        drop(huge);
    }
}
