//! The demo corpus shipped beside this example (`examples/demo/`): a small team's month of
//! chat, e-mail and notes, offered on an empty store and loaded re-dated so that its final
//! week is last week.

use crate::format_names;
use crate::input::{Input, yes};
use anyhow::{Result, bail};
use memtree::{Format, Memory, Parsed};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The demo corpus's folder in this source tree.
fn demo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join("demo")
}

/// On an empty store, whether to load the demo: yes with `--demo`; at a terminal, as the
/// person answers (`None`: they left); else no, saying how to fill the store.
pub fn wanted(flag: bool, input: &mut Input) -> Result<Option<bool>> {
    if flag {
        return Ok(Some(true));
    }
    if !input.is_terminal() {
        eprintln!("The store is empty: run with --demo to load the demo corpus, or use :import FORMAT PATH.");
        return Ok(Some(false));
    }
    let ask = "This store is empty. Load the demo corpus (a small team's month of chat, e-mail and notes)? [Y/n] ";
    let answer = input.line(ask)?;
    if answer.as_deref().is_some_and(|a| !yes(a)) {
        eprintln!("Import your own data with :import FORMAT PATH ({}).", format_names());
    }
    Ok(answer.map(|a| yes(&a)))
}

/// The demo's chat channel that opens the story (its presence means the demo is loaded).
const DEMO_CHAT_SOURCE: &str = "slack:#general";

/// Load the demo corpus: its chat, mailbox and notes, re-dated to end last week.
pub fn load(mem: &mut Memory) -> Result<()> {
    let dir = demo_dir();
    // The chat's ids carry its times: a second load on another day would add a second copy.
    if mem.as_reader().has_source(DEMO_CHAT_SOURCE)? {
        bail!("the demo corpus is already loaded (:sources lists it; :forget removes a source)");
    }
    let t = Instant::now();
    // The notes carry their dates in front matter (`updated:`), which the importer reads: the
    // CLI's `ingest --format markdown examples/demo/notes` dates them the same.
    let notes = Format::Markdown.read(&dir.join("notes"))?;
    let mut inputs =
        [Format::ChatJsonl.read(&dir.join("chat.jsonl"))?, Format::Mbox.read(&dir.join("mail.mbox"))?, notes];
    // Re-dated so the story's final week is last week (the engine's clock: `--now` applies):
    // "what went wrong last week?" then asks about it. By whole weeks, so the weekdays the
    // story's text names stay true and every time of day stays as written.
    let newest = inputs.iter().filter_map(Parsed::latest_ms).max().unwrap_or(0);
    let delta = memtree::last_week_shift(newest, mem.as_reader().now_ms());
    // One flush after all three inputs, so every summary is sealed knowing all the names.
    let mut r = memtree::IngestReport::default();
    for input in &mut inputs {
        input.shift_time(delta);
    }
    for input in inputs {
        r.absorb(&mem.write_parsed(input, |_| {})?);
    }
    r.absorb(&mem.flush()?);
    let s = mem.as_reader().stats()?;
    eprintln!(
        "loaded the demo corpus from {}: {} sources, {} leaves, {} summaries ({} new leaves) in {:.1} s",
        dir.display(),
        s.counts.sources,
        s.counts.leaves,
        s.counts.summaries_per_level.iter().sum::<u64>(),
        r.leaves,
        t.elapsed().as_secs_f64()
    );
    eprintln!(
        "Larkspur Labs, a month ending last week (May 2023 in the story): six people, the Atlas database migration, the Heron driver app, a Lisbon offsite.\n\
         Try: who is Sam's onboarding buddy? · what caused INC-42? · what went wrong last week? · :entities heron"
    );
    Ok(())
}
