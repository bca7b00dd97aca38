//! Where the session's lines come from: the line editor when stdin is a terminal (history,
//! Tab completion), else stdin's lines (a pipe, a file), read to their end; and a yes to a
//! question asked there.

use crate::complete::Complete;
use anyhow::{Context as _, Result};
use rustyline::error::ReadlineError;
use rustyline::{Editor, history::DefaultHistory};
use std::io::{BufRead, IsTerminal};
use std::path::Path;

/// A yes to a `[Y/n]` question (Enter is yes).
pub fn yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "" | "y" | "yes")
}

/// Where lines come from: the line editor at a terminal, else stdin (a pipe, a file).
pub enum Input {
    Editor(Box<Editor<Complete, DefaultHistory>>),
    Pipe(std::io::Lines<std::io::StdinLock<'static>>),
}

impl Input {
    /// The editor when stdin is a terminal (history from `history`, Tab completion), else
    /// stdin's lines.
    pub fn new(history: &Path) -> Result<Input> {
        if !std::io::stdin().is_terminal() {
            return Ok(Input::Pipe(std::io::stdin().lock().lines()));
        }
        let config = rustyline::Config::builder().completion_type(rustyline::CompletionType::List).build();
        let mut ed = Editor::<Complete, DefaultHistory>::with_config(config)?;
        ed.set_helper(Some(Complete));
        let _ = ed.load_history(history); // none yet on a new store
        Ok(Input::Editor(Box::new(ed)))
    }

    /// The next line, `None` at the end of input (Ctrl-D, Ctrl-C at the terminal).
    pub fn line(&mut self, prompt: &str) -> Result<Option<String>> {
        match self {
            Input::Editor(ed) => match ed.readline(prompt) {
                Ok(l) => Ok(Some(l)),
                Err(ReadlineError::Interrupted | ReadlineError::Eof) => Ok(None),
                Err(e) => Err(e.into()),
            },
            Input::Pipe(lines) => lines.next().transpose().context("reading stdin"),
        }
    }

    /// Whether a person is typing (the editor), who can be asked a question.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Input::Editor(_))
    }

    /// Keep a typed line in the editor's history (a blank one is not kept).
    pub fn remember(&mut self, line: &str) {
        if let Input::Editor(ed) = self
            && !line.trim().is_empty()
        {
            let _ = ed.add_history_entry(line);
        }
    }

    /// Write the editor's history to `history` for the next session.
    pub fn save(&mut self, history: &Path) {
        if let Input::Editor(ed) = self
            && let Err(e) = ed.save_history(history)
        {
            eprintln!("could not save the history to {}: {e}", history.display());
        }
    }
}
