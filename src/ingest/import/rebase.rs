//! Moving a parsed input in time before it is written: a loader that re-bases a fixed
//! corpus (the REPL's demo, so that "last week" means something on it) reads the newest time
//! and shifts every time by the same amount ([`last_week_shift`]: whole weeks, so the
//! weekdays the text names stay true).

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

const DAY_MS: i64 = 86_400_000;
const WEEK_MS: i64 = 7 * DAY_MS;

/// The shift, in whole weeks, that makes the Monday-to-Sunday week holding `newest_ms` the
/// week before the one holding `now_ms` (UTC). A corpus moved by it ends in last week, so
/// everything in it is past, "last week" asks about its final week, and "on Friday" or "last
/// Tuesday" in its text still fall on a Friday or a Tuesday: a shift by whole days would
/// keep the times of day but move every weekday. A corpus already ending this week, before
/// now, is not moved (0).
pub fn last_week_shift(newest_ms: i64, now_ms: i64) -> i64 {
    // 1970-01-01 was a Thursday: Monday-based weeks start 3 days later than the epoch's.
    let monday = |ms: i64| (ms - 4 * DAY_MS).div_euclid(WEEK_MS) * WEEK_MS + 4 * DAY_MS;
    let shift = monday(now_ms) - WEEK_MS - monday(newest_ms);
    // A corpus whose final week is this week and whose newest item is past (the clock set to
    // the story's own last day) stays where it is.
    if shift == -WEEK_MS && newest_ms <= now_ms { 0 } else { shift }
}

fn item_time(i: &Item) -> i64 {
    match i {
        Item::Chat(m) => m.ts_ms,
        Item::Email(m) => m.date_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_final_week_becomes_last_week_weekdays_kept() {
        // Friday 26 May 2023 09:12 UTC; now Monday 11 March 2024 and Sunday 17 March 2024.
        let newest = 1_685_092_320_000;
        for now in [1_710_115_200_000 + 3_600_000, 1_710_633_600_000 + 80_000_000] {
            let shift = last_week_shift(newest, now);
            assert_eq!(shift % WEEK_MS, 0);
            // Lands on Friday 8 March 2024, same time of day.
            assert_eq!(newest + shift, 1_709_889_120_000);
        }
        // The clock at the story's own last day: no shift.
        assert_eq!(last_week_shift(newest, 1_685_145_599_999), 0);
        // A Sunday's content moves to last week's Sunday, before now.
        let sunday = 1_685_232_000_000; // Sunday 28 May 2023 00:00
        let monday_now = 1_710_115_200_000; // Monday 11 March 2024 00:00
        let moved = sunday + last_week_shift(sunday, monday_now);
        assert!(moved < monday_now && monday_now - moved <= DAY_MS);
    }
}
