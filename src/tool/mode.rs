//! The trait a `memory_tree` mode implements: its row of the table (names, docs, fields) and
//! how it reads its arguments and runs. Each mode is one file under `modes/`; the engine
//! functions it calls know nothing of the tool.

use super::Response;
use super::args::Args;
use super::field::FieldSpec;
use super::spec::ModeSpec;
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::reader::MemoryReader;
use crate::retrieval::Scope;
use std::any::Any;
use std::fmt;

/// What a mode runs on: a reader in one snapshot (the read modes), or the writer (the one
/// mode that writes).
pub(crate) enum Target<'a> {
    /// A read mode's snapshot.
    Reader(&'a MemoryReader),
    /// The writer, for a mode whose [`Mode::WRITES`] is true.
    Writer(&'a mut Memory),
}

impl<'a> Target<'a> {
    /// The reader a read mode runs on (the writer's own, for a call on the writer).
    pub(crate) fn reader(&self) -> Result<&MemoryReader> {
        Ok(match self {
            Target::Reader(r) => r,
            Target::Writer(m) => m.as_reader(),
        })
    }
}

/// One mode of the `memory_tree` tool.
pub(crate) trait Mode: 'static {
    /// The `mode` value.
    const NAME: &'static str;
    /// Other names accepted for it (`smart_walk` for `walk`).
    const ALIASES: &'static [&'static str] = &[];
    /// When to use it, in one line (the tool's description lists these).
    const WHEN: &'static str;
    /// What it does, for the JSON Schema.
    const DOC: &'static str;
    /// Its arguments.
    const FIELDS: &'static [FieldSpec];
    /// The field bare words fill where a mode is typed (the REPL's `:walk …`).
    const PRIMARY: Option<&'static str> = None;
    /// True for a mode that writes: it runs on the writer, and a reader refuses it.
    const WRITES: bool = false;

    /// Its arguments once read.
    type Input: fmt::Debug + Clone + PartialEq + Send + Sync + 'static;

    /// Read the arguments (keys and required fields already checked; values are read, and
    /// refused, through [`Args`]).
    fn parse(a: &Args<'_>) -> Result<Self::Input>;

    /// Run the call. A read mode is given [`Target::Reader`]; a mode that writes,
    /// [`Target::Writer`].
    fn run(args: Self::Input, on: Target<'_>, scope: &Scope) -> Result<Response>;
}

/// The table's row of a mode, its parser building a [`super::Request`] of that mode.
pub(crate) const fn row<M: Mode>() -> ModeSpec {
    ModeSpec {
        mode: M::NAME,
        aliases: M::ALIASES,
        when: M::WHEN,
        doc: M::DOC,
        fields: M::FIELDS,
        primary: M::PRIMARY,
        parse: parse_into::<M>,
    }
}

fn parse_into<M: Mode>(a: &Args<'_>) -> Result<super::Request> {
    Ok(super::Request(Box::new(Call::<M>(M::parse(a)?))))
}

/// One parsed call of mode `M`.
struct Call<M: Mode>(M::Input);

/// A parsed call whatever its mode: what [`super::Request`] holds.
pub(crate) trait AnyCall: Send + Sync {
    /// Its mode's name.
    fn mode(&self) -> &'static str;
    /// True for the mode that writes.
    fn writes(&self) -> bool;
    /// Run it, once.
    fn run(self: Box<Self>, on: Target<'_>, scope: &Scope) -> Result<Response>;
    fn clone_box(&self) -> Box<dyn AnyCall>;
    /// Its arguments, for [`AnyCall::eq_call`].
    fn args(&self) -> &dyn Any;
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// The same mode with equal arguments.
    fn eq_call(&self, other: &dyn AnyCall) -> bool;
}

impl<M: Mode> AnyCall for Call<M> {
    fn mode(&self) -> &'static str {
        M::NAME
    }
    fn writes(&self) -> bool {
        M::WRITES
    }
    fn run(self: Box<Self>, on: Target<'_>, scope: &Scope) -> Result<Response> {
        M::run(self.0, on, scope)
    }
    fn clone_box(&self) -> Box<dyn AnyCall> {
        Box::new(Call::<M>(self.0.clone()))
    }
    fn args(&self) -> &dyn Any {
        &self.0
    }
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", M::NAME)?;
        fmt::Debug::fmt(&self.0, f)?;
        write!(f, ")")
    }
    fn eq_call(&self, other: &dyn AnyCall) -> bool {
        other.mode() == M::NAME && other.args().downcast_ref::<M::Input>().is_some_and(|o| *o == self.0)
    }
}

/// The error of a write asked of a reader.
pub(crate) fn read_only(mode: &str) -> Error {
    Error::InvalidRequest { message: format!("{}: {mode}: this handle is read-only", super::TREE_NAME) }
}
