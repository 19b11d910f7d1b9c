//! Places through the API: the tree and its rules, items in places (by id and by `location` text), listing what
//! is within a place, bulk changes, label PDFs read back by a QR decoder, and scans of photographed labels.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};
use trove_domain::barcode::Symbology;
use trove_labels::testing::{Shot, barcode, blank, pages, photographed, photographed_box, png};

on_both!(a_tree_of_places_holds_items, bulk_changes_are_all_or_nothing);

/// The public URL the labels of these tests point to.
const PUBLIC: &str = "http://trove.test:8080";

async fn create_place(app: &TestApp, body: Value) -> Value {
    let (status, place) = app.post("/api/places", body).await;
    assert_eq!(status, StatusCode::CREATED, "{place}");
    place
}

async fn delete(app: &TestApp, token: &str, path: &str) -> (StatusCode, Value) {
    let answer = app.client.delete(app.url(path)).bearer_auth(token).send().await.unwrap();
    let status = answer.status();
    let text = answer.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The ids of a page of items.
fn ids(page: &Value) -> Vec<i64> {
    page["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect()
}

/// The names of a path.
fn names(path: &Value) -> Vec<&str> {
    path.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect()
}

async fn a_tree_of_places_holds_items(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let house = create_place(&app, json!({"name": "House"})).await;
    let house_id = house["id"].as_i64().unwrap();
    assert_eq!((house["parent_id"].clone(), house["items"].clone()), (Value::Null, json!(0)));
    let garage = create_place(&app, json!({"name": " Garage ", "parent_id": house_id, "note": "left door"})).await;
    let garage_id = garage["id"].as_i64().unwrap();
    assert_eq!((garage["name"].as_str(), garage["note"].as_str()), (Some("Garage"), Some("left door")));
    let shelf = create_place(&app, json!({"name": "Shelf B2", "parent_id": garage_id})).await;
    let shelf_id = shelf["id"].as_i64().unwrap();
    assert_eq!(names(&shelf["path"]), ["House", "Garage", "Shelf B2"]);
    assert_eq!(shelf["path"][0]["id"], house_id);

    // Sibling names differ ignoring case; the parent must be a place of the household; names are checked.
    let (status, body) = app.post("/api/places", json!({"name": "GARAGE", "parent_id": house_id})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    let (status, body) = app.post("/api/places", json!({"name": "Box", "parent_id": 999_999})).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let (status, body) = app.post("/api/places", json!({"name": "a / b"})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    // Items go in by id or by a location text, which finds the path ignoring case or creates what is missing.
    let drill = app
        .create_item(json!({"place_id": shelf_id, "name": "Drill", "item_type": "tool", "profile": "",
        "condition": "good", "intent": "keep"}))
        .await;
    let mut saw = item("Saw", "tool");
    saw["location"] = json!("house / garage");
    let saw = app.create_item(saw).await;
    let mut box_item = item("Fuses", "part");
    box_item["location"] = json!("House / Garage / Shelf B2 / Box 4");
    let (status, fuses) = app.post("/api/items", box_item).await;
    assert_eq!(status, StatusCode::CREATED, "{fuses}");
    assert_eq!(fuses["location"], "House / Garage / Shelf B2 / Box 4");
    assert_eq!(names(&fuses["place"]["path"]), ["House", "Garage", "Shelf B2", "Box 4"]);
    assert_eq!(
        (fuses["place"]["name"].as_str(), fuses["place_id"].clone()),
        (Some("Box 4"), fuses["place"]["id"].clone())
    );
    let box_id = fuses["place_id"].as_i64().unwrap();
    let loose = app.create_item(item("Tape", "part")).await;
    let (_, tape) = app.get(&format!("/api/items/{loose}")).await;
    assert_eq!(
        (tape["place"].clone(), tape["place_id"].clone(), tape["location"].clone()),
        (Value::Null, Value::Null, Value::Null)
    );
    let mut both = item("Both", "part");
    both["place_id"] = json!(shelf_id);
    both["location"] = json!("House");
    let (status, body) = app.post("/api/items", both).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let (_, got) = app.get(&format!("/api/items/{saw}")).await;
    assert_eq!((got["place_id"].as_i64(), got["location"].as_str()), (Some(garage_id), Some("House / Garage")));

    // Counts in and within, the children of a place, and the items within it.
    let (status, list) = app.get("/api/places").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let counts: Vec<(&str, i64, i64)> = list["places"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["items"].as_i64().unwrap(), p["items_within"].as_i64().unwrap()))
        .collect();
    assert_eq!(counts, [("House", 0, 3), ("Garage", 1, 3), ("Shelf B2", 1, 2), ("Box 4", 1, 1)]);
    let (_, detail) = app.get(&format!("/api/places/{garage_id}")).await;
    assert_eq!(
        detail["children"].as_array().unwrap().iter().map(|c| c["id"].as_i64().unwrap()).collect::<Vec<_>>(),
        [shelf_id]
    );
    assert_eq!((detail["name"].as_str(), detail["items_within"].as_i64()), (Some("Garage"), Some(3)));
    let (_, within) = app.get(&format!("/api/items?place={house_id}")).await;
    assert_eq!(ids(&within), [drill, saw, fuses["id"].as_i64().unwrap()]);
    assert_eq!(within["items"][0]["place"]["path"][2]["name"], "Shelf B2");
    let (_, direct) = app.get(&format!("/api/items?place={shelf_id}&within=false")).await;
    assert_eq!(ids(&direct), [drill]);
    let (_, none) = app.get(&format!("/api/items?place={house_id}&within=false")).await;
    assert_eq!((ids(&none), none["total"].as_i64()), (vec![], Some(0)));
    let (status, body) = app.get("/api/items?place=999999").await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = app.get("/api/items?within=false").await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    // Moves: never under itself or a place inside it; a move shows at once in the items' paths.
    for parent in [garage_id, shelf_id, box_id] {
        let (status, body) = app.patch(&format!("/api/places/{garage_id}"), json!({"parent_id": parent})).await;
        assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    }
    let (status, moved) =
        app.patch(&format!("/api/places/{garage_id}"), json!({"parent_id": null, "name": "Workshop"})).await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!((names(&moved["path"]), moved["parent_id"].clone()), (vec!["Workshop"], Value::Null));
    let (_, drill_now) = app.get(&format!("/api/items/{drill}")).await;
    assert_eq!(drill_now["location"], "Workshop / Shelf B2");

    // Items are moved by PATCH, by id or by text; null takes them out.
    let (status, patched) = app.patch(&format!("/api/items/{loose}"), json!({"place_id": house_id})).await;
    assert_eq!((status, patched["location"].as_str()), (StatusCode::OK, Some("House")), "{patched}");
    let (_, patched) = app.patch(&format!("/api/items/{loose}"), json!({"location": "Shed / Top"})).await;
    assert_eq!(names(&patched["place"]["path"]), ["Shed", "Top"]);
    let (_, patched) = app.patch(&format!("/api/items/{loose}"), json!({"place_id": null})).await;
    assert_eq!((patched["place"].clone(), patched["location"].clone()), (Value::Null, Value::Null));
    let (status, body) = app.patch(&format!("/api/items/{loose}"), json!({"place_id": 999_999})).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");

    // Delete: refused while it holds items or places, then gone.
    let (status, body) = delete(&app, &app.token, &format!("/api/places/{box_id}")).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    let (status, body) = delete(&app, &app.token, &format!("/api/places/{house_id}")).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, body) = app.get(&format!("/api/places/{house_id}")).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");

    // Another household's places are missing ones.
    let other = app.token_of("neighbours").await;
    let (status, body) = app.get_as(&other, &format!("/api/places/{garage_id}")).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = app.get_as(&other, &format!("/api/items?place={garage_id}")).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let answer = app
        .client
        .patch(app.url(&format!("/api/places/{garage_id}")))
        .bearer_auth(&other)
        .json(&json!({"name": "Mine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
    let (status, _) = delete(&app, &other, &format!("/api/places/{garage_id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = app.post_as(&other, "/api/places", json!({"name": "Box", "parent_id": garage_id})).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let (_, theirs) = app.get_as(&other, "/api/places").await;
    assert_eq!(theirs["places"], json!([]));
}

async fn bulk_changes_are_all_or_nothing(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let shelf = create_place(&app, json!({"name": "Shelf"})).await["id"].as_i64().unwrap();
    let items: Vec<i64> = [
        app.create_item(item("A", "cable")).await,
        app.create_item(item("B", "cable")).await,
        app.create_item(item("C", "cable")).await,
    ]
    .to_vec();
    let gone = app.create_item(item("D", "cable")).await;
    let (status, _) = app.post(&format!("/api/items/{gone}/gone"), json!({"reason": "sold"})).await;
    assert_eq!(status, StatusCode::OK);

    let (status, done) =
        app.post("/api/items/bulk", json!({"ids": items, "set": {"place_id": shelf, "intent": "sell"}})).await;
    assert_eq!((status, done.clone()), (StatusCode::OK, json!({"updated": 3})), "{done}");
    let (_, on_shelf) = app.get(&format!("/api/items?place={shelf}")).await;
    assert_eq!(ids(&on_shelf), items);
    assert!(on_shelf["items"].as_array().unwrap().iter().all(|i| i["intent"] == "sell" && i["location"] == "Shelf"));

    // A gone item refuses the whole change, naming it; nothing is changed.
    let mut with_gone = items.clone();
    with_gone.push(gone);
    let (status, body) =
        app.post("/api/items/bulk", json!({"ids": with_gone, "set": {"place_id": null, "condition": "fair"}})).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    assert!(body["error"]["message"].as_str().unwrap().contains(&format!("item {gone} is gone")), "{body}");
    let (_, still) = app.get(&format!("/api/items?place={shelf}")).await;
    assert_eq!(ids(&still), items);
    assert!(still["items"].as_array().unwrap().iter().all(|i| i["condition"] == "good"));

    let (status, body) =
        app.post("/api/items/bulk", json!({"ids": [items[0], 999_999], "set": {"intent": "give"}})).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = app.post("/api/items/bulk", json!({"ids": [items[0]], "set": {"place_id": 999_999}})).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let too_many: Vec<i64> = (1..=1001).collect();
    let (status, body) = app.post("/api/items/bulk", json!({"ids": too_many, "set": {"intent": "give"}})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    let (status, body) = app.post("/api/items/bulk", json!({"ids": items, "set": {}})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    let other = app.token_of("neighbours").await;
    let (status, body) =
        app.post_as(&other, "/api/items/bulk", json!({"ids": [items[0]], "set": {"intent": "give"}})).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
}

async fn labels_app() -> (TestApp, i64, i64, i64) {
    let app = TestApp::spawn(Db::Sqlite, &[("TROVE_PUBLIC_URL", PUBLIC.to_owned())]).await;
    let garage = create_place(&app, json!({"name": "Garage"})).await["id"].as_i64().unwrap();
    let shelf = create_place(&app, json!({"name": "Shelf B2", "parent_id": garage})).await["id"].as_i64().unwrap();
    let mut drill = item("Cordless drill with two batteries and a case", "tool");
    drill["place_id"] = json!(shelf);
    let drill = app.create_item(drill).await;
    (app, garage, shelf, drill)
}

async fn pdf(app: &TestApp, token: &str, query: &str) -> (StatusCode, Option<String>, Vec<u8>) {
    let answer = app.client.get(app.url(&format!("/api/labels.pdf?{query}"))).bearer_auth(token).send().await.unwrap();
    let status = answer.status();
    let media = answer.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_owned);
    (status, media, answer.bytes().await.unwrap().to_vec())
}

/// The labels' QR codes, read from the PDF rendered by pdftoppm, are the links of the objects asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn label_pdfs_decode_to_the_links_of_their_objects() {
    let (app, garage, shelf, drill) = labels_app().await;
    let (status, media, bytes) =
        pdf(&app, &app.token, &format!("items={drill}&places={shelf},{garage}&layout=roll")).await;
    assert_eq!((status, media.as_deref()), (StatusCode::OK, Some("application/pdf")));
    let rendered = pages(&bytes, 300);
    let read: Vec<Vec<String>> = rendered
        .iter()
        .map(|page| {
            let read = trove_application::ports::CodeReader::read(&trove_labels::QrReader, &png(page)).unwrap();
            read.into_iter().map(|c| c.text).collect()
        })
        .collect();
    assert_eq!(
        read,
        [
            vec![format!("{PUBLIC}/#/items/{drill}")],
            vec![format!("{PUBLIC}/#/places/{shelf}")],
            vec![format!("{PUBLIC}/#/places/{garage}")]
        ]
    );
    let (status, _, sheet) = pdf(&app, &app.token, &format!("items={drill}")).await;
    assert_eq!((status, pages(&sheet, 50).len()), (StatusCode::OK, 1), "the sheet is the default layout");

    let other = app.token_of("neighbours").await;
    for (token, query, want) in [
        (&other, format!("items={drill}"), StatusCode::NOT_FOUND),
        (&other, format!("places={shelf}"), StatusCode::NOT_FOUND),
        (&app.token, "items=999999".to_owned(), StatusCode::NOT_FOUND),
        (&app.token, "items=1;2".to_owned(), StatusCode::BAD_REQUEST),
        (&app.token, String::new(), StatusCode::BAD_REQUEST),
        (&app.token, format!("items={drill}&layout=poster"), StatusCode::BAD_REQUEST),
        (&app.token, format!("items={}", vec![drill.to_string(); 1001].join(",")), StatusCode::BAD_REQUEST),
    ] {
        let (status, media, body) = pdf(&app, token, &query).await;
        assert_eq!(status, want, "{query}: {}", String::from_utf8_lossy(&body));
        assert!(media.is_some_and(|m| m.starts_with("application/json")), "{query}");
    }
}

async fn scan(app: &TestApp, token: &str, image: Vec<u8>, media: &str) -> (StatusCode, Value) {
    let part = reqwest::multipart::Part::bytes(image).file_name("photo").mime_str(media).unwrap();
    let form = reqwest::multipart::Form::new().part("image", part);
    let answer = app.client.post(app.url("/api/scan")).bearer_auth(token).multipart(form).send().await.unwrap();
    let status = answer.status();
    (status, answer.json().await.unwrap())
}

/// A photo of a printed label (turned, scaled, on a table, with noise) lands on its item or place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photographed_label_lands_on_its_item() {
    let (app, garage, shelf, drill) = labels_app().await;
    let (_, _, bytes) = pdf(&app, &app.token, &format!("items={drill}&places={shelf}&layout=roll")).await;
    let rendered = pages(&bytes, 300);
    let photo = photographed(&rendered[0], 1.6, 15.0, 2400, 1800);
    let (status, body) = scan(&app, &app.token, photo.clone(), "image/jpeg").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["kind"], "item");
    assert_eq!(body["id"], drill);
    assert_eq!(body["name"], "Cordless drill with two batteries and a case");
    assert_eq!(names(&body["path"]), ["Garage", "Shelf B2"]);
    let (status, body) = scan(&app, &app.token, photographed(&rendered[1], 1.0, -10.0, 1600, 1200), "image/jpeg").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!((body["kind"].as_str(), body["id"].as_i64()), (Some("place"), Some(shelf)));
    assert_eq!(body["path"], json!([{"id": garage, "name": "Garage"}, {"id": shelf, "name": "Shelf B2"}]));

    // Another household's object, another server's label, no code at all, not an image.
    let other = app.token_of("neighbours").await;
    let (status, body) = scan(&app, &other, photo, "image/jpeg").await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let elsewhere = TestApp::spawn(Db::Sqlite, &[("TROVE_PUBLIC_URL", "https://elsewhere.example".to_owned())]).await;
    let theirs = elsewhere.create_item(item("Ladder", "tool")).await;
    let (_, _, their_pdf) = pdf(&elsewhere, &elsewhere.token, &format!("items={theirs}&layout=roll")).await;
    let their_photo = photographed(&pages(&their_pdf, 300)[0], 1.2, 8.0, 1600, 1200);
    let (status, body) = scan(&app, &app.token, their_photo, "image/jpeg").await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) =
        scan(&app, &app.token, photographed(&blank(700, 330), 1.0, 15.0, 1600, 1200), "image/jpeg").await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "no_code");
    assert!(body["error"]["message"].as_str().unwrap().starts_with("no QR code could be read"), "{body}");
    let (status, body) = scan(&app, &app.token, b"GIF89a not a photo".to_vec(), "image/gif").await;
    assert_error(status, &body, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
}

/// A phone photo of a box's barcode (turned, at an angle, a little out of focus) answers the code read, its
/// format and, for a GTIN or an ISBN, its key; a label beside a barcode is still the label, the barcode answered
/// with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photographed_barcode_answers_its_code() {
    let (app, _, _, drill) = labels_app().await;
    let shot = Shot { width: 4000, height: 3000, face: 0.45, degrees: 30.0, tilt: 0.2, blur: 2.0 };
    for (symbology, text, want) in [
        (
            Symbology::Ean13,
            "9780306406157",
            json!({"format": "ean_13", "text": "9780306406157", "kind": "isbn",
            "key": "09780306406157", "shown": "9780306406157"}),
        ),
        (
            Symbology::UpcE,
            "01234565",
            json!({"format": "upc_e", "text": "01234565", "kind": "gtin",
            "key": "00012345000065", "shown": "012345000065"}),
        ),
        (Symbology::Code128, "SHELF-12", json!({"format": "code_128", "text": "SHELF-12"})),
    ] {
        let photo = photographed_box(&barcode(symbology, text, 8), shot);
        let (status, body) = scan(&app, &app.token, photo, "image/jpeg").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body, json!({"kind": "code", "path": [], "codes": [want]}), "{symbology}");
    }
    // Our label's QR code on the box beside nothing else: the label, as before, its code listed.
    let link = format!("{PUBLIC}/#/items/{drill}");
    let photo = photographed_box(&barcode(Symbology::QrCode, &link, 6), Shot::new());
    let (status, body) = scan(&app, &app.token, photo, "image/jpeg").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!((body["kind"].as_str(), body["id"].as_i64()), (Some("item"), Some(drill)));
    assert_eq!(body["codes"], json!([{"format": "qr_code", "text": link}]));
}
