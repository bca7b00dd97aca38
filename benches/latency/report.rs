//! The latency bench's JSON report: its mode keys, one store's object, and the smoke run's
//! check of the file (the shape is described in `latency.rs`'s header).

use super::StoreLine;
use crate::bench_json::{array, number, number_or_null, object, object_or_null, string};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// One mode's (p50, p95, p99) in µs.
pub type Pct = (f64, f64, f64);

/// One store's percentiles by the report's mode key.
pub type Modes = BTreeMap<&'static str, Pct>;

/// The report's mode keys measured in step 3 (without the query embedding): always measured.
pub const LEXICAL_MODES: &[&str] =
    &["fts5", "walk", "smart_walk", "search_entities", "query_source", "drill_down", "cover_window", "fetch_leaves"];

/// The report's mode keys measured in step 4 (with the query embedding): `null` without it.
pub const DENSE_MODES: &[&str] = &[
    "dense",
    "walk_embed",
    "query_source_embed",
    "query_embedding",
    "walk_embed_embedding",
    "walk_embed_rest",
    "walk_embed_control",
];

impl StoreLine {
    /// This store's object in the JSON report (see `latency.rs`'s header).
    pub fn to_json(&self) -> Value {
        let modes: serde_json::Map<String, Value> = LEXICAL_MODES
            .iter()
            .chain(DENSE_MODES)
            .map(|&k| {
                let p = self
                    .modes
                    .get(k)
                    .map(|p| json!({"p50_ms": p.0 / 1000.0, "p95_ms": p.1 / 1000.0, "p99_ms": p.2 / 1000.0}));
                (k.to_string(), p.unwrap_or(Value::Null))
            })
            .collect();
        json!({
            "name": self.name,
            "leaves": self.leaves,
            "nodes": self.nodes,
            "build_s": self.built_s,
            "vectors_s": self.vectors_s,
            "graph": {
                "entities": self.entities,
                "edges": self.edges,
                "edges_per_leaf": self.edges as f64 / self.leaves.max(1) as f64,
            },
            "modes": modes,
            "bytes": {
                "sqlite": self.bytes.sqlite,
                "index": self.bytes.index,
                "vectors": self.bytes.vectors,
                "total": self.bytes.total,
            },
            "peak_rss_mb": {
                "start": self.rss_start,
                "build": self.build_rss,
                "vectors": self.vectors_rss,
                "reads": self.lexical_rss,
                "reads_model": self.dense_rss,
            },
        })
    }
}

/// Pointers to the fields issue 14 names, in each store: the check must refuse a report that
/// lacks one (`bench_json::Shape`). A mode the run did not measure is `null`, so its own
/// pointer is the mode, not its `p50_ms`.
pub fn report_keys(report: &Value) -> Vec<String> {
    let mut keys = Vec::new();
    for (i, store) in report["stores"].as_array().into_iter().flatten().enumerate() {
        let at = format!("/stores/{i}");
        keys.extend(["name", "leaves", "build_s"].map(|k| format!("{at}/{k}")));
        for mode in LEXICAL_MODES.iter().chain(&["walk_embed"]) {
            keys.push(format!("{at}/modes/{mode}"));
            if !store["modes"][mode].is_null() {
                keys.extend(["p50_ms", "p95_ms", "p99_ms"].map(|k| format!("{at}/modes/{mode}/{k}")));
            }
        }
        keys.extend(["sqlite", "index", "vectors", "total"].map(|k| format!("{at}/bytes/{k}")));
        keys.extend(["entities", "edges", "edges_per_leaf"].map(|k| format!("{at}/graph/{k}")));
        keys.extend(["build", "reads", "reads_model"].map(|k| format!("{at}/peak_rss_mb/{k}")));
    }
    keys
}

/// The smoke run's check of the report it wrote (see `latency.rs`'s header).
pub fn check_report(v: &Value) -> Result<(), String> {
    for (i, s) in array(v, "stores", "report")?.iter().enumerate() {
        let at = format!("stores[{i}]");
        string(s, "name", &at)?;
        if number(s, "leaves", &at)? == 0.0 {
            return Err(format!("{at}.leaves is 0"));
        }
        number(s, "nodes", &at)?;
        number(s, "build_s", &at)?;
        let graph = object(s, "graph", &at)?;
        let gat = format!("{at}.graph");
        let (entities, edges, per_leaf) =
            (number(graph, "entities", &gat)?, number(graph, "edges", &gat)?, number(graph, "edges_per_leaf", &gat)?);
        if entities == 0.0 || (per_leaf - edges / number(s, "leaves", &at)?).abs() > 1e-6 {
            return Err(format!("{gat}: {entities} entities, {edges} edges, {per_leaf} per leaf"));
        }
        let modes = object(s, "modes", &at)?;
        let mat = format!("{at}.modes");
        let measured = |k: &str| -> Result<bool, String> {
            let Some(m) = object_or_null(modes, k, &mat)? else { return Ok(false) };
            let mk = format!("{mat}.{k}");
            let (p50, p95, p99) = (number(m, "p50_ms", &mk)?, number(m, "p95_ms", &mk)?, number(m, "p99_ms", &mk)?);
            if p95 < p50 || p99 < p95 {
                return Err(format!("{mk}: percentiles out of order ({p50}, {p95}, {p99})"));
            }
            Ok(true)
        };
        for k in LEXICAL_MODES {
            if !measured(k)? {
                return Err(format!("{mat}.{k} is null"));
            }
        }
        // Step 4 ran or did not: its fields are all measured or all null.
        let dense = measured("walk_embed")?;
        let bytes = object(s, "bytes", &at)?;
        let rss = object(s, "peak_rss_mb", &at)?;
        let (bat, rat) = (format!("{at}.bytes"), format!("{at}.peak_rss_mb"));
        let step4 = [
            ("vectors_s", number_or_null(s, "vectors_s", &at)?.is_some()),
            ("bytes.vectors", number_or_null(bytes, "vectors", &bat)?.is_some()),
            ("peak_rss_mb.vectors", number_or_null(rss, "vectors", &rat)?.is_some()),
            ("peak_rss_mb.reads_model", number_or_null(rss, "reads_model", &rat)?.is_some()),
        ];
        for k in DENSE_MODES {
            if measured(k)? != dense {
                return Err(format!("{mat}.{k} and {mat}.walk_embed: one is null, the other not"));
            }
        }
        for (k, is_set) in step4 {
            if is_set != dense {
                return Err(format!("{at}.{k} and {mat}.walk_embed: one is null, the other not"));
            }
        }
        let (sqlite, index, total) =
            (number(bytes, "sqlite", &bat)?, number(bytes, "index", &bat)?, number(bytes, "total", &bat)?);
        if sqlite == 0.0 || index == 0.0 || total < sqlite + index {
            return Err(format!("{bat}: sqlite {sqlite}, index {index}, total {total}"));
        }
        for k in ["start", "build", "reads"] {
            number(rss, k, &rat)?;
        }
    }
    Ok(())
}
