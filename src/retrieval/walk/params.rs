//! The walk scorer's tunable weights ([`WalkParams`]): the defaults the recall harness chose,
//! SPEC §5's baseline orderings as the one named preset (`spec_baseline`), and overrides by
//! field name (serde) for the harness's `--walk` experiments.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// How the entity branches order the scored leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ordering {
    /// Every branch keeps the scorer's fused order: the recall harness measured SPEC's
    /// coverage-first orderings costing 6 points of R@10 (BENCHMARKS.md, "Walk tuning").
    #[default]
    Fused,
    /// SPEC §5's compatibility baseline: the occurrence-ranked global branch stably reorders
    /// its top `2k` by query-entity coverage; the local branch ranks intersection hits by
    /// coverage, then relevance, recency and id (score = coverage + relevance), and the
    /// global ranking fills the rest.
    SpecBaseline,
}

/// Tunable weights of the scorer. `Default` is what the recall harness chose.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WalkParams {
    /// Leaves taken from each first-stage list (BM25, dense).
    pub candidates: usize,
    /// Weight of the neighbouring turns' BM25 in a leaf's lexical score.
    pub window: f64,
    /// Weight of the parent summary's normalised score.
    pub parent: f64,
    /// Boost for a leaf whose author the question names.
    pub speaker: f64,
    /// Share of the dense signal in the fused score (0 = lexical only).
    pub dense: f64,
    /// The question's words find nothing distinctive when their best match scores less than
    /// this many times the mean of the best 50 (`score.rs`, `lexically_flat`)...
    pub flat_ratio: f64,
    /// ...and then the dense signal's share is this instead of `dense`: meaning leads.
    pub flat_dense: f64,
    /// Boost for a leaf inside the time window the question names.
    pub time_boost: f64,
    /// Boost for a leaf that speaks of the time a question names when that window bounds
    /// nothing (it lies ahead, "next Saturday", or nothing lies in it): what was said about
    /// that time is preferred instead; as large as the fused signals' whole range, so those
    /// leaves come first unless the words and meaning barely touch them.
    pub speaks_of_boost: f64,
    /// Added to the score of the host assistant's own messages (`Role::Assistant`): in a
    /// user–assistant chat the evidence is mostly what the user said (plans, dates,
    /// preferences); the assistant's answers restate it at length.
    pub assistant: f64,
    /// Used instead of `assistant` when the question asks what the assistant said or
    /// advised ("which steps did you recommend?").
    pub asked_assistant: f64,
    /// Added to the score of a leaf that holds a person's standing instruction ("always …
    /// when I ask about …"): it applies to every later request of its kind.
    pub instruction: f64,
    /// Weight of the neighbours' mean cosine in a leaf's dense score.
    pub dense_window: f64,
    /// Weight of the session's cosine (the mean of the parent's children vectors) in a
    /// leaf's dense score.
    pub dense_parent: f64,
    /// Weight of a leaf's coverage of the question (the IDF-weighted share of its terms the
    /// leaf holds, `coverage.rs`) added to its score.
    pub coverage: f64,
    /// The rules of whole coverage (`score.rs`): in a short question, a leaf holding every
    /// term ranks above every leaf holding none; and the words are not flat when a few leaves
    /// hold them all. Off only to measure what they do.
    pub whole_coverage: bool,
    /// A hit that asks carries the reply that answers it (`answer.rs`). Off only to measure
    /// what it does.
    pub answers: bool,
    /// A question about a beginning takes the earliest of its best matches first
    /// (`first.rs`). Off only to measure what it does.
    pub first_mentions: bool,
    /// A long leaf's dense score is its best passage's, own vector or a passage's past the
    /// model's window (`embed::passage_slots`). Off only to measure what it does.
    pub passages: bool,
    /// What a passage's cosine gives up against a leaf's own ([`crate::embed::PASSAGE_DISCOUNT`]).
    pub passage_discount: f64,
    /// How the entity branches order the scored leaves.
    pub ordering: Ordering,
    /// `window` for a question about a history (`history.rs`): what such a question names
    /// runs through whole sessions, so a leaf is weighed by its session, not by the turns
    /// beside it.
    pub history_window: f64,
    /// `parent` for a question about a history.
    pub history_parent: f64,
    /// `dense_parent` for a question about a history.
    pub history_dense_parent: f64,
}

impl Default for WalkParams {
    fn default() -> Self {
        // Chosen with the recall harness (BENCHMARKS.md, "walk tuning"): SPEC §5's
        // coverage-first orderings cost recall on LoCoMo, so they are off by default. The
        // dense share (0.65) is what leave-one-conversation-out picked in all seven folds
        // among the 25 settings of run z.
        WalkParams {
            candidates: 300,
            window: 1.0,
            parent: 0.15,
            speaker: 0.3,
            dense: 0.65,
            // Leave-one-conversation-out over LoCoMo, BEAM and REALTALK dev together (22
            // folds, 9 settings of the two): 1.4 and 0.9 in every fold (BENCHMARKS.md,
            // "Three corpora").
            flat_ratio: 1.4,
            flat_dense: 0.9,
            time_boost: 0.2,
            speaks_of_boost: 1.0,
            assistant: -0.3,
            asked_assistant: 0.0,
            // Leave-one-conversation-out on BEAM dev over 0 … 0.5 picked 0.2 in all ten folds
            // (BENCHMARKS.md, "Standing instructions"); no LoCoMo turn is one.
            instruction: 0.2,
            dense_window: 0.5,
            dense_parent: 0.5,
            coverage: 0.0,
            whole_coverage: true,
            answers: true,
            first_mentions: true,
            passages: true,
            passage_discount: f64::from(crate::embed::PASSAGE_DISCOUNT),
            ordering: Ordering::Fused,
            // Leave-one-conversation-out on BEAM dev's 40 order and summary questions, over
            // 36 settings of these three (BENCHMARKS.md, "History over the tree"): 0 and 0.3
            // in all ten folds, 2 in eight.
            history_window: 0.0,
            history_parent: 0.3,
            history_dense_parent: 2.0,
        }
    }
}

/// The named starting points `--walk` accepts.
pub const PRESETS: [&str; 2] = ["default", "spec_baseline"];

impl WalkParams {
    /// The defaults with SPEC §5's baseline orderings.
    pub fn spec_baseline() -> Self {
        WalkParams { ordering: Ordering::SpecBaseline, ..WalkParams::default() }
    }

    /// The weights a question about a history is scored with: the `history_` ones in place
    /// of `window`, `parent` and `dense_parent`.
    pub fn for_history(&self) -> Self {
        WalkParams {
            window: self.history_window,
            parent: self.history_parent,
            dense_parent: self.history_dense_parent,
            ..*self
        }
    }

    /// The preset called `name` (one of [`PRESETS`]).
    pub fn preset(name: &str) -> Option<Self> {
        match name {
            "default" => Some(WalkParams::default()),
            "spec_baseline" => Some(WalkParams::spec_baseline()),
            _ => None,
        }
    }

    /// `self` with the fields named in `overrides` replaced. Deserialised, so an unknown
    /// name or a value of the wrong type is an error rather than a silent no-op.
    pub fn with_overrides(&self, overrides: Map<String, Value>) -> Result<Self> {
        // The base goes through a `Value` (no text): every weight not overridden stays
        // exactly the same `f64`.
        let mut base = match serde_json::to_value(self)? {
            Value::Object(m) => m,
            _ => unreachable!("a struct serialises to an object"),
        };
        base.extend(overrides);
        serde_json::from_value(Value::Object(base)).map_err(|e| Error::invalid("walk weights", e.to_string()))
    }

    /// The weights a list of settings asks for (the harness's `--walk` values): at most one
    /// preset name (see [`PRESETS`]), and `key=value` overrides applied on top of it
    /// (`dense=0.6`, `ordering=spec_baseline`).
    pub fn from_settings(values: &[String]) -> Result<Self> {
        let mut preset: Option<(&str, WalkParams)> = None;
        let mut overrides = Map::new();
        for v in values {
            match v.split_once('=') {
                Some((k, val)) => {
                    overrides.insert(k.trim().to_string(), setting_value(val.trim()));
                }
                None => {
                    let p = WalkParams::preset(v.trim()).ok_or_else(|| {
                        Error::invalid("walk weights", format!("expected key=value or one of {PRESETS:?}, got {v:?}"))
                    })?;
                    if let Some((first, _)) = preset {
                        return Err(Error::invalid("walk weights", format!("two presets: {first:?} and {v:?}")));
                    }
                    preset = Some((v.as_str(), p));
                }
            }
        }
        preset.map_or_else(WalkParams::default, |(_, p)| p).with_overrides(overrides)
    }
}

/// A setting's value as JSON: an integer, else a float (parsed by Rust, so `0.6` is the
/// same `f64` as the literal), else a boolean, else a string (an enum variant's name).
fn setting_value(s: &str) -> Value {
    if let Ok(n) = s.parse::<u64>() {
        return Value::Number(n.into());
    }
    if let Some(n) = s.parse::<f64>().ok().and_then(Number::from_f64) {
        return Value::Number(n);
    }
    match s.parse::<bool>() {
        Ok(b) => Value::Bool(b),
        Err(_) => Value::String(s.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(v: &[&str]) -> Result<WalkParams> {
        WalkParams::from_settings(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn overrides_by_name_on_top_of_a_preset() {
        assert_eq!(cli(&[]).unwrap(), WalkParams::default());
        let p = cli(&["dense=0.6", "window=0.4", "candidates=200"]).unwrap();
        assert_eq!((p.dense, p.window, p.candidates), (0.6, 0.4, 200));
        assert_eq!(WalkParams { dense: 0.6, window: 0.4, candidates: 200, ..WalkParams::default() }, p);
        let p = cli(&["spec_baseline", "speaker=0.1"]).unwrap();
        assert_eq!(p, WalkParams { speaker: 0.1, ..WalkParams::spec_baseline() });
        assert_eq!(cli(&["ordering=spec_baseline"]).unwrap(), WalkParams::spec_baseline());
        // An integer is a valid f64 weight.
        assert_eq!(cli(&["parent=1"]).unwrap().parent, 1.0);
    }

    #[test]
    fn typos_and_bad_values_are_errors() {
        let e = cli(&["windw=0.4"]).unwrap_err().to_string();
        assert!(e.contains("unknown field `windw`"), "{e}");
        assert!(cli(&["dense=lots"]).is_err());
        assert!(cli(&["session_decay=0.9"]).is_err(), "removed switches are unknown");
        assert!(cli(&["ordering=coverage"]).is_err());
        assert!(cli(&["nonsense"]).is_err());
        assert!(cli(&["spec_baseline", "default"]).is_err());
    }
}
