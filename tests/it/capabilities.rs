//! `GET /api/capabilities`: what the model backend offers, said before anyone types, for the local planner, a
//! Model API with every capability, and a server of one's own without web search or transcription.

use crate::app::{Db, TestApp};
use reqwest::StatusCode;
use serde_json::Value;

async fn capabilities_of(settings: &[(&str, String)]) -> Value {
    let app = TestApp::spawn(Db::Sqlite, settings).await;
    let (status, body) = app.get("/api/capabilities").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

fn offered(body: &Value) -> [bool; 5] {
    ["pricing", "label", "listing", "voice", "voice_audio"].map(|k| body[k]["available"].as_bool().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_planner_proposes_and_every_reading_says_it_needs_the_model_api() {
    let body = capabilities_of(&[]).await;
    assert_eq!(body["proposals"]["by"], "local_planner", "{body}");
    assert_eq!(body["proposals"]["model"], "local-planner", "{body}");
    assert_eq!(offered(&body), [false; 5], "{body}");
    for k in ["pricing", "label", "listing", "voice", "voice_audio"] {
        let why = body[k]["reason"].as_str().unwrap();
        assert!(why.ends_with("needs the Model API: set MODEL_API_KEY"), "{k}: {why}");
    }
    assert_eq!(body["limits"]["media_bytes"], 25 * 1024 * 1024, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_api_offers_everything_without_a_reason() {
    let body =
        capabilities_of(&[("MODEL_API_KEY", "k".to_owned()), ("MODEL_API_URL", "http://127.0.0.1:9".to_owned())]).await;
    assert_eq!(body["proposals"]["by"], "model", "{body}");
    assert_eq!(offered(&body), [true; 5], "{body}");
    assert!(body["pricing"].get("reason").is_none_or(Value::is_null), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_of_ones_own_reads_text_and_images_but_neither_searches_nor_listens() {
    let body = capabilities_of(&[
        ("MODEL_PROVIDER", "compatible".to_owned()),
        ("MODEL_API_URL", "http://127.0.0.1:9".to_owned()),
    ])
    .await;
    assert_eq!(body["proposals"]["by"], "model", "{body}");
    assert_eq!(offered(&body), [false, true, true, true, false], "{body}");
    assert!(body["pricing"]["reason"].as_str().unwrap().contains("cannot search the web"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_members_are_told() {
    let app = TestApp::spawn(Db::Sqlite, &[]).await;
    let answer = reqwest::get(app.url("/api/capabilities")).await.unwrap();
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
}
