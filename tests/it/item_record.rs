//! What a household records of an item by hand (issue 26): types typed in words, notes, tags, serial, purchase,
//! warranty, a hand-set asking price, quantities and low stock, and the types the forms suggest; on both
//! databases, through the API.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Everything recorded by hand, as a create body carries it.
fn recorded() -> Value {
    let mut body = item("Cordless drill", "Power Drill");
    body["quantity"] = json!(2);
    body["min_quantity"] = json!(1);
    body["tags"] = json!(["garage", "18 V", "Garage"]);
    body["notes"] = json!("Two batteries.\nCharger in the blue box.");
    body["serial"] = json!(" SN-4411-B ");
    body["purchase"] = json!({"date": "2024-05-17", "price": 12999, "currency": "eur", "vendor": "Hornbach"});
    body["warranty_until"] = json!("2027-05-16");
    body["asking_price"] = json!({"amount": 6000, "currency": "EUR"});
    body
}

/// The members recorded by hand, as the API answers them.
fn record_of(item: &Value) -> Value {
    json!({
        "item_type": item["item_type"],
        "quantity": item["quantity"],
        "min_quantity": item["min_quantity"],
        "low_stock": item["low_stock"],
        "tags": item["tags"],
        "notes": item["notes"],
        "serial": item["serial"],
        "purchase": item["purchase"],
        "warranty_until": item["warranty_until"],
        "asking_price": item["asking_price"],
    })
}

async fn everything_recorded_by_hand_round_trips(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let (status, created) = app.post("/api/items", recorded()).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let want = json!({
        "item_type": "power_drill",
        "quantity": 2,
        "min_quantity": 1,
        "low_stock": false,
        "tags": ["garage", "18 V"],
        "notes": "Two batteries.\nCharger in the blue box.",
        "serial": "SN-4411-B",
        "purchase": {"date": "2024-05-17", "price": 12999, "currency": "EUR", "vendor": "Hornbach"},
        "warranty_until": "2027-05-16",
        "asking_price": {"amount": 6000, "currency": "EUR"},
    });
    assert_eq!(record_of(&created), want);
    let id = created["id"].as_i64().unwrap();
    // The read (the fast writer) and the list say the same.
    let (_, read) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(record_of(&read), want);
    let listed = app.all_items().await;
    assert_eq!(record_of(&listed[0]), want);

    // A change of each, and clearing what may be cleared.
    let (status, changed) = app
        .patch(
            &format!("/api/items/{id}"),
            json!({
                "item_type": "cordless-drill",
                "quantity": 1,
                "tags": ["workshop"],
                "notes": "",
                "serial": null,
                "purchase": null,
                "warranty_until": "2028-01-31",
                "asking_price": null,
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(
        record_of(&changed),
        json!({
            "item_type": "cordless_drill",
            "quantity": 1,
            "min_quantity": 1,
            "low_stock": true,
            "tags": ["workshop"],
            "notes": "",
            "serial": null,
            "purchase": null,
            "warranty_until": "2028-01-31",
            "asking_price": null,
        })
    );
    let (_, read) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(record_of(&read), record_of(&changed));
    // Each change is history.
    let (status, history) = app.get(&format!("/api/items/{id}/history")).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    let fields: Vec<&str> = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["changes"].as_array().unwrap().iter())
        .filter_map(|c| c["field"].as_str())
        .collect();
    for f in ["item_type", "quantity", "tags", "notes", "serial", "purchase", "warranty_until", "asking_price"] {
        assert!(fields.contains(&f), "{f} in {fields:?}");
    }
}

async fn bad_values_are_refused_with_the_field_named_and_nothing_changes(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let with = |member: &str, value: Value| {
        let mut body = item("Thing", "Gadget");
        body[member] = value;
        body
    };
    let tags: Vec<String> = (0..21).map(|n| format!("t{n}")).collect();
    let cases = [
        (with("quantity", json!(-1)), "quantity"),
        (with("quantity", json!(1_000_001)), "quantity"),
        (with("min_quantity", json!(-3)), "min_quantity"),
        (with("tags", json!(tags)), "tags"),
        (with("tags", json!(["x".repeat(41)])), "tags"),
        (with("warranty_until", json!("2027-02-30")), "warranty_until"),
        (with("warranty_until", json!("1900-01-01")), "warranty_until"),
        (with("purchase", json!({"price": 100})), "purchase.currency"),
        (with("purchase", json!({"price": 100, "currency": "euros"})), "purchase.currency"),
        (with("asking_price", json!({"amount": -5, "currency": "EUR"})), "asking_price"),
        (with("serial", json!("a\nb")), "serial"),
        (with("notes", json!("n".repeat(4001))), "notes"),
        (with("item_type", json!("---")), "item_type"),
    ];
    for (body, field) in cases {
        let (status, answer) = app.post("/api/items", body.clone()).await;
        assert!(status.is_client_error(), "{status} {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(field), "{field} named in {message:?}");
        assert!(!message.contains("^[") && !message.contains("$,"), "no regex in {message:?}");
    }
    assert!(app.all_items().await.is_empty(), "nothing was stored");

    let id = app.create_item(item("Thing", "Gadget")).await;
    let (status, answer) = app.patch(&format!("/api/items/{id}"), json!({"quantity": -1})).await;
    assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
    let (status, answer) = app.patch(&format!("/api/items/{id}"), json!({"tags": ["a\u{7}"]})).await;
    assert!(status.is_client_error(), "{answer}");
    let (_, read) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!((read["quantity"].clone(), read["tags"].clone()), (json!(1), json!([])));
}

async fn tags_low_stock_and_search_filter_the_list(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let mut screws = item("M3 screws", "Screw");
    screws["quantity"] = json!(12);
    screws["min_quantity"] = json!(20);
    screws["tags"] = json!(["Workshop", "M3"]);
    let mut cells = item("AA cells", "AA cell");
    cells["quantity"] = json!(10);
    cells["min_quantity"] = json!(4);
    cells["tags"] = json!(["batteries"]);
    let mut drill = item("Drill", "drill");
    drill["tags"] = json!(["workshop_tools"]);
    drill["serial"] = json!("ZX-99812");
    drill["notes"] = json!("Lent to the neighbours once.");
    for body in [screws, cells, drill] {
        app.create_item(body).await;
    }
    let names = |page: &Value| -> Vec<String> {
        let mut n: Vec<String> =
            page["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_owned()).collect();
        n.sort();
        n
    };
    // A tag matches whole, ignoring case: "workshop" is not "workshop_tools".
    let (_, page) = app.get("/api/items?tag=WORKSHOP").await;
    assert_eq!(names(&page), ["M3 screws"]);
    let (_, page) = app.get("/api/items?tag=workshop_tools").await;
    assert_eq!(names(&page), ["Drill"]);
    let (_, page) = app.get("/api/items?tag=work%25").await;
    assert_eq!(names(&page), Vec::<String>::new(), "LIKE's own characters are plain text");
    let (_, page) = app.get("/api/items?low_stock=true").await;
    assert_eq!(names(&page), ["M3 screws"]);
    assert_eq!(page["items"][0]["low_stock"], true);
    // Search reads notes, tags and serial.
    for (q, want) in [("neighbours", "Drill"), ("ZX-99812", "Drill"), ("batteries", "AA cells")] {
        let (status, page) = app.get(&format!("/api/items?q={q}")).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(names(&page), [want], "{q}");
    }
    // A change of notes is found at once.
    let id = app.all_items().await.iter().find(|i| i["name"] == "AA cells").unwrap()["id"].as_i64().unwrap();
    let (status, _) = app.patch(&format!("/api/items/{id}"), json!({"notes": "Eneloop pro"})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, page) = app.get("/api/items?q=eneloop").await;
    assert_eq!(names(&page), ["AA cells"]);
}

async fn the_types_a_form_suggests_come_with_their_counts(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    for (name, t) in [("Anker", "Power Bank"), ("Xiaomi", "power-bank"), ("Zither", "Zither")] {
        app.create_item(item(name, t)).await;
    }
    let (status, body) = app.get("/api/item-types").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let types = body["types"].as_array().unwrap();
    let count = |t: &str| types.iter().find(|x| x["type"] == t).map(|x| (x["label"].clone(), x["items"].clone()));
    assert_eq!(count("power_bank"), Some((json!("Power bank"), json!(2))));
    assert_eq!(count("zither"), Some((json!("Zither"), json!(1))));
    // A type only the catalogue names is offered with no items.
    assert!(types.iter().any(|x| x["items"] == 0), "{body}");
    let labels: Vec<&str> = types.iter().map(|x| x["label"].as_str().unwrap()).collect();
    let mut sorted = labels.clone();
    sorted.sort_unstable();
    assert_eq!(labels, sorted);
}

async fn a_hand_set_asking_price_is_the_drafts_price(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let mut body = item("Old router", "router");
    body["intent"] = json!("sell");
    let id = app.create_item(body).await;
    let (_, draft) = app.get(&format!("/api/items/{id}/draft")).await;
    assert_eq!(draft["price"], Value::Null, "{draft}");
    let (status, _) =
        app.patch(&format!("/api/items/{id}"), json!({"asking_price": {"amount": 2500, "currency": "GBP"}})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, draft) = app.get(&format!("/api/items/{id}/draft")).await;
    assert_eq!(status, StatusCode::OK, "{draft}");
    assert_eq!(
        (&draft["price"], &draft["currency"], &draft["price_from"]),
        (&json!(2500), &json!("GBP"), &json!("asking_price"))
    );
    // A later estimate, above or below, does not take its place.
    for amount in [9000, 100] {
        let (status, _) =
            app.put(&format!("/api/items/{id}/value"), json!({"amount": amount, "currency": "EUR"})).await;
        assert_eq!(status, StatusCode::OK);
        let (_, draft) = app.get(&format!("/api/items/{id}/draft")).await;
        assert_eq!(
            (&draft["price"], &draft["currency"], &draft["price_from"]),
            (&json!(2500), &json!("GBP"), &json!("asking_price"))
        );
    }
    // Without the hand-set price, the latest estimate is the draft's.
    let (status, _) = app.patch(&format!("/api/items/{id}"), json!({"asking_price": null})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, draft) = app.get(&format!("/api/items/{id}/draft")).await;
    assert_eq!(
        (&draft["price"], &draft["currency"], &draft["price_from"]),
        (&json!(100), &json!("EUR"), &json!("estimate"))
    );
}

async fn every_sort_order_is_stable_and_pages_with_its_cursor(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    // name, place, asking price, purchase price
    let rows = [
        ("delta", Some("Garage / Shelf"), None, Some(500)),
        ("Alpha", None, Some(900), Some(100)),
        ("charlie", Some("Attic"), None, None),
        ("bravo", Some("Garage"), Some(200), None),
        ("echo", Some("Attic"), None, Some(500)),
    ];
    for (name, place, asking, paid) in rows {
        let mut body = item(name, "thing");
        if let Some(p) = place {
            body["location"] = json!(p);
        }
        if let Some(a) = asking {
            body["asking_price"] = json!({"amount": a, "currency": "EUR"});
        }
        if let Some(p) = paid {
            body["purchase"] = json!({"price": p, "currency": "EUR"});
        }
        app.create_item(body).await;
    }
    // The last one changed is the most recently updated.
    let id = app.all_items().await.iter().find(|i| i["name"] == "charlie").unwrap()["id"].as_i64().unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    app.patch(&format!("/api/items/{id}"), json!({"notes": "touched"})).await;

    let names = |page: &Value| -> Vec<String> {
        page["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_owned()).collect()
    };
    let cases: [(&str, [&str; 5]); 7] = [
        ("name", ["Alpha", "bravo", "charlie", "delta", "echo"]),
        ("-name", ["echo", "delta", "charlie", "bravo", "Alpha"]),
        ("place", ["charlie", "echo", "bravo", "delta", "Alpha"]),
        ("-place", ["delta", "bravo", "charlie", "echo", "Alpha"]),
        ("value", ["bravo", "delta", "echo", "Alpha", "charlie"]),
        ("-value", ["Alpha", "delta", "echo", "bravo", "charlie"]),
        ("-updated", ["charlie", "echo", "bravo", "Alpha", "delta"]),
    ];
    for (sort, want) in cases {
        let (status, page) = app.get(&format!("/api/items?sort={sort}")).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(names(&page), want, "sort={sort}");
        // Two at a time through the cursor: the same order, nothing twice, nothing left out.
        let mut walked: Vec<String> = Vec::new();
        let mut next = format!("/api/items?sort={sort}&limit=2");
        loop {
            let (status, page) = app.get(&next).await;
            assert_eq!(status, StatusCode::OK, "{page}");
            walked.extend(names(&page));
            match page["next"].as_str() {
                Some(after) => next = format!("/api/items?sort={sort}&limit=2&after={after}"),
                None => break,
            }
        }
        assert_eq!(walked, want, "sort={sort} paged");
    }
    let (status, body) = app.get("/api/items?sort=colour").await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    assert!(body["error"]["message"].as_str().unwrap().contains("name, updated, place or value"));
}

async fn history_names_places_as_they_were(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let mut body = item("Drill", "drill");
    body["location"] = json!("Garage");
    let id = app.create_item(body).await;
    let (status, boxed) = app.post("/api/places", json!({"name": "Box 1"})).await;
    assert_eq!(status, StatusCode::CREATED, "{boxed}");
    let box_id = boxed["id"].as_i64().unwrap();
    let (status, _) = app.patch(&format!("/api/items/{id}"), json!({"place_id": box_id})).await;
    assert_eq!(status, StatusCode::OK);
    // A refusal names the place as its owner calls it.
    let refused =
        app.client.delete(app.url(&format!("/api/places/{box_id}"))).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["message"], "\"Box 1\" still holds 1 item; move them out first");
    // Renamed later: the history still reads as it was.
    let (status, _) = app.patch(&format!("/api/places/{box_id}"), json!({"name": "Blue box"})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app.post("/api/items/bulk", json!({"ids": [id], "set": {"place_id": null}})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, history) = app.get(&format!("/api/items/{id}/history")).await;
    let moves: Vec<(Value, Value)> = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["changes"].as_array().unwrap().iter())
        .filter(|c| c["field"] == "place_id")
        .map(|c| (c["before_name"].clone(), c["after_name"].clone()))
        .collect();
    assert_eq!(moves, [(json!("Garage"), json!("Box 1")), (json!("Blue box"), Value::Null)], "{history}");
}

on_both!(
    history_names_places_as_they_were,
    every_sort_order_is_stable_and_pages_with_its_cursor,
    everything_recorded_by_hand_round_trips,
    bad_values_are_refused_with_the_field_named_and_nothing_changes,
    tags_low_stock_and_search_filter_the_list,
    the_types_a_form_suggests_come_with_their_counts,
    a_hand_set_asking_price_is_the_drafts_price,
);
