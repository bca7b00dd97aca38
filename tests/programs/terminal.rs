//! The REPL in a real terminal: tmux runs it at 80 and at 200 columns, a question is typed
//! into it, and the screen is read back with `capture-pane`. The hit table must fit the
//! width (no line longer, no row wrapped: wrapped lines are joined back by `-J`), give one
//! line to each hit, and show the text at some length; `:help`, `:sources` and `:entities`
//! fit too. Also the table renderer itself (`src/bin/memtree/render/table.rs`), on cells a
//! pipe test would not meet: wide characters, emoji, control characters, widths from 10 to
//! 300.
//!
//! Without tmux the terminal tests say so on stderr and pass, unless
//! `MEMTREE_REQUIRE_TMUX` is set (`.ci/run` sets it, after installing tmux), which makes
//! them fail.

use crate::support;

// The REPL's table renderer (shared with the CLI's rendering), compiled into this test; the
// REPL uses the rest of it.
#[allow(dead_code)]
#[path = "../../src/bin/memtree/render/table.rs"]
mod table;

use console::measure_text_width;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::repl_bin;
use table::{Column, Table};

/// Whether tmux can run here; when it cannot, the reason was printed (or, under
/// `MEMTREE_REQUIRE_TMUX`, the test fails).
fn have_tmux() -> bool {
    let ok = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("MEMTREE_REQUIRE_TMUX").is_none(),
            "tmux is not installed and MEMTREE_REQUIRE_TMUX is set"
        );
        eprintln!(
            "SKIPPED: tmux is not installed, so the REPL was not tried in a real terminal (apt-get install tmux)"
        );
    }
    ok
}

/// A tmux server of this test's own (its socket in a temp folder, no user configuration),
/// killed when dropped.
struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg("/dev/null")
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("running tmux {args:?}: {e}"));
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    /// The whole pane, history included, wrapped lines joined back into one.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-J", "-S", "-", "-t", "repl"]).stdout).into_owned()
    }

    /// Wait (up to a minute) until the pane shows `needle` and, after it, the prompt again.
    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(needle) && s.trim_end().ends_with("memtree>") {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no `{needle}` on the screen after 60 s:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Type `line` and Enter, then wait for `done` and the next prompt. One line at a time: keys
    /// sent while the REPL was still busy with the previous line were now and then lost (about
    /// one run in four sent three commands at once and timed out waiting for the third).
    fn type_line(&self, line: &str, done: &str) -> String {
        self.cmd(&["send-keys", "-t", "repl", "-l", line]);
        self.cmd(&["send-keys", "-t", "repl", "Enter"]);
        self.wait_for(done)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(&self.socket).arg("kill-server").output();
    }
}

/// Single-quoted for the shell tmux runs the command with.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A store with the demo corpus, loaded through a piped REPL session (no dense model).
fn demo_store(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    let run = support::run(support::command(repl_bin(), &store, &["--demo"]), Some(":stats\n"));
    assert_eq!(run.code, Some(0), "{}", run.err);
    assert!(run.err.contains("loaded the demo corpus"), "{}", run.err);
    store
}

/// The hit table of the last answer on `screen`: (header, rows), rows being the lines between
/// the rule under the header and the `(walk: N of M hits, …)` line, which must say N = rows.
fn last_table(screen: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = screen.lines().collect();
    let end = lines.iter().rposition(|l| l.starts_with("(walk: ")).expect("a walk summary line");
    let header = lines[..end].iter().rposition(|l| l.starts_with('#') && l.contains("text")).expect("a table header");
    assert!(lines[header + 1].chars().all(|c| c == '-'), "a rule under the header: {}", lines[header + 1]);
    let rows: Vec<String> = lines[header + 2..end].iter().map(|l| l.to_string()).collect();
    let shown: usize = lines[end]["(walk: ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert_eq!(rows.len(), shown, "one line per hit:\n{}", lines[header..=end].join("\n"));
    (lines[header].to_string(), rows)
}

/// The text cell of each row: from the display column where the header's `text` starts.
fn text_cells(header: &str, rows: &[String]) -> Vec<String> {
    let at = measure_text_width(&header[..header.find("text").unwrap()]);
    rows.iter()
        .map(|r| {
            let mut col = 0;
            r.chars()
                .skip_while(|c| {
                    let before = col < at;
                    col += console::measure_text_width(c.encode_utf8(&mut [0; 4]));
                    before
                })
                .collect()
        })
        .collect()
}

/// Run the REPL in a `width`-column tmux window on the demo store, ask the question, and
/// check the table: returns the header and the text cells.
fn ask_in_terminal(width: usize, question: &str) -> Option<(String, Vec<String>)> {
    if !have_tmux() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = demo_store(dir.path());
    let tmux = Tmux { socket: dir.path().join("tmux.sock") };
    let command =
        format!("{} --store {} --no-model", sh_quote(repl_bin().to_str().unwrap()), sh_quote(store.to_str().unwrap()));
    let w = width.to_string();
    tmux.cmd(&["new-session", "-d", "-s", "repl", "-x", &w, "-y", "50", &command]);
    tmux.wait_for("memtree> ");
    let screen = tmux.type_line(question, "(walk: ");
    let (header, rows) = last_table(&screen);
    for l in rows.iter().chain([&header]) {
        assert!(measure_text_width(l) <= width, "a line wider than {width}:\n{l}\n\nscreen:\n{screen}");
    }
    for (i, r) in rows.iter().enumerate() {
        assert!(r.trim_start().starts_with(&format!("{} ", i + 1)), "row {} starts with its rank: {r}", i + 1);
    }
    // The other tables fit too: every line on the screen but the banner (which names the
    // temp store's long path) is within the width.
    tmux.type_line(":help", "modes: ");
    tmux.type_line(":sources", "(20 sources)");
    let screen = tmux.type_line(":entities a", "(search_entities: ");
    assert!(screen.contains("(20 sources)"), "{screen}");
    for l in screen.lines().filter(|l| !l.starts_with("memtree REPL · store ")) {
        assert!(measure_text_width(l) <= width, "a line wider than {width}:\n{l}\n\nscreen:\n{screen}");
    }
    tmux.cmd(&["send-keys", "-t", "repl", "-l", ":quit"]);
    tmux.cmd(&["send-keys", "-t", "repl", "Enter"]);
    let cells = text_cells(&header, &rows);
    Some((header, cells))
}

/// The longest text cell, in characters, and a check that every cut cell (ending in `…`)
/// shows at least `min` characters less the word the cut at a word may have left out (at
/// most 12 characters here: the demo's longest word cut this way).
fn check_text(cells: &[String], min: usize) {
    let cut: Vec<&String> = cells.iter().filter(|c| c.ends_with('…')).collect();
    assert!(!cut.is_empty(), "the demo's answer has long texts that must be cut: {cells:#?}");
    for c in cut {
        assert!(c.chars().count() + 12 >= min, "a cut text shows fewer than {min} characters less a word: {c:?}");
        assert!(!c.trim_end_matches('…').ends_with(' '), "cut at a word, without the space: {c:?}");
    }
}

#[test]
fn at_80_columns_the_text_keeps_its_width_and_columns_give_way() {
    let Some((header, cells)) = ask_in_terminal(80, "what caused INC-42?") else { return };
    check_text(&cells, 50);
    let cols: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(cols.first(), Some(&"#"), "{header}");
    assert_eq!(cols.last(), Some(&"text"), "{header}");
    assert!(!cols.contains(&"id"), "the id is the first column to go on a narrow terminal: {header}");
    assert!(cols.contains(&"time"), "the time stays at 80 columns, ahead of the scope: {header}");
}

#[test]
fn at_200_columns_every_column_shows_and_the_text_takes_the_rest() {
    let Some((header, cells)) = ask_in_terminal(200, "what caused INC-42?") else { return };
    check_text(&cells, 120);
    for col in ["#", "id", "kind", "scope", "time", "score", "text"] {
        assert!(header.split_whitespace().any(|c| c == col), "missing column {col} at 200 columns: {header}");
    }
}

// ---- the renderer -------------------------------------------------------------------------

fn hit_like(rows: Vec<Vec<&str>>) -> Table {
    Table {
        columns: vec![
            Column::new("#", 4, 0).right(),
            Column::new("id", 9, 4),
            Column::new("scope", 18, 1),
            Column::new("time", 17, 2),
            Column::new("score", 6, 3).right(),
            Column::new("text", 0, 0),
        ],
        text: 5,
        rows: rows.into_iter().map(|r| r.into_iter().map(String::from).collect()).collect(),
    }
}

fn sample() -> Table {
    hit_like(vec![
        vec![
            "1",
            "Lf5b7fd8e12",
            "slack:#eng",
            "2023-05-11 12:00",
            "1.150",
            &"Jonas Berg: the certificate expired. ".repeat(8),
        ],
        vec![
            "2",
            "L0123456789",
            "mbox:inc42-pm@larkspur.example",
            "2023-05-10 16:05",
            "0.761",
            "短い日本語のテキストと🔥絵文字、そして長い説明がここに続きます。もっと長く、もっと長く、まだ続きます。",
        ],
        vec![
            "3",
            "L9",
            "doc:notes.md",
            "2023-05-19 17:00",
            "0.004",
            "a line\nbreak,\ta tab and an \u{1b}[31mescape\u{1b}[0m",
        ],
    ])
}

#[test]
fn no_rendered_line_is_wider_than_the_width_and_each_row_is_one_line() {
    let t = sample();
    for width in (20..=300).step_by(7).chain([80, 200]) {
        let out = t.render(width);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2 + t.rows.len(), "header, rule, one line per row at {width}:\n{out}");
        for l in &lines {
            assert!(measure_text_width(l) <= width, "wider than {width}: {l:?}");
        }
    }
}

#[test]
fn a_narrow_width_drops_columns_in_keep_order_before_the_text_shrinks() {
    let t = sample();
    let header =
        |w: usize| t.render(w).lines().next().unwrap().split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(header(200), ["#", "id", "scope", "time", "score", "text"]);
    assert_eq!(header(80), ["#", "scope", "text"]);
    assert_eq!(header(40), ["#", "text"]);
    // Never a less useful column while a more useful one is missing.
    for w in 20..=200 {
        let h = header(w);
        let keep = |c: &str| t.columns.iter().find(|x| x.header == c).unwrap().keep;
        let first_dropped = t.columns.iter().filter(|c| !h.iter().any(|x| x == c.header)).map(|c| c.keep).min();
        if let Some(d) = first_dropped {
            assert!(h.iter().all(|c| keep(c) < d || keep(c) == 0), "at {w}: {h:?}");
        }
    }
    // At 80 the text gets what the rank and the source leave: more than half the width.
    let row = t.render(80).lines().nth(2).unwrap().to_string();
    let text = row.split_once("slack:#eng").unwrap().1.trim_start();
    assert!(text.chars().count() >= 50, "{text:?}");
}

#[test]
fn wide_characters_are_cut_by_display_width_and_control_characters_become_spaces() {
    let out = sample().render(60);
    let cjk = out.lines().nth(3).unwrap();
    assert!(cjk.contains("短い日本語"), "{cjk}");
    assert!(cjk.ends_with('…'), "{cjk}");
    assert!(measure_text_width(cjk) <= 60, "{cjk}");
    let ctl = out.lines().nth(4).unwrap();
    assert!(ctl.contains("a line break, a tab and an"), "{ctl}");
    assert!(!ctl.contains('\u{1b}'), "no escape reaches the terminal: {ctl:?}");
    // Wide enough to show it whole: the escape is a space, what followed it is text.
    let wide = sample().render(120);
    let ctl = wide.lines().nth(4).unwrap();
    assert!(ctl.ends_with("a line break, a tab and an [31mescape [0m"), "{ctl}");
    assert!(!ctl.contains('\u{1b}'), "no escape reaches the terminal: {ctl:?}");
    // A cut of wide characters keeps whole characters: 5 cells hold two of them and `…`.
    assert_eq!(table::clip("日本語です", 5), "日本…");
    assert_eq!(table::clip("🔥🔥🔥", 4), "🔥…");
    assert_eq!(table::clip("short", 5), "short");
}

#[test]
fn a_short_text_is_not_padded_out_to_the_width() {
    let t = hit_like(vec![vec!["1", "L1", "slack:#eng", "2023-05-11 12:00", "1", "ok"]]);
    let out = t.render(200);
    assert!(out.lines().all(|l| measure_text_width(l) < 60), "{out}");
    assert!(out.lines().nth(2).unwrap().ends_with("  ok"), "{out}");
}

#[test]
fn wrapped_help_lines_fit_keep_their_words_and_their_alignment() {
    let text = "  :window    FROM..TO [key=value]  what happened between two dates, e.g. 2023-05-01..2023-05-08";
    let at80 = table::wrap(text, 80, 13);
    assert_eq!(at80[0], "  :window    FROM..TO [key=value]  what happened between two dates, e.g.");
    assert_eq!(at80[1], "             2023-05-01..2023-05-08");
    for width in 10..=120 {
        let lines = table::wrap(text, width, 13);
        for l in &lines {
            assert!(measure_text_width(l) <= width, "at {width}: {l:?}");
        }
        if width >= 40 {
            let words: Vec<&str> = lines.iter().flat_map(|l| l.split_whitespace()).collect();
            assert_eq!(words, text.split_whitespace().collect::<Vec<_>>(), "at {width}");
        }
    }
    assert_eq!(table::wrap("短い日本語のテキスト", 9, 0), ["短い日本…"]);
    assert_eq!(table::wrap("fits", 80, 4), ["fits"]);
}
