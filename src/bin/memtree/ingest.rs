//! `memtree ingest`: the import with its progress on stderr, and the summary it prints.

use crate::progress::{Phase, Shown};
use anyhow::Result;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use memtree::{FileIssue, Format, ImportOptions, ImportSummary, Memory, ReadWarning};
use std::path::Path;

/// `--format`: the library's formats as clap's possible values, so an unknown one is a usage
/// error listing them.
pub(crate) fn format_parser() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(Format::ALL.map(|f| PossibleValue::new(f.name()).help(f.about())))
        .map(|name| name.parse::<Format>().expect("clap admits only the formats' own names"))
}

/// Import with its progress on stderr (a bar, lines, or nothing: [`Shown`]), shown while the
/// input is written; a notes folder's skipped files and warnings, and the places an input
/// could not be told apart, are named on stderr too.
pub(crate) fn ingest(
    mem: &mut Memory,
    format: Format,
    path: &Path,
    opts: &ImportOptions,
    shown: Shown,
) -> Result<ImportSummary> {
    // Reading a large input takes a while before the first write: it has its own phase,
    // which says it ended only when it said it had begun.
    let mut reading = Phase::open(shown, &format!("reading {}", path.display()));
    let mut phase: Option<Phase> = None;
    // After the last write is counted the import still commits (the store, the index): a
    // phase of its own, said like reading when it runs long, so no time goes unshown.
    let mut tail: Option<Phase> = None;
    let summary = mem.import_with(format, path, opts, |p| {
        reading.finish(false);
        if let Some(mut t) = tail.take() {
            t.finish(false);
        }
        phase.get_or_insert_with(|| Phase::new(shown, &format!("writing {}", p.unit), p.total)).update(p.done, p.total);
        if p.total > 0 && p.done >= p.total {
            tail = Some(Phase::open(shown, "committing"));
        }
    });
    reading.finish(false);
    drop(phase);
    if let Some(mut t) = tail {
        t.finish(false);
    }
    let summary = summary?;
    if let Some(n) = &summary.notes {
        for f in &n.skipped {
            eprintln!("memtree: skipped {}: {}", f.path.display(), f.reason);
        }
        for f in &n.warnings {
            eprintln!("memtree: warning: {}: {}", f.path.display(), f.reason);
        }
    }
    if let Some(r) = &summary.read {
        for w in &r.warnings {
            let file = w.file.as_deref().unwrap_or(path);
            match w.line {
                0 => eprintln!("memtree: warning: {}: {}", file.display(), w.reason),
                line => eprintln!("memtree: warning: {}:{line}: {}", file.display(), w.reason),
            }
        }
    }
    Ok(summary)
}

/// When the import found nothing to store (no record written, none already stored), the
/// warning that says so: said on stderr here and put in the summary's `warnings` by
/// [`ingest_json`], or with `strict` the error.
pub(crate) fn nothing_read(path: &Path, s: &ImportSummary, strict: bool) -> Result<Option<String>> {
    let Some(r) = &s.read else { return Ok(None) };
    if r.written + r.duplicates + r.forgotten > 0 {
        return Ok(None);
    }
    let what = match r.read {
        0 => "nothing was read from it (no record)".to_string(),
        n => format!("nothing was read from it: its {n} records were all skipped"),
    };
    if strict {
        anyhow::bail!("{}: {what} (strict)", path.display());
    }
    eprintln!("memtree: warning: {}: {what}", path.display());
    Ok(Some(what))
}

/// The `ingest` summary: the write counts, and for a notes folder what the sync did; `nothing`
/// is [`nothing_read`]'s warning, which joins the input's own `warnings` (in their shape: a
/// notes folder's name a path, the others a line, 0 for the whole input).
pub(crate) fn ingest_json(s: &ImportSummary, path: &Path, nothing: Option<&str>) -> serde_json::Value {
    let r = &s.report;
    // `duplicate_leaves` (leaves already stored) is not `messages.duplicates` (records already
    // stored), nor `forgotten_leaves` `messages.forgotten`: a record can be several leaves (a
    // long message's pieces, a note's chunks).
    let mut v = serde_json::json!({"sources": r.sources, "leaves": r.leaves, "summaries": r.summaries,
        "duplicate_leaves": r.duplicates, "removed": r.removed, "forgotten_leaves": r.forgotten});
    if let Some(n) = &s.notes {
        v["added"] = n.added.into();
        v["replaced"] = n.replaced.into();
        v["unchanged"] = n.unchanged.into();
        v["held"] = n.held.into();
        v["vanished"] = serde_json::json!(n.vanished);
        v["pruned"] = serde_json::json!(n.pruned);
        v["merged"] = serde_json::json!(n.merged);
        v["skipped"] = serde_json::json!(n.skipped);
        v["warnings"] = serde_json::json!(n.warnings);
    }
    if let Some(read) = &s.read {
        // The records the input held: written, already stored, forgotten, left out by reason
        // (they add up to `read`); a notes folder's under `notes`, its warnings named above.
        let mut counts = serde_json::json!({"read": read.read, "written": read.written,
            "duplicates": read.duplicates, "forgotten": read.forgotten, "skipped": read.skipped});
        if !read.left_out.is_empty() {
            counts["left_out"] = serde_json::json!(read.left_out);
        }
        if s.notes.is_some() {
            v["notes"] = counts;
        } else {
            v["messages"] = counts;
            v["warnings"] = serde_json::json!(read.warnings);
        }
    }
    if let Some(what) = nothing {
        let w = match &s.notes {
            Some(_) => serde_json::json!(FileIssue { path: path.to_path_buf(), reason: what.to_string() }),
            None => serde_json::json!(ReadWarning { file: None, line: 0, reason: what.to_string() }),
        };
        match v["warnings"].as_array_mut() {
            Some(ws) => ws.push(w),
            None => v["warnings"] = serde_json::json!([w]),
        }
    }
    v
}
