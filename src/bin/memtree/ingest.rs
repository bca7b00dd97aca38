//! `memtree ingest`: the import with its progress on stderr, and the summary it prints.

use crate::progress::{Phase, Shown};
use anyhow::Result;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use memtree::{Format, ImportOptions, ImportSummary, Memory};
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
    let mut phase: Option<Phase> = None;
    let summary = mem.import_with(format, path, opts, |p| {
        phase.get_or_insert_with(|| Phase::new(shown, &format!("writing {}", p.unit), p.total)).update(p.done, p.total);
    })?;
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
            eprintln!("memtree: warning: {}:{}: {}", path.display(), w.line, w.reason);
        }
    }
    Ok(summary)
}

/// The `ingest` summary: the write counts, and for a notes folder what the sync did.
pub(crate) fn ingest_json(s: &ImportSummary) -> serde_json::Value {
    let r = &s.report;
    let mut v = serde_json::json!({"sources": r.sources, "leaves": r.leaves, "summaries": r.summaries,
        "duplicates": r.duplicates, "removed": r.removed, "forgotten": r.forgotten});
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
        // The messages the input held, those handed to the store (new or already there),
        // those left out by reason, and the lines that might have separated two of them.
        v["messages"] = serde_json::json!({"read": read.read, "written": read.written, "skipped": read.skipped});
        v["warnings"] = serde_json::json!(read.warnings);
    }
    v
}
