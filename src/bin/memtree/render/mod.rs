//! What the CLI and the REPL print alike, in one place. The CLI prints JSON but for `memtree
//! ask` (the table of hits) and uses `time.rs` (the `--now` parser, range bounds, RFC 3339);
//! the REPL example includes this folder with `#[path]` and prints everything through it: tables sized to the terminal
//! (`table.rs`), their cells (`cells.rs`), the tables of results (`tables.rs`), a response by
//! its shape (`response.rs`), `:stats` (`stats.rs`) and what a write did (`receipts.rs`). No
//! part of the library's API.

pub mod cells;
pub mod receipts;
pub mod response;
pub mod stats;
pub mod table;
pub mod tables;
pub mod time;
