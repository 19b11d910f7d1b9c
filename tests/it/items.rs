//! The inventory through the HTTP API: CRUD, filters, paging, normalisation, errors that change nothing, tokens
//! and households.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};

on_both!(
    items_round_trip_with_normalised_fields,
    listing_filters_and_pages,
    cursor_pages_walk_everything_once_even_while_items_arrive,
    bad_input_is_refused_and_changes_nothing,
    households_never_see_each_other,
    measurements_faults_tests_and_gone,
    oversized_bodies_get_the_json_413_even_while_still_being_sent,
    the_list_and_the_read_answer_the_bytes_of_the_item_dto,
    items_carry_their_version_and_a_stale_if_match_changes_nothing,
);

async fn items_round_trip_with_normalised_fields(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let (status, created) = app
        .post(
            "/api/items",
            json!({
                "name": "  Anker PowerCore 10000 ", "item_type": "power_bank", "profile": "Anker A1263, USB-A",
                "condition": "like_new", "intent": "keep", "location": "shelf B2",
                "accessories": ["USB cable", "usb cable", "pouch"],
                "fields": {"capacity": {"value": 10, "unit": "Ah"}, "output_voltage": {"value": 5, "unit": "v"}}
            }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["name"], "Anker PowerCore 10000");
    assert_eq!(created["fields"]["capacity"], json!({"value": 10000.0, "unit": "mAh"}));
    assert_eq!(created["fields"]["output_voltage"], json!({"value": 5.0, "unit": "V"}));
    assert_eq!(created["accessories"], json!(["USB cable", "pouch"]));
    assert_eq!(created["availability"], "available");
    assert_eq!(created["gone"], json!(null));
    let id = created["id"].as_i64().unwrap();

    let (status, got) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got, created);

    let (status, patched) =
        app.patch(&format!("/api/items/{id}"), json!({"intent": "sell", "location": null, "condition": "good"})).await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["intent"], "sell");
    assert_eq!(patched["condition"], "good");
    assert_eq!(patched["location"], json!(null));
    assert_eq!(patched["name"], "Anker PowerCore 10000");

    let (status, health) = app.get("/health").await;
    assert_eq!((status, health["status"].as_str()), (StatusCode::OK, Some("ok")));
    let (status, spec) = app.get("/api/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(spec["paths"]["/items"].is_object() || spec["paths"]["/api/items"].is_object(), "{spec}");
    // The build pack's one 200 lists both of its media types: JSON (typed) and Markdown.
    let pack = &spec["paths"]["/projects/{id}/pack"]["get"]["responses"]["200"]["content"];
    let media: Vec<&String> = pack.as_object().map(|m| m.keys().collect()).unwrap_or_default();
    assert_eq!(media.len(), 2, "{pack}");
    assert!(
        media.iter().any(|m| m.starts_with("application/json")) && media.iter().any(|m| m.starts_with("text/markdown"))
    );
    assert!(pack.to_string().contains("BuildPack"), "{pack}");
    let docs = app.client.get(app.url("/api/docs")).send().await.unwrap();
    assert_eq!(docs.status(), StatusCode::OK);
}

async fn listing_filters_and_pages(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    for i in 0..7 {
        let mut body = item(&format!("Cell {i}"), "lithium_cell");
        body["profile"] = json!(if i % 2 == 0 { "Samsung 25R" } else { "LG HG2" });
        if i == 6 {
            body["intent"] = json!("sell");
        }
        app.create_item(body).await;
    }
    let pi = app.create_item(item("Raspberry Pi 4", "single_board_computer")).await;
    let (s, _) = app.post(&format!("/api/items/{pi}/gone"), json!({"reason": "sold", "note": "eBay"})).await;
    assert_eq!(s, StatusCode::OK);

    let check = |path: &'static str, total: u64, names: &'static [&'static str]| {
        let app = &app;
        async move {
            let (status, page) = app.get(path).await;
            assert_eq!(status, StatusCode::OK, "{path}: {page}");
            assert_eq!(page["total"], total, "{path}: {page}");
            let got: Vec<&str> =
                page["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap()).collect();
            assert_eq!(got, names, "{path}");
        }
    };
    check("/api/items?limit=3", 7, &["Cell 0", "Cell 1", "Cell 2"]).await;
    check("/api/items?limit=3&offset=6", 7, &["Cell 6"]).await;
    check("/api/items?intent=sell", 1, &["Cell 6"]).await;
    check("/api/items?q=samsung", 4, &["Cell 0", "Cell 2", "Cell 4", "Cell 6"]).await;
    check("/api/items?q=LG%20hg2&intent=keep", 3, &["Cell 1", "Cell 3", "Cell 5"]).await;
    check("/api/items?item_type=single_board_computer", 0, &[]).await;
    check("/api/items?item_type=single_board_computer&include_gone=true", 1, &["Raspberry Pi 4"]).await;
    check("/api/items?availability=lent", 0, &[]).await;
    let (status, page) = app.get("/api/items").await;
    assert_eq!((status, page["limit"].as_u64(), page["offset"].as_u64()), (StatusCode::OK, Some(50), Some(0)));
}

/// The ids and the `next` cursor of one page.
async fn page_of(app: &TestApp, path: &str) -> (Vec<i64>, Option<String>) {
    let (status, page) = app.get(path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {page}");
    let ids = page["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect();
    (ids, page["next"].as_str().map(str::to_owned))
}

async fn cursor_pages_walk_everything_once_even_while_items_arrive(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    for i in 0..11 {
        app.create_item(item(&format!("Board {i}"), "single_board_computer")).await;
    }
    // By offset: the reference.
    let mut by_offset = Vec::new();
    for offset in (0..11).step_by(3) {
        by_offset.extend(page_of(&app, &format!("/api/items?limit=3&offset={offset}")).await.0);
    }
    assert_eq!(by_offset.len(), 11);

    // By cursor: the same items in the same order, the last page's `next` null.
    let (mut by_cursor, mut next) = page_of(&app, "/api/items?limit=3").await;
    let mut pages = 1;
    while let Some(after) = next {
        let (ids, n) = page_of(&app, &format!("/api/items?limit=3&after={after}")).await;
        assert!(!ids.is_empty(), "a cursor is only answered when more items follow");
        by_cursor.extend(ids);
        next = n;
        pages += 1;
    }
    assert_eq!(by_cursor, by_offset);
    assert_eq!(pages, 4);
    let (ids, next) = page_of(&app, "/api/items?limit=11").await;
    assert_eq!((ids.len(), next), (11, None), "an exact last page has no next");

    // Items created during the walk neither repeat nor skip any item already there; they come at the end.
    let (mut walked, mut next) = page_of(&app, "/api/items?limit=4").await;
    let mut added = Vec::new();
    while let Some(after) = next {
        added.push(app.create_item(item(&format!("Late {}", added.len()), "lithium_cell")).await);
        let (ids, n) = page_of(&app, &format!("/api/items?limit=4&after={after}")).await;
        walked.extend(ids);
        next = n;
    }
    let mut expected = by_offset.clone();
    expected.extend(&added);
    assert_eq!(walked, expected, "every item once, in id order");

    // A search pages by cursor too, and a cursor with filters keeps them.
    let (first, next) = page_of(&app, "/api/items?q=board&limit=5").await;
    let (second, _) = page_of(&app, &format!("/api/items?q=board&limit=5&after={}", next.unwrap())).await;
    assert_eq!([first, second].concat(), by_offset[..10]);

    for path in ["/api/items?after=zz", "/api/items?after=", "/api/items?after=a1&offset=3"] {
        let (status, body) = app.get(path).await;
        assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    }
}

async fn bad_input_is_refused_and_changes_nothing(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(item("Multimeter", "multimeter")).await;
    let before = app.all_items().await;

    let raw = |body: &'static str| {
        app.client
            .post(app.url("/api/items"))
            .bearer_auth(&app.token)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let resp = raw("{not json").await.unwrap();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap();
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let wrong_value = json!({"name": "x", "item_type": "laptop", "profile": "", "condition": "good", "intent": "keep",
                             "fields": {"capacity": {"value": "3", "unit": "Ah"}}, "accessories": ["a"]});
    let (status, body) = app.post("/api/items", wrong_value).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    assert_eq!(body["error"]["message"], "fields.capacity.value must be a number, not \"3\"");
    for (body, why) in [
        (
            json!({"name": "x", "item_type": "laptop", "profile": "", "condition": "mint", "intent": "keep"}),
            "condition must be one of new, like_new, good, fair, poor, for_parts, not \"mint\"",
        ),
        (json!({"name": "  ", "item_type": "laptop", "profile": "", "condition": "good", "intent": "keep"}), "name"),
        (json!({"name": "x", "item_type": "- -", "profile": "", "condition": "good", "intent": "keep"}), "item_type"),
        (
            json!({"name": "x", "item_type": "laptop", "profile": "", "condition": "good", "intent": "keep",
                   "fields": {"capacity": {"value": 3, "unit": "furlongs"}}}),
            "furlongs",
        ),
        (
            json!({"name": "x", "item_type": "laptop", "profile": "", "condition": "good", "intent": "keep", "colour": "red"}),
            "colour",
        ),
        (json!({"name": "x", "item_type": "laptop", "condition": "good", "intent": "keep"}), "profile is required"),
    ] {
        let (status, body) = app.post("/api/items", body).await;
        assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
        // The message names the field and the problem.
        assert!(body["error"]["message"].as_str().unwrap().contains(why), "{why}: {body}");
    }
    for path in [
        "/api/items?limit=0",
        "/api/items?limit=501",
        "/api/items?limit=-1",
        "/api/items?offset=-5",
        "/api/items?intent=hoard",
    ] {
        let (status, body) = app.get(path).await;
        assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    }
    // Well-formed, but refused by a rule of the inventory: 422.
    let (status, body) = app.patch(&format!("/api/items/{id}"), json!({"availability": "reserved"})).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let (status, body) = app.patch(&format!("/api/items/{id}"), json!({"components": [id]})).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let (status, body) = app
        .post(
            "/api/items",
            json!({"name": "x", "item_type": "laptop", "profile": "", "condition": "good", "intent": "keep", "components": [999]}),
        )
        .await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    assert!(body["error"]["message"].as_str().unwrap().contains("component 999"), "{body}");

    let (status, body) = app.get("/api/items/424242").await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");

    let huge = json!({"name": "x", "item_type": "laptop", "condition": "good", "intent": "keep", "profile": "y".repeat(1_100_000)});
    let (status, body) = app.post("/api/items", huge).await;
    assert_error(status, &body, StatusCode::PAYLOAD_TOO_LARGE, "too_large");

    let resp = app.client.get(app.url("/api/items")).send().await.unwrap();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap();
    assert_error(status, &body, StatusCode::UNAUTHORIZED, "unauthorized");
    let (status, body) = app.get_as("trove_not_a_token", "/api/items").await;
    assert_error(status, &body, StatusCode::UNAUTHORIZED, "unauthorized");

    assert_eq!(app.all_items().await, before, "nothing was written");
}

async fn households_never_see_each_other(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let mine = app.create_item(item("My drill", "drill")).await;
    let other = app.token_of("neighbours").await;
    let (status, theirs) = app.post_as(&other, "/api/items", item("Their saw", "saw")).await;
    assert_eq!(status, StatusCode::CREATED);
    let theirs = theirs["id"].as_i64().unwrap();

    let (status, body) = app.get_as(&other, &format!("/api/items/{mine}")).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) =
        app.post_as(&other, &format!("/api/items/{mine}/faults"), json!({"text": "x", "severity": "minor"})).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, page) = app.get_as(&other, "/api/items").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(page["total"], 1);
    assert_eq!(page["items"][0]["id"], theirs);
    let (status, page) = app.get("/api/items").await;
    assert_eq!((status, page["total"].as_u64()), (StatusCode::OK, Some(1)));
    assert_eq!(app.all_items().await[0]["faults"], json!([]));
}

async fn measurements_faults_tests_and_gone(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(item("Samsung 25R", "lithium_cell")).await;
    let (s, it) = app
        .post(
            &format!("/api/items/{id}/measurements"),
            json!({"key": "capacity", "value": 2.5, "unit": "Ah", "source": "label"}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{it}");
    let (s, it) = app
        .post(
            &format!("/api/items/{id}/measurements"),
            json!({"key": "capacity", "value": 2380, "unit": "mah", "source": "test"}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(it["fields"]["capacity"], json!({"value": 2380.0, "unit": "mAh"}));
    assert_eq!(it["measurements"].as_array().unwrap().len(), 2);
    let (s, it) =
        app.post(&format!("/api/items/{id}/faults"), json!({"text": "dented wrap", "severity": "minor"})).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(it["faults"], json!([{"text": "dented wrap", "severity": "minor"}]));
    let (s, it) = app
        .post(
            &format!("/api/items/{id}/tests"),
            json!({"name": "capacity test", "result": "pass", "value": 2.38, "unit": "Ah"}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{it}");
    assert_eq!(it["tests_done"][0]["value"], json!({"value": 2380.0, "unit": "mAh"}));
    let (s, it) = app.post(&format!("/api/items/{id}/gone"), json!({"reason": "recycled"})).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(it["gone"]["reason"], "recycled");
    let (status, body) = app.post(&format!("/api/items/{id}/gone"), json!({"reason": "lost"})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    let (status, body) = app.post(&format!("/api/items/{id}/faults"), json!({"text": "y", "severity": "major"})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
}

/// A client that writes its whole body before reading the answer (as browsers and most HTTP clients do) must see
/// the 413, not a broken pipe: the server reads the refused body to its end before answering. Written over a raw
/// socket so both an announced length and a chunked body can be sent, each larger than loopback buffers hold.
async fn oversized_bodies_get_the_json_413_even_while_still_being_sent(db: Db) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn(db, &[]).await;
    let before = app.all_items().await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let payload = vec![b'y'; 16 << 20];

    let announced = format!(
        "POST /api/items HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        app.token,
        payload.len()
    );
    let mut chunked = Vec::new();
    for chunk in payload.chunks(64 << 10) {
        chunked.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        chunked.extend_from_slice(chunk);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let chunked_head = format!(
        "POST /api/items HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        app.token
    );

    for (what, head, body) in [("announced", announced, &payload), ("chunked", chunked_head, &chunked)] {
        let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body).await.unwrap_or_else(|e| panic!("{what}: the server stopped reading: {e}"));
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let (head, json) = answer.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{what}: {answer}"));
        assert!(head.starts_with("HTTP/1.1 413"), "{what}: {head}");
        // The body may come chunked: the JSON is everything from the first brace to the last.
        let json = &json[json.find('{').unwrap_or(0)..=json.rfind('}').unwrap_or(0)];
        let json: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{what}: {e}: {json}"));
        assert_eq!(json["error"]["code"], "too_large", "{what}: {json}");
    }

    // A chunked CSV import that breaks off after a whole first line is refused, not imported in part.
    let head = format!(
        "POST /api/import HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nContent-Type: text/csv\r\n\
         Transfer-Encoding: chunked\r\n\r\n",
        app.token
    );
    let part = "id,name,item_type,profile,condition,intent\n1,Half a file,laptop,,good,keep\n";
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(format!("{:x}\r\n{part}\r\n", part.len()).as_bytes()).await.unwrap();
    stream.write_all(b"400\r\nonly a few bytes of a 1 KiB chunk").await.unwrap();
    stream.shutdown().await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("could not be read to its end"), "{answer}");
    assert_eq!(app.all_items().await, before, "nothing was written");
}

/// The raw body of a GET.
async fn bytes_of(app: &TestApp, path: &str) -> String {
    let resp = app.client.get(app.url(path)).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{path}");
    assert_eq!(resp.headers()["content-type"], "application/json; charset=utf-8", "{path}");
    resp.text().await.unwrap()
}

/// The list (`GET /api/items`) and the read (`GET /api/items/{id}`) write their JSON straight from the items;
/// every other item route still answers the `ItemDto` through poem-openapi's `Json`. Both must write the same
/// bytes for the same item: the same members in the same order, the same numbers, times, escapes and nulls. Each
/// change of an item here answers it the old way; the read and the list must answer exactly that text.
async fn the_list_and_the_read_answer_the_bytes_of_the_item_dto(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let text_of = |path: String, body: Value, method: &'static str| {
        let app = &app;
        async move {
            let req = match method {
                "patch" => app.client.patch(app.url(&path)),
                _ => app.client.post(app.url(&path)),
            };
            let resp = req.bearer_auth(&app.token).json(&body).send().await.unwrap();
            assert!(resp.status().is_success(), "{path}");
            resp.text().await.unwrap()
        }
    };
    let mut answers: Vec<(i64, String)> = Vec::new();
    // A plain item, nowhere.
    let plain = text_of("/api/items".into(), item("Plain", "widget"), "post").await;
    // Everything at once: a place path, fields in odd units, accessories, text needing escapes.
    let full = text_of(
        "/api/items".into(),
        json!({
            "name": "Quote \" back\\slash \u{e9}t\u{e9} \u{1F50B}", "item_type": "power_bank",
            "profile": "Anker A1263 <b>&amp;</b>\nsecond line", "condition": "for_parts", "intent": "sell",
            "location": "Garage / Shelf B2 / Box \u{2116}4", "accessories": ["USB cable", "pouch"],
            "fields": {"capacity": {"value": 10.05, "unit": "Ah"}, "output_voltage": {"value": 5, "unit": "v"},
                       "weight": {"value": 0.1, "unit": "kg"}, "zz_count": {"value": 12345678901.0, "unit": "pcs"}},
            "faults": [{"text": "dented", "severity": "minor"}]
        }),
        "post",
    )
    .await;
    for text in [&plain, &full] {
        let id = serde_json::from_str::<Value>(text).unwrap()["id"].as_i64().unwrap();
        answers.push((id, text.clone()));
    }
    let id = answers[1].0;
    // Measurements, faults, tests with and without a value and a note, and gone: each answer replaces the last.
    let steps: Vec<(String, Value, &'static str)> = vec![
        (
            format!("/api/items/{id}/measurements"),
            json!({"key": "capacity", "value": 9.87654321, "unit": "Ah",
            "source": "test", "at": "2024-02-29T23:59:59.123456789Z"}),
            "post",
        ),
        (
            format!("/api/items/{id}/tests"),
            json!({"name": "load \"test\"", "result": "fail", "value": 4.2,
            "unit": "V", "note": "sagged\tunder 2 A"}),
            "post",
        ),
        (format!("/api/items/{id}/tests"), json!({"name": "look", "result": "pass"}), "post"),
        (format!("/api/items/{id}/faults"), json!({"text": "no cap", "severity": "blocking"}), "post"),
        (format!("/api/items/{id}"), json!({"components": [answers[0].0], "availability": "lent"}), "patch"),
        (format!("/api/items/{id}/gone"), json!({"reason": "given", "note": "to \"Sam\""}), "post"),
    ];
    for (path, body, method) in steps {
        answers[1].1 = text_of(path, body, method).await;
        assert_eq!(bytes_of(&app, &format!("/api/items/{id}")).await, answers[1].1);
    }
    for (id, text) in &answers {
        assert_eq!(&bytes_of(&app, &format!("/api/items/{id}")).await, text, "item {id}");
    }
    // The list: the same items' texts inside the page's members, in the order poem-openapi writes them.
    let list = bytes_of(&app, "/api/items?include_gone=true&limit=1").await;
    let page: Value = serde_json::from_str(&list).unwrap();
    let next = page["next"].as_str().unwrap().to_owned();
    assert_eq!(list, format!(r#"{{"items":[{}],"limit":1,"next":"{next}","offset":0,"total":2}}"#, answers[0].1));
    let list = bytes_of(&app, &format!("/api/items?include_gone=true&after={next}")).await;
    assert_eq!(list, format!(r#"{{"items":[{}],"limit":50,"next":null,"offset":0,"total":2}}"#, answers[1].1));
    let list = bytes_of(&app, "/api/items?q=nothing").await;
    assert_eq!(list, r#"{"items":[],"limit":50,"next":null,"offset":0,"total":0}"#);
}

/// `PATCH /api/items/{id}` with `If-Match` when given: the status, the `ETag` answered and the body.
async fn patch_matching(
    app: &TestApp,
    id: i64,
    if_match: Option<&str>,
    body: Value,
) -> (StatusCode, Option<String>, Value) {
    let mut req = app.client.patch(app.url(&format!("/api/items/{id}"))).bearer_auth(&app.token).json(&body);
    if let Some(tag) = if_match {
        req = req.header("If-Match", tag);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    let tag = resp.headers().get("etag").map(|v| v.to_str().unwrap().to_owned());
    (status, tag, resp.json().await.unwrap())
}

/// `GET /api/items/{id}`: the `ETag` and the item.
async fn read_tagged(app: &TestApp, id: i64) -> (String, Value) {
    let resp = app.client.get(app.url(&format!("/api/items/{id}"))).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let tag = resp.headers().get("etag").expect("an item answer carries its ETag").to_str().unwrap().to_owned();
    (tag, resp.json().await.unwrap())
}

async fn items_carry_their_version_and_a_stale_if_match_changes_nothing(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(item("Pi 4", "sbc")).await;
    let (tag, _) = read_tagged(&app, id).await;
    assert_eq!(tag, "\"1\"");

    // Changed at the version read: the answer carries the next one.
    let (status, tag, changed) = patch_matching(&app, id, Some("\"1\""), json!({"name": "Pi 4B"})).await;
    assert_eq!((status, tag.as_deref()), (StatusCode::OK, Some("\"2\"")), "{changed}");
    // A second change from the same read is refused, 412 with a JSON error, and writes nothing.
    let (status, _, refused) = patch_matching(&app, id, Some("\"1\""), json!({"name": "Pi 4 (old)"})).await;
    assert_error(status, &refused, StatusCode::PRECONDITION_FAILED, "precondition_failed");
    assert_eq!(refused["error"]["message"], format!("item {id} is at version 2, not 1; read it again"), "{refused}");
    let (tag, read) = read_tagged(&app, id).await;
    assert_eq!((tag.as_str(), read["name"].as_str()), ("\"2\"", Some("Pi 4B")));
    let (_, history) = app.get(&format!("/api/items/{id}/history")).await;
    assert_eq!(history["events"].as_array().unwrap().len(), 2, "{history}");

    // `*` matches any version; no header is today's unconditional change.
    let (status, tag, _) = patch_matching(&app, id, Some("*"), json!({"profile": "8 GB"})).await;
    assert_eq!((status, tag.as_deref()), (StatusCode::OK, Some("\"3\"")));
    let (status, tag, _) = patch_matching(&app, id, None, json!({"profile": "4 GB"})).await;
    assert_eq!((status, tag.as_deref()), (StatusCode::OK, Some("\"4\"")));
    // Well-formed tags that do not match the current one (RFC 9110's strong comparison: a weak tag never
    // does) are a precondition that fails: 412, nothing written.
    for stale in ["\"3\"", "W/\"4\"", "\"x\"", "\"1\", \"2\"", "\"\"", "W/\"4\", \"abc\""] {
        let (status, _, refused) = patch_matching(&app, id, Some(stale), json!({"profile": "2 GB"})).await;
        assert_error(status, &refused, StatusCode::PRECONDITION_FAILED, "precondition_failed");
        assert!(refused["error"]["message"].as_str().unwrap().contains("is at version 4"), "{stale}: {refused}");
    }
    // A malformed header is 400.
    for bad in ["4", "\"4", "W/4", "\"a b\"", "*, \"4\"", ","] {
        let (status, _, refused) = patch_matching(&app, id, Some(bad), json!({"profile": "2 GB"})).await;
        assert_error(status, &refused, StatusCode::BAD_REQUEST, "invalid");
    }
    assert_eq!(read_tagged(&app, id).await.1["profile"], "4 GB");
    // A list naming the current version among others matches.
    let (status, tag, _) = patch_matching(&app, id, Some("\"2\", W/\"9\", \"4\""), json!({"profile": "2 GB"})).await;
    assert_eq!((status, tag.as_deref()), (StatusCode::OK, Some("\"5\"")));

    // The document says so.
    let (_, spec) = app.get("/api/openapi.json").await;
    let item = &spec["paths"]["/items/{id}"];
    // poem-openapi writes a response header's name in capitals (HTTP reads it ignoring case).
    let has_etag = |operation: &Value| {
        operation["responses"]["200"]["headers"]
            .as_object()
            .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("etag")))
    };
    assert!(has_etag(&item["get"]), "{}", item["get"]);
    assert!(has_etag(&item["patch"]), "{}", item["patch"]);
    assert!(item["patch"]["responses"]["412"].is_object(), "{}", item["patch"]);
    let parameters = item["patch"]["parameters"].as_array().unwrap();
    assert!(parameters.iter().any(|p| p["name"] == "If-Match" && p["in"] == "header"), "{parameters:?}");
}
