//! Looking codes up (issue 46), on both databases through the API, with the product databases faked by one local
//! server: a hit served once by the provider and then from the cache, an item's own code answered as the item, our
//! label's link answered as its item, a miss answered 200 with the providers asked, an in-store code sent nowhere,
//! and a wrong check digit refused.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::json;
use wiremock::matchers::{header_exists, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A GTIN-13 Open Food Facts knows (in the fake).
const KNOWN: &str = "3017620422003";
/// A GTIN-13 no provider knows.
const UNKNOWN: &str = "4006381333931";

async fn codes_are_looked_up_in_order_and_cached(db: Db) {
    let fake = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/food/api/v2/product/{KNOWN}.json")))
        .and(header_exists("user-agent"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "code": KNOWN,
            "status": 1,
            "product": {"product_name": "Nutella", "brands": "Ferrero", "image_front_url": "https://img.example/n.jpg"}
        })))
        .expect(1)
        .mount(&fake)
        .await;
    // Every other product is unknown to every provider.
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(404).set_body_json(json!({"status": 0, "status_verbose": "product not found"})),
        )
        .with_priority(10)
        .mount(&fake)
        .await;
    let base = fake.uri();
    let app = TestApp::spawn(
        db,
        &[
            ("TROVE_LOOKUP_FOOD_URL", format!("{base}/food")),
            ("TROVE_LOOKUP_PRODUCTS_URL", format!("{base}/products")),
            ("TROVE_LOOKUP_BEAUTY_URL", format!("{base}/beauty")),
            ("TROVE_LOOKUP_LIBRARY_URL", format!("{base}/library")),
            ("TROVE_LOOKUP_CONTACT", "ops@example.org".to_owned()),
        ],
    )
    .await;

    // A hit: asked of the providers, then served from the cache (the fake checks it was asked once).
    let (s, hit) = app.get(&format!("/api/lookup/{KNOWN}")).await;
    assert_eq!(s, StatusCode::OK, "{hit}");
    assert_eq!((hit["kind"].as_str(), hit["cached"].as_bool()), (Some("products"), Some(false)), "{hit}");
    let first = &hit["candidates"][0];
    assert_eq!((first["name"].as_str(), first["brand"].as_str()), (Some("Nutella"), Some("Ferrero")), "{hit}");
    assert_eq!(first["source"], "open_food_facts");
    assert_eq!(first["source_url"], format!("{base}/food/product/{KNOWN}"));
    assert!(first["attribution"].as_str().is_some_and(|a| a.contains("ODbL")), "{hit}");
    assert!(first["fetched_at"].is_string(), "{hit}");
    let (s, again) = app.get(&format!("/api/lookup/{KNOWN}")).await;
    assert_eq!(s, StatusCode::OK, "{again}");
    assert_eq!(again["cached"], true, "{again}");
    assert_eq!(again["candidates"], hit["candidates"], "the cache answers what the provider did");

    // An item's own code, in another of its forms: the item.
    let mut body = item("Tissues", "Thing");
    body["codes"] = json!([{"kind": "gtin", "value": "036000291452"}]);
    let tissues = app.create_item(body).await;
    let (s, own) = app.get("/api/lookup/0036000291452").await;
    assert_eq!(s, StatusCode::OK, "{own}");
    assert_eq!((own["kind"].as_str(), own["id"].as_i64()), (Some("own_item"), Some(tissues)), "{own}");
    assert_eq!(own["name"], "Tissues");

    // Our label's link (as a scanner types it, percent-encoded in the path): the item it names.
    let link = format!("http://localhost:8080/#/items/{tissues}");
    let encoded: String = link
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    let (s, label) = app.get(&format!("/api/lookup/{encoded}")).await;
    assert_eq!(s, StatusCode::OK, "{label}");
    assert_eq!((label["kind"].as_str(), label["id"].as_i64()), (Some("item"), Some(tissues)), "{label}");

    // A miss: 200, no candidates, the providers asked (Open Library knows books only).
    let (s, miss) = app.get(&format!("/api/lookup/{UNKNOWN}")).await;
    assert_eq!(s, StatusCode::OK, "{miss}");
    assert_eq!(miss["candidates"], json!([]), "{miss}");
    assert_eq!(miss["asked"], json!(["open_food_facts", "open_products_facts", "open_beauty_facts"]), "{miss}");

    // An in-store code is sent nowhere.
    let (s, store) = app.get("/api/lookup/2012345000001").await;
    assert_eq!(s, StatusCode::OK, "{store}");
    assert_eq!((store["withheld"].as_str(), store["asked"].clone()), (Some("in_store"), json!([])), "{store}");

    // A wrong check digit, letters: 400 naming the problem.
    let (s, e) = app.get("/api/lookup/3017620422004").await;
    assert_error(s, &e, StatusCode::BAD_REQUEST, "invalid");
    assert!(e["error"]["message"].as_str().unwrap().contains("should be 3"), "{e}");
    let (s, e) = app.get("/api/lookup/30176x0422003").await;
    assert_error(s, &e, StatusCode::BAD_REQUEST, "invalid");
}

on_both!(codes_are_looked_up_in_order_and_cached);
