//! What an item records is bounded: at most 200 field keys, and measurement and test dates from 1970 to a day
//! from now. Past a bound the answer is 400 naming the field, and nothing is written.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};

on_both!(field_keys_and_recorded_dates_are_bounded);

fn fields(count: usize) -> Value {
    (0..count).map(|k| (format!("k{k}"), json!({"value": 1.0, "unit": "V"}))).collect::<serde_json::Map<_, _>>().into()
}

fn message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}

async fn field_keys_and_recorded_dates_are_bounded(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let mut full = item("Bench supply", "power_supply");
    full["fields"] = fields(200);
    let id = app.create_item(full).await;

    let mut over = item("Too many", "power_supply");
    over["fields"] = fields(201);
    let (status, body) = app.post("/api/items", over).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    assert_eq!(message(&body), "fields: an item has at most 200 field keys; this one would have 201");

    let measure = |key: &str, at: &str| json!({"key": key, "value": 2.0, "unit": "V", "at": at});
    let path = format!("/api/items/{id}/measurements");
    // A new reading of a key the item has is not a new key; a new key is one too many.
    let (status, body) = app.post(&path, measure("k7", "1970-01-01T00:00:00Z")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = app.post(&path, measure("k200", "2026-01-01T00:00:00Z")).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    assert!(message(&body).starts_with("fields: an item has at most 200 field keys"), "{body}");
    let (status, body) = app.post(&path, measure("k7", "1969-12-31T23:59:59Z")).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    assert_eq!(message(&body), "at must be from 1970-01-01 to a day from now, not 1969-12-31T23:59:59+00:00");

    let later = (chrono::Utc::now() + chrono::TimeDelta::days(2)).to_rfc3339();
    let (status, body) =
        app.post(&format!("/api/items/{id}/tests"), json!({"name": "load", "result": "pass", "at": later})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    assert!(message(&body).starts_with("at must be from 1970-01-01 to a day from now"), "{body}");

    // Nothing refused was written: the one reading in bounds is all that was added.
    let (_, stored) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(stored["fields"].as_object().unwrap().len(), 200);
    assert_eq!(stored["tests_done"], json!([]));
    let (_, listed) = app.get("/api/items?limit=500").await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
}
