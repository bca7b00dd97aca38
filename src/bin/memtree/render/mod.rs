//! What the CLI and the REPL print alike, in one place: times (`time.rs`, the only part the
//! CLI compiles, since it prints JSON) and the REPL's tables sized to the terminal
//! (`table.rs`). The REPL example includes this folder with `#[path]`; it is no part of the
//! library's API.

pub mod table;
pub mod time;
