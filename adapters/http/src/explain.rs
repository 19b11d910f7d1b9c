//! Checks every JSON body against the route's request schema in the API's own OpenAPI document before the
//! route reads it, and names the field and the problem (`condition is required`, `fields.capacity.value must be
//! a number, not "3"`, `name must be at most 200 characters`). poem-openapi alone would read `"name": 123` as the
//! text "123" and say only what type it expected, not where; this check refuses what the document does not
//! allow, so that the document is what the API takes.
//!
//! Only the parts of JSON Schema the document uses are read: `$ref`, `allOf`, `type`, `enum`, `required`,
//! `properties`, `additionalProperties`, `items`, `nullable`, `minLength`, `maxLength`, `pattern`, `minimum` and
//! `maximum`. When the walk finds nothing wrong and poem-openapi still refuses the body, its message stays.

use crate::error::ApiError;
use crate::media::is_media;
use poem::http::{Method, StatusCode};
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// Refuses a JSON body the route's schema does not allow with 400, naming the field and the problem
/// ([`Explainer`]); passes the others to the route.
pub async fn explain_body<E: poem::Endpoint>(
    next: Arc<E>,
    mut req: poem::Request,
    explainer: Arc<Explainer>,
) -> poem::Result<poem::Response> {
    let path = req.uri().path().to_owned();
    let route = path.strip_prefix("/api").unwrap_or(&path);
    if let Some(message) = explainer.check_headers(req.method(), route, req.headers()) {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "invalid", message).into());
    }
    if !is_media(req.content_type(), "application/json") {
        return next.call(req).await.map(poem::IntoResponse::into_response);
    }
    // Its size is already checked (`body_limit::limit_body`).
    let body = req.take_body().into_bytes().await?;
    if let Some(message) = explainer.explain(req.method(), route, &body) {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "invalid", message).into());
    }
    req.set_body(body);
    next.call(req).await.map(poem::IntoResponse::into_response)
}

/// The API's OpenAPI document, read once, answering what is wrong with a body.
#[derive(Debug, Clone)]
pub struct Explainer {
    spec: Value,
    /// Every `pattern` of the document, compiled once.
    patterns: HashMap<String, Regex>,
    /// The names of the header parameters of the whole document: a request carrying none of them has no header
    /// to check, which spares every request the search of its operation.
    header_names: Vec<String>,
}

impl Explainer {
    /// From the OpenAPI document's JSON text; an unreadable one explains nothing.
    pub fn new(spec: &str) -> Self {
        let spec: Value = serde_json::from_str(spec).unwrap_or(Value::Null);
        let mut patterns = HashMap::new();
        let mut todo = vec![&spec];
        while let Some(v) = todo.pop() {
            match v {
                Value::Object(o) => {
                    if let Some(p) = o.get("pattern").and_then(Value::as_str)
                        && let Ok(re) = Regex::new(p)
                    {
                        patterns.insert(p.to_owned(), re);
                    }
                    todo.extend(o.values());
                }
                Value::Array(a) => todo.extend(a),
                _ => {}
            }
        }
        let mut header_names: Vec<String> = spec
            .get("paths")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|paths| paths.values())
            .filter_map(Value::as_object)
            .flat_map(|item| item.values())
            .filter_map(|operation| operation.get("parameters")?.as_array())
            .flatten()
            .filter(|p| p["in"] == "header")
            .filter_map(|p| Some(p["name"].as_str()?.to_ascii_lowercase()))
            .collect();
        header_names.sort_unstable();
        header_names.dedup();
        Self { spec, patterns, header_names }
    }

    /// The first problem of `body` for `method path` (a path under the API's base, e.g. `/items/7/faults`), or
    /// `None` when the body is not JSON, the route has no JSON body schema, or nothing is found wrong.
    pub fn explain(&self, method: &Method, path: &str, body: &[u8]) -> Option<String> {
        let value: Value = serde_json::from_slice(body).ok()?;
        let operation = self.operation(method, path)?;
        let content = operation.get("requestBody")?.get("content")?.as_object()?;
        let schema = content.iter().find(|(media, _)| media.starts_with("application/json"))?.1.get("schema")?;
        Walk { spec: &self.spec, patterns: &self.patterns }.check(&value, schema, "")
    }

    /// The first header parameter of `method path` that `headers` carry against its schema in the document:
    /// one that is not visible ASCII text (which a route would otherwise not see at all), or breaks a limit.
    pub fn check_headers(&self, method: &Method, path: &str, headers: &poem::http::HeaderMap) -> Option<String> {
        if !self.header_names.iter().any(|name| headers.contains_key(name.as_str())) {
            return None;
        }
        let parameters = self.operation(method, path)?.get("parameters")?.as_array()?;
        let walk = Walk { spec: &self.spec, patterns: &self.patterns };
        parameters.iter().filter(|p| p["in"] == "header").find_map(|p| {
            let name = p["name"].as_str()?;
            let value = headers.get(name)?;
            let Ok(text) = value.to_str() else { return Some(format!("{name} must be visible ASCII text")) };
            walk.limits(&Value::String(text.to_owned()), walk.resolve(p.get("schema")?), name)
        })
    }

    fn operation(&self, method: &Method, path: &str) -> Option<&Value> {
        let paths = self.spec.get("paths")?.as_object()?;
        let method = method.as_str().to_ascii_lowercase();
        // The path that names the most segments literally wins (`/projects/propose` over `/projects/{id}`), as
        // it does in the router, whether or not it takes the method: `PATCH /items/bulk` is a 405, never a
        // `PATCH /items/{id}`.
        paths
            .iter()
            .filter(|(template, _)| template_matches(template, path))
            .min_by_key(|(template, _)| template.matches('{').count())
            .and_then(|(_, item)| item.get(&method))
    }
}

/// Whether a path of the document (`/items/{id}`) matches a request's path (`/items/7`).
pub fn template_matches(template: &str, path: &str) -> bool {
    let have: Vec<&str> = template.trim_end_matches('/').split('/').collect();
    let want: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    have.len() == want.len() && have.iter().zip(&want).all(|(h, w)| h == w || (h.starts_with('{') && h.ends_with('}')))
}

struct Walk<'a> {
    spec: &'a Value,
    patterns: &'a HashMap<String, Regex>,
}

/// How a value is named in a message: its JSON text, shortened.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 { format!("{}...", text.chars().take(40).collect::<String>()) } else { text }
}

fn at(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

fn subject(path: &str) -> &str {
    if path.is_empty() { "the body" } else { path }
}

impl<'a> Walk<'a> {
    /// The schema a `$ref` points to, or the schema itself.
    fn resolve(&self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/")) {
            Some(pointer) => self.spec.pointer(&format!("/{pointer}")).unwrap_or(&Value::Null),
            None => schema,
        }
    }

    fn check(&self, value: &Value, schema: &'a Value, path: &str) -> Option<String> {
        let schema = self.resolve(schema);
        if value.is_null() && schema.get("nullable").and_then(Value::as_bool) == Some(true) {
            return None;
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array)
            && let Some(problem) = all.iter().find_map(|s| self.check(value, s, path))
        {
            return Some(problem);
        }
        if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
            if !choices.contains(value) {
                let names: Vec<String> =
                    choices.iter().map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned)).collect();
                return Some(format!("{} must be one of {}, not {}", subject(path), names.join(", "), shown(value)));
            }
            return None;
        }
        let wrong = |what: &str| Some(format!("{} must be {what}, not {}", subject(path), shown(value)));
        match schema.get("type").and_then(Value::as_str) {
            Some("object") => {
                let Some(object) = value.as_object() else { return wrong("an object") };
                return self.object(object, schema, path);
            }
            Some("array") => {
                let Some(items) = value.as_array() else { return wrong("a list") };
                let item = schema.get("items")?;
                return items
                    .iter()
                    .enumerate()
                    .find_map(|(n, v)| self.check(v, item, &format!("{}[{n}]", subject(path))));
            }
            Some("string") if !value.is_string() => return wrong("a text"),
            Some("integer") if !(value.is_i64() || value.is_u64()) => return wrong("a whole number"),
            Some("number") if !value.is_number() => return wrong("a number"),
            Some("boolean") if !value.is_boolean() => return wrong("true or false"),
            _ => {}
        }
        self.limits(value, schema, path)
    }

    /// The limits a schema sets on a text's length and form, or on a number's range.
    fn limits(&self, value: &Value, schema: &'a Value, path: &str) -> Option<String> {
        let limit = |key: &str| schema.get(key).and_then(Value::as_f64);
        if let Some(text) = value.as_str() {
            // poem-openapi writes a `NaiveDate` as the format `naive-date`.
            if matches!(schema.get("format").and_then(Value::as_str), Some("date" | "naive-date"))
                && chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_err()
            {
                return Some(format!("{} must be a day written YYYY-MM-DD, not {}", subject(path), shown(value)));
            }
            let length = text.chars().count() as f64;
            if let Some(min) = limit("minLength")
                && length < min
            {
                return Some(if min <= 1.0 {
                    format!("{} must not be empty", subject(path))
                } else {
                    format!("{} must be at least {min} characters", subject(path))
                });
            }
            if let Some(max) = limit("maxLength")
                && length > max
            {
                return Some(format!("{} is longer than {max} characters", subject(path)));
            }
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
                && let Some(re) = self.patterns.get(pattern)
                && !re.is_match(text)
            {
                // The pattern itself is for machines: a person reads what was refused, never a regex.
                return Some(format!("{} is not written as it must be: {}", subject(path), shown(value)));
            }
        }
        if let Some(n) = value.as_f64() {
            if let Some(min) = limit("minimum")
                && n < min
            {
                return Some(format!("{} must be at least {min}, not {}", subject(path), shown(value)));
            }
            if let Some(max) = limit("maximum")
                && n > max
            {
                return Some(format!("{} must be at most {max}, not {}", subject(path), shown(value)));
            }
        }
        None
    }

    fn object(&self, object: &Map<String, Value>, schema: &'a Value, path: &str) -> Option<String> {
        let properties = schema.get("properties").and_then(Value::as_object);
        let required = schema.get("required").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for key in required.iter().filter_map(Value::as_str) {
            if object.get(key).is_none_or(Value::is_null) {
                return Some(format!("{} is required", at(path, key)));
            }
        }
        for (key, value) in object {
            match properties.and_then(|p| p.get(key)) {
                Some(_) if value.is_null() => {}
                Some(property) => {
                    if let Some(problem) = self.check(value, property, &at(path, key)) {
                        return Some(problem);
                    }
                }
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => return Some(format!("{} is not a member of this body", at(path, key))),
                    Some(extra @ Value::Object(_)) => {
                        if let Some(problem) = self.check(value, extra, &at(path, key)) {
                            return Some(problem);
                        }
                    }
                    _ => {}
                },
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn explainer() -> Explainer {
        let spec = json!({
            "paths": {
                "/items": {"post": {"requestBody": {"content": {"application/json; charset=utf-8":
                    {"schema": {"$ref": "#/components/schemas/CreateItem"}}}}}},
                "/items/{id}/faults": {"post": {"requestBody": {"content": {"application/json; charset=utf-8":
                    {"schema": {"$ref": "#/components/schemas/NewFault"}}}}}},
            },
            "components": {"schemas": {
                "CreateItem": {"type": "object", "required": ["name", "condition"], "additionalProperties": false,
                    "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "\\S"},
                    "note": {"type": "string", "nullable": true, "pattern": "^[a-z]*$"},
                    "count": {"type": "integer", "minimum": 1, "maximum": 500},
                    "day": {"type": "string", "format": "date"},
                    "condition": {"$ref": "#/components/schemas/Condition"},
                    "accessories": {"type": "array", "items": {"type": "string"}},
                    "components": {"type": "array", "items": {"type": "integer"}},
                    "fields": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/FieldValue"}},
                    "source": {"allOf": [{"$ref": "#/components/schemas/Condition"}, {"description": "x"}]},
                }},
                "Condition": {"type": "string", "enum": ["new", "good", "poor"]},
                "FieldValue": {"type": "object", "required": ["value", "unit"],
                    "properties": {"value": {"type": "number"}, "unit": {"type": "string"}}},
                "NewFault": {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}},
            }},
        });
        Explainer::new(&spec.to_string())
    }

    fn explain(path: &str, body: Value) -> Option<String> {
        explainer().explain(&Method::POST, path, body.to_string().as_bytes())
    }

    #[test]
    fn names_the_field_and_the_problem() {
        let cases = [
            (json!({"condition": "good"}), "name is required"),
            (json!({"name": "x", "condition": null}), "condition is required"),
            (json!({"name": "x", "condition": "mint"}), "condition must be one of new, good, poor, not \"mint\""),
            (json!({"name": [7], "condition": "good"}), "name must be a text, not [7]"),
            (
                json!({"name": "x", "condition": "good", "accessories": "cable"}),
                "accessories must be a list, not \"cable\"",
            ),
            (
                json!({"name": "x", "condition": "good", "components": [1, 2.5]}),
                "components[1] must be a whole number, not 2.5",
            ),
            (
                json!({"name": "x", "condition": "good", "fields": {"capacity": {"value": "3", "unit": "Ah"}}}),
                "fields.capacity.value must be a number, not \"3\"",
            ),
            (
                json!({"name": "x", "condition": "good", "fields": {"capacity": {"value": 3}}}),
                "fields.capacity.unit is required",
            ),
            (
                json!({"name": "x", "condition": "good", "source": "lab"}),
                "source must be one of new, good, poor, not \"lab\"",
            ),
            (json!([1]), "the body must be an object, not [1]"),
            // A number or a boolean is not a text, whatever poem-openapi would make of it.
            (json!({"name": 123, "condition": "good"}), "name must be a text, not 123"),
            (json!({"name": true, "condition": "good"}), "name must be a text, not true"),
            (json!({"name": "", "condition": "good"}), "name must not be empty"),
            (json!({"name": "abcdef", "condition": "good"}), "name is longer than 5 characters"),
            (json!({"name": "   ", "condition": "good"}), "name is not written as it must be: \"   \""),
            (json!({"name": "x", "condition": "good", "note": "A"}), "note is not written as it must be: \"A\""),
            (json!({"name": "x", "condition": "good", "count": 0}), "count must be at least 1, not 0"),
            (
                json!({"name": "x", "condition": "good", "day": "2027-02-30"}),
                "day must be a day written YYYY-MM-DD, not \"2027-02-30\"",
            ),
            (json!({"name": "x", "condition": "good", "count": 501}), "count must be at most 500, not 501"),
            (json!({"name": "x", "condition": "good", "colour": "red"}), "colour is not a member of this body"),
        ];
        for (body, want) in cases {
            assert_eq!(explain("/items", body.clone()).as_deref(), Some(want), "{body}");
        }
        assert_eq!(explain("/items/42/faults", json!({})).as_deref(), Some("text is required"));
    }

    #[test]
    fn says_nothing_when_it_finds_nothing() {
        // A sound body, optional members left out or null, an unknown route, a body that is not JSON.
        assert_eq!(explain("/items", json!({"name": "x", "condition": "good", "accessories": null})), None);
        assert_eq!(explain("/items", json!({"name": "héllo", "condition": "good", "note": null, "count": 500})), None);
        assert_eq!(explain("/nowhere", json!({})), None);
        assert_eq!(explainer().explain(&Method::POST, "/items", b"{not json"), None);
        assert_eq!(explainer().explain(&Method::GET, "/items", b"{}"), None);
        assert_eq!(Explainer::new("not a document").explain(&Method::POST, "/items", b"{}"), None);
    }
}
