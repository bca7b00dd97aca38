//! What a write did, in words: `:forget`'s receipt and `:import`'s summary (the CLI prints
//! both as JSON).

use memtree::{ForgetReceipt, ImportSummary};

/// `forgot 3 leaves of slack:#random; 0 summaries re-sealed, 1 entities gone`.
pub fn forgot(r: &ForgetReceipt) -> String {
    format!(
        "forgot {} leaves of {}; {} summaries re-sealed, {} entities gone{}",
        r.leaves.len(),
        r.source_id,
        r.resealed.len(),
        r.entities.len(),
        if r.source_removed { "; the source is gone" } else { "" }
    )
}

/// An import of `path`: the lines for stdout (the counts; for a notes folder what the sync
/// did and the notes that vanished), and the notices for stderr (files skipped, warnings).
pub fn imported(path: &str, s: &ImportSummary, pruned: bool) -> (Vec<String>, Vec<String>) {
    let r = &s.report;
    let mut out = vec![format!(
        "imported {path}: {} leaves, {} summaries ({} leaves already there{})",
        r.leaves,
        r.summaries,
        r.duplicates,
        if r.forgotten > 0 { format!(", {} forgotten: held back", r.forgotten) } else { String::new() }
    )];
    let Some(n) = &s.notes else {
        // Messages and e-mails: the counts (they add up to `read`) and each record skipped or
        // doubted, named as the CLI names it.
        let Some(read) = &s.read else { return (out, Vec::new()) };
        let skipped: u64 = read.skipped.values().sum();
        out.push(format!(
            "records: {} read, {} written, {} already there, {} forgotten, {} skipped",
            read.read, read.written, read.duplicates, read.forgotten, skipped
        ));
        let notices = read
            .warnings
            .iter()
            .map(|w| {
                let file = w.file.as_deref().map_or_else(|| path.to_string(), |f| f.display().to_string());
                match w.line {
                    0 => format!("warning: {file}: {}", w.reason),
                    line => format!("warning: {file}:{line}: {}", w.reason),
                }
            })
            .collect();
        return (out, notices);
    };
    out.push(format!(
        "notes: {} added, {} replaced, {} unchanged, {} vanished{}, {} skipped",
        n.added,
        n.replaced,
        n.unchanged,
        n.vanished.len(),
        if pruned { " (pruned)" } else { "" },
        n.skipped.len()
    ));
    out.extend(n.vanished.iter().map(|id| format!("  vanished: {id}")));
    let skipped = n.skipped.iter().map(|f| format!("skipped {}: {}", f.path.display(), f.reason));
    let warnings = n.warnings.iter().map(|f| format!("warning: {}: {}", f.path.display(), f.reason));
    (out, skipped.chain(warnings).collect())
}
