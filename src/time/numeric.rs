//! Dates written in digits, read by one rule (SPEC §5.1): four digits first is year, month,
//! day whatever the separator (`2018-05-03`, `2018/05/03`, `2018.05.03`); with the year last,
//! dots are day.month.year (`03.05.2018`, as in most of Europe) and slashes month/day/year
//! (`05/03/2018`, as in the US). The rule's reading is stated when the other order is a date
//! too (`03.05.2018` could be 5 March), and the other order is taken, stated, when the rule's
//! is no date (`13/05/2018`). A day no calendar has (`2018-06-31`) is named, not guessed;
//! a form the rule does not read (a two-digit year, dashes with the year last) is stated.

use chrono::NaiveDate;
use regex::Regex;
use std::sync::LazyLock;

/// Digits joined by `-`, `/` or `.`: a date written in digits, or something else in digits
/// (the tokenizer reads such a run whole).
pub(super) const NUMERIC_RUN: &str = r"\d+(?:[./\-]\d+)+";

static RUN: LazyLock<Regex> = LazyLock::new(|| Regex::new(NUMERIC_RUN).expect("valid regex"));

/// The runs of digits joined by `-`, `/` or `.` in `text`, as the tokenizer finds them.
pub(super) fn numeric_runs(text: &str) -> impl Iterator<Item = &str> {
    RUN.find_iter(text).map(|m| m.as_str())
}

/// What a run of digits and separators is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Numeric {
    /// A day, and what the rule had to decide when the text did not say it.
    Date { date: NaiveDate, note: Option<String> },
    /// Written as a date, but no calendar has that day (`2018-06-31`).
    Impossible,
    /// Looks like a date but is not read, and why.
    Unread(&'static str),
    /// Not a date at all (an address, a version with four parts, "3-4").
    NotDate,
}

/// The parts of `text` split on its one separator (`-`, `/` or `.`), if it uses only one.
fn parts(text: &str) -> Option<(char, Vec<&str>)> {
    let sep = text.chars().find(|c| matches!(c, '-' | '/' | '.'))?;
    let parts: Vec<&str> = text.split(sep).collect();
    parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())).then_some((sep, parts))
}

/// What `text` (digits joined by `-`, `/` or `.`) is as a date.
pub(super) fn classify(text: &str) -> Numeric {
    let Some((sep, p)) = parts(text) else { return Numeric::NotDate };
    if p.len() != 3 {
        return Numeric::NotDate;
    }
    let lens = [p[0].len(), p[1].len(), p[2].len()];
    let num = |s: &str| s.parse::<u32>().ok();
    let (Some(a), Some(b), Some(c)) = (num(p[0]), num(p[1]), num(p[2])) else { return Numeric::NotDate };
    let ymd = |y: u32, m: u32, d: u32| NaiveDate::from_ymd_opt(i32::try_from(y).ok()?, m, d);
    match lens {
        [4, 1 | 2, 1 | 2] => match ymd(a, b, c) {
            Some(date) => Numeric::Date { date, note: None },
            None if (1000..3000).contains(&a) => Numeric::Impossible,
            None => Numeric::NotDate,
        },
        [1 | 2, 1 | 2, 4] if sep == '-' => {
            Numeric::Unread("with dashes and the year last, day and month cannot be told apart")
        }
        // Day and month as a date writes them: 1–31 each, one of them a month.
        [1 | 2, 1 | 2, 4] if (1..=31).contains(&a) && (1..=31).contains(&b) && (a <= 12 || b <= 12) => {
            // The rule: dots are day.month.year, slashes month/day/year.
            let (day, month) = if sep == '.' { (a, b) } else { (b, a) };
            let rule = if sep == '.' { "day.month.year with dots" } else { "month/day/year with slashes" };
            match (ymd(c, month, day), ymd(c, day, month)) {
                (Some(date), Some(other)) if other != date => {
                    Numeric::Date { date, note: Some(format!("`{text}` read as {date} ({rule}), not {other}")) }
                }
                (Some(date), _) => Numeric::Date { date, note: None },
                (None, Some(date)) => Numeric::Date {
                    date,
                    note: Some(format!("`{text}` read as {date}: {month} is no month, so it is the day")),
                },
                (None, None) => Numeric::Impossible,
            }
        }
        [1 | 2, 1 | 2, 2] if sep != '-' && (1..=31).contains(&a) && (1..=31).contains(&b) && (a <= 12 || b <= 12) => {
            Numeric::Unread("a two-digit year is not read: write the year in full")
        }
        _ => Numeric::NotDate,
    }
}

/// What the question's numeric dates needed saying: each reading the rule had to decide,
/// and each date-like text it does not read. (Impossible days are said with the other
/// impossible dates, by the caller.)
pub(super) fn notes(question: &str) -> Vec<String> {
    numeric_runs(question)
        .filter_map(|text| match classify(text) {
            Numeric::Date { note, .. } => note,
            Numeric::Unread(why) => Some(format!("`{text}` looks like a date but is not read: {why}")),
            Numeric::Impossible | Numeric::NotDate => None,
        })
        .collect()
}

/// True for a word that is a numeric date, possible or not (it names a time, not a topic).
pub(crate) fn is_numeric_date(word: &str) -> bool {
    !matches!(classify(word), Numeric::NotDate)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn one_rule_reads_every_numeric_date() {
        let date = |s: &str| match classify(s) {
            Numeric::Date { date, note } => Some((date, note.is_some())),
            _ => None,
        };
        // Year first: year, month, day, whatever the separator; nothing to decide.
        for s in ["2018-05-03", "2018/05/03", "2018.5.3"] {
            assert_eq!(date(s), Some((day(2018, 5, 3), false)), "{s}");
        }
        // Year last: dots day first, slashes month first; both orders possible → stated.
        assert_eq!(date("03.05.2018"), Some((day(2018, 5, 3), true)));
        assert_eq!(date("05/03/2018"), Some((day(2018, 5, 3), true)));
        // Unambiguous: one order only, or both the same.
        assert_eq!(date("25.12.2018"), Some((day(2018, 12, 25), false)));
        assert_eq!(date("12/25/2018"), Some((day(2018, 12, 25), false)));
        assert_eq!(date("04.04.2018"), Some((day(2018, 4, 4), false)));
        // The rule's order is no date, the other is: taken, and stated.
        assert_eq!(date("25/12/2018"), Some((day(2018, 12, 25), true)));
        // No calendar has these.
        for s in ["2018-06-31", "2023-13-45", "31.06.2018", "2019/02/29"] {
            assert_eq!(classify(s), Numeric::Impossible, "{s}");
        }
        assert!(matches!(classify("03.05.18"), Numeric::Unread(_)));
        assert!(matches!(classify("03-05-2018"), Numeric::Unread(_)));
        for s in ["192.168.1.1", "3-4", "1.2", "10.0.1234", "2.75.10"] {
            assert_eq!(classify(s), Numeric::NotDate, "{s}");
        }
    }

    #[test]
    fn what_the_rule_decided_is_said() {
        let n = notes("what happened on 03.05.2018 or 12/25/2018 or 03.05.18?");
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(n[0].contains("`03.05.2018` read as 2018-05-03"), "{n:?}");
        assert!(n[1].contains("`03.05.18` looks like a date"), "{n:?}");
        assert!(notes("on 2018-05-03 at 10.30").is_empty());
    }
}
