//! Evaluation: the LoCoMo recall harness (SPEC §7). Library code computes; the CLI prints.

pub mod recall;
