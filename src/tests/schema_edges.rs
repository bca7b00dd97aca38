//! The published JSON Schemas and the argument parser agree: for every field of every mode
//! (and `memory_recall` op), values the schema rules out are refused and values it admits are
//! accepted. The values are derived from the schema itself (its types, `minimum`, `enum`,
//! `pattern`, `additionalProperties`), so a field added to the tables is covered without a
//! line here.

use serde_json::{Map, Value, json};

/// Values the property's schema rules out.
fn invalid(p: &Value) -> Vec<Value> {
    if p["type"] == "boolean" {
        // Only JSON's own booleans: no string, number or null-ish stand-in.
        return vec![json!("false"), json!(0), json!({}), json!([])];
    }
    let mut out = vec![json!(true), json!({})];
    match p["type"].as_str().unwrap() {
        "string" => {
            out.extend([json!(7), json!([])]);
            if p.get("enum").is_some() || p.get("pattern").is_some() {
                out.push(json!("Not a Choice"));
            }
        }
        "integer" => {
            out.extend([json!("5"), json!(1.5)]);
            if let Some(min) = p["minimum"].as_i64() {
                out.push(json!(min - 1));
            }
        }
        "number" => {
            out.push(json!("5"));
            if let Some(min) = p["minimum"].as_f64() {
                out.push(json!(min - 0.5));
            }
        }
        "array" => {
            out.extend([json!("x"), json!([7])]);
            if p["items"].get("enum").is_some() {
                out.push(json!(["Not a Choice"]));
            }
        }
        t => panic!("a schema type the test does not know: {t}"),
    }
    out
}

/// Values the property's schema admits.
fn valid(p: &Value) -> Vec<Value> {
    match p["type"].as_str().unwrap() {
        "string" => {
            if let Some(choices) = p["enum"].as_array() {
                return choices.clone();
            }
            if let Some(pattern) = p["pattern"].as_str() {
                let re = regex::Regex::new(pattern).unwrap();
                let ok: Vec<Value> =
                    ["global", "skill-notes", "x"].into_iter().filter(|s| re.is_match(s)).map(|s| json!(s)).collect();
                assert!(!ok.is_empty(), "no candidate matches {pattern}");
                return ok;
            }
            vec![json!("x"), json!("hello world")]
        }
        "integer" => match p["minimum"].as_i64() {
            Some(min) => vec![json!(min), json!(min + 1), json!(1_000_000)],
            None => vec![json!(0), json!(500)],
        },
        "number" => vec![json!(p["minimum"].as_f64().unwrap_or(0.0)), json!(2.5)],
        "boolean" => vec![json!(true), json!(false)],
        "array" => match p["items"]["enum"].as_array() {
            Some(choices) => vec![json!([choices[0]]), Value::Array(choices.clone())],
            None => vec![json!(["x"]), json!(["x", "y"])],
        },
        t => panic!("a schema type the test does not know: {t}"),
    }
}

/// A call of `mode` with every required field set to a valid value. The one rule between
/// fields the schema cannot say (`until_ms` not before `since_ms`) is met by a wide window.
fn base(props: &Map<String, Value>, selector: &str, mode: &Value) -> Map<String, Value> {
    let mut call = Map::new();
    call.insert(selector.into(), json!(mode[selector]));
    for r in mode["required"].as_array().unwrap() {
        let name = r.as_str().unwrap();
        let v = match name {
            "since_ms" => json!(-1000),
            "until_ms" => json!(1000),
            _ => valid(&props[name])[0].clone(),
        };
        call.insert(name.into(), v);
    }
    call
}

fn check(schema: &Value, parse: impl Fn(&str) -> crate::Result<()>) {
    let input = &schema["input_schema"];
    assert_eq!(input["additionalProperties"], false);
    let props = input["properties"].as_object().unwrap();
    let selector = input["required"].as_array().and_then(|r| r.first()).and_then(Value::as_str).unwrap_or("op");
    let modes = input[format!("x-{selector}s")].as_array().unwrap();
    let mut checked = 0;
    for mode in modes {
        let base = base(props, selector, mode);
        let call = |extra: &[(&str, Value)]| {
            let mut c = base.clone();
            for (k, v) in extra {
                c.insert((*k).into(), v.clone());
            }
            Value::Object(c).to_string()
        };
        assert!(parse(&call(&[])).is_ok(), "{}: {}", call(&[]), parse(&call(&[])).unwrap_err());
        for field in mode["fields"].as_array().unwrap() {
            let name = field["name"].as_str().unwrap();
            let p = &props[name];
            for v in valid(p) {
                let c = call(&[(name, v)]);
                if let Err(e) = parse(&c) {
                    panic!("the schema admits {c} but the parser refuses it: {e}");
                }
                checked += 1;
            }
            for v in invalid(p) {
                let c = call(&[(name, v)]);
                assert!(parse(&c).is_err(), "the schema rules out {c} but the parser accepts it");
                checked += 1;
            }
        }
        assert!(parse(&call(&[("no_such_field", json!(1))])).is_err(), "additionalProperties: false");
    }
    let mut bad_mode = base(props, selector, &modes[0]);
    bad_mode.insert(selector.into(), json!("no_such_mode"));
    assert!(parse(&Value::Object(bad_mode).to_string()).is_err());
    assert!(checked > 50, "only {checked} values checked");
}

#[test]
fn memory_tree_schema_and_parser_agree_on_every_field() {
    check(&crate::tool::memory_tree_schema(), |c| crate::tool::parse_call(c).map(drop));
}

#[test]
fn memory_recall_schema_and_parser_agree_on_every_field() {
    check(&crate::tool::memory_recall_schema(), |c| crate::tool::parse_recall(c).map(drop));
}

#[test]
fn limit_zero_is_the_default_and_negative_is_refused() {
    let walk = |limit: i64| crate::tool::parse_call(&json!({"mode": "walk", "query": "q", "limit": limit}).to_string());
    let default = format!("{:?}", walk(10).unwrap());
    assert_eq!(format!("{:?}", walk(0).unwrap()), default, "0 means the default (10)");
    let e = walk(-1).unwrap_err().to_string();
    assert!(e.contains("`limit` must be at least 0 (0 means the default), got -1"), "{e}");
}
