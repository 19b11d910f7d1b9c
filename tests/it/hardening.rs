//! What an outside probe found, held: the browser security headers on every answer, `Allow` on a 405, an OpenAPI
//! document that says what the API answers and takes (nullable members, every error status, the limits), values
//! of the wrong JSON type refused, and no input that gives a 500 on any route of the document.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

on_both!(
    no_route_of_the_document_answers_500_whatever_it_is_fed,
    control_characters_are_refused_in_every_text_field,
    a_search_is_bounded_and_one_query
);

/// The headers a browser is told on the page, the API, an error and the docs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_the_browser_security_headers() {
    let app = TestApp::spawn(Db::Sqlite, &[]).await;
    let requests = [
        ("/", true, false),
        ("/app.js", true, false),
        ("/api/items", true, true),
        ("/api/items/999999", true, true),
        ("/api/openapi.json", false, true),
        ("/api/docs", false, true),
        ("/health", false, false),
    ];
    for (path, signed_in, api) in requests {
        let mut req = app.client.get(app.url(path));
        if signed_in {
            req = req.bearer_auth(&app.token);
        }
        let answer = req.send().await.unwrap();
        let headers = answer.headers();
        let policy = headers.get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or_default();
        for directive in [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' blob: data:",
            "frame-ancestors 'none'",
            "object-src 'none'",
            "base-uri 'none'",
        ] {
            assert!(policy.contains(directive), "{path}: {directive} in {policy:?}");
        }
        assert!(!policy.contains("unsafe-inline"), "{path}: {policy}");
        assert_eq!(headers.get("x-content-type-options").unwrap(), "nosniff", "{path}");
        assert_eq!(headers.get("referrer-policy").unwrap(), "no-referrer", "{path}");
        assert_eq!(headers.get("cache-control").is_some_and(|v| v == "no-store"), api, "{path}");
    }
    // Without a token: the 401 carries them too.
    let answer = app.client.get(app.url("/api/items")).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    assert!(answer.headers().contains_key("content-security-policy"));
    assert_eq!(answer.headers().get("cache-control").unwrap(), "no-store");
    // The docs page runs no inline script, so the policy holds there too.
    let docs = app.client.get(app.url("/api/docs")).send().await.unwrap().text().await.unwrap();
    assert!(docs.contains("<script src=\"/api/docs/swagger-ui-bundle.js\"></script>"), "{docs}");
    assert!(!docs.contains("<script>") && !docs.contains("<style"), "{docs}");
    let bundle = app.client.get(app.url("/api/docs/swagger-ui-bundle.js")).send().await.unwrap();
    assert_eq!(bundle.status(), StatusCode::OK);
    assert!(bundle.text().await.unwrap().len() > 100_000);
}

/// A method a path does not take is a 405 that names the methods it does take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_405_names_the_allowed_methods() {
    let app = TestApp::spawn(Db::Sqlite, &[]).await;
    let cases = [
        (Method::DELETE, "/api/items", "GET, POST, HEAD"),
        (Method::PUT, "/api/items/7", "GET, PATCH, HEAD"),
        (Method::GET, "/api/projects/propose", "POST"),
        (Method::DELETE, "/api/projects/3", "GET, HEAD"),
        (Method::POST, "/health", "GET, HEAD"),
    ];
    for (method, path, allow) in cases {
        let answer = app.client.request(method.clone(), app.url(path)).bearer_auth(&app.token).send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert_eq!(answer.headers().get("allow").and_then(|v| v.to_str().ok()), Some(allow), "{method} {path}");
        let body: Value = answer.json().await.unwrap();
        assert_eq!(body["error"]["code"], "method_not_allowed", "{method} {path}");
    }
}

async fn document(app: &TestApp) -> Value {
    let (status, doc) = app.get("/api/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    doc
}

/// The members answered as `null` are nullable in the document; the limits the API enforces are declared; every
/// operation lists its error answers with the error schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_says_what_is_answered_and_what_is_taken() {
    let app = TestApp::demo(Db::Sqlite).await;
    let doc = document(&app).await;
    let schema = |name: &str| doc["components"]["schemas"][name].clone();
    let nullable = [
        ("Item", "project_id"),
        ("Item", "location"),
        ("Item", "gone"),
        ("Test", "note"),
        ("Test", "value"),
        ("GoneDto", "note"),
        ("SpendDto", "monthly_limit_micro_usd"),
        ("FieldBound", "max"),
        ("DraftDto", "price"),
        ("DraftDto", "currency"),
        ("CreateItem", "location"),
        ("PackAllocation", "problem"),
        ("PackItem", "location"),
        ("NewRequirement", "min_condition"),
    ];
    for (name, member) in nullable {
        let property = &schema(name)["properties"][member];
        assert_eq!(property["nullable"], true, "{name}.{member}: {property}");
    }
    // A required member is not nullable.
    assert!(schema("Item")["properties"]["name"].get("nullable").is_none());

    let name = &schema("CreateItem")["properties"]["name"];
    assert_eq!((name["minLength"].as_u64(), name["maxLength"].as_u64()), (Some(1), Some(200)), "{name}");
    assert_eq!(schema("CreateItem")["additionalProperties"], false);
    let limit =
        doc["paths"]["/items"]["get"]["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "limit").unwrap()
            ["schema"]
            .clone();
    assert_eq!((limit["minimum"].as_u64(), limit["maximum"].as_u64()), (Some(1), Some(500)), "{limit}");
    let key = doc["paths"]["/projects/propose"]["post"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Idempotency-Key")
        .unwrap()["schema"]
        .clone();
    assert_eq!(key["pattern"], "^[ \t]*[!-~]{1,200}[ \t]*$", "{key}");

    // Each limit declared names a member or a parameter the document has (a renamed DTO keeps its limits).
    for (name, member, limits) in trove_http::document::limits() {
        let property = &schema(name)["properties"][member];
        for (key, value) in limits.as_object().unwrap() {
            assert_eq!(&property[key], value, "{name}.{member}: {property}");
        }
    }
    for (path, parameter, limits) in trove_http::document::parameter_limits() {
        let operations = doc["paths"][path].as_object().unwrap_or_else(|| panic!("{path}"));
        let found = operations.values().flat_map(|o| o["parameters"].as_array().cloned().unwrap_or_default());
        let found: Vec<Value> = found.filter(|p| p["name"] == parameter).collect();
        assert!(!found.is_empty(), "{path} {parameter}");
        for p in found {
            for (key, value) in limits.as_object().unwrap() {
                assert_eq!(&p["schema"][key], value, "{path} {parameter}");
            }
        }
    }

    let from = &doc["paths"]["/spend"]["get"]["parameters"][0];
    assert_eq!(from["name"], "from");
    assert!(from["description"].as_str().is_some_and(|d| d.contains("must not be after `to`")), "{from}");

    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            for status in ["400", "401", "500"] {
                if status == "400" && operation.get("parameters").is_none() && operation.get("requestBody").is_none() {
                    continue;
                }
                // Signing in and accepting an invitation need no one: they answer 401 only for a wrong password.
                if status == "401" && operation.get("security").is_none() && path != "/session" {
                    continue;
                }
                let error = &responses.get(status).unwrap_or_else(|| panic!("{method} {path} documents {status}"));
                let reference = error["content"]["application/json; charset=utf-8"]["schema"]["$ref"].clone();
                assert_eq!(reference, "#/components/schemas/Error", "{method} {path} {status}");
            }
        }
    }
    for status in ["404", "409", "422"] {
        assert!(doc["paths"]["/items/{id}/gone"]["post"]["responses"].get(status).is_some(), "{status}");
    }
    for status in ["402", "502", "503"] {
        assert!(doc["paths"]["/items/{id}/price"]["post"]["responses"].get(status).is_some(), "{status}");
    }

    // And what is answered matches: an item with no location, no project and not gone has them as null.
    let id = app.create_item(item("Bare thing", "gadget")).await;
    let (_, bare) = app.get(&format!("/api/items/{id}")).await;
    for member in ["location", "project_id", "gone"] {
        assert_eq!(bare[member], Value::Null, "{member}");
    }
}

/// A number or a boolean where the document says text is refused, not stored as its text; so is an unknown
/// member, a text over its limit and a value of another type anywhere in the body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_of_the_wrong_type_or_past_a_limit_are_refused() {
    let app = TestApp::spawn(Db::Sqlite, &[]).await;
    let with = |member: &str, value: Value| {
        let mut body = item("Thing", "gadget");
        body[member] = value;
        body
    };
    let cases = [
        (with("name", json!(123)), "name must be a text, not 123"),
        (with("profile", json!(true)), "profile must be a text, not true"),
        (with("location", json!(7.5)), "location must be a text, not 7.5"),
        (with("name", json!("x".repeat(201))), "name is longer than 200 characters"),
        (with("name", json!("")), "name must not be empty"),
        (with("color", json!("red")), "color is not a member of this body"),
        (with("accessories", json!(["cable", 3])), "accessories[1] must be a text, not 3"),
        (with("tags", json!(["x".repeat(41)])), "tags[0] is longer than 40 characters"),
        (with("quantity", json!(1_000_001)), "quantity must be at most 1000000, not 1000001"),
    ];
    for (body, message) in cases {
        let (status, answer) = app.post("/api/items", body.clone()).await;
        assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
        assert_eq!(answer["error"]["message"], message, "{body}");
    }
    assert!(app.all_items().await.is_empty(), "nothing was stored");
    // A header the route would not see (not visible ASCII) is refused, not ignored: the request would run unkeyed.
    let latin1 = reqwest::header::HeaderValue::from_bytes(b"\xe9t\xe9").unwrap();
    let answer = app
        .client
        .post(app.url("/api/projects/propose"))
        .bearer_auth(&app.token)
        .header("Idempotency-Key", latin1)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["error"]["message"], "Idempotency-Key must be visible ASCII text");
    // Paging limits are the document's.
    for query in ["limit=0", "limit=501", "offset=-1"] {
        let (status, answer) = app.get(&format!("/api/items?{query}")).await;
        assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
    }
}

/// Path values for `{id}`: unknown, huge, negative, not a number, with control characters, and one that exists
/// (the demo's first item, project or template), so bodies reach the rules behind the lookup.
const IDS: &[&str] =
    &["999999999", "9223372036854775807", "-1", "0", "99999999999999999999999", "x", "%00", "1%0a", "1"];

/// What the strings and numbers of a body built from the document hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fill {
    /// The `n`th string (in the order of the walk) holds control characters, a NUL byte first; every other
    /// value is one the route takes, so the text reaches the rules and the store behind them.
    Control(usize),
    /// The largest numbers JSON and an `i64` hold.
    Huge,
    /// The most negative numbers.
    Negative,
}

/// Builds a value of a schema of the document, counting the strings it fills.
struct Filler<'a> {
    doc: &'a Value,
    fill: Fill,
    /// Strings filled so far.
    strings: usize,
}

impl Filler<'_> {
    /// A value the schema describes (its `$ref`s read from the document), filled as `fill` says: every member of
    /// an object, one entry of an array, the first value of an enumeration; `member` is the name the value is
    /// given under, which picks an ordinary string the route takes. Depth-bounded.
    fn value(&mut self, schema: &Value, member: &str, depth: usize) -> Value {
        if depth > 8 {
            return Value::Null;
        }
        if let Some(reference) = schema["$ref"].as_str() {
            let name = reference.trim_start_matches("#/components/schemas/");
            return self.value(&self.doc["components"]["schemas"][name], member, depth + 1);
        }
        if let Some(first) = schema["allOf"].as_array().and_then(|a| a.first()) {
            return self.value(first, member, depth + 1);
        }
        if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
            return first.clone();
        }
        match schema["type"].as_str() {
            Some("object") => {
                let mut object = serde_json::Map::new();
                for (name, property) in schema["properties"].as_object().into_iter().flatten() {
                    object.insert(name.clone(), self.value(property, name, depth + 1));
                }
                if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
                    object.insert("capacity".into(), self.value(values, "capacity", depth + 1));
                }
                Value::Object(object)
            }
            Some("array") => json!([self.value(&schema["items"], member, depth + 1)]),
            Some("integer") => match self.fill {
                Fill::Control(_) => json!(1),
                Fill::Huge => json!(i64::MAX),
                Fill::Negative => json!(i64::MIN),
            },
            Some("number") => match self.fill {
                Fill::Control(_) => json!(1.5),
                Fill::Huge => json!(f64::MAX),
                Fill::Negative => json!(f64::MIN),
            },
            Some("boolean") => json!(true),
            Some("string") if schema["format"] == "date-time" => json!("2026-01-01T00:00:00Z"),
            Some("string") => {
                self.strings += 1;
                if self.fill == Fill::Control(self.strings - 1) {
                    return json!("a\u{0}b\u{1}\u{1b}[2J\u{7f}\u{85}c");
                }
                json!(match member {
                    "unit" => "V",
                    "key" => "capacity",
                    "currency" => "GBP",
                    "reference" => "card",
                    _ => "gadget",
                })
            }
            _ => Value::Null,
        }
    }
}

/// The JSON bodies an operation of the document takes: one per string of its schema with control characters
/// in that string only, and one each with the largest and the most negative numbers everywhere.
fn bodies_from_the_document(doc: &Value, operation: &Value) -> Vec<(&'static str, Vec<u8>)> {
    let content = operation["requestBody"]["content"].as_object();
    let json = content.into_iter().flatten().find(|(media, _)| media.starts_with("application/json"));
    let Some((_, json)) = json else { return Vec::new() };
    let schema = &json["schema"];
    let body = |fill: Fill| {
        let mut filler = Filler { doc, fill, strings: 0 };
        let value = filler.value(schema, "", 0);
        (filler.strings, ("application/json", value.to_string().into_bytes()))
    };
    let (strings, huge) = body(Fill::Huge);
    let mut bodies = vec![huge, body(Fill::Negative).1];
    bodies.extend((0..strings).map(|n| body(Fill::Control(n)).1));
    bodies
}

/// A path of the document with every parameter (`{id}`, `{place_id}`, ...) given as `id`.
fn with_ids(template: &str, id: &str) -> String {
    let mut path = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        path.push_str(&rest[..open]);
        path.push_str(id);
        rest = &rest[close..];
    }
    path.push_str(rest);
    path
}

/// Bodies no route takes, or takes only to refuse.
fn hostile_bodies() -> Vec<(&'static str, Vec<u8>)> {
    let json = "application/json";
    let mut bodies: Vec<(&str, Vec<u8>)> = vec![
        (json, b"{".to_vec()),
        (json, b"[]".to_vec()),
        (json, b"null".to_vec()),
        (json, b"\"text\"".to_vec()),
        (json, b"{}".to_vec()),
        (json, b"\xff\xfe".to_vec()),
        (json, "[".repeat(10_000).into_bytes()),
        (json, br#"{"name": 1e308, "item_type": -1e308, "value": 1e400, "limit": 18446744073709551616}"#.to_vec()),
        ("text/csv", b"name,item_type\n\"unterminated".to_vec()),
        ("multipart/form-data; boundary=x", b"--x\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n".to_vec()),
        ("application/xml", b"<item/>".to_vec()),
    ];
    let control = "\u{0}\u{1}\u{1b}\u{7f}";
    let body = json!({
        "name": format!("a{control}b"), "item_type": "gadget", "profile": control, "condition": "good",
        "intent": "keep", "location": control, "text": control, "severity": "minor", "key": "capacity",
        "value": 1.7976931348623157e308, "unit": control, "reason": "sold", "note": control, "brief": control,
        "components": [9223372036854775807_i64, -9223372036854775807_i64], "result": "pass",
        "fields": {"capacity": {"value": -1.7976931348623157e308, "unit": "mAh"}},
    });
    bodies.push((json, body.to_string().into_bytes()));
    bodies
}

/// Every path and method of the document, with every id, every hostile body and bodies built from the
/// operation's own schema (control characters in each string in turn, the largest and the most negative numbers
/// in every number): never a 5xx but the 503 of a model route without a Model API, never a 500 or a dropped
/// connection, on both backends, NUL bytes included. No route is left out.
async fn no_route_of_the_document_answers_500_whatever_it_is_fed(db: Db) {
    let app = TestApp::demo(db).await;
    let doc = document(&app).await;
    let hostile = hostile_bodies();
    let mut tried = 0;
    let mut operations = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        let ids: Vec<&str> = if template.contains('{') { IDS.to_vec() } else { vec![""] };
        for (method, operation) in item.as_object().unwrap() {
            operations += 1;
            let mut bodies = bodies_from_the_document(&doc, operation);
            bodies.extend(hostile.iter().cloned());
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
            for id in &ids {
                let path = format!("/api{}", with_ids(template, id));
                let queries = [
                    "",
                    "?limit=99999999999999999999&offset=-9223372036854775808&q=%01%1b&include_gone=maybe",
                    "?q=%00&item_type=%00&after=%00&reference=%00&reference_mm=1e400&from=%00&status=%00",
                    "?limit=9223372036854775807&offset=9223372036854775807&reference_mm=-1.7976931348623157e308",
                ];
                for (n, query) in queries.into_iter().enumerate() {
                    let url = app.url(&format!("{path}{query}"));
                    let mut requests = vec![app.client.request(method.clone(), &url).bearer_auth(&app.token)];
                    // Bodies go with the first two queries: once without an Idempotency-Key, so that they
                    // reach the keyed routes' rules, and once with a key those routes refuse.
                    if method != Method::GET && n < 2 {
                        for (media, body) in &bodies {
                            let mut request = app
                                .client
                                .request(method.clone(), &url)
                                .bearer_auth(&app.token)
                                .header("content-type", *media)
                                .body(body.clone());
                            if n == 1 {
                                request = request.header("Idempotency-Key", "key with spaces");
                            }
                            requests.push(request);
                        }
                    }
                    for request in requests {
                        let answer = request.send().await.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
                        let status = answer.status();
                        let text = answer.text().await.unwrap();
                        tried += 1;
                        assert!(
                            !status.is_server_error() || status == StatusCode::SERVICE_UNAVAILABLE,
                            "{method} {url}: {status} {text}"
                        );
                    }
                }
            }
        }
    }
    assert!(tried > 2000, "{tried} requests");
    assert!(operations >= 29, "{operations} operations of the document walked");
}

/// A NUL byte, an escape or another control character in any text of any request is a 400 that names the field,
/// on both backends alike, and nothing is written; tab and line breaks are taken where a text may hold lines.
async fn control_characters_are_refused_in_every_text_field(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(item("Bench supply", "power_supply")).await;
    let with = |member: &str, value: Value| {
        let mut body = item("Thing", "gadget");
        body[member] = value;
        body
    };
    let template = |label: &str, step: &str, requirement: &str| {
        json!({"label": label, "goal": "g", "effort": "e", "steps": [step],
               "requirements": [{"key": "k", "label": requirement, "item_types": ["gadget"]}]})
    };
    let nul = "a\u{0}b";
    let cases: Vec<(Method, String, Value, &str)> = vec![
        (Method::POST, "/api/items".into(), with("name", json!(nul)), "name"),
        (Method::POST, "/api/items".into(), with("profile", json!("x\u{1b}[2J")), "profile"),
        (Method::POST, "/api/items".into(), with("location", json!(nul)), "location"),
        (Method::POST, "/api/items".into(), with("location", json!("Shelf\tB")), "location"),
        (Method::POST, "/api/items".into(), with("accessories", json!(["ok", nul])), "accessory"),
        (Method::POST, "/api/items".into(), with("faults", json!([{"text": nul, "severity": "minor"}])), "fault text"),
        (Method::PATCH, format!("/api/items/{id}"), json!({"name": nul}), "name"),
        (Method::PATCH, format!("/api/items/{id}"), json!({"profile": "\u{7}"}), "profile"),
        (Method::PATCH, format!("/api/items/{id}"), json!({"location": "a\u{85}b"}), "location"),
        (Method::PATCH, format!("/api/items/{id}"), json!({"accessories": [nul]}), "accessory"),
        (Method::POST, format!("/api/items/{id}/faults"), json!({"text": nul, "severity": "minor"}), "fault text"),
        (Method::POST, format!("/api/items/{id}/tests"), json!({"name": nul, "result": "pass"}), "test name"),
        (
            Method::POST,
            format!("/api/items/{id}/tests"),
            json!({"name": "t", "result": "pass", "note": nul}),
            "test note",
        ),
        (Method::POST, format!("/api/items/{id}/gone"), json!({"reason": "sold", "note": nul}), "note"),
        (Method::POST, "/api/templates".into(), template(nul, "s", "r"), "label"),
        (Method::POST, "/api/templates".into(), template("l", nul, "r"), "step"),
        (Method::POST, "/api/templates".into(), template("l", "s", nul), "requirement label"),
        (Method::POST, "/api/projects/propose".into(), json!({"brief": nul}), "brief"),
        (Method::POST, "/api/intake/listing".into(), json!({"text": nul}), "text"),
        (Method::POST, "/api/intake/voice".into(), json!({"transcript": nul}), "transcript"),
    ];
    for (method, path, body, field) in cases {
        let answer = app
            .client
            .request(method.clone(), app.url(&path))
            .bearer_auth(&app.token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = answer.status();
        let answer: Value = answer.json().await.unwrap();
        assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("{field} must not contain control characters (found U+")),
            "{method} {path} {body}: {message}"
        );
    }
    // A CSV cell, the search and the item's type in a query too.
    let csv = "name,item_type,profile\nPi,sbc,\"fine\"\nCell,cell,\"bad\u{0}\"\n";
    let answer = app
        .client
        .post(app.url("/api/import"))
        .bearer_auth(&app.token)
        .header("content-type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap();
    let status = answer.status();
    let answer: Value = answer.json().await.unwrap();
    assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
    assert!(answer["error"]["message"].as_str().unwrap().contains("line 3"), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("profile must not contain control"), "{answer}");
    for query in ["q=%00", "q=pi%1b", "item_type=%00"] {
        let (status, answer) = app.get(&format!("/api/items?{query}")).await;
        assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
    }
    // Nothing was written: the one item, unchanged, and no template of the household's own.
    let items = app.all_items().await;
    assert_eq!(items.len(), 1);
    assert_eq!((items[0]["name"].as_str(), items[0]["profile"].as_str()), (Some("Bench supply"), Some("")));
    assert!(items[0]["location"].is_null() && items[0]["accessories"].as_array().unwrap().is_empty());
    assert!(items[0]["faults"].as_array().unwrap().is_empty() && items[0]["tests_done"].as_array().unwrap().is_empty());
    assert!(items[0]["gone"].is_null());

    // Where a text may hold lines, tab and line breaks are taken.
    let (status, created) = app.post("/api/items", with("profile", json!("12 V\t5 A\r\nlinear"))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["profile"], "12 V\t5 A\r\nlinear");
    let test = json!({"name": "load test", "result": "pass", "note": "held 5 A\nfor an hour"});
    let (status, tested) = app.post(&format!("/api/items/{id}/tests"), test).await;
    assert_eq!(status, StatusCode::CREATED, "{tested}");
    let (status, gone) =
        app.post(&format!("/api/items/{id}/gone"), json!({"reason": "sold", "note": "to Sam\nvia ebay"})).await;
    assert_eq!(status, StatusCode::OK, "{gone}");
    assert_eq!(gone["gone"]["note"], "to Sam\nvia ebay");
}

/// A search takes at most 32 words (400 beyond, saying so) and is one bounded query: the 1,000 words that once
/// gave SQLite "Expression tree is too large" are refused, and 32 words run on both backends.
async fn a_search_is_bounded_and_one_query(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let mut body = item("Samsung 25R cell", "lithium_cell");
    body["profile"] = json!("INR18650-25R, 2500 mAh, 20 A, Über");
    let id = app.create_item(body).await;
    app.create_item(item("Pi 4", "single_board_computer")).await;

    let words = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join("+");
    let (status, answer) = app.get(&format!("/api/items?q={}", words(1000))).await;
    assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
    assert_eq!(answer["error"]["message"], "a search has at most 32 words");
    let (status, answer) = app.get(&format!("/api/items?q={}", words(33))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let (status, answer) = app.get(&format!("/api/items?q={}", "x".repeat(501))).await;
    assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");

    // 32 words, each found in the name or the profile (some repeated, some across both), find the item.
    let found = ["samsung", "25r", "cell", "inr18650", "2500", "mah", "20", "a", "Über"];
    let q: Vec<&str> = found.iter().cycle().take(32).copied().collect();
    let (status, page) = app.get(&format!("/api/items?q={}", q.join("+"))).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let ids: Vec<i64> = page["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![id]);
    // 32 distinct words, one of them in no item: nothing.
    let (status, page) = app.get(&format!("/api/items?q=samsung+{}", words(31))).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["total"], 0);
    // A word never spans the name and the profile.
    let (_, page) = app.get("/api/items?q=cellINR").await;
    assert_eq!(page["total"], 0);
    let (_, page) = app.get("/api/items?q=%C3%9Cber+SAMSUNG").await;
    assert_eq!(page["total"], 1, "{page}");
    // The limit is the document's.
    let doc = document(&app).await;
    let q = doc["paths"]["/items"]["get"]["parameters"].as_array().unwrap().iter().find(|p| p["name"] == "q").cloned();
    assert_eq!(q.unwrap()["schema"]["maxLength"], 500);
}

/// A template has at most 50 requirements and each of its lists at most 20 entries; beyond, a 400 that says
/// which, and nothing is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_are_capped() {
    let app = TestApp::spawn(Db::Sqlite, &[]).await;
    let (_, before) = app.get("/api/templates").await;
    let requirement = |key: String, types: usize, fields: usize| {
        let item_types: Vec<String> = (0..types).map(|i| format!("kind_{i}")).collect();
        let bounds: Vec<Value> =
            (0..fields).map(|i| json!({"key": format!("f_{i}"), "min": 1.0, "unit": "V"})).collect();
        json!({"key": key, "label": "a thing", "item_types": item_types, "fields": bounds})
    };
    let template =
        |requirements: Vec<Value>| json!({"label": "Big", "goal": "g", "effort": "e", "requirements": requirements});
    let cases = [
        (
            template((0..51).map(|i| requirement(format!("r_{i}"), 1, 0)).collect()),
            "requirements may have at most 50 entries",
        ),
        (template(vec![requirement("r".into(), 21, 0)]), "requirement r: item_types may have at most 20 entries"),
        (template(vec![requirement("r".into(), 1, 21)]), "requirement r: fields may have at most 20 entries"),
    ];
    for (body, message) in cases {
        let (status, answer) = app.post("/api/templates", body).await;
        assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
        assert_eq!(answer["error"]["message"], message);
    }
    let (status, answer) =
        app.post("/api/templates", template((0..50).map(|i| requirement(format!("r_{i}"), 20, 20)).collect())).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (_, after) = app.get("/api/templates").await;
    assert_eq!(after["templates"].as_array().unwrap().len(), before["templates"].as_array().unwrap().len() + 1);
    let doc = document(&app).await;
    let requirements = &doc["components"]["schemas"]["CreateTemplate"]["properties"]["requirements"];
    assert_eq!(requirements["maxItems"], 50, "{requirements}");
}

/// The export escapes a cell a spreadsheet would run as a formula, and the import reads it back as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_export_escapes_formulas_and_the_import_reads_them_back() {
    let app = TestApp::spawn(Db::Sqlite, &[]).await;
    let hostile = ["=HYPERLINK(\"https://evil.example\",\"x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1)", "'quoted"];
    for (n, name) in hostile.iter().enumerate() {
        let mut body = item(name, "gadget");
        body["location"] = json!(format!("=Shelf {n}"));
        app.create_item(body).await;
    }
    let export = app.client.get(app.url("/api/export.csv")).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(export.status(), StatusCode::OK);
    let sheet = export.text().await.unwrap();
    for line in sheet.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        for cell in &cells[1..] {
            let cell = cell.trim_start_matches('"');
            assert!(!cell.starts_with(['=', '+', '-', '@', '\t', '\r']), "{cell:?} in {line}");
        }
    }
    let other = app.token_of("elsewhere").await;
    let answer = app
        .client
        .post(app.url("/api/import"))
        .bearer_auth(&other)
        .header("content-type", "text/csv")
        .body(sheet)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let (_, page) = app.get_as(&other, "/api/items?limit=500").await;
    let mut names: Vec<&str> = page["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    let mut want = hostile.to_vec();
    want.sort_unstable();
    assert_eq!(names, want);
    let locations: Vec<&str> =
        page["items"].as_array().unwrap().iter().map(|i| i["location"].as_str().unwrap()).collect();
    assert!(locations.iter().all(|l| l.starts_with("=Shelf ")), "{locations:?}");
}
