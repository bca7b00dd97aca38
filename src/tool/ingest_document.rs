//! `ingest_document`'s row of the `memory_tree` table: the one mode that writes (it has no
//! file in `retrieval/`, which never writes; `tool::call` runs it on the writer).

use super::Request;
use super::spec::{Args, INGEST_DOCUMENT, ModeSpec, Ty, f};
use crate::error::Result;
use crate::ingest::Document;

/// This mode's row.
pub(crate) const SPEC: ModeSpec = ModeSpec {
    mode: INGEST_DOCUMENT,
    when: "Store a note or document the user hands over (the one mode that writes).",
    aliases: &[],
    primary: None,
    parse,
    doc: "Store a document (note, page, file), replacing any earlier version with the same source_id atomically.",
    fields: &[
        f("title", Ty::Str, true, "Title (non-blank)."),
        f("body", Ty::Str, true, "Full text (non-blank)."),
        f("source_id", Ty::Str, true, "Stable id, e.g. `doc:notes/roadmap.md`, `notion:page-123` (non-blank)."),
        f("provider", Ty::Str, false, "Where it lives: notion, drive, obsidian…"),
        f("source_ref", Ty::Str, false, "Path or URL back to the original."),
    ],
};

fn parse(a: &Args<'_>) -> Result<Request> {
    // The write path checks the rest (a source id's length, NUL) and names the field; the
    // dispatcher adds the mode (`tool::call`).
    Ok(Request::IngestDocument(Document {
        source_id: a.non_blank("source_id")?.trim().into(),
        title: a.non_blank("title")?,
        body: a.non_blank("body")?,
        modified_ms: None,
        source_ref: a.opt_str("source_ref")?,
        provider: a.opt_str("provider")?,
    }))
}
