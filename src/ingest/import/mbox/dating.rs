//! A mail's date, chosen among the clocks it carries in the order of trust README's "Mail
//! dates" states: its `Date:` header, unless the receiving servers' `Received:` stamps put it
//! years away; else its mbox `From ` line, unless a `Received:` stamp or the message it replies
//! to puts it years away (or the file's `From ` lines disagree with most of their messages);
//! else the `Received:` stamp; the message it replies to; the message before it. A clock that
//! disagrees by years with another is never taken without a warning naming both.

use super::split::LineErr;

/// More apart than this, two clocks of one mail disagree (a converter's or a broken machine's
/// clock), not a slow relay or a time zone.
const YEAR_MS: i64 = 365 * 24 * 3600 * 1000;

/// What a message's `Date:` header gave.
pub(super) enum HeaderDate {
    /// A readable date.
    Good(i64),
    /// No `Date:` header.
    Missing,
    /// An empty or unreadable one: its line and what was wrong (`empty Date header`).
    Bad { line: usize, why: String },
}

/// The clocks one message carries.
pub(super) struct Clocks {
    /// The `From ` separator's line.
    pub start: usize,
    pub header: HeaderDate,
    /// The last `Received:` header's date (the first hop: the nearest to when it was sent).
    pub received: Option<i64>,
    /// The `From ` separator line's date: the delivery time, or a converter's clock.
    pub separator: Option<i64>,
}

/// What else the mailbox tells of a message's time.
pub(super) struct Around {
    /// The date of the message it replies to, when that was read before it.
    pub parent: Option<i64>,
    /// The date of the message before it in the file.
    pub prev: Option<i64>,
}

/// A date and the clock it came from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum By {
    Header,
    Received,
    Separator,
    Parent,
    Previous,
}

/// `ms` as `2009-11-22 00:11` (UTC), for warnings.
pub(super) fn day(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map_or_else(|| ms.to_string(), |d| d.format("%Y-%m-%d %H:%M").to_string())
}

/// Whether two clocks disagree by years.
pub(super) fn disagree(a: i64, b: i64) -> bool {
    a.abs_diff(b) > YEAR_MS as u64
}

/// The message's date and its clock; each date taken from a fallback or against a
/// disagreeing clock is named in `notes`. No date at all is the error.
pub(super) fn decide(c: &Clocks, around: &Around, notes: &mut Vec<LineErr>) -> Result<(i64, By), LineErr> {
    let why = match &c.header {
        HeaderDate::Good(d) => {
            if let Some(r) = c.received.filter(|r| disagree(*d, *r)) {
                // The writer's clock against the servers': the servers keep time.
                notes.push((
                    c.start,
                    format!(
                        "its Date header ({}) and its last Received header ({}) disagree by years: dated by the Received header",
                        day(*d),
                        day(r)
                    ),
                ));
                return Ok((r, By::Received));
            }
            if let Some(p) = around.parent.filter(|p| disagree(*d, *p)) {
                notes.push((
                    c.start,
                    format!(
                        "its Date header ({}) is years from the message it replies to ({}): kept, as no server's clock says otherwise",
                        day(*d),
                        day(p)
                    ),
                ));
            }
            return Ok((*d, By::Header));
        }
        HeaderDate::Missing => None,
        HeaderDate::Bad { line, why } => Some((*line, why.as_str())),
    };
    let (line, reason) = why.unwrap_or((c.start, NO_DATE_HEADER));
    let taken = |ms: i64, by: By, from: &str, notes: &mut Vec<LineErr>| {
        notes.push((line, format!("{reason}: dated by {from}")));
        (ms, by)
    };
    // The `From ` line first (mbox's own date, the delivery time), unless a server's stamp or
    // the message it replies to puts the mail years away from it.
    let mut against = String::new();
    if let Some(s) = c.separator {
        match c.received.or(around.parent).filter(|t| disagree(s, *t)) {
            Some(_) => against = format!(", not its `From ` line's ({}), years apart", day(s)),
            // Said only when a `Date:` was there and could not be read: a message without one
            // dated by its `From ` line is how mbox has always been read.
            None if why.is_none() => return Ok((s, By::Separator)),
            None => return Ok(taken(s, By::Separator, SEPARATOR_NOTE, notes)),
        }
    }
    if let Some(r) = c.received {
        let from = format!("its last Received header's date{against}");
        return Ok(taken(r, By::Received, &from, notes));
    }
    if let Some(p) = around.parent {
        let from = format!("the date of the message it replies to ({}){against}", day(p));
        return Ok(taken(p, By::Parent, &from, notes));
    }
    if let Some(p) = around.prev {
        return Ok(taken(p, By::Previous, "the time of the message before it", notes));
    }
    Err((
        c.start,
        format!("{reason}, no date on its `From ` line or in a Received header, and no message before it: skipped"),
    ))
}

/// How a warning names a date taken from the `From ` line.
pub(super) const SEPARATOR_NOTE: &str = "its `From ` line's date";

/// Why a message without a `Date:` header is dated by a fallback.
const NO_DATE_HEADER: &str = "no Date header";

/// `From ` lines checked against their messages' `Date:` headers in one mailbox: when most
/// disagree by years (a converter wrote its own clock there), none dates a message.
#[derive(Default)]
pub(super) struct SeparatorTrust {
    checked: u64,
    wrong: u64,
}

impl SeparatorTrust {
    /// Note one message's clocks.
    pub fn check(&mut self, c: &Clocks) {
        if let (HeaderDate::Good(d), Some(s)) = (&c.header, c.separator) {
            self.checked += 1;
            self.wrong += u64::from(disagree(*d, s));
        }
    }

    /// `Some((wrong, checked))` when this file's `From ` lines are not to be trusted.
    pub fn distrusted(&self) -> Option<(u64, u64)> {
        (self.wrong > 0 && self.wrong * 2 > self.checked).then_some((self.wrong, self.checked))
    }
}
