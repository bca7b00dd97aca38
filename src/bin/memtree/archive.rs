//! `memtree export` and `memtree restore`: the user's data out to a JSON Lines archive and
//! back into a store (issue 32), with their progress on stderr.

use crate::progress::{Phase, Shown};
use crate::render::time::bound;
use anyhow::{Context, Result};
use memtree::{ExportFilter, Memory, MemoryReader, OpenOptions, RestoreOptions};
use std::io::Write;
use std::path::Path;

/// The export's filter from `--source`, `--since` and `--until`.
pub(crate) fn filter(sources: &[String], since: Option<&str>, until: Option<&str>) -> Result<ExportFilter> {
    Ok(ExportFilter {
        sources: sources.to_vec(),
        since_ms: since.map(|d| bound(d, false)).transpose()?,
        until_ms: until.map(|d| bound(d, true)).transpose()?,
    })
}

/// Export to `out` (`-`: stdout). A file is written beside its name and renamed when whole, so
/// a failed export leaves no half archive under the name. Returns the counts.
pub(crate) fn export(
    reader: &MemoryReader,
    out: &Path,
    filter: &ExportFilter,
    shown: Shown,
) -> Result<memtree::ExportReport> {
    let mut phase: Option<Phase> = None;
    let mut progress = |p: memtree::Progress| {
        phase.get_or_insert_with(|| Phase::new(shown, "exporting leaves", p.total)).update(p.done, p.total);
    };
    if out == Path::new("-") {
        return Ok(reader.export(std::io::stdout().lock(), filter, &mut progress)?);
    }
    let name = out.file_name().context("--out names no file")?.to_string_lossy().into_owned();
    let part = out.with_file_name(format!(".{name}.partial"));
    let file = std::fs::File::create(&part).with_context(|| format!("creating {}", part.display()))?;
    let written = reader.export(&file, filter, &mut progress).and_then(|c| {
        let mut f = file;
        f.flush().and_then(|()| f.sync_all()).map_err(|e| memtree::Error::io(&part, e))?;
        Ok(c)
    });
    match written {
        Ok(c) => {
            std::fs::rename(&part, out).with_context(|| format!("writing {}", out.display()))?;
            Ok(c)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&part);
            Err(e.into())
        }
    }
}

/// Restore `file` (`-`: stdin) into the store at `dir`.
pub(crate) fn restore(
    dir: &Path,
    file: &Path,
    opts: OpenOptions,
    merge: bool,
    shown: Shown,
) -> Result<serde_json::Value> {
    let mut phase: Option<Phase> = None;
    let progress = |p: memtree::Progress| {
        phase.get_or_insert_with(|| Phase::new(shown, "vectors", p.total)).update(p.done, p.total);
    };
    let ropts = RestoreOptions { merge };
    let report = if file == Path::new("-") {
        Memory::restore(dir, std::io::stdin().lock(), opts, &ropts, progress)
    } else {
        let f = std::fs::File::open(file).map_err(|e| memtree::Error::io(file, e))?;
        Memory::restore(dir, std::io::BufReader::with_capacity(1 << 16, f), opts, &ropts, progress)
    };
    Ok(serde_json::to_value(report.map_err(with_flags)?)?)
}

/// A restore's error with the flags that answer it: the library says what to do, and only
/// the command line knows what its flags are called.
fn with_flags(e: memtree::Error) -> anyhow::Error {
    let hint = match &e {
        memtree::Error::StoreNotEmpty { .. } => "--merge merges it",
        memtree::Error::ArchiveModel { .. } => {
            "--model DIR names the archive's model; or --no-model, then `memtree reindex` with the new one"
        }
        _ => return e.into(),
    };
    anyhow::anyhow!("{e} ({hint})")
}
