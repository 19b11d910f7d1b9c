//! The value report through the API: values set by hand, totals per room, type and currency, the place filter,
//! and the same report as CSV and as the PDF an insurer is sent (its text read back with pdftotext, its pages
//! rendered with pdftoppm).

use crate::app::{Db, PDF, TestApp, assert_error, item};
use crate::fake_model::{fake_api, message, response, settings, web_search};
use crate::on_both;
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};

on_both!(
    the_value_report_totals_per_room_type_and_currency_in_json_csv_and_pdf,
    a_value_is_set_by_hand_or_refused,
    refresh_values_plans_then_prices_what_has_no_recent_estimate,
    a_refresh_runs_one_at_a_time_stops_when_asked_and_at_the_budget,
);

async fn upload(app: &TestApp, item: i64, form: Form) -> Value {
    let (status, kept) = app.upload_media(item, form).await;
    assert_eq!(status, StatusCode::CREATED, "{kept}");
    kept
}

/// A flat dark blue photo.
fn photo() -> Vec<u8> {
    let img = image::RgbImage::from_pixel(120, 90, image::Rgb([30, 40, 150]));
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90).encode_image(&img).unwrap();
    out
}

async fn bytes(app: &TestApp, path: &str) -> (StatusCode, String, String, Vec<u8>) {
    let resp = app.client.get(app.url(path)).bearer_auth(&app.token).send().await.unwrap();
    let header = |name: &str| resp.headers().get(name).map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    let (status, media_type, disposition) = (resp.status(), header("content-type"), header("content-disposition"));
    (status, media_type, disposition, resp.bytes().await.unwrap().to_vec())
}

async fn the_value_report_totals_per_room_type_and_currency_in_json_csv_and_pdf(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let mut drill = item("Cordless drill", "drill");
    drill["location"] = json!("Garage / Shelf 2");
    drill["serial"] = json!("DR-1234");
    drill["purchase"] = json!({"date": "2024-03-01", "price": 12999, "currency": "EUR", "vendor": "Screwfix"});
    let drill = app.create_item(drill).await;
    let mut cells = item("18650 cells", "battery");
    cells["location"] = json!("Garage");
    cells["quantity"] = json!(4);
    let cells = app.create_item(cells).await;
    let mut lamp = item("Reading lamp", "lamp");
    lamp["location"] = json!("Living room");
    let lamp = app.create_item(lamp).await;
    app.create_item(item("Loose cable", "cable")).await;
    let gone = app.create_item(item("Old kettle", "kettle")).await;
    let (s, _) = app.post(&format!("/api/items/{gone}/gone"), json!({"reason": "recycled"})).await;
    assert_eq!(s, StatusCode::OK);

    let photo_id =
        upload(&app, drill, Form::new().part("file", Part::bytes(photo()).file_name("drill.jpg"))).await["id"]
            .as_i64()
            .unwrap();
    let receipt = Form::new()
        .part("file", Part::bytes(PDF.to_vec()).file_name("receipt.pdf"))
        .text("kind", "receipt")
        .text("caption", "Screwfix order 5521");
    let receipt_id = upload(&app, drill, receipt).await["id"].as_i64().unwrap();

    for (id, amount, currency) in [(drill, 8_000, "EUR"), (cells, 350, "EUR"), (lamp, 2_000, "GBP")] {
        let (s, body) =
            app.put(&format!("/api/items/{id}/value"), json!({"amount": amount, "currency": currency})).await;
        assert_eq!(s, StatusCode::OK, "{body}");
    }

    let (s, r) = app.get("/api/report/value").await;
    assert_eq!(s, StatusCode::OK, "{r}");
    let names: Vec<&str> = r["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["18650 cells", "Cordless drill", "Reading lamp", "Loose cable"], "by place, then by name");
    let d = &r["items"][1];
    assert_eq!((d["place"].as_str(), d["room"].as_str()), (Some("Garage / Shelf 2"), Some("Garage")));
    assert_eq!((d["serial"].as_str(), d["purchase_date"].as_str()), (Some("DR-1234"), Some("2024-03-01")));
    assert_eq!(d["paid"], json!({"amount": 12999, "currency": "EUR", "text": "129.99"}));
    assert_eq!(d["value_total"]["text"], "80.00");
    assert_eq!(d["value_source"]["kind"], "hand");
    assert_eq!((d["photo_id"].as_i64(), d["receipt_ids"].clone()), (Some(photo_id), json!([receipt_id])));
    assert_eq!(r["items"][0]["value_total"]["amount"], 1_400, "4 units at 3.50");
    assert_eq!(r["items"][3]["value_total"], Value::Null, "never valued");
    // Per currency, never converted.
    assert_eq!(
        r["total"]["current"],
        json!([{"amount": 9_400, "currency": "EUR", "text": "94.00"}, {"amount": 2_000, "currency": "GBP", "text": "20.00"}])
    );
    assert_eq!((r["total"]["items"].as_u64(), r["total"]["unvalued"].as_u64()), (Some(4), Some(1)));
    let rooms: Vec<Value> = r["by_room"].as_array().unwrap().iter().map(|t| t["name"].clone()).collect();
    assert_eq!(rooms, [json!("Garage"), json!("Living room"), Value::Null], "in no place last");
    assert_eq!(r["by_room"][0]["current"][0]["amount"], 9_400, "the shelf is in the garage");
    let drills = r["by_type"].as_array().unwrap().iter().find(|t| t["name"] == "drill").unwrap();
    assert_eq!(drills["paid"][0]["amount"], 12_999);

    // Limited to a place and the places below it.
    let (_, cell) = app.get(&format!("/api/items/{cells}")).await;
    let garage = cell["place_id"].as_i64().unwrap();
    let (s, g) = app.get(&format!("/api/report/value?place={garage}")).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!((g["within"].as_str(), g["items"].as_array().unwrap().len()), (Some("Garage"), 2));
    assert_eq!(g["total"]["current"], json!([{"amount": 9_400, "currency": "EUR", "text": "94.00"}]));
    let (s, body) = app.get("/api/report/value?place=999999").await;
    assert_error(s, &body, StatusCode::NOT_FOUND, "not_found");
    let (s, body) = app.get("/api/report/value?format=xml").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{body}");

    // CSV: a row per item, in the same order.
    let (s, media_type, disposition, csv) = bytes(&app, "/api/report/value?format=csv").await;
    assert_eq!((s, media_type.as_str()), (StatusCode::OK, "text/csv; charset=utf-8"));
    assert!(disposition.starts_with("attachment; filename=\"trove-value-"), "{disposition}");
    let mut reader = csv::Reader::from_reader(csv.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 4);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(&rows[1][col("name")], "Cordless drill");
    assert_eq!((&rows[1][col("value_total")], &rows[1][col("value_currency")]), ("80.00", "EUR"));
    assert!(rows[1][col("value_source")].starts_with("by hand "));
    assert_eq!(&rows[1][col("paid")], "129.99");

    // The PDF: its text says what an insurer needs, and the drill's photo is drawn.
    let (s, media_type, _, pdf) = bytes(&app, "/api/report/value?format=pdf").await;
    assert_eq!((s, media_type.as_str()), (StatusCode::OK, "application/pdf"), "{}", String::from_utf8_lossy(&pdf));
    let words = trove_labels::testing::words(&pdf);
    let text_of =
        |page: usize| words.iter().filter(|w| w.page == page).map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
    let cover = text_of(1);
    for expected in
        ["Inventory value report", "default", "Covering the whole household: 4 items", "EUR 94.00 + GBP 20.00"]
    {
        assert!(cover.contains(expected), "{expected:?} not on the cover: {cover}");
    }
    assert!(cover.contains("Paid: EUR 129.99"), "{cover}");
    let all: String = (1..=words.iter().map(|w| w.page).max().unwrap()).map(text_of).collect::<Vec<_>>().join(" | ");
    for expected in [
        "Garage / Shelf 2",
        &format!("Cordless drill (I-{drill})"),
        "serial DR-1234",
        "bought on 2024-03-01 at Screwfix for EUR 129.99",
        "Value EUR 80.00 each, EUR 80.00 in all (set by hand on",
        "Value EUR 3.50 each, EUR 14.00 in all",
        "No current value",
        "In no place",
        "Annex: receipts",
        &format!("M-{receipt_id} on Cordless drill (I-{drill}): Screwfix order 5521, application/pdf"),
    ] {
        assert!(all.contains(expected), "{expected:?} not in the PDF: {all}");
    }
    assert!(!all.contains("Old kettle"), "a gone item is left out");
    // The drill's row starts with its photo's thumbnail, dark blue, left of its name; the lamp has no photo.
    let pages = trove_labels::testing::pages(&pdf, 72);
    let px = |pt: f32| pt.round() as u32;
    let mm = |mm: f32| mm * 72.0 / 25.4;
    let dark_left_of = |word: &str| {
        let w = words.iter().find(|w| w.text == word).unwrap();
        let page = &pages[w.page - 1];
        let (xs, ys) = (px(mm(19.0))..px(mm(37.0)), px(w.y + mm(1.0))..px(w.y + mm(18.0)));
        let area = xs.len() * ys.len();
        let dark =
            xs.flat_map(|x| ys.clone().map(move |y| (x, y))).filter(|&(x, y)| page.get_pixel(x, y).0[0] < 120).count();
        (dark, area)
    };
    let (dark, area) = dark_left_of("Cordless");
    assert!(dark * 10 > area * 6, "the thumbnail is drawn: {dark} dark pixels of {area}");
    assert_eq!(dark_left_of("Reading").0, 0, "no photo, no thumbnail");
}

async fn a_value_is_set_by_hand_or_refused(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(item("Camera", "camera")).await;
    let (s, kept) = app.put(&format!("/api/items/{id}/value"), json!({"amount": 45_000, "currency": "GBP"})).await;
    assert_eq!(s, StatusCode::OK, "{kept}");
    assert_eq!((kept["source"].as_str(), kept["searches"].as_u64()), (Some("hand"), Some(0)));
    assert_eq!(kept["estimate"], json!({"low": 45_000, "typical": 45_000, "high": 45_000, "currency": "GBP"}));
    let (_, history) = app.get(&format!("/api/items/{id}/prices")).await;
    assert_eq!(history["prices"][0]["source"], "hand");

    for (body, why) in [
        (json!({"amount": -1, "currency": "GBP"}), "negative"),
        (json!({"amount": 100, "currency": "£"}), "no ISO code"),
        (json!({"amount": 100}), "no currency"),
    ] {
        let (s, answer) = app.put(&format!("/api/items/{id}/value"), body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{why}: {answer}");
    }
    let (s, body) = app.put("/api/items/999999/value", json!({"amount": 100, "currency": "GBP"})).await;
    assert_error(s, &body, StatusCode::NOT_FOUND, "not_found");
    let other = app.token_of("elsewhere").await;
    let (s, _) = app.get_as(&other, "/api/report/value").await;
    assert_eq!(s, StatusCode::OK);
    let (_, theirs) = app.get_as(&other, "/api/report/value").await;
    assert_eq!(theirs["items"], json!([]), "another household sees none of it");
    let (_, history) = app.get(&format!("/api/items/{id}/prices")).await;
    assert_eq!(history["prices"].as_array().unwrap().len(), 1, "nothing refused was kept");
}

/// A price call's answer: one search, two grounded comparables (GBP 38 and 45.50); 2,000 tokens in, 400 out.
fn priced(delay_ms: u64) -> wiremock::ResponseTemplate {
    let search = web_search("used price", &["https://www.ebay.co.uk/itm/111", "https://www.ebay.co.uk/itm/222"]);
    let comparables = json!({"comparables": [
        {"title": "Sold one", "url": "https://www.ebay.co.uk/itm/111", "price": 38.0, "currency": "GBP",
         "condition": "good", "sold": true, "note": null},
        {"title": "Boxed one", "url": "https://www.ebay.co.uk/itm/222", "price": 45.5, "currency": "GBP",
         "condition": "good", "sold": false, "note": null}
    ]});
    wiremock::ResponseTemplate::new(200)
        .set_body_json(response(vec![search, message(&comparables.to_string(), &[])], 2000, 400))
        .set_delay(std::time::Duration::from_millis(delay_ms))
}

/// What one such call costs at the default rates: tokens and one search.
const PRICE_CALL_MICRO_USD: i64 = 2000 * 5 / 4 + 400 * 17 / 4 + 2500;

/// Polls the refresh run until it is over.
async fn run_over(app: &TestApp) -> Value {
    for _ in 0..200 {
        let (s, answer) = app.get("/api/report/value/refresh/run").await;
        assert_eq!(s, StatusCode::OK, "{answer}");
        let run = answer["run"].clone();
        if !matches!(run["state"].as_str(), Some("running" | "stopping")) {
            return run;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the refresh run did not end");
}

async fn refresh_values_plans_then_prices_what_has_no_recent_estimate(db: Db) {
    let (server, seen) = fake_api(|_, _| priced(0)).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let (s, body) = app.get("/api/report/value/refresh/run").await;
    assert_eq!((s, body), (StatusCode::OK, json!({"run": null})), "none ran yet");
    let (s, body) = app.post("/api/report/value/refresh/stop", json!({})).await;
    assert_error(s, &body, StatusCode::NOT_FOUND, "not_found");
    let never = app.create_item(item("Soldering iron", "soldering_iron")).await;
    let by_hand = app.create_item(item("Oscilloscope", "oscilloscope")).await;
    let (s, _) = app.put(&format!("/api/items/{by_hand}/value"), json!({"amount": 30_000, "currency": "GBP"})).await;
    assert_eq!(s, StatusCode::OK);
    let other = app.create_item(item("Bench supply", "power_supply")).await;

    // The plan: the two never valued; a typical call at the rates, as none was made yet; no budget.
    let (s, plan) = app.get("/api/report/value/refresh").await;
    assert_eq!(s, StatusCode::OK, "{plan}");
    let typical = 3_000 * 5 / 4 + 1_500 * 17 / 4 + 4 * 2_500;
    assert_eq!(
        plan,
        json!({"items": 2, "each_micro_usd": typical, "each_from_calls": 0, "expected_micro_usd": 2 * typical,
               "monthly_limit_micro_usd": null, "spent_this_month_micro_usd": 0, "affordable": 2})
    );
    assert!(seen.bodies().is_empty(), "a plan sends nothing");

    let (s, run) = app.post("/api/report/value/refresh", json!({})).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{run}");
    assert_eq!((run["total"].as_u64(), run["done"].as_u64()), (Some(2), Some(0)));
    let run = run_over(&app).await;
    assert_eq!(run["state"], "finished", "{run}");
    assert_eq!((run["done"].as_u64(), run["valued"].as_u64(), run["failed"].as_u64()), (Some(2), Some(2), Some(0)));
    assert_eq!(run["spent_micro_usd"], 2 * PRICE_CALL_MICRO_USD);
    assert_eq!(seen.bodies().len(), 2);
    for id in [never, other] {
        let (_, history) = app.get(&format!("/api/items/{id}/prices")).await;
        assert_eq!(history["prices"][0]["source"], "search", "{history}");
    }
    let (_, history) = app.get(&format!("/api/items/{by_hand}/prices")).await;
    assert_eq!(history["prices"].as_array().unwrap().len(), 1, "a value set by hand is kept");
    let (_, report) = app.get("/api/report/value").await;
    assert_eq!(report["total"]["unvalued"], 0);

    // Nothing older than 30 days now; everything searched is older than 0 days, and the expected cost is now
    // the mean of the calls made.
    let (_, plan) = app.get("/api/report/value/refresh").await;
    assert_eq!(plan["items"], 0);
    let (_, plan) = app.get("/api/report/value/refresh?older_than_days=0").await;
    assert_eq!((plan["items"].as_u64(), plan["each_from_calls"].as_u64()), (Some(2), Some(2)));
    assert_eq!(plan["each_micro_usd"], PRICE_CALL_MICRO_USD);
    let (s, run) = app.post("/api/report/value/refresh", json!({})).await;
    assert_eq!((s, run["state"].as_str(), run["total"].as_u64()), (StatusCode::ACCEPTED, Some("finished"), Some(0)));
    for bad in
        [json!({"older_than_days": -1}), json!({"older_than_days": 4000}), json!({"limit": 0}), json!({"days": 3})]
    {
        let (s, body) = app.post("/api/report/value/refresh", bad.clone()).await;
        assert_error(s, &body, StatusCode::BAD_REQUEST, "invalid");
        assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{bad}: {body}");
    }
}

async fn a_refresh_runs_one_at_a_time_stops_when_asked_and_at_the_budget(db: Db) {
    let (server, seen) = fake_api(|_, _| priced(300)).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    for i in 0..5 {
        app.create_item(item(&format!("Multimeter {i}"), "multimeter")).await;
    }
    let (s, run) = app.post("/api/report/value/refresh", json!({"limit": 4})).await;
    assert_eq!((s, run["total"].as_u64()), (StatusCode::ACCEPTED, Some(4)), "{run}");
    let (s, body) = app.post("/api/report/value/refresh", json!({})).await;
    assert_error(s, &body, StatusCode::CONFLICT, "conflict");
    let (s, stopping) = app.post("/api/report/value/refresh/stop", json!({})).await;
    assert_eq!((s, stopping["state"].as_str()), (StatusCode::OK, Some("stopping")), "{stopping}");
    let run = run_over(&app).await;
    assert_eq!(run["state"], "stopped", "{run}");
    let done = run["done"].as_u64().unwrap();
    assert!(done < 4, "stopped before the end: {run}");
    assert_eq!(seen.bodies().len() as u64, done, "no call after the stop");
    let (_, spend) = app.get("/api/spend").await;
    assert_eq!(spend["totals"]["all"]["cost_micro_usd"], run["spent_micro_usd"], "every call is in the ledger");

    // A budget that covers what one call may cost (USD 0.078488) but not two: the run stops by itself after one.
    let (server, seen) = fake_api(|_, _| priced(0)).await;
    let mut s = settings(&server);
    s.push(("SPEND_MONTHLY_LIMIT_USD", "0.08".into()));
    let app = TestApp::spawn(db, &s).await;
    for i in 0..3 {
        app.create_item(item(&format!("Probe {i}"), "probe")).await;
    }
    let (_, plan) = app.get("/api/report/value/refresh").await;
    assert_eq!(plan["items"].as_u64(), Some(3), "{plan}");
    assert_eq!(plan["monthly_limit_micro_usd"], 80_000);
    let (s, _) = app.post("/api/report/value/refresh", json!({})).await;
    assert_eq!(s, StatusCode::ACCEPTED);
    let run = run_over(&app).await;
    assert_eq!((run["state"].as_str(), run["done"].as_u64()), (Some("budget_reached"), Some(1)), "{run}");
    assert!(run["reason"].as_str().unwrap().contains("budget"), "{run}");
    assert_eq!(seen.bodies().len(), 1);
    // What is left covers no call: a new run stops at once, having sent nothing.
    let (s, body) = app.post("/api/report/value/refresh", json!({})).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{body}");
    let run = run_over(&app).await;
    assert_eq!((run["state"].as_str(), run["done"].as_u64()), (Some("budget_reached"), Some(0)), "{run}");
    assert!(run["reason"].as_str().unwrap().contains("does not cover this call"), "{run}");
    assert_eq!(seen.bodies().len(), 1, "nothing more was sent");
}
