//! The history of a household over HTTP: who changed an item and what, the activity feed and its paging, and
//! undo (once, only while the item has not changed since, never by a viewer, never across households).

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use crate::people::{from_page, json_of, sign_up};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

on_both!(a_change_is_in_the_history_with_who_made_it_and_is_undone_once, activity_pages_newest_first);

/// `PATCH /api/items/{id}` as the page of the member with `cookie`.
async fn patch_as(app: &TestApp, cookie: &str, id: i64, body: Value) -> (StatusCode, Value) {
    json_of(from_page(app, Method::PATCH, &format!("/api/items/{id}"), cookie).json(&body).send().await.unwrap()).await
}

async fn a_change_is_in_the_history_with_who_made_it_and_is_undone_once(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let ada = sign_up(&app, "member", "Ada").await;
    let (status, created) = json_of(
        from_page(&app, Method::POST, "/api/items", &ada.cookie).json(&item("Pi 4", "sbc")).send().await.unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    let (status, patched) = patch_as(&app, &ada.cookie, id, json!({"name": "Pi 4 Model B"})).await;
    assert_eq!(status, StatusCode::OK, "{patched}");

    let (status, history) = app.get(&format!("/api/items/{id}/history")).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    let events = history["events"].as_array().unwrap();
    let actions: Vec<&str> = events.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["create", "patch"], "oldest first: {history}");
    let change = &events[1];
    assert_eq!((change["member"]["id"].as_i64(), change["member"]["name"].as_str()), (Some(ada.id), Some("Ada")));
    assert_eq!((change["object"]["kind"].as_str(), change["object"]["id"].as_i64()), (Some("item"), Some(id)));
    assert_eq!(change["changes"], json!([{"field": "name", "before": "Pi 4", "after": "Pi 4 Model B"}]));

    // A viewer reads the history but cannot undo; another household's event is not found.
    let viewer = sign_up(&app, "viewer", "Vic").await;
    let undo_path = format!("/api/events/{}/undo", change["id"]);
    let (status, body) = json_of(from_page(&app, Method::POST, &undo_path, &viewer.cookie).send().await.unwrap()).await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, body) = app.post("/api/events/999999/undo", json!(null)).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");

    // Undone: the old name is back, and the undo is an event of its own.
    let (status, undone) = json_of(from_page(&app, Method::POST, &undo_path, &ada.cookie).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{undone}");
    assert_eq!(undone["action"], "undo");
    let (_, now) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(now["name"], "Pi 4");
    // The change cannot be undone twice: the item changed since (by the undo), and the answer names that.
    let (status, body) = json_of(from_page(&app, Method::POST, &undo_path, &ada.cookie).send().await.unwrap()).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    assert!(body["error"]["message"].as_str().unwrap().contains("changed since"), "{body}");
    // Creating an item is not a change of its fields: 422.
    let create_undo = format!("/api/events/{}/undo", events[0]["id"]);
    let (status, body) = json_of(from_page(&app, Method::POST, &create_undo, &ada.cookie).send().await.unwrap()).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
}

async fn activity_pages_newest_first(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let ada = sign_up(&app, "member", "Ada").await;
    for n in 0..5 {
        let resp = from_page(&app, Method::POST, "/api/items", &ada.cookie)
            .json(&item(&format!("Cell {n}"), "lithium_cell"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
    }
    let (status, first) = app.get("/api/activity?limit=3").await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let ids =
        |page: &Value| page["events"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect::<Vec<_>>();
    let first_ids = ids(&first);
    assert_eq!(first_ids.len(), 3);
    assert!(first_ids.windows(2).all(|w| w[0] > w[1]), "newest first: {first_ids:?}");
    let (_, rest) = app.get(&format!("/api/activity?limit=50&before={}", first_ids[2])).await;
    let rest_ids = ids(&rest);
    assert!(rest_ids.len() >= 2, "{rest}");
    assert!(rest_ids.iter().all(|i| *i < first_ids[2]), "{rest_ids:?}");
    let (status, body) = app.get("/api/activity?limit=0").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}
