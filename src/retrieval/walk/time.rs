//! Time expressions in a question ("yesterday", "last week", "in May 2023", "in 2022",
//! "last 3 days") turned into a window `[since, until]` in epoch ms, relative to an anchor
//! (the wall clock). Walk uses the window as a soft boost, never as a hard filter: a wrong
//! reading must not hide the answer.

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};

use crate::text::MONTHS;

fn day_start(d: NaiveDate) -> i64 {
    d.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp_millis()).unwrap_or(0)
}

fn month_window(year: i32, month: u32) -> Option<(i64, i64)> {
    let start = NaiveDate::from_ymd_opt(year, month, 1)?;
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)?
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)?
    };
    Some((day_start(start), day_start(next) - 1))
}

/// The window a question names, if any.
pub fn time_window(question: &str, anchor_ms: i64) -> Option<(i64, i64)> {
    let now: DateTime<Utc> = Utc.timestamp_millis_opt(anchor_ms).single()?;
    let today = now.date_naive();
    let q = question.to_lowercase();
    let words: Vec<&str> = q.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let has = |phrase: &str| {
        let p: Vec<&str> = phrase.split(' ').collect();
        words.windows(p.len()).any(|w| w == p.as_slice())
    };
    let day = |d: NaiveDate| (day_start(d), day_start(d) + 86_399_999);
    if has("today") {
        return Some(day(today));
    }
    if has("yesterday") {
        return Some(day(today - Duration::days(1)));
    }
    if has("last week") {
        let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
        return Some((day_start(monday - Duration::days(7)), day_start(monday) - 1));
    }
    if has("this week") {
        let monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
        return Some((day_start(monday), anchor_ms));
    }
    if has("last month") {
        let (y, m) = if today.month() == 1 { (today.year() - 1, 12) } else { (today.year(), today.month() - 1) };
        return month_window(y, m);
    }
    if has("this month") {
        return month_window(today.year(), today.month()).map(|(s, _)| (s, anchor_ms));
    }
    if has("last year") {
        return Some((month_window(today.year() - 1, 1)?.0, month_window(today.year() - 1, 12)?.1));
    }
    // "last 3 days", "past 2 weeks"
    for (i, w) in words.iter().enumerate() {
        if (*w == "last" || *w == "past")
            && let (Some(n), Some(unit)) = (words.get(i + 1).and_then(|n| n.parse::<i64>().ok()), words.get(i + 2))
        {
            let days = match unit.trim_end_matches('s') {
                "day" => n,
                "week" => 7 * n,
                "month" => 30 * n,
                _ => continue,
            };
            return Some((anchor_ms - days * 86_400_000, anchor_ms));
        }
    }
    // "in May 2023", "in May" (the latest May not after the anchor), "in 2022"
    for (i, w) in words.iter().enumerate() {
        if let Some(m) = MONTHS.iter().position(|x| x == w) {
            // "may" is also a verb: only after "in"/"of"/"during" or before a year.
            let year = words.get(i + 1).and_then(|y| y.parse::<i32>().ok()).filter(|y| (1900..=2200).contains(y));
            let after_prep = i > 0 && matches!(words[i - 1], "in" | "of" | "during" | "since");
            if year.is_none() && !after_prep {
                continue;
            }
            let m = m as u32 + 1;
            let y = year.unwrap_or(if m <= today.month() { today.year() } else { today.year() - 1 });
            return month_window(y, m);
        }
    }
    for (i, w) in words.iter().enumerate() {
        if i > 0
            && matches!(words[i - 1], "in" | "during")
            && let Ok(y) = w.parse::<i32>()
            && (1900..=2200).contains(&y)
        {
            return Some((month_window(y, 1)?.0, month_window(y, 12)?.1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    #[test]
    fn relative_and_absolute_expressions() {
        let now = ms("2023-05-10T15:00:00Z"); // a Wednesday
        // (question, first day, last day) of the window each names, whole UTC days.
        let days = [
            ("what happened yesterday?", "2023-05-09", "2023-05-09"),
            ("plans from last week", "2023-05-01", "2023-05-07"),
            ("What did Caroline do in May 2022?", "2022-05-01", "2022-05-31"),
            ("trips in June", "2022-06-01", "2022-06-30"),
            ("events in 2021", "2021-01-01", "2021-12-31"),
        ];
        for (q, first, last) in days {
            let want = (ms(&format!("{first}T00:00:00Z")), ms(&format!("{last}T23:59:59.999Z")));
            assert_eq!(time_window(q, now), Some(want), "{q}");
        }
        assert_eq!(time_window("messages in the last 3 days", now), Some((now - 3 * 86_400_000, now)));
        assert_eq!(time_window("May I ask what Melanie painted?", now), None, "`may` as a verb");
        assert_eq!(time_window("When did Caroline go to the support group?", now), None);
    }
}
