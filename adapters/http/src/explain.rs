//! Clear messages for JSON bodies the API refuses. poem-openapi says what type it expected but not where
//! (`Expected input type "Condition", found null. (occurred while parsing "CreateItem")`); this walks the body
//! against the route's request schema in the API's own OpenAPI document and names the field and the problem
//! (`condition is required`, `fields.capacity.value must be a number, not "3"`).
//!
//! Only the parts of JSON Schema the document uses are read: `$ref`, `allOf`, `type`, `enum`, `required`,
//! `properties`, `additionalProperties` and `items`. When the walk finds nothing wrong, the original message stays.

use crate::error::ApiError;
use crate::media::is_media;
use poem::http::{Method, StatusCode};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Replaces poem-openapi's message for a JSON body it could not parse with one naming the field and the problem
/// ([`Explainer`]), when the body's own schema shows one.
pub async fn explain_body<E: poem::Endpoint>(
    next: Arc<E>,
    mut req: poem::Request,
    explainer: Arc<Explainer>,
) -> poem::Result<poem::Response> {
    if !is_media(req.content_type(), "application/json") {
        return next.call(req).await.map(poem::IntoResponse::into_response);
    }
    // Its size is already checked (`body_limit::limit_body`): kept to be read again should the route refuse it.
    let body = req.take_body().into_bytes().await?;
    req.set_body(body.clone());
    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
    match next.call(req).await {
        Err(e) if e.is::<poem_openapi::error::ParseRequestPayloadError>() => {
            match explainer.explain(&method, path.strip_prefix("/api").unwrap_or(&path), &body) {
                Some(message) => Err(ApiError::new(StatusCode::BAD_REQUEST, "invalid", message).into()),
                None => Err(e),
            }
        }
        other => other.map(poem::IntoResponse::into_response),
    }
}

/// The API's OpenAPI document, read once, answering what is wrong with a body.
#[derive(Debug, Clone)]
pub struct Explainer {
    spec: Value,
}

impl Explainer {
    /// From the OpenAPI document's JSON text; an unreadable one explains nothing.
    pub fn new(spec: &str) -> Self {
        Self { spec: serde_json::from_str(spec).unwrap_or(Value::Null) }
    }

    /// The first problem of `body` for `method path` (a path under the API's base, e.g. `/items/7/faults`), or
    /// `None` when the body is not JSON, the route has no JSON body schema, or nothing is found wrong.
    pub fn explain(&self, method: &Method, path: &str, body: &[u8]) -> Option<String> {
        let value: Value = serde_json::from_slice(body).ok()?;
        let operation = self.operation(method, path)?;
        let content = operation.get("requestBody")?.get("content")?.as_object()?;
        let schema = content.iter().find(|(media, _)| media.starts_with("application/json"))?.1.get("schema")?;
        Walk { spec: &self.spec }.check(&value, schema, "")
    }

    fn operation(&self, method: &Method, path: &str) -> Option<&Value> {
        let paths = self.spec.get("paths")?.as_object()?;
        let want: Vec<&str> = path.trim_end_matches('/').split('/').collect();
        let method = method.as_str().to_ascii_lowercase();
        paths.iter().find_map(|(template, item)| {
            let have: Vec<&str> = template.trim_end_matches('/').split('/').collect();
            let matches = have.len() == want.len()
                && have.iter().zip(&want).all(|(h, w)| h == w || (h.starts_with('{') && h.ends_with('}')));
            matches.then(|| item.get(&method)).flatten()
        })
    }
}

struct Walk<'a> {
    spec: &'a Value,
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
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            return all.iter().find_map(|s| self.check(value, s, path));
        }
        if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
            if !choices.contains(value) {
                let names: Vec<String> =
                    choices.iter().map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned)).collect();
                return Some(format!("{} must be one of {}, not {}", subject(path), names.join(", "), shown(value)));
            }
            return None;
        }
        let kind = schema.get("type").and_then(Value::as_str)?;
        let wrong = |what: &str| Some(format!("{} must be {what}, not {}", subject(path), shown(value)));
        match kind {
            "object" => {
                let Some(object) = value.as_object() else { return wrong("an object") };
                self.object(object, schema, path)
            }
            "array" => {
                let Some(items) = value.as_array() else { return wrong("a list") };
                let item = schema.get("items")?;
                items.iter().enumerate().find_map(|(n, v)| self.check(v, item, &format!("{}[{n}]", subject(path))))
            }
            // poem-openapi reads a number or a boolean as its text, so only other values are wrong here.
            "string" if !(value.is_string() || value.is_number() || value.is_boolean()) => wrong("a text"),
            "integer" if !(value.is_i64() || value.is_u64()) => wrong("a whole number"),
            "number" if !value.is_number() => wrong("a number"),
            "boolean" if !value.is_boolean() => wrong("true or false"),
            _ => None,
        }
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
                None => {
                    if let Some(extra) = schema.get("additionalProperties").filter(|s| s.is_object())
                        && let Some(problem) = self.check(value, extra, &at(path, key))
                    {
                        return Some(problem);
                    }
                }
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
                "CreateItem": {"type": "object", "required": ["name", "condition"], "properties": {
                    "name": {"type": "string"},
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
        assert_eq!(explain("/nowhere", json!({})), None);
        assert_eq!(explainer().explain(&Method::POST, "/items", b"{not json"), None);
        assert_eq!(explainer().explain(&Method::GET, "/items", b"{}"), None);
        assert_eq!(Explainer::new("not a document").explain(&Method::POST, "/items", b"{}"), None);
    }
}
