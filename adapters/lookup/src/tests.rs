//! The providers against local fake servers: what goes over the wire, hits, misses, waits, and every bad answer
//! a provider may give.

use super::*;
use std::time::Duration;
use trove_application::ports::ProductSource;
use trove_domain::code::Code;
use wiremock::matchers::{header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const NUTELLA: &str = "3017620422003";

fn code(raw: &str) -> Code {
    Code::parse(None, raw).unwrap()
}

fn polite() -> Polite {
    Polite::new("ops@example.org").unwrap()
}

fn food(server: &MockServer) -> OpenFacts {
    OpenFacts::food(&server.uri(), "fr", polite())
}

fn product_path() -> wiremock::matchers::PathExactMatcher {
    path(format!("/api/v2/product/{NUTELLA}.json"))
}

fn failed_because(answer: Result<Vec<trove_application::ports::ProductCandidate>, ProviderFailed>, says: &str) {
    match answer {
        Err(ProviderFailed::Failed { provider, reason }) => {
            assert_eq!(provider, "open_food_facts");
            assert!(reason.contains(says), "{reason}");
        }
        other => panic!("a failure saying {says:?} expected, not {other:?}"),
    }
}

#[tokio::test]
async fn an_open_facts_hit_names_the_product_in_the_language_first_with_its_licence() {
    let server = MockServer::start().await;
    let agent = format!("Trove/{} (ops@example.org)", env!("CARGO_PKG_VERSION"));
    Mock::given(method("GET"))
        .and(product_path())
        .and(header("user-agent", agent.as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "code": NUTELLA,
            "status": 1,
            "product": {
                "product_name": "Nutella",
                "product_name_fr": "Nutella pâte à tartiner",
                "brands": "Ferrero, Nutella",
                "categories": "Spreads, Sweet spreads, en:Hazelnut spreads",
                "image_front_url": "https://images.example/nutella.jpg"
            }
        })))
        .expect(1)
        .mount(&server)
        .await;
    let found = food(&server).look_up(&code(NUTELLA)).await.unwrap();
    assert_eq!(found.len(), 1);
    let c = &found[0];
    assert_eq!(c.name, "Nutella pâte à tartiner");
    assert_eq!((c.brand.as_deref(), c.item_type.as_deref()), (Some("Ferrero"), Some("Hazelnut spreads")));
    assert_eq!(c.image_url.as_deref(), Some("https://images.example/nutella.jpg"));
    assert_eq!(c.source_url, format!("{}/product/{NUTELLA}", server.uri()));
    let attribution = c.attribution.as_deref().unwrap();
    assert!(attribution.contains("ODbL") && attribution.contains("CC BY-SA"), "{attribution}");
}

#[tokio::test]
async fn an_open_facts_miss_is_no_candidate_and_no_failure() {
    let server = MockServer::start().await;
    Mock::given(product_path())
        .respond_with(
            ResponseTemplate::new(404)
                .set_body_json(serde_json::json!({"status": 0, "status_verbose": "product not found"})),
        )
        .mount(&server)
        .await;
    assert_eq!(food(&server).look_up(&code(NUTELLA)).await.unwrap(), Vec::new());
}

#[tokio::test]
async fn a_429_with_retry_after_keeps_the_provider_unasked_until_then() {
    let server = MockServer::start().await;
    Mock::given(product_path())
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "120"))
        .expect(1)
        .mount(&server)
        .await;
    let off = food(&server);
    failed_because(off.look_up(&code(NUTELLA)).await, "429");
    // Asked again at once: refused here, the fake asserts it was asked only once.
    match off.look_up(&code(NUTELLA)).await {
        Err(ProviderFailed::Waiting { provider }) => assert_eq!(provider, "open_food_facts"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_rate_limit_of_open_food_facts_is_kept() {
    let server = MockServer::start().await;
    Mock::given(product_path())
        .respond_with(ResponseTemplate::new(404).set_body_json(serde_json::json!({"status": 0})))
        .expect(15)
        .mount(&server)
        .await;
    let off = food(&server);
    for _ in 0..15 {
        off.look_up(&code(NUTELLA)).await.unwrap();
    }
    assert!(matches!(off.look_up(&code(NUTELLA)).await, Err(ProviderFailed::Waiting { .. })));
}

#[tokio::test]
async fn a_slow_answer_is_cut_by_the_budget_and_the_provider_stays_askable() {
    let server = MockServer::start().await;
    Mock::given(product_path())
        .respond_with(
            ResponseTemplate::new(200)
                .set_delay(Duration::from_secs(5))
                .set_body_json(serde_json::json!({"status": 1, "product": {"product_name": "Late"}})),
        )
        .mount(&server)
        .await;
    let off = food(&server);
    let cut = tokio::time::timeout(Duration::from_millis(200), off.look_up(&code(NUTELLA))).await;
    assert!(cut.is_err(), "the budget ends the wait");
    assert!(off.gate.enter(), "a slow answer closes no gate");
}

#[tokio::test]
async fn garbage_html_and_wrong_media_types_are_failures() {
    for (template, says) in [
        (ResponseTemplate::new(200).set_body_raw("<html><body>Cloudflare</body></html>", "text/html"), "not JSON"),
        (ResponseTemplate::new(200).set_body_raw("{\"status\": 1, \"product\": ", "application/json"), "no JSON"),
        (ResponseTemplate::new(500).set_body_raw("oops", "text/plain"), "500"),
    ] {
        let server = MockServer::start().await;
        Mock::given(product_path()).respond_with(template).mount(&server).await;
        failed_because(food(&server).look_up(&code(NUTELLA)).await, says);
    }
}

#[tokio::test]
async fn a_body_over_the_bound_is_a_failure() {
    let server = MockServer::start().await;
    let huge = format!("{{\"status\": 1, \"product\": {{\"product_name\": \"{}\"}}}}", "x".repeat(5 * 1024 * 1024));
    Mock::given(product_path())
        .respond_with(ResponseTemplate::new(200).set_body_raw(huge, "application/json"))
        .mount(&server)
        .await;
    failed_because(food(&server).look_up(&code(NUTELLA)).await, "over 1048576 bytes");
}

#[tokio::test]
async fn a_redirect_to_another_host_is_not_followed() {
    let elsewhere = MockServer::start().await;
    Mock::given(method("GET")).respond_with(ResponseTemplate::new(200)).expect(0).mount(&elsewhere).await;
    let server = MockServer::start().await;
    // The same port, another host name: `localhost` for `127.0.0.1`.
    let other = elsewhere.uri().replace("127.0.0.1", "localhost");
    Mock::given(product_path())
        .respond_with(ResponseTemplate::new(302).insert_header("location", format!("{other}/steal").as_str()))
        .mount(&server)
        .await;
    failed_because(food(&server).look_up(&code(NUTELLA)).await, "redirected");
}

#[tokio::test]
async fn open_library_follows_its_own_redirect_to_the_edition() {
    let server = MockServer::start().await;
    Mock::given(path("/isbn/9780306406157.json"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/books/OL1M.json"))
        .mount(&server)
        .await;
    Mock::given(path("/books/OL1M.json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "title": "Statistical mechanics", "publishers": ["Plenum"]
        })))
        .mount(&server)
        .await;
    let library = OpenLibrary::new(&server.uri(), polite());
    assert!(library.knows(&code("0-306-40615-2")) && !library.knows(&code(NUTELLA)));
    let found = library.look_up(&code("0-306-40615-2")).await.unwrap();
    assert_eq!((found[0].name.as_str(), found[0].brand.as_deref()), ("Statistical mechanics", Some("Plenum")));
    assert_eq!(found[0].item_type.as_deref(), Some("Book"));
}

#[tokio::test]
async fn upcitemdb_is_asked_a_upc_as_its_twelve_digits() {
    let server = MockServer::start().await;
    Mock::given(path("/prod/trial/lookup"))
        .and(query_param("upc", "036000291452"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "code": "OK", "total": 1,
            "items": [{"title": "Kleenex tissues", "brand": "Kleenex", "category": "Health > Tissues", "images": ["https://img.example/k.jpg"]}]
        })))
        .expect(1)
        .mount(&server)
        .await;
    let found = UpcItemDb::new(&server.uri(), polite()).look_up(&code("036000291452")).await.unwrap();
    assert_eq!((found[0].name.as_str(), found[0].item_type.as_deref()), ("Kleenex tissues", Some("Tissues")));
}
