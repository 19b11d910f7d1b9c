//! Every schema file is JSON, strict as the provider's structured outputs require it, and describes exactly the
//! document its wire type reads: an instance generated from the schema deserialises into the type and writes
//! back unchanged (so the type has no field the schema lacks), and the same instance with any unknown field
//! is refused.

use super::comparables::{self, ComparablesAnswer};
use super::proposal::{self, ItemDetailsArguments, ProposalSetAnswer};
use super::reading::{self, ReadingAnswer};
use super::receipt::{self, ReceiptAnswer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Every schema a request carries, by name.
const SCHEMAS: [(&str, &str); 6] = [
    ("ProposalSet", proposal::SCHEMA),
    ("no parameters", proposal::NO_PARAMETERS),
    ("item_details parameters", proposal::ITEM_DETAILS_PARAMETERS),
    ("Reading", reading::SCHEMA),
    ("Comparables", comparables::SCHEMA),
    ("Receipt", receipt::SCHEMA),
];

fn parse(name: &str, text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("the schema {name} is not json: {e}"))
}

/// The type words of a schema node: `"string"` or `["string", "null"]`.
fn types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Why `schema` is not strict, the first reason found, naming where (`$.candidates[].faults`).
fn strictness(schema: &Value, at: &str) -> Result<(), String> {
    let kinds = types(schema);
    if kinds.is_empty() {
        return Err(format!("{at}: no type"));
    }
    if let Some(unknown) =
        kinds.iter().find(|t| !["object", "array", "string", "integer", "number", "boolean", "null"].contains(t))
    {
        return Err(format!("{at}: unknown type {unknown}"));
    }
    if let Some(values) = schema.get("enum") {
        let values = values.as_array().ok_or(format!("{at}: enum is not a list"))?;
        for v in values {
            let kind = match v {
                Value::Null => "null",
                Value::String(_) => "string",
                _ => return Err(format!("{at}: enum value {v} is neither a string nor null")),
            };
            if !kinds.contains(&kind) {
                return Err(format!("{at}: enum value {v} is not of type {kinds:?}"));
            }
        }
    }
    if kinds.contains(&"object") {
        let properties = schema["properties"].as_object().ok_or(format!("{at}: an object without properties"))?;
        if schema["additionalProperties"] != Value::Bool(false) {
            return Err(format!("{at}: additionalProperties is not false"));
        }
        let required = schema["required"].as_array().ok_or(format!("{at}: no required list"))?;
        let mut required: Vec<&str> = required.iter().map(|r| r.as_str().unwrap_or_default()).collect();
        let mut keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        required.sort_unstable();
        keys.sort_unstable();
        if required != keys {
            return Err(format!("{at}: required {required:?} is not every property {keys:?}"));
        }
        for (key, property) in properties {
            strictness(property, &format!("{at}.{key}"))?;
        }
    }
    if kinds.contains(&"array") {
        let items = schema.get("items").ok_or(format!("{at}: an array without items"))?;
        strictness(items, &format!("{at}[]"))?;
    }
    Ok(())
}

/// A document following `schema`: one element per array, the first enum value, and for a nullable value null
/// when `nulls`, else a value of its other type.
fn instance(schema: &Value, nulls: bool) -> Value {
    let kinds = types(schema);
    if nulls && kinds.contains(&"null") {
        return Value::Null;
    }
    if let Some(value) = schema.get("enum").and_then(Value::as_array).and_then(|vs| vs.iter().find(|v| !v.is_null())) {
        return value.clone();
    }
    match kinds.iter().find(|t| **t != "null").copied() {
        Some("object") => Value::Object(
            schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, p)| (k.clone(), instance(p, nulls)))
                .collect(),
        ),
        Some("array") => Value::Array(vec![instance(&schema["items"], nulls)]),
        Some("string") => json!("text"),
        Some("integer") => json!(7),
        Some("number") => json!(2.5),
        Some("boolean") => json!(true),
        other => panic!("no instance of type {other:?}"),
    }
}

/// The JSON pointers of every object in `value` (`""` for the whole document).
fn objects(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                objects(field, format!("{at}/{key}"), out);
            }
            out.push(at);
        }
        Value::Array(values) => {
            for (n, v) in values.iter().enumerate() {
                objects(v, format!("{at}/{n}"), out);
            }
        }
        _ => {}
    }
}

/// Checks that the schema `text` and the wire type `T` describe the same document.
fn check_matches<T: DeserializeOwned + Serialize>(name: &str, text: &str) {
    let schema = parse(name, text);
    for nulls in [false, true] {
        let document = instance(&schema, nulls);
        let answer: T = serde_json::from_value(document.clone())
            .unwrap_or_else(|e| panic!("{name}: the generated {document} does not read: {e}"));
        assert_eq!(serde_json::to_value(&answer).unwrap(), document, "{name}: the type writes another document");

        let mut pointers = Vec::new();
        objects(&document, String::new(), &mut pointers);
        assert!(!pointers.is_empty(), "{name}: no object in {document}");
        for pointer in pointers {
            let mut extended = document.clone();
            let object = extended.pointer_mut(&pointer).and_then(Value::as_object_mut).unwrap();
            object.insert("unexpected".into(), json!(1));
            assert!(
                serde_json::from_value::<T>(extended.clone()).is_err(),
                "{name}: an unknown field at {pointer:?} is read: {extended}"
            );
        }
    }
}

#[test]
fn every_schema_is_strict() {
    for (name, text) in SCHEMAS {
        assert_eq!(strictness(&parse(name, text), "$"), Ok(()), "{name}");
    }
}

#[test]
fn the_strictness_check_finds_what_the_provider_refuses() {
    fn check(schema: Value, expected: &str) {
        assert_eq!(strictness(&schema, "$"), Err(expected.to_owned()), "{schema}");
    }
    let strict = |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false});
    check(json!({"type": "object", "properties": {}, "required": []}), "$: additionalProperties is not false");
    check(
        strict(json!({"a": {"type": "string"}, "b": {"type": "integer"}}), json!(["a"])),
        r#"$: required ["a"] is not every property ["a", "b"]"#,
    );
    check(
        strict(json!({"a": {"type": "array", "items": {"type": "object", "properties": {}}}}), json!(["a"])),
        "$.a[]: additionalProperties is not false",
    );
    check(strict(json!({"a": {"type": "array"}}), json!(["a"])), "$.a: an array without items");
    check(strict(json!({"a": {"description": "x"}}), json!(["a"])), "$.a: no type");
    check(
        strict(json!({"a": {"type": "string", "enum": ["x", null]}}), json!(["a"])),
        r#"$.a: enum value null is not of type ["string"]"#,
    );
}

#[test]
fn the_proposal_set_schema_matches_its_answer() {
    check_matches::<ProposalSetAnswer>("ProposalSet", proposal::SCHEMA);
}

#[test]
fn the_item_details_parameters_match_their_arguments() {
    check_matches::<ItemDetailsArguments>("item_details parameters", proposal::ITEM_DETAILS_PARAMETERS);
    assert_eq!(proposal::item_id_argument(r#"{"item_id": 12}"#), Ok(12));
    assert!(proposal::item_id_argument(r#"{"item_id": 12, "all": true}"#).is_err());
}

#[test]
fn the_receipt_schema_matches_its_answer() {
    check_matches::<ReceiptAnswer>("Receipt", receipt::SCHEMA);
}

#[test]
fn the_reading_schema_matches_its_answer() {
    check_matches::<ReadingAnswer>("Reading", reading::SCHEMA);
}

#[test]
fn the_comparables_schema_matches_its_answer() {
    check_matches::<ComparablesAnswer>("Comparables", comparables::SCHEMA);
}

#[test]
fn answers_read_into_the_domain_types() {
    // Units left out (a backend without strict schemas) read as 1; a number no item has reads as 0, which the
    // rules refuse by name.
    let set = proposal::read(
        r#" {"proposals":[{"template_id":3,"title":"t","reason":"r","allocations":[{"requirement":"psu","item_id":9},
        {"requirement":"cells","item_id":4,"units":4},{"requirement":"cells","item_id":5,"units":-2}]}]} "#,
    )
    .unwrap();
    assert_eq!(
        proposal::write(&set),
        r#"{"proposals":[{"template_id":3,"title":"t","reason":"r","allocations":[{"requirement":"psu","item_id":9,"units":1},{"requirement":"cells","item_id":4,"units":4},{"requirement":"cells","item_id":5,"units":0}]}]}"#
    );
    let units: Vec<(i64, u32)> = set.proposals[0].allocations.iter().map(|a| (a.item_id, a.units)).collect();
    assert_eq!(units, [(9, 1), (4, 4), (5, 0)]);

    let reading = reading::read(&instance(&parse("Reading", reading::SCHEMA), false).to_string()).unwrap();
    let c = &reading.candidates[0];
    assert_eq!(
        (c.condition.as_deref(), c.measurements[0].value, c.faults[0].severity.as_str()),
        (Some("new"), 2.5, "minor")
    );

    let comparables =
        comparables::read(&instance(&parse("Comparables", comparables::SCHEMA), true).to_string()).unwrap();
    assert_eq!((comparables[0].price, comparables[0].condition.as_deref(), comparables[0].sold), (2.5, None, true));
}
