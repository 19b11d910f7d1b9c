//! The template catalogue through the HTTP API.

use crate::app::{Db, TestApp, assert_error};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::json;

on_both!(catalogue_is_seeded_and_extensible);

async fn catalogue_is_seeded_and_extensible(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let (status, list) = app.get("/api/templates").await;
    assert_eq!(status, StatusCode::OK);
    let builtin = list["templates"].as_array().unwrap().len();
    assert!(builtin >= 20, "{builtin} built-in templates");

    let body = json!({
        "label": "Garden light", "goal": "Light the path with spare strips.", "effort": "an evening",
        "steps": ["Cut the strip", "Wire the supply"],
        "requirements": [
            {"key": "strip", "label": "a 12 V LED strip", "item_types": ["led_strip"]},
            {"key": "power", "label": "a 12 V supply", "item_types": ["power_supply"], "min_condition": "fair",
             "fields": [{"key": "output_voltage", "min": 11.5, "max": 12500, "unit": "mV"}]}
        ]
    });
    let (status, created) = app.post("/api/templates", body).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    assert_eq!(
        created["requirements"][1]["fields"][0],
        json!({"key": "output_voltage", "min": 0.0115, "max": 12.5, "unit": "V"})
    );
    assert_eq!(created["requirements"][0]["disqualifying_faults"], json!(["major", "blocking"]));
    assert_eq!(created["requirements"][0]["optional"], false);
    let (status, got) = app.get(&format!("/api/templates/{id}")).await;
    assert_eq!((status, &got), (StatusCode::OK, &created));
    let (_, list) = app.get("/api/templates").await;
    assert_eq!(list["templates"].as_array().unwrap().len(), builtin + 1);

    let other = app.token_of("elsewhere").await;
    let (status, body) = app.get_as(&other, &format!("/api/templates/{id}")).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (_, theirs) = app.get_as(&other, "/api/templates").await;
    assert_eq!(theirs["templates"].as_array().unwrap().len(), builtin);

    let (status, body) =
        app.post("/api/templates", json!({"label": "x", "goal": "y", "effort": "z", "requirements": []})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
}
