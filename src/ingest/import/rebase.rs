//! Moving a parsed input in time before it is written: a loader that re-bases a fixed
//! corpus (the REPL's demo ends at load time, so "last week" means something on it) reads
//! the newest time and shifts every time by the same amount.

use super::Parsed;
use crate::ingest::Item;

impl Parsed {
    /// The newest content time in the input (epoch ms): messages, e-mails, turns, and the
    /// documents that carry a time. `None` when nothing carries one.
    pub fn latest_ms(&self) -> Option<i64> {
        match self {
            Parsed::Items { items, .. } => items.iter().map(item_time).max(),
            Parsed::Conversations(convs) => convs.iter().flat_map(|c| c.turns.iter().map(|t| t.ts_ms)).max(),
            Parsed::Documents(docs) => docs.iter().filter_map(|d| d.modified_ms).max(),
        }
    }

    /// Every content time moved by `delta_ms` (either way; saturating at the ends of `i64`,
    /// where the write's own validation then refuses the time). A document without a time
    /// stays without one: it is dated when written.
    pub fn shift_time(&mut self, delta_ms: i64) {
        let shift = |t: &mut i64| *t = t.saturating_add(delta_ms);
        match self {
            Parsed::Items { items, .. } => items.iter_mut().for_each(|i| match i {
                Item::Chat(m) => shift(&mut m.ts_ms),
                Item::Email(m) => shift(&mut m.date_ms),
            }),
            Parsed::Conversations(convs) => {
                convs.iter_mut().flat_map(|c| c.turns.iter_mut()).for_each(|t| shift(&mut t.ts_ms));
            }
            Parsed::Documents(docs) => docs.iter_mut().filter_map(|d| d.modified_ms.as_mut()).for_each(shift),
        }
    }
}

fn item_time(i: &Item) -> i64 {
    match i {
        Item::Chat(m) => m.ts_ms,
        Item::Email(m) => m.date_ms,
    }
}
