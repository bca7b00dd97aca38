//! First mentions (issue 44, item 5): "who first raised X", "when did X start", "who added
//! X" ask for the record that introduced X. On a stream of short records (commits, tickets,
//! a channel) X is named again and again afterwards, often in words closer to the question's
//! than the first record's, so relevance alone returns a later mention. What X is: the
//! rarest of the question's terms that its best match holds. Among the first hits that hold
//! it and score near the best, the earliest comes first.

use super::coverage::QuestionTerms;
use super::query::QueryAnalysis;
use super::rank::Ranked;
use crate::error::Result;
use crate::index::IndexSearcher;
use crate::types::NodeId;

/// The hits looked at: the first ones of the ranking, where the memories that match well
/// lie. Past them, an earlier record matches too little to be what was asked about.
const FIRST_POOL: usize = 10;

/// A hit matches near the best when it scores at least this share of the top score and
/// holds at least this share of what the best-covering hit of the pool holds of the question
/// (`coverage`): an earlier record holding the topic word among little else of the question
/// is another matter that shares a word.
const SCORE_SHARE: f64 = 0.5;
const COVERAGE_SHARE: f64 = 0.5;

/// Move the earliest hit among the first [`FIRST_POOL`] that holds the question's topic
/// term and matches near the best to the front; the others keep their order. Nothing moves
/// when the best hit holds none of the question's terms.
pub fn earliest_first(searcher: &IndexSearcher, qa: &QueryAnalysis, ranked: &mut [Ranked]) -> Result<()> {
    let pool = ranked.len().min(FIRST_POOL);
    let Some(top) = ranked.first() else { return Ok(()) };
    let top_score = top.score;
    let terms = QuestionTerms::of(searcher, qa)?;
    let Some(topic) = terms.rarest_held(searcher, &top.scored.node.node_id)? else { return Ok(()) };
    let ids: Vec<NodeId> = ranked[..pool].iter().map(|r| r.scored.node.node_id.clone()).collect();
    let holders = searcher.terms_among(std::slice::from_ref(&topic), &ids)?;
    let floor = SCORE_SHARE * top_score.max(0.0);
    let covered = COVERAGE_SHARE * ranked[..pool].iter().map(|r| r.scored.coverage.unwrap_or(0.0)).fold(0.0, f64::max);
    let earliest = ranked[..pool]
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            holders.contains_key(&r.scored.node.node_id)
                && r.score >= floor
                && r.scored.coverage.unwrap_or(0.0) >= covered
        })
        .min_by_key(|(i, r)| (r.scored.node.time_start_ms, *i))
        .map(|(i, _)| i);
    if let Some(i) = earliest {
        // First with the first place's score: the order and the scores agree.
        ranked[i].score = ranked[i].score.max(top_score);
        ranked[..=i].rotate_right(1);
    }
    Ok(())
}
