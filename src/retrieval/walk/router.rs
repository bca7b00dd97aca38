//! The deterministic E2GraphRAG-style router (SPEC §5): no query entity → global; entities
//! but no pair of them sharing a leaf → occurrence-ranked global; pairs sharing leaves → local:
//! the union of the pairs' entity posting-list intersections in the full-text index.
//!
//! No graph is walked: an edge is a leaf that names both entities (`store/entities.rs`), so
//! two entities more than one hop apart share no leaf and their intersection is empty. Every
//! pair that contributes candidates is one hop apart, and the intersections themselves say
//! which pairs those are (ARCHITECTURE.md, "The graph on the read path").

use super::answer;
use super::history;
use super::params::WalkParams;
use super::query::{QueryAnalysis, analyse_query};
use super::rank::{Branch, Coverage, Ranked, rank};
use super::score::{CandidateSignals, QuestionSignals, candidate_signals, score_leaves};
use super::timeline::timeline;
use crate::error::{Error, Result};
use crate::index::{IndexSearcher, LevelFilter, NodeDoc, SearchFilter};
use crate::reader::MemoryReader;
use crate::retrieval::hit::{HitParts, QueryResponse, RetrievalHit, Scope};
use crate::retrieval::snippet::{Headline, Headlines, attach_snippets};
use crate::store::{NodeReads, NodeRow};
use crate::time::AdmittedBy;
use crate::types::{EntityId, NodeId};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};

/// At most this many shared nodes are read per pair's posting-list intersection
/// (the candidates are then cut to `candidates` by [`best_local`]).
const MAX_PAIR_POSTINGS: usize = 10_000;

/// Arguments (validated by the tool layer).
#[derive(Debug, Clone, PartialEq)]
pub struct WalkArgs {
    /// The question (non-blank).
    pub query: String,
    /// Hits wanted (default 10, cap 100).
    pub limit: usize,
    /// Hop bound for relating query entities (default 2, cap 4). Changes no answer: pairs
    /// farther than one hop share no leaf (`route`).
    pub max_hops: u32,
    /// Only content whose envelope overlaps the last N days (wall clock).
    pub time_window_days: Option<f64>,
    /// Only content inside this window, epoch ms, inclusive (`memtree ask --since/--until`):
    /// a bound of the caller's, as `time_window_days` is, admitting by either clock.
    pub between_ms: Option<(i64, i64)>,
    /// Scorer weights.
    pub params: WalkParams,
    /// Apply the store's rerank stage (`OpenOptions::reranker`) when it has one (default
    /// true; the recall harness turns it off to measure walk alone).
    pub rerank: bool,
}

impl WalkArgs {
    /// A walk with SPEC defaults.
    pub fn new(query: impl Into<String>) -> Self {
        WalkArgs {
            query: query.into(),
            limit: 10,
            max_hops: 2,
            time_window_days: None,
            between_ms: None,
            params: WalkParams::default(),
            rerank: true,
        }
    }
}

/// The router's decision: the branch and the local intersection (empty unless local).
struct Route {
    branch: Branch,
    local: Vec<NodeId>,
}

/// Answer `args.query`. Hits are leaves; `score` is the scorer's fused relevance (for local
/// hits under SPEC §5's ordering, the number of query entities covered plus that relevance,
/// so coverage ranks first); every hit carries `explain` with its branch and signals. A
/// question about an order or asking for a summary is answered over the tree (`history.rs`):
/// its hits are session summaries in time order, each carrying its evidence leaves
/// (`RetrievalHit::evidence`, at most `limit` leaves in all), and the response's `explain`
/// says `"history"`.
pub fn walk(mem: &MemoryReader, args: &WalkArgs, scope: &Scope) -> Result<QueryResponse> {
    // One searcher, one commit of the index, for every index read of the walk: the route's
    // posting lists, the scorer's BM25, the snippets' term weights.
    let searcher = mem.index().searcher();
    let (mut qa, mut flt, mut route) = prepare(mem, &searcher, args, scope)?;
    let mut time = TimeExplain::new(&qa, &flt);
    if time.disjoint {
        return Ok(time.attach(QueryResponse::new(Vec::new(), 0)));
    }
    if qa.time_only {
        let response = match flt.window_ms {
            Some(w) => timeline_response(mem, &searcher, &qa, w, &flt, args.limit)?,
            // "What happened on February 30?": no day to answer from, and no topic either.
            None => QueryResponse::new(Vec::new(), 0),
        };
        return Ok(time.attach(response));
    }
    // A question about a history weighs each leaf by its session (`history.rs`).
    let history = qa.asks_order || qa.asks_summary;
    let params = if history { args.params.for_history() } else { args.params };
    let mut scored = score_leaves(mem, &searcher, &qa, &flt, &params, &route.local)?;
    // Its words match nothing the window admits (without the model, only words find). The
    // window's own content, by time, is kept as the answer in case the words match nothing
    // anywhere either ("what did we plan for May 6?" of "next Saturday we fly", said on 1 May,
    // where no message says "plan").
    // Only the reading is kept here (the window's content is read if it comes to that).
    let bounded = match (flt.window_ms, qa.window) {
        (Some(w), Some(_)) if scored.is_empty() && !history => Some((w, qa.clone(), flt.clone(), time.clone())),
        _ => None,
    };
    // A question with a topic whose window holds nothing to answer from, neither said inside
    // it nor speaking of it later: the window then bounds nothing, and what speaks of its time
    // ranks first (a date the question gets from elsewhere than when things were said, "in
    // December" of a plan made in November). Said in `explain`. `time_window_days` is the
    // caller's own bound and stays one.
    if scored.is_empty()
        && let Some((a, b)) = soften(&searcher, args, &mut qa, &mut flt, &mut route)?
    {
        time = TimeExplain::new(&qa, &flt);
        time.notes.push(format!(
            "nothing lies inside the window {} to {}: answered from all dates, what speaks of that time first",
            crate::retrieval::rfc3339(a),
            crate::retrieval::rfc3339(b)
        ));
        scored = score_leaves(mem, &searcher, &qa, &flt, &params, &route.local)?;
    }
    if scored.is_empty()
        && let Some((w, qa, flt, mut time)) = bounded
    {
        let response = timeline_response(mem, &searcher, &qa, w, &flt, args.limit)?;
        if !response.hits.is_empty() {
            time.notes.push(
                "the question's words match nothing, inside the window or outside it: what lies in it is given".into(),
            );
            return Ok(time.attach(response));
        }
    }
    let coverage = Coverage::new(mem, &qa.entities);
    let mut ranked = rank(route.branch, scored, &route.local, args.limit, args.params.ordering, &coverage)?;
    if history {
        let response = history_response(mem, &searcher, &qa, &route, ranked, args.limit, &coverage)?;
        return Ok(time.attach(response));
    }
    if qa.asks_first && args.params.first_mentions {
        super::first::earliest_first(&searcher, &qa, &mut ranked)?;
    }
    let total = ranked.len();
    // The rerank stage re-scores walk's top N (hits past them keep walk's order), then keeps
    // `limit`: it reorders what walk found inside the window, so the window still bounds it.
    let reranker = mem.options().reranker.as_ref().filter(|_| args.rerank);
    // A quarter page more when replies may be given with their questions (each one given so
    // leaves the page a hit short; a page rarely gives more): cut to `limit` after.
    let page = reranker.map_or(args.limit, |r| r.top.max(args.limit));
    ranked.truncate(if args.params.answers { page + page.div_ceil(4) } else { page });
    let ids: Vec<NodeId> = ranked.iter().map(|r| r.scored.node.node_id.clone()).collect();
    // Standing instructions keep their place (`rerank_hits`); nothing to note without a stage.
    let mut pinned: Vec<bool> = match reranker {
        Some(_) => ranked.iter().map(|r| r.scored.node.instruction).collect(),
        None => Vec::new(),
    };
    let rows = HitRows::read(mem, &ids)?;
    let mut hits =
        ranked.into_iter().map(|r| leaf_hit(&rows, &qa, &route, r, &coverage)).collect::<Result<Vec<_>>>()?;
    attach_snippets(&searcher, &qa.lexical, &mut hits)?;
    // Before the rerank stage: a reply given with its question takes no place of its own
    // there (the stage scores the question's own text; its answer moves with it).
    if args.params.answers {
        let given = attach_answers(mem, &searcher, &qa, &rows, &mut hits)?;
        if !pinned.is_empty() {
            pinned = pinned.into_iter().enumerate().filter(|(i, _)| !given.contains(i)).map(|(_, p)| p).collect();
        }
    }
    if let Some(r) = reranker {
        super::rerank_stage::rerank_hits(r, crate::text::cap_question(&args.query).0, &mut hits, &pinned)?;
    }
    hits.truncate(args.limit);
    Ok(time.attach(QueryResponse::new(hits, total)))
}

/// Each hit that asks gets the reply that answers it (`answer.rs`) as its `answer`, with a
/// snippet when long; a reply that is itself a hit further down is given there no more (it
/// is given with its question), and one ranked above its question is not given again.
/// Returns the positions of the hits taken out that way.
fn attach_answers(
    mem: &MemoryReader,
    searcher: &IndexSearcher,
    qa: &QueryAnalysis,
    rows: &HitRows,
    hits: &mut Vec<RetrievalHit>,
) -> Result<BTreeSet<usize>> {
    let nodes: Vec<&NodeRow> =
        hits.iter().map(|h| rows.row(&NodeId(h.node_id.clone()), "a hit")).collect::<Result<_>>()?;
    let own: Vec<bool> = nodes
        .iter()
        .zip(hits.iter())
        .map(|(n, h)| match h.source_kind {
            Some(kind) => answer::asks(&n.ranked_text(kind)),
            None => answer::asks(&n.content),
        })
        .collect();
    let place: HashMap<&str, usize> = hits.iter().enumerate().map(|(i, h)| (h.node_id.as_str(), i)).collect();
    let answered: Vec<answer::Answered> = answer::answered(mem, &nodes, &own)?
        .into_iter()
        .filter(|a| place.get(a.reply.as_str()).is_none_or(|&i| i > a.at))
        .collect();
    if answered.is_empty() {
        return Ok(BTreeSet::new());
    }
    // The replies that are hits further down: given with their question, not again there.
    let repeated: BTreeSet<usize> = answered.iter().filter_map(|a| place.get(a.reply.as_str()).copied()).collect();
    let ids: Vec<NodeId> = answered.iter().map(|a| a.reply.clone()).collect();
    let replies = HitRows::read(mem, &ids)?;
    let mut answers: Vec<RetrievalHit> = answered
        .iter()
        .map(|a| Ok(replies.parts.hit(replies.row(&a.reply, "a reply")?, hits[a.at].score)))
        .collect::<Result<_>>()?;
    attach_snippets(searcher, &qa.lexical, &mut answers)?;
    for (a, mut reply) in answered.iter().zip(answers) {
        // Within the context budget: a long reply comes as its passage that best matches the
        // question (the whole is a `fetch_leaves` away), and says which part of it that is.
        let clipped = reply.snippet.take().map(|s| {
            reply.content = s.text;
            [s.start, s.end]
        });
        reply.explain = Some(json!({"from": "answer", "passage_of_content": clipped}));
        hits[a.at].answer = Some(Box::new(reply));
    }
    let mut at = 0;
    hits.retain(|_| {
        at += 1;
        !repeated.contains(&(at - 1))
    });
    Ok(repeated)
}

/// What the response says about the time a walk was bounded by (`QueryResponse.explain`):
/// the window, how it was read, and, when nothing lies inside it, that — rather than hits
/// from other dates.
#[derive(Clone)]
struct TimeExplain {
    /// The window the walk was bounded by (the question's, within `time_window_days`).
    window: Option<(i64, i64)>,
    /// The question's window when it bounds nothing (nothing lies in it by either clock):
    /// the leaves that speak of it rank first (`QueryAnalysis::soft_window`).
    soft: Option<(i64, i64)>,
    time_only: bool,
    notes: Vec<String>,
    /// The windows asked for (the question's, `time_window_days`, `between_ms`) do not overlap.
    disjoint: bool,
}

impl TimeExplain {
    fn new(qa: &QueryAnalysis, flt: &SearchFilter) -> Self {
        let mut notes: Vec<String> = qa.notes.clone();
        let disjoint = flt.window_ms.is_some_and(|(a, b)| a > b);
        if disjoint {
            notes.push(
                "the windows asked for (the question's time, `time_window_days`, `since_ms`..`until_ms`) do not overlap: nothing can lie in all of them".into(),
            );
        }
        TimeExplain {
            window: qa.window.and(flt.window_ms),
            soft: qa.soft_window,
            time_only: qa.time_only,
            notes,
            disjoint,
        }
    }

    /// `r` with the time explained, when the question named one.
    fn attach(&mut self, mut r: QueryResponse) -> QueryResponse {
        if self.window.is_none() && self.notes.is_empty() {
            return r;
        }
        if let Some((a, b)) = self.window
            && r.hits.is_empty()
            && !self.disjoint
        {
            self.notes.push(format!(
                "nothing lies inside the window {} to {}: no hit from other dates is given instead",
                crate::retrieval::rfc3339(a),
                crate::retrieval::rfc3339(b)
            ));
        }
        let span = |(a, b): (i64, i64)| [crate::retrieval::rfc3339(a), crate::retrieval::rfc3339(b)];
        // How the window was used: a bound (`filter`: what was said inside it or speaks of
        // it), or, nothing lying inside it by either clock, a preference for what speaks of
        // it (`nothing_inside`).
        let used = match (self.window, self.soft) {
            (Some(_), _) => Some("filter"),
            (None, Some(_)) => Some("nothing_inside"),
            (None, None) => None,
        };
        let time = json!({
            "time_window": self.window.or(self.soft).map(span),
            "window_use": used,
            "time_only": self.time_only,
            "notes": self.notes,
        });
        match (&mut r.explain, time) {
            (Some(Value::Object(have)), Value::Object(t)) => have.extend(t),
            (e, t) => *e = Some(t),
        }
        r
    }
}

/// A history question's answer (`history.rs`): the sessions in time order, each its
/// summary hit carrying its evidence leaves (a leaf in an open buffer comes as itself). A
/// summary hit's `score` is its best leaf's; `explain.from` is `session`.
fn history_response(
    mem: &MemoryReader,
    searcher: &IndexSearcher,
    qa: &QueryAnalysis,
    route: &Route,
    ranked: Vec<Ranked>,
    limit: usize,
    coverage: &Coverage<'_>,
) -> Result<QueryResponse> {
    let total = ranked.len();
    let ask = history::Ask { summary: qa.asks_summary, assistant: qa.asks_assistant };
    let sessions = history::over_sessions(mem, ranked, limit, ask)?;
    // Every node the answer shows, summaries and evidence, read in one batch.
    let ids: Vec<NodeId> = sessions
        .iter()
        .flat_map(|s| s.summary.iter().cloned().chain(s.evidence.iter().map(|r| r.scored.node.node_id.clone())))
        .collect();
    let rows = HitRows::read(mem, &ids)?;
    // The evidence hits of all sessions, snippets chosen in one pass, then dealt back.
    let mut sizes = Vec::with_capacity(sessions.len());
    let mut heads = Vec::with_capacity(sessions.len());
    let mut leaves = Vec::new();
    for s in sessions {
        heads.push((s.summary, s.evidence.first().map_or(0.0, |r| r.score)));
        sizes.push(s.evidence.len());
        for r in s.evidence {
            leaves.push(leaf_hit(&rows, qa, route, r, coverage)?);
        }
    }
    attach_snippets(searcher, &qa.lexical, &mut leaves)?;
    let evidence_leaves = leaves.len();
    let mut leaves = leaves.into_iter();
    let mut hits = Vec::with_capacity(heads.len());
    let headlines = Headlines::new(searcher, &qa.lexical)?;
    let mut unstated = 0;
    for ((summary, score), n) in heads.into_iter().zip(sizes) {
        let evidence: Vec<RetrievalHit> = leaves.by_ref().take(n).collect();
        // A session of one message is that message: its summary beside it would say the
        // same thing twice (a one-message thread), so the leaf comes alone, as one in an
        // open buffer does.
        let Some(node) = summary.as_ref().and_then(|id| rows.rows.get(id)).filter(|n| n.child_ids.len() > 1) else {
            hits.extend(evidence);
            continue;
        };
        let mut h = rows.parts.hit(node, score);
        // The session is shown by a headline that says what its evidence says; a summary
        // that holds none of it would head the leaves with another subject of the session,
        // so they come alone.
        let said: Vec<&str> = evidence.iter().map(|e| e.content.as_str()).collect();
        h.snippet = match headlines.stating(&h.content, &said) {
            Headline::Whole => None,
            Headline::Passage(s) => Some(s),
            Headline::Unstated => {
                unstated += 1;
                hits.extend(evidence);
                continue;
            }
        };
        h.explain = Some(json!({"branch": "history", "from": "session", "evidence": evidence.len()}));
        h.evidence = evidence;
        hits.push(h);
    }
    let mut r = QueryResponse::new(hits, total);
    r.explain = Some(json!({
        "history": if qa.asks_summary { "summary" } else { "order" },
        "order": "time",
        "evidence_leaves": evidence_leaves,
        "summaries_not_stating_evidence": unstated,
    }));
    Ok(r)
}

/// A time-only question's answer (`timeline.rs`): the window's summaries, then its salient
/// leaves, then the rest in time order; `score` falls with the position (1 for the first).
fn timeline_response(
    mem: &MemoryReader,
    searcher: &IndexSearcher,
    qa: &QueryAnalysis,
    window: (i64, i64),
    flt: &SearchFilter,
    limit: usize,
) -> Result<QueryResponse> {
    let (chosen, total) = timeline(mem, window, flt, limit)?;
    let ids: Vec<NodeId> = chosen.iter().map(|c| c.node_id.clone()).collect();
    let rows = HitRows::read(mem, &ids)?;
    let n = chosen.len().max(1) as f64;
    let mut hits = Vec::with_capacity(chosen.len());
    for (i, c) in chosen.into_iter().enumerate() {
        let mut h = rows.parts.hit(rows.row(&c.node_id, "in the window")?, 1.0 - i as f64 / n);
        h.explain = Some(json!({
            "branch": "timeline",
            "from": c.from,
            "salience": c.salience,
            "admitted_by": c.admitted_by,
            "time_window": qa.window.map(|(a, b)| [crate::retrieval::rfc3339(a), crate::retrieval::rfc3339(b)]),
        }));
        hits.push(h);
    }
    attach_snippets(searcher, "", &mut hits)?;
    Ok(QueryResponse::new(hits, total))
}

/// The question's window made soft (`QueryAnalysis::soft_window`) after it held nothing to
/// answer from: no bound, the route found again without it. Returns the window, or `None`
/// (and changes nothing) when there was none or the caller bounds the walk too
/// (`time_window_days`, `between_ms`).
fn soften(
    searcher: &IndexSearcher,
    args: &WalkArgs,
    qa: &mut QueryAnalysis,
    flt: &mut SearchFilter,
    route: &mut Route,
) -> Result<Option<(i64, i64)>> {
    if args.time_window_days.is_some() || args.between_ms.is_some() {
        return Ok(None);
    }
    let Some(w) = qa.window.take() else { return Ok(None) };
    qa.soft_window = Some(w);
    flt.window_ms = None;
    *route = self::route(searcher, qa, flt, args)?;
    Ok(Some(w))
}

/// What a walk scores for `args.query`, before any weight is applied: the question's
/// reading and every candidate's signals (`score.rs`). The recall harness writes it
/// (`--candidates`): with it, other weights can be tried offline on what walk saw, and the
/// replay checked against walk's own ranking.
#[derive(Debug, Clone, Serialize)]
pub struct WalkCandidates {
    /// The branch that answers (the occurrence-ranked global one keeps only the scorer's
    /// top `2 × limit`).
    pub branch: Branch,
    /// The question asks for an order (answered by sessions, `history.rs`).
    pub asks_order: bool,
    /// The question asks for a summary (answered by sessions, each message with its reply).
    pub asks_summary: bool,
    /// The question asks where something began: its earliest best match is moved first
    /// (`first.rs`), after the scorer.
    pub asks_first: bool,
    /// What the scorer's ranking needs of the question: whether it asks what the assistant
    /// said, whether the dense signal was on, how many terms coverage counts.
    #[serde(flatten)]
    pub question: QuestionSignals,
    /// The candidates, in the scorer's row order.
    pub rows: Vec<CandidateSignals>,
}

/// The candidates [`walk`] would score for `args`, with their signals.
pub fn walk_candidates(mem: &MemoryReader, args: &WalkArgs, scope: &Scope) -> Result<WalkCandidates> {
    let searcher = mem.index().searcher();
    let (mut qa, mut flt, mut route) = prepare(mem, &searcher, args, scope)?;
    let (mut rows, mut question) = candidate_signals(mem, &searcher, &qa, &flt, &args.params, &route.local)?;
    // As `walk` does when the window holds nothing (a time-only question is answered from the
    // tree, not scored: its candidates are none either way).
    if rows.is_empty() && !qa.time_only && soften(&searcher, args, &mut qa, &mut flt, &mut route)?.is_some() {
        (rows, question) = candidate_signals(mem, &searcher, &qa, &flt, &args.params, &route.local)?;
    }
    Ok(WalkCandidates {
        branch: route.branch,
        asks_order: qa.asks_order,
        asks_summary: qa.asks_summary,
        asks_first: qa.asks_first,
        question,
        rows,
    })
}

/// The question's reading, the leaf filter and the route: what every walk starts from.
fn prepare(
    mem: &MemoryReader,
    searcher: &IndexSearcher,
    args: &WalkArgs,
    scope: &Scope,
) -> Result<(QueryAnalysis, SearchFilter, Route)> {
    if args.query.trim().is_empty() {
        return Err(Error::invalid("walk.query", "must not be blank"));
    }
    let qa = analyse_query(mem, &args.query);
    // The question's window bounds the walk (SPEC §5.1), within `time_window_days` when both
    // are given (an empty intersection is kept as such: `since > until`, nothing passes).
    let recent = args.time_window_days.map(|d| (mem.now_ms() - (d * 86_400_000.0) as i64, i64::MAX / 2));
    let both = |x: Option<(i64, i64)>, y: Option<(i64, i64)>| match (x, y) {
        (Some((a1, b1)), Some((a2, b2))) => Some((a1.max(a2), b1.min(b2))),
        (w, None) | (None, w) => w,
    };
    let window_ms = both(both(recent, args.between_ms), qa.window);
    let flt =
        SearchFilter { levels: LevelFilter::Leaves, scopes: scope.0.clone(), window_ms, ..SearchFilter::default() };
    let route = route(searcher, &qa, &flt, args)?;
    Ok((qa, flt, route))
}

/// SPEC §5's routing: no query entity → global; no pair of query entities sharing a leaf
/// (within the filter) → occurrence-ranked global; else local, its intersection cut to
/// `candidates`.
///
/// SPEC §5 relates the pairs within `max_hops` in the co-occurrence graph first, then
/// intersects each related pair's posting lists, tightening the bound while more than `limit`
/// candidates remain. Only adjacent pairs can share a leaf, so that search chose which empty
/// intersections to compute, and, expanding 256 neighbours a node, could miss a hub's direct
/// partner; it cost a SQL round trip per entity expanded (seconds per question on a pooled
/// store of long chats, issue 43). `max_hops` is accepted and validated as before and changes
/// no answer.
fn route(searcher: &IndexSearcher, qa: &QueryAnalysis, flt: &SearchFilter, args: &WalkArgs) -> Result<Route> {
    let fallback = Route { branch: Branch::OccurrenceGlobal, local: Vec::new() };
    if qa.entities.is_empty() {
        return Ok(Route { branch: Branch::Global, ..fallback });
    }
    // The intersection hits are the walk's searcher's docs.
    let docs = local_candidates(searcher, &qa.entities, flt)?;
    let ids = best_local(searcher, &qa.lexical, docs, args.params.candidates)?;
    if ids.is_empty() {
        return Ok(fallback);
    }
    Ok(Route { branch: Branch::Local, local: ids })
}

/// The rows and hit parts of every node a response shows, read in one batch (what
/// [`leaf_hit`] and the summary hits are made from, and what coverage is counted from).
struct HitRows {
    rows: HashMap<NodeId, NodeRow>,
    parts: HitParts,
}

impl HitRows {
    fn read(mem: &MemoryReader, ids: &[NodeId]) -> Result<HitRows> {
        let rows: HashMap<NodeId, NodeRow> =
            mem.store().nodes(ids)?.into_iter().map(|n| (n.node_id.clone(), n)).collect();
        let parts = HitParts::read(mem, rows.values())?;
        Ok(HitRows { rows, parts })
    }

    /// `id`'s row: read in the same snapshot as the candidates, so it cannot have gone.
    fn row(&self, id: &NodeId, why: &str) -> Result<&NodeRow> {
        self.rows.get(id).ok_or_else(|| Error::Corrupt {
            what: format!("node {}", id.as_str()),
            reason: format!("{why} but not readable"),
        })
    }
}

/// A ranked leaf as a hit: its full row (content, children, source) and `explain` (branch,
/// origin, coverage, signals).
fn leaf_hit(
    rows: &HitRows,
    qa: &QueryAnalysis,
    route: &Route,
    r: Ranked,
    coverage: &Coverage<'_>,
) -> Result<RetrievalHit> {
    let s = &r.scored;
    let node = rows.row(&s.node.node_id, "scored")?;
    let cov = r.coverage.unwrap_or_else(|| coverage.count(rows.parts.entities(&s.node.node_id)));
    let mut h = rows.parts.hit(node, r.score);
    h.dense_passage = s.passage;
    h.explain = Some(json!({
        "branch": route.branch,
        "from": r.from,
        "query_entities": qa.entities.iter().map(|e| e.as_str()).collect::<Vec<_>>(),
        "coverage": cov,
        // A local hit's pair shares a leaf: one hop apart.
        "hops": (route.branch == Branch::Local).then_some(1),
        "time_window": qa.window.map(|(a, b)| [crate::retrieval::rfc3339(a), crate::retrieval::rfc3339(b)]),
        // Which clock let it into the window: said inside it, or speaking of it.
        "admitted_by": qa.window.and_then(|w| {
            AdmittedBy::window(w, node.time_start_ms, node.time_end_ms, rows.parts.spoken(&node.node_id))
        }),
        "signals": {"lexical": s.lexical, "dense": s.dense, "parent": s.parent, "speaker": s.speaker, "instruction": s.node.instruction, "coverage": s.coverage, "passage": s.passage, "fused": s.score},
    }));
    Ok(h)
}

/// Nodes (leaves, within the filter) mentioning both entities of a pair of `entities`,
/// unioned over every pair, from the index's posting lists: one intersection per pair, at
/// most [`MAX_PAIR_POSTINGS`] docs each. The hits stay docs of `searcher` (a node has one
/// live doc): no id is read until the cut.
fn local_candidates(searcher: &IndexSearcher, entities: &[EntityId], flt: &SearchFilter) -> Result<Vec<NodeDoc>> {
    let mut union: BTreeSet<NodeDoc> = BTreeSet::new();
    for (i, a) in entities.iter().enumerate() {
        for b in &entities[i + 1..] {
            union.extend(searcher.entity_intersection_docs(&[a.clone(), b.clone()], flt, MAX_PAIR_POSTINGS)?);
        }
    }
    Ok(union.into_iter().collect())
}

/// At most `cap` of the local candidates: every one when they fit (by id), else the best by
/// BM25 of the question among them, ties (and candidates matching no term) by id.
///
/// Every candidate handed to the scorer costs store reads (its row, its parent's children,
/// its neighbours' BM25), and on a large store one frequent pair of entities can share
/// thousands of nodes (~10k on the 100k-leaf synthetic store). An intersection node the
/// question's words do not match can only rise through its neighbours, its session or a
/// named author, the same signals every other candidate has; so the cut keeps the ones the
/// words point at, as the first stage does for the whole store.
fn best_local(searcher: &IndexSearcher, lexical: &str, docs: Vec<NodeDoc>, cap: usize) -> Result<Vec<NodeId>> {
    if docs.len() <= cap {
        let mut ids = searcher.node_ids_of_docs(&docs)?;
        ids.sort();
        return Ok(ids);
    }
    if cap == 0 {
        return Ok(Vec::new());
    }
    let scores = searcher.bm25_among_docs(lexical, &docs)?;
    // Only the docs scoring at least the `cap`-th best score can be kept: only they need
    // their id (the order within them, and the ties at the cut, are by id).
    let mut by_score: Vec<f32> = scores.clone();
    let (_, &mut cut, _) = by_score.select_nth_unstable_by(cap - 1, |a, b| b.total_cmp(a));
    let mut ranked: Vec<(f32, &str)> = Vec::with_capacity(cap);
    for (d, s) in docs.iter().zip(scores) {
        if s.total_cmp(&cut).is_ge() {
            ranked.push((s, searcher.node_id_of_doc(*d)?));
        }
    }
    ranked.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    ranked.truncate(cap);
    Ok(ranked.into_iter().map(|(_, id)| NodeId(id.to_string())).collect())
}
