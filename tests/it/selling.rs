//! Pricing, the spend ledger and its budget, idempotent replays, listing drafts and share texts through the
//! HTTP API, against a fake Model API.

use crate::app::{Db, TestApp, assert_error, item};
use crate::fake_model::{fake_api, message, response, settings, web_search};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use wiremock::ResponseTemplate;

on_both!(
    pricing_keeps_only_grounded_comparables_and_records_history_and_spend,
    a_spent_budget_refuses_before_anything_is_sent,
    an_idempotency_key_replays_without_calling_the_model,
    a_key_in_use_by_a_running_request_is_refused,
    a_key_reused_for_another_request_is_refused,
    a_failed_request_frees_its_key_for_a_retry,
    drafts_and_share_texts_follow_intent,
    pricing_needs_the_model_api,
    only_web_urls_are_kept_in_a_report_and_its_history,
);

fn comparables() -> Value {
    json!({"comparables": [
        {"title": "Pi 4 4GB sold", "url": "https://www.ebay.co.uk/itm/111/", "price": 38.0, "currency": "GBP",
         "condition": "good", "sold": true, "note": null},
        {"title": "Pi 4 4GB boxed", "url": "HTTPS://WWW.EBAY.CO.UK/itm/222", "price": 45.5, "currency": "GBP",
         "condition": "like_new", "sold": false, "note": "with case"},
        {"title": "Cited one", "url": "https://cex.example/pi4", "price": 40.0, "currency": "GBP",
         "condition": null, "sold": true, "note": null},
        {"title": "Invented", "url": "https://made-up.example/pi", "price": 90.0, "currency": "GBP",
         "condition": "new", "sold": false, "note": null}
    ]})
}

fn price_answer() -> ResponseTemplate {
    price_answer_with(400)
}

/// A price answer that reports `output_tokens` of output.
fn price_answer_with(output_tokens: u64) -> ResponseTemplate {
    let search = web_search(
        "used raspberry pi 4 4gb price",
        &["https://www.ebay.co.uk/itm/111", "https://www.ebay.co.uk/itm/222"],
    );
    let msg = message(&comparables().to_string(), &["https://cex.example/pi4"]);
    ResponseTemplate::new(200).set_body_json(response(vec![search, msg], 2000, output_tokens))
}

async fn for_sale(app: &TestApp) -> i64 {
    let mut pi = item("Raspberry Pi 4 Model B 4GB", "single_board_computer");
    pi["intent"] = json!("sell");
    pi["profile"] = json!("BCM2711, 4GB RAM, serial 1000abc");
    pi["accessories"] = json!(["official case"]);
    pi["fields"] = json!({"ram": {"value": 4, "unit": "GB"}});
    let id = app.create_item(pi).await;
    let (s, _) =
        app.post(&format!("/api/items/{id}/faults"), json!({"text": "scratched lid", "severity": "minor"})).await;
    assert_eq!(s, StatusCode::CREATED);
    let (s, _) = app.post(&format!("/api/items/{id}/tests"), json!({"name": "boots", "result": "pass"})).await;
    assert_eq!(s, StatusCode::CREATED);
    id
}

async fn pricing_keeps_only_grounded_comparables_and_records_history_and_spend(db: Db) {
    let (server, seen) = fake_api(|_, _| price_answer()).await;
    let mut s = settings(&server);
    s.push(("TROVE_LOCATION", "country=GB,city=Leeds".into()));
    let app = TestApp::spawn(db, &s).await;
    let id = for_sale(&app).await;

    let (status, report) = app.post(&format!("/api/items/{id}/price"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let kept: Vec<&str> =
        report["comparables"].as_array().unwrap().iter().map(|c| c["title"].as_str().unwrap()).collect();
    assert_eq!(kept, vec!["Pi 4 4GB sold", "Pi 4 4GB boxed", "Cited one"]);
    assert_eq!(report["comparables"][1]["price"], 4550);
    assert_eq!(
        report["dropped"],
        json!([{"url": "https://made-up.example/pi", "title": "Invented", "reason": "page not among search results or citations"}])
    );
    assert_eq!(report["estimate"]["currency"], "GBP");
    let (low, typical, high) = (
        report["estimate"]["low"].as_i64().unwrap(),
        report["estimate"]["typical"].as_i64().unwrap(),
        report["estimate"]["high"].as_i64().unwrap(),
    );
    assert!(low <= typical && typical <= high && low > 0, "{report}");
    assert_eq!(report["searches"], 1);
    let cost = (2000.0f64 * 1.25 + 400.0 * 4.25).round() as i64 + 2500;
    assert_eq!(report["spend"]["cost_micro_usd"], cost);

    let body = &seen.bodies()[0];
    assert_eq!(
        body["tools"],
        json!([{"type": "web_search", "search_context_size": "medium",
        "user_location": {"type": "approximate", "country": "GB", "city": "Leeds"}}])
    );
    assert_eq!(body["max_tool_calls"], 4);
    assert_eq!(body["include"], json!(["web_search_call.results"]));
    assert_eq!(body["text"]["format"]["name"], "Comparables");
    let described = body["input"][0]["content"][0]["text"].as_str().unwrap();
    assert!(
        described.contains("scratched lid") && described.contains("official case") && described.contains("ram: 4 GB"),
        "{described}"
    );

    let (status, history) = app.get(&format!("/api/items/{id}/prices")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(history["prices"].as_array().unwrap().len(), 1);
    assert_eq!(history["prices"][0]["estimate"], report["estimate"]);

    let (_, spend) = app.get("/api/spend").await;
    assert_eq!(spend["entries"][0]["kind"], "price");
    assert_eq!(spend["entries"][0]["searches"], 1);
    assert_eq!(spend["totals"]["all"]["cost_micro_usd"], cost);
    let month = spend["totals"]["by_month"].as_object().unwrap();
    assert_eq!(month.len(), 1);
    let (_, later) = app.get("/api/spend?from=2099-01-01T00:00:00Z").await;
    assert_eq!((later["entries"].as_array().unwrap().len(), &later["totals"]["all"]["calls"]), (0, &json!(0)));
    let (_, earlier) = app.get("/api/spend?from=2000-01-01T00:00:00Z&to=2099-01-01T00:00:00Z").await;
    assert_eq!(earlier["entries"].as_array().unwrap().len(), 1);
    let (status, body) = app.get("/api/spend?from=2099-01-01T00:00:00Z&to=2000-01-01T00:00:00Z").await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let (status, draft) = app.get(&format!("/api/items/{id}/draft")).await;
    assert_eq!(status, StatusCode::OK, "{draft}");
    assert_eq!(draft["price"], json!(typical));
    assert_eq!(draft["currency"], "GBP");

    let (status, body) = app.post("/api/items/999999/price", json!({})).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (s, _) = app.post(&format!("/api/items/{id}/gone"), json!({"reason": "sold"})).await;
    assert_eq!(s, StatusCode::OK);
    let (status, body) = app.post(&format!("/api/items/{id}/price"), json!({})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    assert_eq!(seen.bodies().len(), 1, "refused requests send nothing");
}

async fn a_spent_budget_refuses_before_anything_is_sent(db: Db) {
    // A price call may cost up to USD 0.078488 (its input, 16,000 output tokens and 4 searches): the first fits
    // in 0.08; it costs 0.022 (2,000 in, 4,000 out, 1 search), and then neither another price call nor a
    // proposal step (up to about 0.069) fits in what is left.
    let (server, seen) = fake_api(|_, _| price_answer_with(4_000)).await;
    let mut s = settings(&server);
    s.push(("SPEND_MONTHLY_LIMIT_USD", "0.08".into()));
    let app = TestApp::spawn(db, &s).await;
    let id = for_sale(&app).await;
    let (status, _) = app.post(&format!("/api/items/{id}/price"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "the first call fits in the budget");
    let (status, body) = app.post(&format!("/api/items/{id}/price"), json!({})).await;
    assert_error(status, &body, StatusCode::PAYMENT_REQUIRED, "budget_reached");
    assert!(body["error"]["message"].as_str().unwrap().contains("SPEND_MONTHLY_LIMIT_USD"), "{body}");
    let (status, body) = app.post("/api/projects/propose", json!({})).await;
    assert_error(status, &body, StatusCode::PAYMENT_REQUIRED, "budget_reached");
    assert_eq!(seen.bodies().len(), 1, "nothing was sent after the budget was reached");
    let (_, spend) = app.get("/api/spend").await;
    assert_eq!(spend["entries"].as_array().unwrap().len(), 1);
    assert_eq!(spend["monthly_limit_micro_usd"], 80_000);

    // Another household has its own budget.
    let other = app.token_of("others").await;
    let (status, created) = app.post_as(&other, "/api/items", item("Their Pi", "single_board_computer")).await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = app.post_as(&other, &format!("/api/items/{}/price", created["id"]), json!({})).await;
    assert_eq!(status, StatusCode::OK);
}

async fn an_idempotency_key_replays_without_calling_the_model(db: Db) {
    let (server, seen) = fake_api(|_, _| price_answer()).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let id = for_sale(&app).await;
    let path = format!("/api/items/{id}/price");
    let (s1, first) = app.post_with_key(&path, json!({}), "price-once-1").await;
    let (s2, second) = app.post_with_key(&path, json!({}), "price-once-1").await;
    assert_eq!((s1, s2), (StatusCode::OK, StatusCode::OK));
    assert_eq!(first, second);
    assert_eq!(seen.bodies().len(), 1, "the model was called once");
    let (s3, _) = app.post_with_key(&path, json!({}), "price-once-2").await;
    assert_eq!(s3, StatusCode::OK);
    assert_eq!(seen.bodies().len(), 2);
    let (_, history) = app.get(&format!("/api/items/{id}/prices")).await;
    assert_eq!(history["prices"].as_array().unwrap().len(), 2);
    let (status, body) = app.post_with_key(&path, json!({}), "").await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
}

/// How long a test waits for the fake Model API to have received a request.
const SEEN_DEADLINE: Duration = Duration::from_secs(30);

async fn a_key_in_use_by_a_running_request_is_refused(db: Db) {
    // The fake holds its answer, so the first request is still running while the second arrives.
    // The model is slow enough that the second request surely arrives while the first is still running.
    let (server, seen) = fake_api(|_, _| price_answer().set_delay(Duration::from_secs(3))).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let id = for_sale(&app).await;
    let path = format!("/api/items/{id}/price");
    let first = app.post_with_key(&path, json!({}), "price-busy");
    let second = async {
        let deadline = Instant::now() + SEEN_DEADLINE;
        while seen.bodies().is_empty() {
            assert!(Instant::now() < deadline, "the first request never reached the model");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        app.post_with_key(&path, json!({}), "price-busy").await
    };
    let ((s1, first), (s2, second)) = tokio::join!(first, second);
    assert_eq!(s1, StatusCode::OK, "{first}");
    assert_error(s2, &second, StatusCode::CONFLICT, "conflict");
    assert!(second["error"]["message"].as_str().unwrap().contains("still running"), "{second}");
    assert_eq!(seen.bodies().len(), 1, "only one request reached the model");
    // Once the first has answered, the key replays its answer.
    let (s3, third) = app.post_with_key(&path, json!({}), "price-busy").await;
    assert_eq!((s3, &third), (StatusCode::OK, &first));
    assert_eq!(seen.bodies().len(), 1);
}

async fn a_key_reused_for_another_request_is_refused(db: Db) {
    // The local planner proposes without a model: this is about the key alone.
    let app = TestApp::spawn(db, &[]).await;
    app.create_item(item("Spare Pi", "single_board_computer")).await;
    let (s1, first) = app.post_with_key("/api/projects/propose", json!({"brief": "a game console"}), "plan-1").await;
    assert_eq!(s1, StatusCode::OK, "{first}");
    let (status, body) =
        app.post_with_key("/api/projects/propose", json!({"brief": "a weather station"}), "plan-1").await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    assert!(body["error"]["message"].as_str().unwrap().contains("different request"), "{body}");
    let (s2, again) = app.post_with_key("/api/projects/propose", json!({"brief": "a game console"}), "plan-1").await;
    assert_eq!((s2, &again), (StatusCode::OK, &first), "the same request replays");
    let (_, list) = app.get("/api/projects").await;
    assert_eq!(list["projects"].as_array().unwrap().len(), first["projects"].as_array().unwrap().len());
}

async fn a_failed_request_frees_its_key_for_a_retry(db: Db) {
    // The provider refuses the first call (a 400 is never retried by the adapter, so the request fails at
    // once), then answers.
    let (server, seen) = fake_api(|_, n| {
        if n == 0 {
            ResponseTemplate::new(400).set_body_json(json!({"error": {"message": "try later",
                "type": "invalid_request_error", "param": null, "code": null}}))
        } else {
            price_answer()
        }
    })
    .await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let id = for_sale(&app).await;
    let path = format!("/api/items/{id}/price");
    let (status, body) = app.post_with_key(&path, json!({}), "price-retry").await;
    assert_error(status, &body, StatusCode::BAD_GATEWAY, "model_failed");
    let (s2, retried) = app.post_with_key(&path, json!({}), "price-retry").await;
    assert_eq!(s2, StatusCode::OK, "{retried}");
    let (s3, replayed) = app.post_with_key(&path, json!({}), "price-retry").await;
    assert_eq!((s3, &replayed), (StatusCode::OK, &retried));
    assert_eq!(seen.bodies().len(), 2, "the failed call and the retry; the replay sent nothing");
}

async fn drafts_and_share_texts_follow_intent(db: Db) {
    let app = TestApp::spawn(db, &[("TROVE_LOCATION", "country=GB,city=Leeds".into())]).await;
    let id = for_sale(&app).await;
    let (status, draft) = app.get(&format!("/api/items/{id}/draft")).await;
    assert_eq!(status, StatusCode::OK, "{draft}");
    assert!(draft["title"].as_str().unwrap().chars().count() <= 80);
    let description = draft["description"].as_str().unwrap();
    assert!(
        description.contains("scratched lid") && description.contains("boots") && description.contains("official case"),
        "{description}"
    );
    assert_eq!(draft["price"], json!(null));
    let (_, again) = app.get(&format!("/api/items/{id}/draft")).await;
    assert_eq!(again, draft, "drafts are deterministic");
    let (status, body) = app.get(&format!("/api/items/{id}/share")).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");

    let (s, _) = app.patch(&format!("/api/items/{id}"), json!({"intent": "give"})).await;
    assert_eq!(s, StatusCode::OK);
    let (status, share) = app.get(&format!("/api/items/{id}/share")).await;
    assert_eq!(status, StatusCode::OK, "{share}");
    let text = share["text"].as_str().unwrap();
    assert!(text.chars().count() <= 500 && text.contains("Leeds") && text.contains("scratched lid"), "{text}");
    let (status, body) = app.get(&format!("/api/items/{id}/draft")).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
}

async fn pricing_needs_the_model_api(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = for_sale(&app).await;
    let (status, body) = app.post(&format!("/api/items/{id}/price"), json!({})).await;
    assert_error(status, &body, StatusCode::SERVICE_UNAVAILABLE, "not_configured");
    assert!(body["error"]["message"].as_str().unwrap().contains("MODEL_API_KEY"), "{body}");
    let (_, spend) = app.get("/api/spend").await;
    assert_eq!(spend["entries"], json!([]));
}

/// Only `http` and `https` URLs from a model are kept: a comparable with any other scheme is dropped without its
/// URL, its reason naming the scheme, and the stored history, read back, holds no other URL either (a report
/// written before the rule included). Model text loses its control characters.
async fn only_web_urls_are_kept_in_a_report_and_its_history(db: Db) {
    let answer = json!({"comparables": [
        {"title": "Pi 4 sold", "url": "https://www.ebay.co.uk/itm/111", "price": 38.0, "currency": "GBP",
         "condition": "good", "sold": true, "note": null},
        {"title": "Click\u{0} me", "url": "javascript:alert(document.cookie)", "price": 40.0, "currency": "GBP",
         "condition": null, "sold": true, "note": null},
        {"title": "Inline", "url": "data:text/html,<script>alert(1)</script>", "price": 41.0, "currency": "GBP",
         "condition": null, "sold": false, "note": null},
        {"title": "Old mirror", "url": "ftp://www.ebay.co.uk/itm/222", "price": 42.0, "currency": "GBP",
         "condition": null, "sold": false, "note": "a\u{7}b"}
    ]});
    let (server, _) = fake_api(move |_, _| {
        // The search "showed" the hostile pages too: they are still no pages a browser may follow.
        let search = web_search(
            "raspberry pi 4 price",
            &["https://www.ebay.co.uk/itm/111", "javascript:alert(document.cookie)", "ftp://www.ebay.co.uk/itm/222"],
        );
        let msg = message(&answer.to_string(), &["data:text/html,<script>alert(1)</script>"]);
        ResponseTemplate::new(200).set_body_json(response(vec![search, msg], 1000, 200))
    })
    .await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let id = for_sale(&app).await;
    let (status, report) = app.post(&format!("/api/items/{id}/price"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert_eq!(report["comparables"].as_array().unwrap().len(), 1);
    assert_eq!(
        report["dropped"],
        json!([
            {"url": "", "title": "Click  me", "reason": "url scheme \"javascript\" is not http or https"},
            {"url": "", "title": "Inline", "reason": "url scheme \"data\" is not http or https"},
            {"url": "", "title": "Old mirror", "reason": "url scheme \"ftp\" is not http or https"},
        ])
    );

    // A report stored before the rule, with such URLs among its comparables and its dropped ones.
    use trove_application::ports::{HouseholdRepo, PriceRepo};
    use trove_domain::pricing::{DroppedComparable, PriceReport};
    let store = &app.app.store;
    let household = store.ensure_household("default").await.unwrap();
    let (_, history) = app.get(&format!("/api/items/{id}/prices")).await;
    let mut old: PriceReport = PriceReport {
        item_id: trove_domain::ItemId(id),
        at: chrono::Utc::now() - chrono::Duration::days(30),
        comparables: Vec::new(),
        dropped: vec![DroppedComparable { url: "javascript:alert(1)".into(), title: "t".into(), reason: "r".into() }],
        estimate: None,
        searches: 1,
        source: trove_domain::pricing::PriceSource::Search,
    };
    let kept = trove_domain::pricing::Comparable {
        title: "Sneaky".into(),
        url: "vbscript:msgbox(1)".into(),
        price: trove_domain::money::Money { minor: 100, currency: trove_domain::money::Currency::new("GBP").unwrap() },
        condition: None,
        sold: true,
        note: None,
    };
    old.comparables.push(kept);
    PriceRepo::add(&**store, household, &old).await.unwrap();
    let (status, after) = app.get(&format!("/api/items/{id}/prices")).await;
    assert_eq!(status, StatusCode::OK, "{after}");
    assert_eq!(after["prices"].as_array().unwrap().len(), history["prices"].as_array().unwrap().len() + 1);
    let mut urls = Vec::new();
    for report in after["prices"].as_array().unwrap() {
        for c in report["comparables"].as_array().unwrap().iter().chain(report["dropped"].as_array().unwrap()) {
            urls.push(c["url"].as_str().unwrap().to_owned());
        }
    }
    assert!(urls.iter().all(|u| u.is_empty() || u.starts_with("https://")), "{urls:?}");
    let old_one = &after["prices"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(old_one["comparables"], json!([]));
    assert_eq!(old_one["dropped"][1]["reason"], "url scheme \"vbscript\" is not http or https");
}

on_both!(pricing_streams_its_search_as_server_sent_events);

async fn pricing_streams_its_search_as_server_sent_events(db: Db) {
    let (server, seen) = fake_api(|_, _| price_answer()).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let id = for_sale(&app).await;
    let events = app.post_streamed(&format!("/api/items/{id}/price"), json!({})).await;
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["searching", "result"], "{events:?}");
    assert_eq!(events[0].1["max_searches"], 4);
    let report = &events[1].1;
    assert_eq!(report["comparables"].as_array().unwrap().len(), 3, "{report}");
    assert_eq!(seen.bodies().len(), 1);
    // The streamed report is the one kept in the history, as the plain answer's would be.
    let (_, history) = app.get(&format!("/api/items/{id}/prices")).await;
    assert_eq!(history["prices"][0]["estimate"], report["estimate"], "{history}");

    // An item that cannot be priced: the stream ends with the error the plain answer gives (409), nothing sent.
    let (status, gone) = app.post(&format!("/api/items/{id}/gone"), json!({"reason": "sold"})).await;
    assert_eq!(status, StatusCode::OK, "{gone}");
    let events = app.post_streamed(&format!("/api/items/{id}/price"), json!({})).await;
    let (plain_status, plain) = app.post(&format!("/api/items/{id}/price"), json!({})).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "error");
    assert_eq!(events[0].1["error"]["status"].as_u64(), Some(u64::from(plain_status.as_u16())));
    assert_eq!(events[0].1["error"]["code"], plain["error"]["code"]);
    assert_eq!(seen.bodies().len(), 1);
}
