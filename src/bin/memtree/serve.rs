//! The commands that answer from a store held by another process, and the MCP server's
//! background embedding log.

use crate::output::{forgotten_json, print, sources_json};
use crate::{Cli, Cmd};
use anyhow::{Context, Result};
use memtree::{MemoryReader, Scope};

/// `tool`, `stats`, `sources`, `forgotten` and `export` on a store another process holds for writing.
pub(crate) fn run_read_only(
    cli: &Cli,
    reader: &MemoryReader,
    call: Option<memtree::Result<memtree::tool::Request>>,
) -> Result<()> {
    match &cli.cmd {
        Cmd::Tool { .. } => {
            let out = call
                .context("a tool command carries its call")?
                .and_then(|req| memtree::tool::call_read(reader, req, &Scope::all()))
                .context("the store is open for writing in another process; read modes only")?;
            print(cli, &serde_json::to_value(out)?)
        }
        Cmd::Stats => print(cli, &serde_json::to_value(reader.stats()?)?),
        Cmd::Sources => print(cli, &sources_json(reader)?),
        Cmd::Forgotten => print(cli, &forgotten_json(reader)?),
        Cmd::Export { source, since, until, out } => {
            let filter = crate::archive::filter(source, since.as_deref(), until.as_deref())?;
            let counts = crate::archive::export(reader, out, &filter, crate::progress::Shown::for_stderr(cli.quiet)?)?;
            if out != std::path::Path::new("-") {
                print(cli, &serde_json::to_value(counts)?)?;
            }
            Ok(())
        }
        _ => unreachable!("only read commands fall back to a reader"),
    }
}

/// The MCP server's background embedding, on stderr (stdout is the protocol): each batch, the
/// end of a run that made vectors, and every failure (the next write retries).
pub(crate) fn log_embedding(event: &memtree::EmbedEvent<'_>) {
    match event {
        memtree::EmbedEvent::Batch(p) => eprintln!("memtree: embedding {}/{} vectors", p.done, p.total),
        memtree::EmbedEvent::Finished { embedded: 0 } => {}
        memtree::EmbedEvent::Finished { embedded } => eprintln!("memtree: embedded {embedded} vectors"),
        memtree::EmbedEvent::Failed(e) => {
            let mut text = e.to_string();
            let mut cause = std::error::Error::source(*e);
            while let Some(c) = cause {
                let c_text = c.to_string();
                if !text.contains(&c_text) {
                    text = format!("{text}: {c_text}");
                }
                cause = c.source();
            }
            eprintln!("memtree: background embedding failed: {text}");
        }
    }
}
