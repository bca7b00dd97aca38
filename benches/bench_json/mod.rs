//! The benches' JSON reports: where one goes (`MEMTREE_BENCH_JSON`, else a default file in the
//! target directory), writing it without a panic, and the smoke run's check that the file on
//! disk parses and has the shape its readers expect.
//!
//! A folder module (not `benches/*.rs`) so that Cargo does not take it for a bench target.

#![allow(dead_code)] // each bench uses its own part of the checkers

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The variable naming the report's path. A relative path is read from the bench's working
/// directory, which `cargo bench` sets to the package root.
pub const ENV: &str = "MEMTREE_BENCH_JSON";

/// Where a report goes, and where that path came from (for error messages).
pub struct Out {
    /// The report file.
    pub path: PathBuf,
    origin: &'static str,
}

impl Out {
    fn error(&self, what: &str, path: &Path, e: std::io::Error) -> String {
        format!("cannot {what} {} for the report ({}): {e}", path.display(), self.origin)
    }
}

/// Where to write the report: `$MEMTREE_BENCH_JSON` when set, smoke runs included (so that
/// the smoke run can check what it wrote); otherwise, outside smoke runs, `default_name` in
/// `$CARGO_TARGET_DIR`, else in the crate's `target/`. The variable is read at run time: the
/// binary may run elsewhere than where it was built, and the manifest's `target/` need not
/// exist. `None`: a smoke run with no path asked for writes nothing.
pub fn out_path(default_name: &str, smoke: bool) -> Option<Out> {
    match std::env::var_os(ENV) {
        Some(p) if !p.is_empty() => Some(Out { path: PathBuf::from(p), origin: "from MEMTREE_BENCH_JSON" }),
        _ if smoke => None,
        _ => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .filter(|t| !t.is_empty())
                .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"), PathBuf::from);
            let origin = "the default; MEMTREE_BENCH_JSON=<path> writes elsewhere";
            Some(Out { path: target.join(default_name), origin })
        }
    }
}

/// `out_path`, checked before the bench runs: its parent directories are created and the file
/// opened for writing (created empty when missing, left as it is otherwise), so that a path that
/// cannot be written ends the bench at once, with a message and status 1, not after its runs.
pub fn out_path_or_exit(default_name: &str, smoke: bool) -> Option<Out> {
    let out = out_path(default_name, smoke)?;
    let opened = create_parent(&out).and_then(|()| {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&out.path)
            .map(drop)
            .map_err(|e| out.error("write", &out.path, e))
    });
    if let Err(e) = opened {
        exit_with(&e)
    }
    Some(out)
}

fn create_parent(out: &Out) -> Result<(), String> {
    match out.path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => std::fs::create_dir_all(parent).map_err(|e| out.error("create", parent, e)),
        None => Ok(()),
    }
}

fn exit_with(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1)
}

/// What a report must look like, for the smoke run's check.
pub struct Shape {
    /// `Err` names the first place of a parsed report that is wrong.
    pub check: fn(&Value) -> Result<(), String>,
    /// JSON pointers (`/stores/0/modes/walk`) to fields the report's readers rely on. The check
    /// is itself checked against them: a copy of the report without one of them, or with it
    /// set to `-1`, must be refused, so a check that has stopped looking cannot pass.
    pub keys: Vec<String>,
}

impl Shape {
    /// `check(report)`, then the same on each broken copy (see `keys`), which must fail.
    fn verify(&self, report: &Value) -> Result<(), String> {
        (self.check)(report)?;
        for key in &self.keys {
            let (parent, name) = key.rsplit_once('/').ok_or_else(|| format!("{key} is not a JSON pointer"))?;
            for broken in ["removed", "set to -1"] {
                let mut copy = report.clone();
                let fields = copy.pointer_mut(parent).and_then(Value::as_object_mut);
                match fields {
                    Some(o) if o.contains_key(name) && broken == "removed" => drop(o.remove(name)),
                    Some(o) if o.contains_key(name) => drop(o.insert(name.to_string(), Value::from(-1))),
                    _ => return Err(format!("{key} is missing")),
                }
                if (self.check)(&copy).is_ok() {
                    return Err(format!("the check accepts the report with {key} {broken}"));
                }
            }
        }
        Ok(())
    }
}

/// Writes `report` to `out.path`, creating its parent directories. With `shape` (smoke runs), reads
/// the file back, parses it and verifies its shape: the test that a consumer of the file can
/// rely on what this bench writes. An error is one sentence naming the path and the cause.
pub fn write(out: &Out, report: &Value, shape: Option<&Shape>) -> Result<(), String> {
    let path = &out.path;
    let text = serde_json::to_string_pretty(report).map_err(|e| format!("cannot serialise the report: {e}"))?;
    create_parent(out)?;
    std::fs::write(path, text).map_err(|e| out.error("write", path, e))?;
    if let Some(shape) = shape {
        let read = std::fs::read_to_string(path).map_err(|e| format!("cannot read back {}: {e}", path.display()))?;
        let parsed: Value =
            serde_json::from_str(&read).map_err(|e| format!("{} does not parse as JSON: {e}", path.display()))?;
        shape.verify(&parsed).map_err(|e| format!("{} has the wrong shape: {e}", path.display()))?;
    }
    Ok(())
}

/// Writes the report when `path` is given and says where; on failure prints the error and
/// ends the process with status 1 (a message, not a panic and its backtrace).
pub fn write_or_exit(out: Option<&Out>, report: &Value, shape: Option<&Shape>) {
    let Some(out) = out else { return };
    match write(out, report, shape) {
        Ok(()) if shape.is_some() => {
            println!("<!-- report written to {} and its shape checked -->", out.path.display())
        }
        Ok(()) => println!("<!-- report written to {} -->", out.path.display()),
        Err(e) => exit_with(&e),
    }
}

fn field<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a Value, String> {
    v.as_object()
        .ok_or_else(|| format!("{at} is not an object"))?
        .get(key)
        .ok_or_else(|| format!("{at}.{key} is missing"))
}

/// `v.key` as a finite number ≥ 0.
pub fn number(v: &Value, key: &str, at: &str) -> Result<f64, String> {
    let x = field(v, key, at)?.as_f64().ok_or_else(|| format!("{at}.{key} is not a number"))?;
    if x.is_finite() && x >= 0.0 { Ok(x) } else { Err(format!("{at}.{key} = {x} is not a finite number ≥ 0")) }
}

/// `v.key` present, and `null` or a finite number ≥ 0.
pub fn number_or_null(v: &Value, key: &str, at: &str) -> Result<Option<f64>, String> {
    if field(v, key, at)?.is_null() { Ok(None) } else { number(v, key, at).map(Some) }
}

/// `v.key` present, and `null` or an object.
pub fn object_or_null<'a>(v: &'a Value, key: &str, at: &str) -> Result<Option<&'a Value>, String> {
    if field(v, key, at)?.is_null() { Ok(None) } else { object(v, key, at).map(Some) }
}

/// `v.key` as an object.
pub fn object<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a Value, String> {
    let o = field(v, key, at)?;
    if o.is_object() { Ok(o) } else { Err(format!("{at}.{key} is not an object")) }
}

/// `v.key` as a non-empty array.
pub fn array<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a [Value], String> {
    match field(v, key, at)?.as_array() {
        Some(a) if !a.is_empty() => Ok(a),
        Some(_) => Err(format!("{at}.{key} is empty")),
        None => Err(format!("{at}.{key} is not an array")),
    }
}

/// `v.key` as a non-empty string.
pub fn string<'a>(v: &'a Value, key: &str, at: &str) -> Result<&'a str, String> {
    match field(v, key, at)?.as_str() {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(format!("{at}.{key} is not a non-empty string")),
    }
}

/// Bytes of every file under `dir` (SQLite database and WAL, tantivy index, content).
pub fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
