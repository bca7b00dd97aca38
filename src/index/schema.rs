//! Loads `index_schema/tantivy.json` into a tantivy `Schema` and checks it names every field
//! the engine uses with the type it expects.

use crate::error::{Error, Result};
use serde::Deserialize;

use tantivy::schema::{
    DateOptions, DateTimePrecision, FAST, Field, INDEXED, IndexRecordOption, NumericOptions, STORED, STRING, Schema,
    TextFieldIndexing, TextOptions,
};

const SCHEMA_JSON: &str = include_str!("../../index_schema/tantivy.json");

#[derive(Deserialize)]
struct SchemaFile {
    version: u32,
    fields: Vec<FieldSpec>,
}

#[derive(Deserialize)]
struct FieldSpec {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    stored: bool,
    #[serde(default)]
    fast: bool,
    #[serde(default)]
    tokenizer: Option<String>,
    #[serde(default)]
    positions: bool,
}

/// Handles of every field, resolved once.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    pub node_id: Field,
    pub node_kind: Field,
    pub tree_id: Field,
    pub tree_scope: Field,
    pub source_kind: Field,
    pub level: Field,
    pub content: Field,
    pub entities: Field,
    pub topics: Field,
    pub time_start: Field,
    pub time_end: Field,
    pub spoken_since: Field,
    pub spoken_until: Field,
}

/// The schema version written in the JSON file; stored beside the index.
pub fn schema_version() -> Result<u32> {
    Ok(parse()?.version)
}

fn parse() -> Result<SchemaFile> {
    serde_json::from_str(SCHEMA_JSON).map_err(|e| Error::Schema { reason: format!("index_schema/tantivy.json: {e}") })
}

/// Build the tantivy schema from the data file.
pub fn build() -> Result<(Schema, Fields)> {
    let file = parse()?;
    let mut b = Schema::builder();
    for f in &file.fields {
        match f.ty.as_str() {
            "string" => {
                let mut o = STRING;
                if f.stored {
                    o = o | STORED;
                }
                if f.fast {
                    o = o.set_fast(None);
                }
                b.add_text_field(&f.name, o);
            }
            "text" => {
                let record =
                    if f.positions { IndexRecordOption::WithFreqsAndPositions } else { IndexRecordOption::WithFreqs };
                let idx = TextFieldIndexing::default()
                    .set_tokenizer(f.tokenizer.as_deref().unwrap_or("default"))
                    .set_index_option(record);
                let mut o = TextOptions::default().set_indexing_options(idx);
                if f.stored {
                    o = o.set_stored();
                }
                b.add_text_field(&f.name, o);
            }
            "u64" | "f64" => {
                let mut o: NumericOptions = INDEXED.into();
                if f.fast {
                    o = o | FAST;
                }
                if f.stored {
                    o = o | STORED;
                }
                if f.ty == "u64" {
                    b.add_u64_field(&f.name, o);
                } else {
                    b.add_f64_field(&f.name, o);
                }
            }
            "date" => {
                let mut o = DateOptions::default().set_indexed().set_precision(DateTimePrecision::Milliseconds);
                if f.fast {
                    o = o.set_fast();
                }
                if f.stored {
                    o = o.set_stored();
                }
                b.add_date_field(&f.name, o);
            }
            other => {
                return Err(Error::Schema {
                    reason: format!("index_schema/tantivy.json: field {}: unknown type {other}", f.name),
                });
            }
        }
    }
    let schema = b.build();
    let get = |name: &str| {
        schema
            .get_field(name)
            .map_err(|_| Error::Schema { reason: format!("index_schema/tantivy.json lacks the field `{name}`") })
    };
    let fields = Fields {
        node_id: get("node_id")?,
        node_kind: get("node_kind")?,
        tree_id: get("tree_id")?,
        tree_scope: get("tree_scope")?,
        source_kind: get("source_kind")?,
        level: get("level")?,
        content: get("content")?,
        entities: get("entities")?,
        topics: get("topics")?,
        time_start: get("time_start")?,
        time_end: get("time_end")?,
        spoken_since: get("spoken_since")?,
        spoken_until: get("spoken_until")?,
    };
    Ok((schema, fields))
}

#[cfg(test)]
mod tests {
    #[test]
    fn schema_file_builds_with_every_field() {
        let (schema, _) = super::build().unwrap();
        assert_eq!(schema.fields().count(), 13);
        assert_eq!(super::schema_version().unwrap(), 6);
    }
}
