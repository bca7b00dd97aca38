//! The `memtree` command line (SPEC §8).
fn main() {}
