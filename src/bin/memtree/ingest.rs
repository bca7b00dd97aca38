//! `memtree ingest`: the import with its progress on stderr, and the summary it prints.

use anyhow::Result;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use indicatif::{ProgressBar, ProgressStyle};
use memtree::{Format, ImportOptions, ImportSummary, Memory};
use std::path::Path;

/// `--format`: the library's formats as clap's possible values, so an unknown one is a usage
/// error listing them.
pub(crate) fn format_parser() -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(Format::ALL.map(|f| PossibleValue::new(f.name()).help(f.about())))
        .map(|name| name.parse::<Format>().expect("clap admits only the formats' own names"))
}

pub(crate) fn progress(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({per_sec}, eta {eta})")
            .expect("static template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// Import with a progress bar on stderr, shown while the input is written and cleared before
/// the open buffers are sealed; a notes folder's skipped files and warnings are named on
/// stderr too.
pub(crate) fn ingest(mem: &mut Memory, format: Format, path: &Path, opts: &ImportOptions) -> Result<ImportSummary> {
    let mut bar: Option<ProgressBar> = None;
    let summary = mem.import_with(format, path, opts, |p| {
        let pb = bar.get_or_insert_with(|| progress(p.total, p.unit));
        pb.set_position(p.done);
        if p.done >= p.total {
            pb.finish_and_clear();
        }
    })?;
    if let Some(n) = &summary.notes {
        for f in &n.skipped {
            eprintln!("memtree: skipped {}: {}", f.path.display(), f.reason);
        }
        for f in &n.warnings {
            eprintln!("memtree: warning: {}: {}", f.path.display(), f.reason);
        }
    }
    Ok(summary)
}

/// The `ingest` summary: the write counts, and for a notes folder what the sync did.
pub(crate) fn ingest_json(s: &ImportSummary) -> serde_json::Value {
    let r = &s.report;
    let mut v = serde_json::json!({"sources": r.sources, "leaves": r.leaves, "summaries": r.summaries,
        "duplicates": r.duplicates, "removed": r.removed});
    if let Some(n) = &s.notes {
        v["added"] = n.added.into();
        v["replaced"] = n.replaced.into();
        v["unchanged"] = n.unchanged.into();
        v["vanished"] = serde_json::json!(n.vanished);
        v["pruned"] = serde_json::json!(n.pruned);
        v["skipped"] = serde_json::json!(n.skipped);
    }
    v
}
