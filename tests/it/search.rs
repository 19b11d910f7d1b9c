//! The search of `GET /api/items?q=` through the API: word starts, one typo, every indexed text, relevance
//! order and its pages, and the index and the total kept in step with writes and imports.

use crate::app::{Db, TestApp, item};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};

on_both!(
    a_search_finds_word_starts_one_typo_and_every_indexed_text,
    a_search_pages_in_relevance_order_by_offset_and_cursor,
    the_search_and_the_total_follow_writes_and_imports,
);

/// The names of a listing's page, its total and its cursor.
async fn names(app: &TestApp, path: &str) -> (Vec<String>, u64, Option<String>) {
    let (status, page) = app.get(path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {page}");
    let names = page["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_owned()).collect();
    (names, page["total"].as_u64().unwrap(), page["next"].as_str().map(str::to_owned))
}

fn described(name: &str, item_type: &str, profile: &str) -> Value {
    let mut body = item(name, item_type);
    body["profile"] = json!(profile);
    body
}

async fn a_search_finds_word_starts_one_typo_and_every_indexed_text(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    app.create_item(described("Raspberry Pi 4", "single_board_computer", "Broadcom BCM2711")).await;
    app.create_item(described("Kestrel 5500 weather meter", "meter", "anemometer")).await;
    let mut drill = described("Drill", "tool", "cordless");
    drill["location"] = json!("Garage / Shelf B2");
    app.create_item(drill).await;
    let mut monitor = described("Monitor", "monitor", "24 inch");
    monitor["faults"] = json!([{"text": "cracked bezel", "severity": "minor"}]);
    app.create_item(monitor).await;

    let found = |q: &'static str| {
        let app = &app;
        async move {
            let (names, total, _) = names(app, &format!("/api/items?q={q}")).await;
            (names, total)
        }
    };
    let one = |name: &str| (vec![name.to_owned()], 1);
    assert_eq!(found("rasp").await, one("Raspberry Pi 4"));
    assert_eq!(found("raspbery").await, one("Raspberry Pi 4"));
    assert_eq!(found("kestrl").await, one("Kestrel 5500 weather meter"));
    assert_eq!(found("KESTREL%205500").await, one("Kestrel 5500 weather meter"));
    assert_eq!(found("board").await, one("Raspberry Pi 4"));
    assert_eq!(found("garage%20shelf").await, one("Drill"));
    assert_eq!(found("bezel").await, one("Monitor"));
    assert_eq!(found("rsapbery").await, (vec![], 0));
    // The rules of a search stand: at most 32 words, no control character.
    let (status, _) = app.get("/api/items?q=pi%1b").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

async fn a_search_pages_in_relevance_order_by_offset_and_cursor(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    // Created weakest first: the order of relevance is not the order of ids.
    for n in 0..3 {
        let mut body = described(&format!("Grey box {n}"), "part", "plain");
        body["faults"] = json!([{"text": format!("servo {n} stuck"), "severity": "minor"}]);
        app.create_item(body).await;
    }
    for n in 0..3 {
        app.create_item(described(&format!("Grey box {n}"), "part", "servo metal")).await;
    }
    for n in 0..3 {
        app.create_item(described(&format!("Servo {n}"), "part", "plain")).await;
    }
    let (all, total, next) = names(&app, "/api/items?q=servo&limit=50").await;
    assert_eq!((total, next), (9, None));
    assert_eq!(&all[..3], ["Servo 0", "Servo 1", "Servo 2"]);

    let mut by_offset = Vec::new();
    for offset in (0..9).step_by(2) {
        by_offset.extend(names(&app, &format!("/api/items?q=servo&limit=2&offset={offset}")).await.0);
    }
    assert_eq!(by_offset, all);

    let (mut by_cursor, _, mut next) = names(&app, "/api/items?q=servo&limit=2").await;
    while let Some(after) = next {
        let (page, total, n) = names(&app, &format!("/api/items?q=servo&limit=2&after={after}")).await;
        assert_eq!(total, 9);
        by_cursor.extend(page);
        next = n;
    }
    assert_eq!(by_cursor, all);
}

async fn the_search_and_the_total_follow_writes_and_imports(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(described("Soldering iron", "tool", "TS100")).await;
    app.create_item(described("Multimeter", "multimeter", "")).await;
    assert_eq!(names(&app, "/api/items").await.1, 2);
    assert_eq!(names(&app, "/api/items?q=solder").await.1, 1);

    let (status, body) = app.patch(&format!("/api/items/{id}"), json!({"name": "Hot air station"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(names(&app, "/api/items?q=solder").await.1, 0);
    assert_eq!(names(&app, "/api/items?q=hot%20air").await.0, ["Hot air station"]);

    let (status, body) = app.post(&format!("/api/items/{id}/gone"), json!({"reason": "given", "note": "to Ana"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(names(&app, "/api/items").await.1, 1);
    assert_eq!(names(&app, "/api/items?q=hot").await.1, 0);
    assert_eq!(names(&app, "/api/items?q=ana&include_gone=true").await.0, ["Hot air station"]);
    assert_eq!(names(&app, "/api/items?include_gone=true").await.1, 2);

    let csv = "name,item_type,profile\nOscilloscope,test_equipment,Rigol DS1054Z\nLogic analyser,test_equipment,\n";
    let resp = app
        .client
        .post(app.url("/api/import"))
        .bearer_auth(&app.token)
        .header("Content-Type", "text/csv; charset=utf-8")
        .body(csv)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{}", resp.text().await.unwrap());
    assert_eq!(names(&app, "/api/items").await.1, 3);
    assert_eq!(names(&app, "/api/items?q=rigol").await.0, ["Oscilloscope"]);
    assert_eq!(names(&app, "/api/items?q=test%20equip").await.1, 2);
}
