//! Stock through the HTTP API: a template asking for a count, a stock of like units filling it, the units held
//! and available on the item, a second project refused when too few units remain, and build and drop moving
//! the units (issue 26).

use crate::app::{Db, TestApp, assert_error};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};

on_both!(a_stock_fills_counts_and_never_gives_more_units_than_it_has,);

/// A template of one requirement of `count` AA cells.
fn cells_template(label: &str, count: u32) -> Value {
    json!({
        "label": label,
        "goal": format!("A {label} on AA cells."),
        "effort": "an hour",
        "requirements": [{"key": "cells", "label": "AA cells", "item_types": ["AA cell"], "count": count}],
    })
}

/// The project of a proposal run made from `template`, and the units it takes of `stock`.
fn project_of(run: &Value, template: i64, stock: i64) -> (i64, u32) {
    let p = run["projects"].as_array().unwrap().iter().find(|p| p["template_id"] == template).expect("proposed");
    let units = p["allocations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["item_id"] == stock)
        .map(|a| a["units"].as_u64().unwrap())
        .sum::<u64>();
    (p["id"].as_i64().unwrap(), units as u32)
}

async fn units(app: &TestApp, id: i64) -> (u64, u64, u64) {
    let (status, it) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(status, StatusCode::OK, "{it}");
    (it["quantity"].as_u64().unwrap(), it["units_held"].as_u64().unwrap(), it["units_available"].as_u64().unwrap())
}

async fn a_stock_fills_counts_and_never_gives_more_units_than_it_has(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let (status, torch) = app.post("/api/templates", cells_template("Torch", 4)).await;
    assert_eq!(status, StatusCode::CREATED, "{torch}");
    assert_eq!(torch["requirements"][0]["count"], 4);
    assert_eq!(torch["requirements"][0]["item_types"], json!(["aa_cell"]));
    let (_, lantern) = app.post("/api/templates", cells_template("Lantern", 8)).await;
    let (torch, lantern) = (torch["id"].as_i64().unwrap(), lantern["id"].as_i64().unwrap());
    let (status, body) = app.post("/api/templates", cells_template("Nothing", 0)).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let stock = app
        .create_item(json!({"name": "AA cells", "item_type": "AA cell", "profile": "Eneloop", "condition": "good",
            "intent": "keep", "quantity": 10}))
        .await;
    assert_eq!(units(&app, stock).await, (10, 0, 10));

    // One run for the torch, one for the lantern, before either is accepted: each takes what it asks of 10.
    let (status, for_torch) = app.post("/api/projects/propose", json!({"brief": "a torch"})).await;
    assert_eq!(status, StatusCode::OK, "{for_torch}");
    let (first, taken) = project_of(&for_torch, torch, stock);
    assert_eq!(taken, 4, "{for_torch}");
    let (_, for_lantern) = app.post("/api/projects/propose", json!({"brief": "a lantern"})).await;
    let (second, taken) = project_of(&for_lantern, lantern, stock);
    assert_eq!(taken, 8, "{for_lantern}");

    // Accepting the torch holds 4 units: 6 left, and the stock stays available.
    let (status, accepted) = app.post(&format!("/api/projects/{first}/accept"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{accepted}");
    assert_eq!(
        accepted["allocations"],
        json!([{"requirement": "cells", "item_id": stock, "item_name": "AA cells", "units": 4}])
    );
    assert_eq!(units(&app, stock).await, (10, 4, 6));
    let (_, it) = app.get(&format!("/api/items/{stock}")).await;
    assert_eq!((it["availability"].as_str(), it["project_id"].as_i64()), (Some("available"), None));

    // The lantern needs 8 of the 6 left: refused by name, nothing taken.
    let (status, body) = app.post(&format!("/api/projects/{second}/accept"), json!({})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    assert_eq!(body["error"]["message"], "\"AA cells\" has 6 units free; the project needs 8");
    assert_eq!(units(&app, stock).await, (10, 4, 6));
    let (_, still) = app.get(&format!("/api/projects/{second}")).await;
    assert_eq!(still["status"], "proposed");

    // What projects hold stays theirs: the quantity cannot go under it, the stock cannot be given away.
    let (status, body) = app.patch(&format!("/api/items/{stock}"), json!({"quantity": 3})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    assert!(body["error"]["message"].as_str().unwrap().contains("4 units held by projects"), "{body}");
    let (status, body) = app.post(&format!("/api/items/{stock}/gone"), json!({"reason": "sold"})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");

    // A new run sees the 6 free units and no more: a complete torch takes 4, and the lantern wished for is
    // proposed with the 2 left and says what is still missing.
    let (_, again) = app.post("/api/projects/propose", json!({"brief": "a lantern"})).await;
    let (third, taken) = project_of(&again, lantern, stock);
    assert_eq!(taken, 2, "{again}");
    assert_eq!(project_of(&again, torch, stock).1, 4, "{again}");
    let third_project = again["projects"].as_array().unwrap().iter().find(|p| p["id"] == third).unwrap().clone();
    assert_eq!(third_project["missing"], json!(["cells"]));

    // Building the torch consumes its 4 units: 6 in all, none held; the history says so.
    let (status, built) = app.post(&format!("/api/projects/{first}/build"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{built}");
    assert_eq!(units(&app, stock).await, (6, 0, 6));
    let (_, history) = app.get(&format!("/api/items/{stock}/history")).await;
    let build = history["events"].as_array().unwrap().iter().find(|e| e["action"] == "build").expect("{history}");
    assert!(
        build["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["field"] == "quantity" && c["before"] == "10" && c["after"] == "6"),
        "{history}"
    );
    // The units a build consumed come back only by the project's steps, never by undoing the field.
    let (status, body) = app.post(&format!("/api/events/{}/undo", build["id"]), json!(null)).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    assert_eq!(units(&app, stock).await, (6, 0, 6));

    // Accept then drop the 2-unit lantern: the units come back.
    let (status, _) = app.post(&format!("/api/projects/{third}/accept"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(units(&app, stock).await, (6, 2, 4));
    let (status, _) = app.post(&format!("/api/projects/{third}/drop"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(units(&app, stock).await, (6, 0, 6));

    // The build pack says how many units to gather.
    let (_, pack) = app.get(&format!("/api/projects/{first}/pack")).await;
    assert_eq!(pack["allocations"][0]["units"], 4);
    assert!(pack["checklist"][0].as_str().unwrap().starts_with("Gather 4 x AA cells"), "{pack}");
}
