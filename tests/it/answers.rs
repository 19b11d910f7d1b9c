//! The listing's answers are kept by the household's revision (`trove_http::answers`): a repeated page is the
//! same bytes, and no write, of an item, a place or a photo (an item's cover), in this process or another sharing
//! the database, leaves a kept page to be served.

use crate::app::{Db, TestApp, item};
use crate::on_both;
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use trove_vision::pictures::exif_jpeg;

on_both!(listing_answers_follow_every_write);

/// The page `query` answers, as text and as JSON.
async fn page(app: &TestApp, query: &str) -> (String, Value) {
    let resp = app.client.get(app.url(&format!("/api/items?{query}"))).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{query}");
    let text = resp.text().await.unwrap();
    let value = serde_json::from_str(&text).unwrap();
    (text, value)
}

/// The listed item `id` of a page.
fn listed(page: &Value, id: i64) -> Value {
    page["items"].as_array().unwrap().iter().find(|i| i["id"] == id).cloned().unwrap_or(Value::Null)
}

async fn listing_answers_follow_every_write(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let mut drill = item("Drill", "tool");
    drill["location"] = json!("Garage / Shelf");
    let drill = app.create_item(drill).await;
    let saw = app.create_item(item("Saw", "tool")).await;

    let (first, listing) = page(&app, "limit=50").await;
    assert_eq!(page(&app, "limit=50").await.0, first, "a repeated page is the same bytes");
    assert_eq!(listing["total"], 2);
    let (one, _) = page(&app, "limit=1").await;
    assert_ne!(one, first, "another query is another answer");

    // An item's change.
    let (status, _) = app.patch(&format!("/api/items/{drill}"), json!({"name": "Hammer drill"})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, listing) = page(&app, "limit=50").await;
    assert_eq!(listed(&listing, drill)["name"], "Hammer drill");

    // A place renamed: the item's path.
    let shelf = listed(&listing, drill)["place_id"].as_i64().unwrap();
    let (status, _) = app.patch(&format!("/api/places/{shelf}"), json!({"name": "Shelf B2"})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, listing) = page(&app, "limit=50").await;
    assert_eq!(listed(&listing, drill)["location"], "Garage / Shelf B2");

    // A photo makes the item's cover; deleting it takes the cover away.
    let photo = Part::bytes(exif_jpeg(32, 16, 1, false)).file_name("saw.jpg");
    let resp = app
        .client
        .post(app.url(&format!("/api/items/{saw}/media")))
        .bearer_auth(&app.token)
        .multipart(Form::new().part("file", photo))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let medium = resp.json::<Value>().await.unwrap()["id"].as_i64().unwrap();
    let (_, listing) = page(&app, "limit=50").await;
    assert_eq!(listed(&listing, saw)["cover"], medium);
    let resp = app.client.delete(app.url(&format!("/api/media/{medium}"))).bearer_auth(&app.token).send().await;
    assert_eq!(resp.unwrap().status(), StatusCode::NO_CONTENT);
    let (_, listing) = page(&app, "limit=50").await;
    assert_eq!(listed(&listing, saw)["cover"], Value::Null);

    // Another process on the same database: its write is seen by this one's next page.
    let other = TestApp::spawn_on(&app.database_url, &[]).await;
    let (_, before) = page(&app, "limit=50").await;
    let (status, _) = other.post("/api/items", item("Level", "tool")).await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, listing) = page(&app, "limit=50").await;
    assert_eq!(listing["total"], before["total"].as_i64().unwrap() + 1);
    assert!(listing["items"].as_array().unwrap().iter().any(|i| i["name"] == "Level"));
    let (status, _) = other.patch(&format!("/api/items/{saw}"), json!({"intent": "sell"})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, listing) = page(&app, "limit=50").await;
    assert_eq!(listed(&listing, saw)["intent"], "sell");
}
