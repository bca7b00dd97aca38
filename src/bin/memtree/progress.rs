//! Progress of a long command on stderr: a bar on a terminal; off a terminal (a host's pipe,
//! a log file) one plain line every few seconds and one at the end of each phase; nothing
//! with `--quiet`. Rates are per second since the phase began, rounded, so the first batch
//! does not show a rate of millions.

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// Off a terminal, a line at most this often (`MEMTREE_PROGRESS_INTERVAL_MS` overrides it).
const LINE_EVERY: Duration = Duration::from_secs(5);

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shown {
    Bar,
    Lines { every: Duration },
    Quiet,
}

impl Shown {
    /// A bar when stderr is a terminal, else lines; nothing when `quiet`.
    pub(crate) fn for_stderr(quiet: bool) -> anyhow::Result<Shown> {
        if quiet {
            return Ok(Shown::Quiet);
        }
        if std::io::stderr().is_terminal() {
            return Ok(Shown::Bar);
        }
        let every = match std::env::var("MEMTREE_PROGRESS_INTERVAL_MS") {
            Ok(v) => Duration::from_millis(v.trim().parse().map_err(|_| {
                anyhow::anyhow!("MEMTREE_PROGRESS_INTERVAL_MS must be a whole number of milliseconds, got `{v}`")
            })?),
            Err(_) => LINE_EVERY,
        };
        Ok(Shown::Lines { every })
    }
}

/// One phase's progress (`writing e-mails`, `vectors`): `update` as it goes, the last update
/// (`done` = `total`) ends it.
pub(crate) struct Phase {
    shown: Shown,
    what: String,
    started: Instant,
    last_line: Instant,
    bar: Option<ProgressBar>,
    finished: bool,
}

impl Phase {
    pub(crate) fn new(shown: Shown, what: &str, total: u64) -> Phase {
        let bar = (shown == Shown::Bar).then(|| {
            let pb = ProgressBar::new(total);
            pb.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({rate}, eta {left})")
                    .expect("static template")
                    .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}", rate_text(rate(s.pos(), s.elapsed())));
                    })
                    .with_key("left", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}", eta_text(s.pos(), s.len().unwrap_or(0), s.elapsed()));
                    })
                    .progress_chars("=> "),
            );
            pb.set_message(what.to_string());
            pb
        });
        let now = Instant::now();
        Phase { shown, what: what.to_string(), started: now, last_line: now, bar, finished: false }
    }

    /// `done` of `total`; at `done >= total` the phase ends (the bar is cleared, the last line
    /// printed).
    pub(crate) fn update(&mut self, done: u64, total: u64) {
        if self.finished {
            return;
        }
        let end = done >= total;
        // A phase with nothing to do (no vectors to make) is not news.
        if total == 0 {
            self.finished = true;
            return;
        }
        match self.shown {
            Shown::Quiet => {}
            Shown::Bar => {
                if let Some(pb) = &self.bar {
                    pb.set_length(total);
                    pb.set_position(done);
                    if end {
                        pb.finish_and_clear();
                    }
                }
            }
            Shown::Lines { every } => {
                let now = Instant::now();
                if end || now.duration_since(self.last_line) >= every && done > 0 {
                    self.last_line = now;
                    eprintln!("{}", self.line(done, total, end));
                }
            }
        }
        self.finished = end;
    }

    /// `memtree: writing e-mails 2,000/12,000 (1,234/s, eta 8s)`; at the end `… done in 9.6s`.
    fn line(&self, done: u64, total: u64, end: bool) -> String {
        let elapsed = self.started.elapsed();
        let r = rate_text(rate(done, elapsed));
        if end {
            format!(
                "memtree: {} {}/{} done in {:.1}s ({r})",
                self.what,
                group(done),
                group(total),
                elapsed.as_secs_f64()
            )
        } else {
            format!(
                "memtree: {} {}/{} ({r}, eta {})",
                self.what,
                group(done),
                group(total),
                eta_text(done, total, elapsed)
            )
        }
    }
}

/// Items per second since the phase began.
fn rate(done: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 { done as f64 / secs } else { 0.0 }
}

/// `1,234/s`; one decimal below 10 (`2.5/s`), so a slow phase still shows a rate.
fn rate_text(r: f64) -> String {
    if r < 10.0 { format!("{r:.1}/s") } else { format!("{}/s", group(r.round() as u64)) }
}

/// What is left at the rate so far, in whole seconds, minutes or hours; `?` before a rate.
fn eta_text(done: u64, total: u64, elapsed: Duration) -> String {
    let r = rate(done, elapsed);
    if done == 0 || r <= 0.0 {
        return "?".into();
    }
    let secs = (total.saturating_sub(done) as f64 / r).round() as u64;
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// `12345678` → `12,345,678`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_rounded_and_grouped() {
        assert_eq!(rate_text(4_351_069.641_6), "4,351,070/s");
        assert_eq!(rate_text(2.46), "2.5/s");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(eta_text(0, 10, Duration::from_secs(1)), "?");
        assert_eq!(eta_text(100, 1100, Duration::from_secs(10)), "100s");
        assert_eq!(eta_text(10, 10_000, Duration::from_secs(10)), "2h46m");
    }
}
