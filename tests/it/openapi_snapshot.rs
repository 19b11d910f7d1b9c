//! The OpenAPI document as committed (`docs/openapi.json`): any change of the API shows in review as a change of
//! that file. `TROVE_UPDATE_OPENAPI=1 cargo test -p trove --test it -- openapi_snapshot` writes it anew.

use crate::app::{Db, TestApp};
use reqwest::StatusCode;
use std::path::PathBuf;

/// Where the committed document lives, from the workspace root.
fn committed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openapi_document_is_the_committed_one() {
    let app = TestApp::spawn(Db::Sqlite, &[]).await;
    let answer = app.client.get(app.url("/api/openapi.json")).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    let document: serde_json::Value = answer.json().await.unwrap();
    // Keys sorted (serde_json's map), two spaces, a final newline: a diff shows only what changed.
    let served = format!("{}\n", serde_json::to_string_pretty(&document).unwrap());
    let path = committed();
    if std::env::var_os("TROVE_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &served).unwrap();
        return;
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    if kept != served {
        let first = kept.lines().zip(served.lines()).position(|(a, b)| a != b).unwrap_or(kept.lines().count());
        panic!(
            "the OpenAPI document changed (first difference at line {}: {:?} is now {:?}). If the change is meant, \
             write it anew and commit it with the change: \
             TROVE_UPDATE_OPENAPI=1 cargo test -p trove --test it -- openapi_snapshot",
            first + 1,
            kept.lines().nth(first).unwrap_or_default(),
            served.lines().nth(first).unwrap_or_default(),
        );
    }
}
