//! Tab completion at the terminal: `:commands` (the REPL's table and one per mode), mode
//! names after `:mode`, a mode's field names (off the tool's rows) and import formats.

use crate::{COMMANDS, FORMATS};
use memtree::tool::{self, MODE_NAMES};
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};

/// The REPL's line-editor helper: completion only.
pub struct Complete;

impl Completer for Complete {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let head = &line[..pos];
        let start = head.rfind(char::is_whitespace).map(|i| i + 1).unwrap_or(0);
        let word = &head[start..];
        let words: Vec<&str> = head[..start].split_whitespace().collect();
        let candidates: Vec<String> = match words.as_slice() {
            [] if word.starts_with(':') => COMMANDS
                .iter()
                .map(|c| format!(":{}", c.names[0]))
                .chain(MODE_NAMES.iter().map(|m| format!(":{m}")))
                .filter(|c| c.starts_with(word))
                .map(|c| format!("{c} "))
                .collect(),
            [":mode"] => MODE_NAMES.iter().filter(|m| m.starts_with(word)).map(|m| format!("{m} ")).collect(),
            [":import"] => {
                FORMATS.iter().map(|f| f.name()).filter(|f| f.starts_with(word)).map(|f| format!("{f} ")).collect()
            }
            [first, rest @ ..] if first.starts_with(':') && !word.contains('=') => {
                let mode = match (*first, rest) {
                    (":mode", [m, ..]) => *m,
                    (c, _) => c.trim_start_matches(':'),
                };
                tool::mode(mode)
                    .into_iter()
                    .flat_map(|m| m.fields.iter().map(|f| format!("{}=", f.name)))
                    .filter(|f| f.starts_with(word))
                    .collect()
            }
            _ => Vec::new(),
        };
        Ok((start, candidates.into_iter().map(|s| Pair { display: s.clone(), replacement: s }).collect()))
    }
}

impl Hinter for Complete {
    type Hint = String;
}
impl Highlighter for Complete {}
impl Validator for Complete {}
impl Helper for Complete {}
