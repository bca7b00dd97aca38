//! A question as the date reader sees it: lower-case words, numbers (with their ordinal
//! suffix and digit count, so "13th" and "2023" are told apart) and dates written in digits
//! kept whole (`2023-05-13`, `03.05.2018` would otherwise read as three numbers), read by the
//! rule of `numeric`.

use super::numeric::{NUMERIC_RUN, Numeric, classify};
use chrono::NaiveDate;
use regex::Regex;
use std::sync::LazyLock;

/// One token of a question.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    /// A lower-case word ("last", "may", "weeks").
    Word(String),
    /// A number written in digits: "13", "13th", "2023".
    Num {
        /// Its value.
        n: u32,
        /// Written with `st`/`nd`/`rd`/`th`.
        ordinal: bool,
        /// How many digits it was written with (a year has four).
        digits: usize,
    },
    /// A date written in digits (`2023-05-13`, `13.05.2023`, `05/13/2023`).
    Iso(NaiveDate),
    /// Written in digits as a date no calendar has (`2018-06-31`), as written.
    Impossible(String),
    /// A bracket, colon or semicolon: what stands on either side of it is not one
    /// expression ("Phase 3 (July 2 …" is no 3 July, "Month 1 (September)" no 1 September).
    Break,
}

static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"({NUMERIC_RUN})|(\d+)(st|nd|rd|th)?\b|\p{{Alphabetic}}+|[()\[\]:;]")).expect("valid regex")
});

/// A number token as written ("13", "2023"); `None` when too long for a day, a count or a
/// year (no time expression).
fn number(digits: &str, ordinal: bool) -> Option<Tok> {
    Some(Tok::Num { n: digits.parse::<u32>().ok()?, ordinal, digits: digits.len() })
}

/// The tokens of `text`, in order; punctuation separates and is dropped, but for brackets,
/// colons and semicolons, which are kept as [`Tok::Break`].
pub(super) fn tokens(text: &str) -> Vec<Tok> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    for c in TOKEN.captures_iter(&lower) {
        if let Some(run) = c.get(1) {
            match classify(run.as_str()) {
                Numeric::Date { date, .. } => out.push(Tok::Iso(date)),
                Numeric::Impossible => out.push(Tok::Impossible(run.as_str().to_string())),
                // Said by `numeric::notes`; its numbers name no time of their own.
                Numeric::Unread(_) => {}
                // "3-4", "1.5": the numbers, as before runs were read whole.
                Numeric::NotDate => out.extend(run.as_str().split(['-', '/', '.']).filter_map(|d| number(d, false))),
            }
        } else if let Some(n) = c.get(2) {
            out.extend(number(n.as_str(), c.get(3).is_some()));
        } else if c[0].starts_with(|ch: char| ch.is_alphabetic()) {
            out.push(Tok::Word(c[0].to_string()));
        } else {
            out.push(Tok::Break);
        }
    }
    out
}

impl Tok {
    /// The word, if this is one.
    pub(super) fn word(&self) -> Option<&str> {
        match self {
            Tok::Word(w) => Some(w),
            _ => None,
        }
    }

    /// A year: four digits, 1900–2200, no ordinal suffix.
    pub(super) fn year(&self) -> Option<i32> {
        match *self {
            Tok::Num { n, ordinal: false, digits: 4 } if (1900..=2200).contains(&n) => i32::try_from(n).ok(),
            _ => None,
        }
    }

    /// A day of the month: 1–31 in one or two digits ("13", "13th"; ordinal words too).
    pub(super) fn day(&self) -> Option<u32> {
        let n = match self {
            Tok::Num { n, digits: 1 | 2, .. } => *n,
            Tok::Word(w) => ordinal_word(w)?,
            _ => return None,
        };
        (1..=31).contains(&n).then_some(n)
    }

    /// True for a day written as an ordinal ("13th", "first").
    pub(super) fn is_ordinal(&self) -> bool {
        match self {
            Tok::Num { ordinal, .. } => *ordinal,
            Tok::Word(w) => ordinal_word(w).is_some(),
            Tok::Iso(_) | Tok::Impossible(_) | Tok::Break => false,
        }
    }

    /// A count: digits ("3") or a number word ("three", "a", "a couple", "few").
    pub(super) fn count(&self) -> Option<u32> {
        match self {
            Tok::Num { n, ordinal: false, digits: 1..=3 } => Some(*n),
            Tok::Word(w) => count_word(w),
            _ => None,
        }
    }
}

/// Spelled-out counts a question uses for spans of time.
fn count_word(w: &str) -> Option<u32> {
    const WORDS: [&str; 13] =
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];
    if let Some(n) = WORDS.iter().position(|x| *x == w) {
        return u32::try_from(n).ok();
    }
    match w {
        "a" | "an" => Some(1),
        "couple" => Some(2),
        "few" => Some(3),
        "fifteen" => Some(15),
        "twenty" => Some(20),
        "thirty" => Some(30),
        _ => None,
    }
}

/// "first" … "thirty-first" as far as a question spells them ("the first of May").
fn ordinal_word(w: &str) -> Option<u32> {
    const WORDS: [&str; 12] = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
        "twelfth",
    ];
    WORDS.iter().position(|x| *x == w).and_then(|n| u32::try_from(n + 1).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_numbers_and_words_are_told_apart() {
        let t = tokens("On May 13th, 2023-05-13 (not 2023-13-45): 3 days");
        assert_eq!(t[6], Tok::Impossible("2023-13-45".into()));
        assert_eq!((t[4].clone(), t[7].clone(), t[8].clone()), (Tok::Break, Tok::Break, Tok::Break));
        let t: Vec<Tok> = t.into_iter().filter(|t| !matches!(t, Tok::Impossible(_) | Tok::Break)).collect();
        assert_eq!(t[0], Tok::Word("on".into()));
        assert_eq!(t[2], Tok::Num { n: 13, ordinal: true, digits: 2 });
        assert_eq!(t[3], Tok::Iso(NaiveDate::from_ymd_opt(2023, 5, 13).unwrap()));
        assert_eq!(t[4], Tok::Word("not".into()));
        assert_eq!(t[5], Tok::Num { n: 3, ordinal: false, digits: 1 });
        assert_eq!(t[2].day(), Some(13));
        assert_eq!(Tok::Num { n: 2023, ordinal: false, digits: 4 }.year(), Some(2023));
        assert_eq!(Tok::Word("two".into()).count(), Some(2));
    }
}
