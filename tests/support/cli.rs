//! Running the `memtree` binaries as a script does, for the tests that drive them (the
//! `programs` binary and `it`'s hostile-input matrix), each of which includes this file with
//! `#[path]`: under a subfolder of `tests/`, it is not a test binary of its own.

// Each test binary uses its own part of this file.
#![allow(dead_code)]

use serde_json::Value;
use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// The `memtree` binary: the one cargo built for an integration test (`tests/programs`), else
/// (a test inside the library, which cargo gives no binary path) built, or found up to date,
/// by the cargo running this test, as [`repl_bin`] does for the REPL.
pub fn memtree_bin() -> &'static Path {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| match option_env!("CARGO_BIN_EXE_memtree") {
        Some(p) => p.into(),
        None => cargo_build(&["--bin", "memtree"], "memtree"),
    })
}

/// A finished run: exit code (`None` when a signal ended it), stdout and stderr.
pub struct Run {
    pub code: Option<i32>,
    pub out: String,
    pub err: String,
}

impl Run {
    /// Stdout as JSON, insisting on exit code 0.
    pub fn json(&self) -> Value {
        assert_eq!(self.code, Some(0), "stderr: {}", self.err);
        serde_json::from_str(&self.out).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.out))
    }
}

/// `bin --store <store> --no-model <args>`: every test runs without the dense model.
pub fn command<A: AsRef<OsStr>>(bin: impl AsRef<OsStr>, store: &Path, args: &[A]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg("--store").arg(store).arg("--no-model").args(args);
    cmd
}

/// Run `cmd` to its end with `stdin` on a pipe (closed after it; no input: stdin is null),
/// capturing stdout and stderr, which must be UTF-8.
pub fn run(mut cmd: Command, stdin: Option<&str>) -> Run {
    let mut child = cmd
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    if let Some(input) = stdin {
        // Dropped at the end of the statement: the child sees end of input. A child may end
        // before it reads its input (a REPL refusing to start): a broken pipe is its answer,
        // and what it printed and its status are what the test checks.
        match child.stdin.take().unwrap().write_all(input.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            r => r.unwrap(),
        }
    }
    let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
    Run {
        code: status.code(),
        out: String::from_utf8(stdout).expect("utf-8 stdout"),
        err: String::from_utf8(stderr).expect("utf-8 stderr"),
    }
}

/// `memtree --store <store> --no-model <args>`, run to its end (see [`run`]).
pub fn memtree<A: AsRef<OsStr>>(store: &Path, args: &[A], stdin: Option<&str>) -> Run {
    run(command(memtree_bin(), store, args), stdin)
}

/// The REPL example's binary, built (or found up to date) by the cargo running this test:
/// examples are not built for `cargo test --test programs` alone, and cargo gives tests no path
/// to them.
pub fn repl_bin() -> &'static Path {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| cargo_build(&["--example", "repl"], "repl"))
}

/// `cargo build <what>` in this test's profile, and the path of the executable of target
/// `name` that cargo reports.
fn cargo_build(what: &[&str], name: &str) -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args(["build", "--quiet", "--message-format=json-render-diagnostics"])
        .args(what)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::inherit());
    if !cfg!(debug_assertions) {
        cmd.arg("--release");
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("running cargo build {what:?}: {e}"));
    assert!(out.status.success(), "cargo build {what:?} failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(std::path::PathBuf::from))
        .unwrap_or_else(|| panic!("cargo reported no executable for {name}"))
}
