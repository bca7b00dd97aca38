//! How much of the question a leaf holds: the IDF-weighted share of the question's distinct
//! terms found in its content, a named person's name held by that person's own leaves too.
//!
//! BM25 sums what each term earns, so three common words can outscore two rare ones, and a
//! long item's length divides what it earns; the share says plainly whether the memory holds
//! what was asked (issue 44, item 1). The scorer uses it in the switch that lets the dense
//! signal lead and in a short question's rule (`score.rs`).

use super::query::{QueryAnalysis, person_key};
use crate::error::Result;
use crate::index::IndexSearcher;
use crate::store::NodeBrief;
use crate::types::NodeId;
use std::collections::BTreeSet;

/// The question's terms coverage is counted over: the distinct analysed terms of its lexical
/// text with their IDF, and which are a named person's (as the index analyses the name).
pub struct QuestionTerms {
    terms: Vec<String>,
    idf: Vec<f64>,
    /// Per term: it is a word of a person the question names as speaker
    /// (`QueryAnalysis::people`).
    person: Vec<bool>,
}

impl QuestionTerms {
    /// The terms of `qa.lexical`, weighted as BM25 weighs them (`term_weights`). A term no
    /// document holds weighs as the rarest: asked for and nowhere found, it still counts
    /// against every leaf's share.
    pub fn of(searcher: &IndexSearcher, qa: &QueryAnalysis) -> Result<Self> {
        let people: BTreeSet<String> = qa.people.iter().flat_map(|p| searcher.analyse(p)).collect();
        let weights = searcher.term_weights(&qa.lexical)?;
        let mut out = QuestionTerms { terms: Vec::new(), idf: Vec::new(), person: Vec::new() };
        // A question of more terms than a bit set holds is read by its first 64 (in term
        // order).
        for (t, w) in weights.into_iter().take(64) {
            out.person.push(people.contains(&t));
            out.terms.push(t);
            out.idf.push(f64::from(w));
        }
        Ok(out)
    }

    /// How many terms the shares are counted over.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// The rarest term (highest IDF) of the question that `id` holds: what a question about a
    /// beginning asks the beginning of (`first.rs`). `None` when it holds none.
    pub fn rarest_held(&self, searcher: &IndexSearcher, id: &NodeId) -> Result<Option<String>> {
        let held = searcher.terms_among(&self.terms, std::slice::from_ref(id))?;
        let bits = held.get(id).copied().unwrap_or(0);
        Ok((0..self.terms.len())
            .filter(|&i| bits & (1u64 << i) != 0)
            .max_by(|&a, &b| self.idf[a].total_cmp(&self.idf[b]).then(b.cmp(&a)))
            .map(|i| self.terms[i].clone()))
    }

    /// Each row's share of the question's weight, 0 to 1 (0 for every row of a question with
    /// no term). A person's name counts as held by the leaves that person wrote.
    pub fn coverage(&self, searcher: &IndexSearcher, qa: &QueryAnalysis, rows: &[NodeBrief]) -> Result<Vec<f64>> {
        let total: f64 = self.idf.iter().sum();
        if self.terms.is_empty() || total <= 0.0 {
            return Ok(vec![0.0; rows.len()]);
        }
        let ids: Vec<NodeId> = rows.iter().map(|n| n.node_id.clone()).collect();
        let held = searcher.terms_among(&self.terms, &ids)?;
        Ok(rows
            .iter()
            .map(|n| {
                let bits = held.get(&n.node_id).copied().unwrap_or(0);
                let wrote = n.author.as_ref().is_some_and(|a| qa.people.contains(&person_key(a)));
                let share: f64 = (0..self.terms.len())
                    .filter(|&i| bits & (1u64 << i) != 0 || (wrote && self.person[i]))
                    .map(|i| self.idf[i])
                    .sum();
                share / total
            })
            .collect())
    }
}
