//! `ingest_document`: the one mode that writes (a note or document the user hands over).

use crate::error::Result;
use crate::ingest::Document;
use crate::retrieval::Scope;
use crate::tool::mode::{Mode, Target, read_only};
use crate::tool::args::{Args, in_mode};
use crate::tool::field::{FieldSpec, Ty, f};
use crate::tool::{IngestConfirmation, Response, TREE_NAME};

/// The mode.
pub(crate) struct IngestDocument;

impl Mode for IngestDocument {
    const NAME: &'static str = "ingest_document";
    const WHEN: &'static str = "Store a note or document the user hands over (the one mode that writes).";
    const DOC: &'static str =
        "Store a document (note, page, file), replacing any earlier version with the same source_id atomically.";
    const FIELDS: &'static [FieldSpec] = &[
        f("title", Ty::Str, true, "Title (non-blank)."),
        f("body", Ty::Str, true, "Full text (non-blank)."),
        f("source_id", Ty::Str, true, "Stable id, e.g. `doc:notes/roadmap.md`, `notion:page-123` (non-blank)."),
        f("provider", Ty::Str, false, "Where it lives: notion, drive, obsidian…"),
        f("source_ref", Ty::Str, false, "Path or URL back to the original."),
    ];
    const WRITES: bool = true;
    type Input = Document;

    fn parse(a: &Args<'_>) -> Result<Document> {
        // The write path checks the rest (a source id's length, NUL) and names the field;
        // `run` adds the mode.
        Ok(Document {
            source_id: a.non_blank("source_id")?.trim().into(),
            title: a.non_blank("title")?,
            body: a.non_blank("body")?,
            modified_ms: None,
            source_ref: a.opt_str("source_ref")?,
            provider: a.opt_str("provider")?,
        })
    }

    fn run(d: Document, on: Target<'_>, _scope: &Scope) -> Result<Response> {
        let Target::Writer(mem) = on else {
            return Err(read_only(Self::NAME));
        };
        let asked = d.source_id.0.clone();
        // The write path names the field; the tool's caller also needs the mode (SPEC §3).
        // A vault note stored from its file under another id is that source (one note, one
        // source): the caller hears which.
        let written = mem.write_document(d).map_err(|e| in_mode(e, TREE_NAME, Self::NAME))?;
        let (source_id, r) = (written.source_id.0, written.report);
        let mut message = if r.removed > 0 {
            format!("replaced document `{source_id}`: {} leaves written ({} replaced)", r.leaves, r.removed)
        } else {
            format!("ingested document `{source_id}`: {} leaves written", r.leaves)
        };
        if source_id != asked {
            message.push_str(&format!("; `{asked}` is the vault's note stored as `{source_id}` from its file"));
        }
        if r.forgotten > 0 {
            message.push_str(&format!(
                "; {} left out: the user forgot them (held back by a forget record)",
                r.forgotten
            ));
        }
        Ok(Response::Ingested(IngestConfirmation {
            status: "ok",
            source_id,
            leaves: r.leaves,
            summaries: r.summaries,
            replaced_leaves: r.removed,
            forgotten_leaves: r.forgotten,
            message,
        }))
    }
}
