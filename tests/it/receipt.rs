//! Receipts read in through the HTTP API against a fake Model API: a photo and a PDF read into lines with the
//! purchase each item gains and their matches; an answer whose lines do not add up is said so; nothing is written
//! until the person saves, and then the receipt is attached to every item it covers.

use crate::app::{Db, PDF, TestApp, assert_error, item};
use crate::fake_model::{fake_api, message, response, settings};
use crate::on_both;
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use wiremock::ResponseTemplate;

on_both!(
    a_receipt_photo_is_read_matched_and_attached_to_the_items_it_covers,
    a_pdf_receipt_whose_lines_do_not_add_up_is_said_so_and_nothing_is_written,
);

fn receipt(lines: Value, total: f64) -> ResponseTemplate {
    let text = json!({"vendor": "Screwfix", "date": "2026-11-30", "currency": "GBP", "lines": lines, "total": total});
    ResponseTemplate::new(200).set_body_json(response(vec![message(&text.to_string(), &[])], 1800, 250))
}

fn photo() -> Vec<u8> {
    let img = image::RgbImage::from_fn(96, 128, |x, y| image::Rgb([(x * 2) as u8, (y * 2) as u8, 200]));
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(img).write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

async fn send(app: &TestApp, bytes: Vec<u8>, name: &str) -> (StatusCode, Value) {
    let form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()));
    let resp =
        app.client.post(app.url("/api/intake/receipt")).bearer_auth(&app.token).multipart(form).send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

async fn a_receipt_photo_is_read_matched_and_attached_to_the_items_it_covers(db: Db) {
    let lines = json!([
        {"description": "Makita DHP482 combi drill", "quantity": 1, "price": 89.99},
        {"description": "Wera screwdriver set", "quantity": 2, "price": 30.00}
    ]);
    let (server, seen) = fake_api(move |_, _| receipt(lines.clone(), 119.99)).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let drill = app.create_item(item("Makita DHP482 combi drill", "drill")).await;
    let items_before = app.all_items().await.len();

    let (s, r) = send(&app, photo(), "receipt.png").await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let body = &seen.bodies()[0];
    let content = &body["input"][0]["content"];
    assert_eq!(content[1]["type"], "input_image", "{body}");
    assert!(content[1]["image_url"].as_str().unwrap().starts_with("data:image/"));
    assert_eq!(body["text"]["format"]["name"], "Receipt");
    assert_eq!(
        (r["vendor"].as_str(), r["date"].as_str(), r["currency"].as_str()),
        (Some("Screwfix"), Some("2026-11-30"), Some("GBP"))
    );
    assert_eq!(r["problems"], json!([]), "the lines add up");
    assert_eq!(r["lines"][0]["matches"][0]["item_id"], drill, "the drill on the receipt is the one owned");
    assert_eq!(
        r["lines"][1]["purchase"],
        json!({"date": "2026-11-30", "price": 1500, "currency": "GBP", "vendor": "Screwfix"}),
        "two sets at 30.00: 15.00 each"
    );
    assert_eq!(r["spend"]["calls"], 1);
    assert_eq!(app.all_items().await.len(), items_before, "nothing written");
    let (_, spend) = app.get("/api/spend").await;
    assert_eq!(spend["entries"][0]["kind"], "read_receipt");

    // Saved: the drill gains its purchase, the set is a new item with its own; the receipt goes on both.
    let (s, _) = app.patch(&format!("/api/items/{drill}"), json!({"purchase": r["lines"][0]["purchase"]})).await;
    assert_eq!(s, StatusCode::OK);
    let mut set = item("Wera screwdriver set", "screwdriver_set");
    set["quantity"] = json!(2);
    set["purchase"] = r["lines"][1]["purchase"].clone();
    let set = app.create_item(set).await;
    let receipt_id = r["receipt_id"].as_i64().unwrap();
    let (s, attached) =
        app.post(&format!("/api/intake/receipt/{receipt_id}/attach"), json!({"item_ids": [drill, set]})).await;
    assert_eq!(s, StatusCode::OK, "{attached}");
    assert_eq!(attached["media_ids"].as_array().unwrap().len(), 2);
    for id in [drill, set] {
        let (_, media) = app.get(&format!("/api/items/{id}/media")).await;
        assert_eq!(media["media"][0]["kind"], "receipt", "{media}");
        assert_eq!(media["media"][0]["caption"], "Screwfix, 2026-11-30");
    }
    let (_, report) = app.get("/api/report/value").await;
    let line = report["items"].as_array().unwrap().iter().find(|l| l["item_id"] == drill).unwrap().clone();
    assert_eq!((line["paid"]["amount"].as_i64(), line["receipt_ids"].as_array().unwrap().len()), (Some(8_999), 1));

    // Refused: an item of another household, no items, a receipt that is not pending.
    let theirs = {
        let other = app.token_of("next door").await;
        let (_, made) = app.post_as(&other, "/api/items", item("Their drill", "drill")).await;
        made["id"].as_i64().unwrap()
    };
    let (s, b) =
        app.post(&format!("/api/intake/receipt/{receipt_id}/attach"), json!({"item_ids": [drill, theirs]})).await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "not_found");
    let (s, b) = app.post(&format!("/api/intake/receipt/{receipt_id}/attach"), json!({"item_ids": []})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{b}");
    let attached_id = attached["media_ids"][0].as_i64().unwrap();
    let (s, b) = app.post(&format!("/api/intake/receipt/{attached_id}/attach"), json!({"item_ids": [set]})).await;
    assert_error(s, &b, StatusCode::NOT_FOUND, "not_found");
    let (_, media) = app.get(&format!("/api/items/{drill}/media")).await;
    assert_eq!(media["media"].as_array().unwrap().len(), 1, "nothing more attached");
}

async fn a_pdf_receipt_whose_lines_do_not_add_up_is_said_so_and_nothing_is_written(db: Db) {
    let lines = json!([
        {"description": "USB-C cable 2 m", "quantity": 3, "price": 12.00},
        {"description": "Anker power bank", "quantity": 1, "price": 25.00}
    ]);
    let (server, seen) = fake_api(move |_, _| receipt(lines.clone(), 45.00)).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let before = app.all_items().await.len();
    let (s, r) = send(&app, PDF.to_vec(), "order.pdf").await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let content = &seen.bodies()[0]["input"][0]["content"];
    assert_eq!(content[1]["type"], "input_file");
    assert!(content[1]["file_data"].as_str().unwrap().starts_with("data:application/pdf;base64,JVBERi0"));
    assert_eq!(
        r["problems"],
        json!(["the lines add up to GBP 37.00, the total says GBP 45.00: a line may be missing or misread"])
    );
    assert_eq!(r["lines"].as_array().unwrap().len(), 2, "the lines are still offered");
    assert_eq!(r["lines"][0]["matches"], json!([]), "a new item");
    assert_eq!(app.all_items().await.len(), before, "nothing written");

    // Neither a picture nor a PDF, or empty: refused before anything is sent.
    for (bytes, why) in [(b"hello".to_vec(), "text"), (Vec::new(), "empty")] {
        let (s, b) = send(&app, bytes, "x.txt").await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{why}: {b}");
    }
    assert_eq!(seen.bodies().len(), 1);
}
