//! Writing entity files so that a reader (or a crash) sees the old file or the new one,
//! never half of one: temp file beside the target, flushed, moved into place, folder flushed.

use crate::error::{Error, Result};
use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The file's bytes, or `None` when it does not exist.
pub(super) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// How [`atomic_write`] places the finished temp file.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum WriteMode {
    /// Replace whatever is at the path.
    Replace,
    /// Only if nothing is at the path (checked atomically where hard links exist).
    CreateNew,
}

/// Write `bytes` to a temp file beside `path`, flush it to disk, then move it into place and
/// flush the folder, so a reader (or a crash) sees the old file or the new one, never half of
/// one. Returns false when `mode` is `CreateNew` and the path was taken.
pub(super) fn atomic_write(path: &Path, bytes: &[u8], mode: WriteMode) -> Result<bool> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().expect("entity paths have a parent folder");
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).expect("entity file names are ASCII");
    // A dot file: Obsidian and `scan` ignore it, and no slug starts with a dot.
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed)));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(Error::io(&tmp, e));
    }
    let placed = match mode {
        WriteMode::Replace => fs::rename(&tmp, path).map(|()| true),
        // A hard link fails when the target exists, which makes "create unless present"
        // atomic; file systems without hard links fall back to check-then-rename.
        WriteMode::CreateNew => match fs::hard_link(&tmp, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(_) if fs::symlink_metadata(path).is_ok() => Ok(false),
            Err(_) => fs::rename(&tmp, path).map(|()| true),
        },
    };
    // After a rename the temp name is gone already; after a hard link or a failure it is not.
    let _ = fs::remove_file(&tmp);
    let placed = placed.map_err(|e| Error::io(path, e))?;
    if placed {
        sync_dir(dir)?;
    }
    Ok(placed)
}

/// Make a rename in `dir` durable (the folder's entry list is flushed on Unix; elsewhere the
/// rename itself is as durable as the platform makes it).
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(dir, e))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
