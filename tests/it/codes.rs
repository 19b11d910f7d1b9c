//! Codes on items (issue 46): GTINs, ISBNs and a shop's own codes given on create and change, checked and kept
//! in one form, unique in a household (by the database, so racing writers get one 409), found by a search in any
//! of their forms, recorded in the history and carried by the CSV sheet; on both databases, through the API.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The codes of an item as answered: `(kind, value, key)`.
fn codes_of(item: &Value) -> Vec<(String, String, String)> {
    item["codes"]
        .as_array()
        .unwrap_or_else(|| panic!("codes in {item}"))
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap().to_owned();
            (text("kind"), text("value"), text("key"))
        })
        .collect()
}

fn code(kind: &str, value: &str, key: &str) -> (String, String, String) {
    (kind.to_owned(), value.to_owned(), key.to_owned())
}

/// A new item of `name` carrying `codes` (`[{kind, value}]`).
fn with_codes(name: &str, codes: Value) -> Value {
    let mut body = item(name, "Thing");
    body["codes"] = codes;
    body
}

/// The ids of the items `GET /api/items?q=` answers for `q`, in order.
async fn found(app: &TestApp, q: &str) -> Vec<i64> {
    let (s, page) = app.get(&format!("/api/items?q={}", urlencode(q))).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    page["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect()
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b == b'-' { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

async fn codes_are_checked_kept_unique_and_changed(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    // A UPC-A as scanned, an ISBN-10 as typed (hyphens and all), a shop's own code; the EAN-13 of the UPC-A is
    // the same code, and kept once.
    let body = with_codes(
        "Cordless drill",
        json!([
            {"kind": "gtin", "value": "036000291452"},
            {"value": "0-306-40615-2"},
            {"kind": "other", "value": "Shelf-A 12"},
            {"kind": "gtin", "value": "0036000291452"},
        ]),
    );
    let (s, drill) = app.post("/api/items", body).await;
    assert_eq!(s, StatusCode::CREATED, "{drill}");
    let want = vec![
        code("gtin", "036000291452", "00036000291452"),
        code("isbn", "9780306406157", "09780306406157"),
        code("other", "Shelf-A 12", "other:shelf-a 12"),
    ];
    assert_eq!(codes_of(&drill), want);
    let drill_id = drill["id"].as_i64().unwrap();
    // The read and the list say the same.
    let (_, read) = app.get(&format!("/api/items/{drill_id}")).await;
    assert_eq!(codes_of(&read), want);
    assert_eq!(codes_of(&app.all_items().await[0]), want);

    // A wrong check digit is a 400 naming the code and the digit it should be; nothing is made.
    let (s, e) = app.post("/api/items", with_codes("Saw", json!([{"kind": "gtin", "value": "4006381333932"}]))).await;
    assert_error(s, &e, StatusCode::BAD_REQUEST, "invalid");
    assert_eq!(e["error"]["message"], "codes[0]: the check digit of gtin 4006381333932 is wrong: it should be 1");
    let (s, e) = app.post("/api/items", with_codes("Saw", json!([{"kind": "isbn", "value": "0-306-40615-3"}]))).await;
    assert_error(s, &e, StatusCode::BAD_REQUEST, "invalid");
    assert!(e["error"]["message"].as_str().unwrap().ends_with("it should be 2"), "{e}");
    let (s, e) = app.post("/api/items", with_codes("Saw", json!([{"kind": "ean", "value": "1"}]))).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "an unknown kind: {e}");
    assert_eq!(app.all_items().await.len(), 1, "nothing was made");

    // A code another item carries, in any of its forms, is a 409 naming that item by name and id.
    let (s, e) = app.post("/api/items", with_codes("Saw", json!([{"value": "0036000291452"}]))).await;
    assert_error(s, &e, StatusCode::CONFLICT, "conflict");
    assert_eq!(
        e["error"]["message"],
        format!("gtin 0036000291452 is already on \"Cordless drill\" (item {drill_id}); remove it there first")
    );
    let (s, e) = app.post("/api/items", with_codes("Book", json!([{"value": "978-0-306-40615-7"}]))).await;
    assert_error(s, &e, StatusCode::CONFLICT, "conflict");
    assert!(e["error"]["message"].as_str().unwrap().contains(&format!("(item {drill_id})")), "{e}");
    assert_eq!(app.all_items().await.len(), 1, "nothing was made");

    // A change replaces the list: the UPC-A and the shop's code go, so another item may take them.
    let saw = app.create_item(with_codes("Saw", json!([{"kind": "gtin", "value": "96385074"}]))).await;
    let (s, e) = app.patch(&format!("/api/items/{saw}"), json!({"codes": [{"value": "036000291452"}]})).await;
    assert_error(s, &e, StatusCode::CONFLICT, "conflict");
    let (_, kept) = app.get(&format!("/api/items/{saw}")).await;
    assert_eq!(codes_of(&kept), [code("gtin", "96385074", "00000096385074")], "a refused change changes nothing");
    let (s, changed) = app
        .patch(&format!("/api/items/{drill_id}"), json!({"codes": [{"kind": "isbn", "value": "9780306406157"}]}))
        .await;
    assert_eq!(s, StatusCode::OK, "{changed}");
    assert_eq!(codes_of(&changed), [code("isbn", "9780306406157", "09780306406157")]);
    let (s, saw_now) = app
        .patch(
            &format!("/api/items/{saw}"),
            json!({"codes": [{"value": "96385074"}, {"value": "0036000291452"}, {"kind": "other", "value": "SHELF-a 12"}]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{saw_now}");
    assert_eq!(codes_of(&saw_now).len(), 3);
    let (s, e) = app.patch(&format!("/api/items/{saw}"), json!({"codes": [{"value": "4006381333930"}]})).await;
    assert_error(s, &e, StatusCode::BAD_REQUEST, "invalid");
    assert!(e["error"]["message"].as_str().unwrap().contains("4006381333930"), "{e}");

    // Each change of the codes is history, undoable as any change by hand.
    let (s, history) = app.get(&format!("/api/items/{drill_id}/history")).await;
    assert_eq!(s, StatusCode::OK, "{history}");
    let change = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["changes"].as_array().unwrap().iter())
        .find(|c| c["field"] == "codes")
        .unwrap_or_else(|| panic!("a change of codes in {history}"))
        .clone();
    assert_eq!(change["before"], "gtin:036000291452;isbn:9780306406157;other:Shelf-A 12");
    assert_eq!(change["after"], "isbn:9780306406157");

    // Marked gone, an item's codes are history: another item may carry them.
    let (s, gone) = app.post(&format!("/api/items/{saw}/gone"), json!({"reason": "sold"})).await;
    assert_eq!(s, StatusCode::OK, "{gone}");
    assert_eq!(codes_of(&gone).len(), 3, "the gone item keeps its codes");
    let again = app.create_item(with_codes("Saw, bought again", json!([{"value": "96385074"}]))).await;
    assert!(again > saw);
}

async fn a_search_finds_an_item_by_any_form_of_its_codes_first(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    // An item whose name holds the digits of another's code: found too, after the item carrying it.
    let mentions = app.create_item(item("Box labelled 0036000291452", "Box")).await;
    let cereal = app.create_item(with_codes("Cereal", json!([{"value": "0036000291452"}]))).await;
    let book = app.create_item(with_codes("Book", json!([{"value": "9780306406157"}]))).await;
    let shelf = app.create_item(with_codes("Crate", json!([{"kind": "other", "value": "Shelf-A 12"}]))).await;
    assert_eq!(found(&app, "0036000291452").await, [cereal, mentions], "the EAN-13 as stored, exact match first");
    // Its UPC-A: the item carrying it first (the box's digits are one typo away, and found after it).
    assert_eq!(found(&app, "036000291452").await.first(), Some(&cereal), "its UPC-A");
    assert_eq!(found(&app, "0-306-40615-2").await, [book], "the ISBN-10 of a stored ISBN-13");
    assert_eq!(found(&app, "ISBN 978-0-306-40615-7").await, [book]);
    assert_eq!(found(&app, "shelf-a 12").await, [shelf], "a shop's code, ignoring case");
    assert_eq!(found(&app, "cereal").await, [cereal], "words still find what they did");
    // Pages hold the code's items first, then the other matches, with one total.
    let (s, page) = app.get("/api/items?q=0036000291452&limit=1").await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!((page["items"][0]["id"].as_i64(), page["total"].as_i64()), (Some(cereal), Some(2)));
    let next = page["next"].as_str().unwrap();
    let (_, rest) = app.get(&format!("/api/items?q=0036000291452&limit=1&after={next}")).await;
    assert_eq!(rest["items"][0]["id"].as_i64(), Some(mentions), "{rest}");
}

async fn two_writers_racing_for_one_code_get_one_item_and_one_409(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    for round in 0..6 {
        let value = ["4006381333931", "96385074", "036000291452", "9780306406157", "10012345000017", "AB-7"][round];
        let a = app.post("/api/items", with_codes(&format!("A{round}"), json!([{"value": value}])));
        let b = app.post("/api/items", with_codes(&format!("B{round}"), json!([{"value": value}])));
        let ((sa, ba), (sb, bb)) = tokio::join!(a, b);
        let mut statuses = [sa, sb];
        statuses.sort();
        assert_eq!(statuses, [StatusCode::CREATED, StatusCode::CONFLICT], "{ba} {bb}");
    }
    assert_eq!(app.all_items().await.len(), 6);
}

async fn the_sheet_carries_codes_both_ways(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    app.create_item(with_codes("Cereal", json!([{"value": "036000291452"}, {"value": "0-306-40615-2"}]))).await;
    let sheet = app.export_as(&app.token).await;
    let header = sheet.lines().next().unwrap();
    assert!(header.split(',').any(|c| c == "codes"), "{header}");
    assert!(sheet.contains("gtin:036000291452;isbn:9780306406157"), "{sheet}");

    // Into another household: the same codes, in the same forms.
    let other = app.token_of("Elsewhere").await;
    let (s, imported) = app.post_csv(&other, sheet.clone().into_bytes()).await;
    assert_eq!(s, StatusCode::OK, "{imported}");
    let items = app.items_of(&other).await;
    assert_eq!(
        codes_of(&items[0]),
        [code("gtin", "036000291452", "00036000291452"), code("isbn", "9780306406157", "09780306406157")]
    );
    // A bad code in a row refuses the sheet, naming the row's line; nothing is imported.
    let bad = "id,name,item_type,condition,codes\n1,Pi,sbc,good,96385074\n2,Drill,drill,good,gtin:4006381333932\n";
    let (s, e) = app.post_csv(&other, bad.as_bytes().to_vec()).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    let message = e["error"]["message"].as_str().unwrap();
    assert!(message.contains("3") && message.contains("it should be 1"), "{message}");
    assert_eq!(app.items_of(&other).await.len(), 1);
    // A code another item of the household carries refuses the import, naming that item.
    let held = "id,name,item_type,condition,codes\n7,Cereal again,food,good,0036000291452\n";
    let (s, e) = app.post_csv(&other, held.as_bytes().to_vec()).await;
    assert_error(s, &e, StatusCode::CONFLICT, "conflict");
    assert!(e["error"]["message"].as_str().unwrap().contains("\"Cereal\""), "{e}");
    assert_eq!(app.items_of(&other).await.len(), 1);
}

on_both!(
    codes_are_checked_kept_unique_and_changed,
    a_search_finds_an_item_by_any_form_of_its_codes_first,
    two_writers_racing_for_one_code_get_one_item_and_one_409,
    the_sheet_carries_codes_both_ways,
);
