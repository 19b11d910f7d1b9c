//! What an outside probe found, held: the browser security headers on every answer, `Allow` on a 405, an OpenAPI
//! document that says what the API answers and takes (nullable members, every error status, the limits), values
//! of the wrong JSON type refused, and no input that gives a 500 on any route of the document.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

on_both!(no_route_of_the_document_answers_500_whatever_it_is_fed);

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
        (
            with("item_type", json!("Power Supply")),
            "item_type must match ^[a-z][a-z0-9]*(_[a-z0-9]+)*$, not \"Power Supply\"",
        ),
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

/// Path values for `{id}`: unknown, huge, negative, not a number, with control characters.
const IDS: &[&str] = &["999999999", "9223372036854775807", "-1", "0", "99999999999999999999999", "x", "%00", "1%0a"];

/// Bodies no route takes, or takes only to refuse.
fn hostile_bodies(with_nul: bool) -> Vec<(&'static str, Vec<u8>)> {
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
    let control = if with_nul { "\u{0}\u{1}\u{1b}\u{7f}" } else { "\u{1}\u{1b}\u{7f}" };
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

/// Every path and method of the document, with every id and every hostile body: never a 5xx but the 503 of a
/// model route without a Model API, never a 500 or a dropped connection. PostgreSQL is fed no NUL byte until the text
/// checks of the domain refuse it on both backends (the control-character change of issue 10); SQLite is.
async fn no_route_of_the_document_answers_500_whatever_it_is_fed(db: Db) {
    let app = TestApp::demo(db).await;
    let doc = document(&app).await;
    let bodies = hostile_bodies(db == Db::Sqlite);
    let mut tried = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        let ids: Vec<&str> = if template.contains('{') { IDS.to_vec() } else { vec![""] };
        for (method, _) in item.as_object().unwrap() {
            let method = Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap();
            for id in &ids {
                let path = format!("/api{}", template.replace("{id}", id));
                let queries =
                    ["", "?limit=99999999999999999999&offset=-9223372036854775808&q=%01%1b&include_gone=maybe"];
                for query in queries {
                    let url = app.url(&format!("{path}{query}"));
                    let mut requests = vec![app.client.request(method.clone(), &url).bearer_auth(&app.token)];
                    if method != Method::GET {
                        for (media, body) in &bodies {
                            requests.push(
                                app.client
                                    .request(method.clone(), &url)
                                    .bearer_auth(&app.token)
                                    .header("content-type", *media)
                                    .header("Idempotency-Key", "key with spaces")
                                    .body(body.clone()),
                            );
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
    assert!(tried > 500, "{tried} requests");
}
