//! Progress of a long command on stderr: a bar on a terminal; off a terminal (a host's pipe,
//! a log file) one plain line every few seconds and one at the end of each phase; nothing
//! with `--quiet`. A phase is reported by time, not by its writes: a ticker prints the latest
//! count every interval even while one long write (a batch of vectors, a reindex, the read of
//! a large file) is under way, so a log never goes silent for longer than the interval. No
//! rate before a second of work (a rate over a few milliseconds reads as millions a second);
//! after it, per second since the phase began, rounded.

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Off a terminal, a line at least this often (`MEMTREE_PROGRESS_INTERVAL_MS` overrides it;
/// 0 prints a line at each write and starts no ticker, for tests).
const LINE_EVERY: Duration = Duration::from_secs(5);

/// How long a phase must have run before it shows a rate.
const RATE_AFTER: Duration = Duration::from_secs(1);

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

/// Where a phase stands, shared with its ticker.
struct Count {
    done: u64,
    /// `None` for work of unknown size (a reindex, the read of the input).
    total: Option<u64>,
    /// Whether a line was printed before the end.
    said: bool,
}

/// The part of a phase its ticker needs.
struct Line {
    what: String,
    started: Instant,
    count: Mutex<Count>,
}

impl Line {
    /// Print the line for the count now, at the end of the phase or not.
    fn print(&self, end: bool) {
        let Ok(mut c) = self.count.lock() else { return };
        let elapsed = self.started.elapsed();
        eprintln!("{}", line(&self.what, c.done, c.total, elapsed, end));
        c.said |= !end;
    }
}

/// One phase's progress (`writing e-mails`, `vectors`, `reindex`): `update` as it goes, the
/// last update (`done` = `total`) or [`Phase::finish`] ends it.
pub(crate) struct Phase {
    shown: Shown,
    line: Arc<Line>,
    bar: Option<ProgressBar>,
    ticker: Option<(Sender<()>, JoinHandle<()>)>,
    finished: bool,
}

impl Phase {
    /// A phase of `total` items.
    pub(crate) fn new(shown: Shown, what: &str, total: u64) -> Phase {
        Phase::start(shown, what, Some(total))
    }

    /// A phase whose size is not known (a reindex, reading the input): lines say how long it
    /// has run; it ends with [`Phase::finish`].
    pub(crate) fn open(shown: Shown, what: &str) -> Phase {
        Phase::start(shown, what, None)
    }

    fn start(shown: Shown, what: &str, total: Option<u64>) -> Phase {
        let now = Instant::now();
        let line = Arc::new(Line {
            what: what.to_string(),
            started: now,
            count: Mutex::new(Count { done: 0, total, said: false }),
        });
        let bar = (shown == Shown::Bar).then(|| bar(what, total));
        let ticker = match shown {
            Shown::Lines { every } if !every.is_zero() => {
                let (stop, stopped) = mpsc::channel::<()>();
                let l = Arc::clone(&line);
                let handle = std::thread::spawn(move || {
                    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                        l.print(false);
                    }
                });
                Some((stop, handle))
            }
            _ => None,
        };
        Phase { shown, line, bar, ticker, finished: false }
    }

    /// `done` of `total`; at `done >= total` the phase ends (the bar is cleared, the last line
    /// printed).
    pub(crate) fn update(&mut self, done: u64, total: u64) {
        if self.finished {
            return;
        }
        // A phase with nothing to do (no vectors to make) is not news.
        if total == 0 {
            self.stop();
            if let Some(pb) = &self.bar {
                pb.finish_and_clear();
            }
            return;
        }
        let end = done >= total;
        if let Ok(mut c) = self.line.count.lock() {
            c.done = done;
            c.total = Some(total);
        }
        match self.shown {
            Shown::Quiet => {}
            Shown::Bar => {
                if let Some(pb) = &self.bar {
                    pb.set_length(total);
                    pb.set_position(done);
                }
            }
            Shown::Lines { every } => {
                // Without a ticker (interval 0), a line at each write.
                if every.is_zero() && !end && done > 0 {
                    self.line.print(false);
                }
            }
        }
        if end {
            self.finish(true);
        }
    }

    /// End the phase: the bar cleared; off a terminal its last line, when `say` or when a
    /// line was printed before it (a phase that said it had begun says it ended).
    pub(crate) fn finish(&mut self, say: bool) {
        if self.finished {
            return;
        }
        self.stop();
        if let Some(pb) = &self.bar {
            pb.finish_and_clear();
        }
        let said = self.line.count.lock().map(|c| c.said).unwrap_or(false);
        if matches!(self.shown, Shown::Lines { .. }) && (say || said) {
            self.line.print(true);
        }
    }

    /// Stop the ticker (the phase is over, or abandoned).
    fn stop(&mut self) {
        self.finished = true;
        if let Some((stop, handle)) = self.ticker.take() {
            let _ = stop.send(());
            let _ = handle.join();
        }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        self.stop();
        if let Some(pb) = &self.bar {
            pb.finish_and_clear();
        }
    }
}

/// A terminal's bar: counts, rate and time left for a sized phase; a spinner with the time
/// spent for an open one. Redrawn by its own tick, so the time moves during a long write.
fn bar(what: &str, total: Option<u64>) -> ProgressBar {
    let pb = match total {
        Some(t) => {
            let pb = ProgressBar::new(t);
            pb.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {rate}")
                    .expect("static template")
                    .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}", rate_part(s.pos(), s.len().unwrap_or(0), s.elapsed()));
                    })
                    .progress_chars("=> "),
            );
            pb
        }
        None => {
            let pb = ProgressBar::new_spinner();
            pb.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("static template"));
            pb
        }
    };
    pb.set_message(what.to_string());
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// `(1,234/s, eta 8s)` after a second of work; nothing before it; the time spent while
/// nothing is done yet (the first batch of vectors: the model's first calls are slow).
fn rate_part(done: u64, total: u64, elapsed: Duration) -> String {
    if elapsed < RATE_AFTER {
        return String::new();
    }
    if done == 0 {
        return format!("({}s)", elapsed.as_secs());
    }
    format!("({}, eta {})", rate_text(rate(done, elapsed)), eta_text(done, total, elapsed))
}

/// `memtree: writing e-mails 2,000/12,000 (1,234/s, eta 8s)`; at the end `… done in 9.6s
/// (1,250/s)`; no rate before a second of work; `memtree: reindex (12s)` for an open phase.
fn line(what: &str, done: u64, total: Option<u64>, elapsed: Duration, end: bool) -> String {
    let secs = elapsed.as_secs_f64();
    let Some(total) = total else {
        return if end {
            format!("memtree: {what} done in {secs:.1}s")
        } else {
            format!("memtree: {what} ({}s)", elapsed.as_secs())
        };
    };
    let counts = format!("{}/{}", group(done), group(total));
    // No rate of nothing done: the time spent says the phase is alive.
    let rate = (elapsed >= RATE_AFTER && done > 0).then(|| rate_text(rate(done, elapsed)));
    match (end, rate) {
        (true, Some(r)) => format!("memtree: {what} {counts} done in {secs:.1}s ({r})"),
        (true, None) => format!("memtree: {what} {counts} done in {secs:.1}s"),
        (false, Some(r)) => format!("memtree: {what} {counts} ({r}, eta {})", eta_text(done, total, elapsed)),
        (false, None) => format!("memtree: {what} {counts} ({}s)", elapsed.as_secs()),
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
    fn no_rate_before_a_second_of_work() {
        let ms = Duration::from_millis;
        assert_eq!(line("writing messages", 3, Some(3), ms(8), true), "memtree: writing messages 3/3 done in 0.0s");
        assert_eq!(line("vectors", 256, Some(9000), ms(20), false), "memtree: vectors 256/9,000 (0s)");
        assert_eq!(line("vectors", 256, Some(9000), ms(2000), false), "memtree: vectors 256/9,000 (128/s, eta 68s)");
        assert_eq!(line("reindex", 0, None, ms(12_400), false), "memtree: reindex (12s)");
        assert_eq!(line("reindex", 0, None, ms(94_000), true), "memtree: reindex done in 94.0s");
        assert_eq!(rate_part(5, 10, ms(10)), "");
        // The first batch of vectors under way: the time it has taken, not a rate of 0.
        assert_eq!(line("vectors", 0, Some(9000), ms(18_300), false), "memtree: vectors 0/9,000 (18s)");
        assert_eq!(rate_part(0, 9000, ms(18_300)), "(18s)");
    }

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
