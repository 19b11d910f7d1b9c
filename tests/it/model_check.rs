//! `trove model check` against fake backends: what each capability's smallest call sends, the table it prints,
//! the ledger it writes, and a backend that is not there or rejects the key, said plainly.

use crate::app::{Db, fresh_database};
use crate::fake_model::{fake_api, function_call, has_tool_outputs, message, response, web_search};
use serde_json::{Value, json};
use std::collections::HashMap;
use trove::check::{self, ModelCheck, Verdict};
use trove_application::ports::{HouseholdRepo, SpendLedger};
use trove_domain::spend::{CallKind, CallOutcome, SpendEntry};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The app on a fresh SQLite store with `settings`, checked; the check and the ledger it wrote.
async fn check_with(settings: &[(&str, String)]) -> (ModelCheck, Vec<SpendEntry>) {
    let mut vars: HashMap<String, String> = settings.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
    vars.insert("DATABASE_URL".into(), fresh_database(Db::Sqlite).await);
    let config = trove::Config::from_vars(|k| vars.get(k).cloned()).expect("config");
    let app = trove::build(&config).await.expect("the app builds");
    let check = check::run(&app, &config).await.expect("the check runs");
    let household = app.store.ensure_household("default").await.unwrap();
    let entries = app.store.entries(household, None, None).await.unwrap();
    (check, entries)
}

/// Answers each smallest call as a provider with every capability would.
fn capable(body: &Value, _: usize) -> ResponseTemplate {
    let ok = message("{\"ok\": true}", &[]);
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let output = if tools.iter().any(|t| t["type"] == "web_search") {
        vec![web_search("Raspberry Pi 4", &["https://shop.example/pi"]), ok]
    } else if !tools.is_empty() && !has_tool_outputs(body) {
        vec![
            json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "enc"}),
            function_call("call_7", "check_number", "{\"n\":7}"),
        ]
    } else {
        vec![ok]
    };
    ResponseTemplate::new(200).set_body_json(response(output, 20, 5))
}

fn settings(server: &MockServer, provider: &str) -> Vec<(&'static str, String)> {
    vec![
        ("MODEL_PROVIDER", provider.to_owned()),
        ("MODEL_API_KEY", "test-key".to_owned()),
        ("MODEL_API_URL", server.uri()),
    ]
}

fn verdicts(check: &ModelCheck) -> Vec<(&str, &Verdict)> {
    check.rows.iter().map(|r| (r.capability, &r.verdict)).collect()
}

#[tokio::test]
async fn every_capability_of_meta_is_checked_and_recorded() {
    let (server, seen) = fake_api(capable).await;
    Mock::given(method("POST"))
        .and(path("/asr/transcribe"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"sessionId": "s", "transcript": "", "audioDurationMs": 1000})),
        )
        .expect(1)
        .mount(&server)
        .await;

    let (check, entries) = check_with(&settings(&server, "meta")).await;

    assert!(check.passed(), "{}", check.render());
    assert_eq!(
        verdicts(&check),
        vec![
            ("structured answer", &Verdict::Works("20 tokens in, 5 out".into())),
            ("strict function tool, call and replay", &Verdict::Works("1 call, replayed".into())),
            ("web search (max_tool_calls 1)", &Verdict::Works("1 search".into())),
            (
                "context for this household's listing",
                &Verdict::Works("this household's listing is short (0 items, 20 tokens read)".into())
            ),
            ("audio transcription (1 s)", &Verdict::Works("1000 ms of audio".into())),
        ]
    );
    let bodies = seen.bodies();
    assert_eq!(bodies.len(), 5);
    // The listing's call carries this household's listing, as `list_inventory` answers a proposal.
    assert!(bodies[4]["input"].to_string().contains("items a build may use"), "{}", bodies[4]);
    // The function call is replayed with its reasoning, and the strict tool asked for the reasoning back.
    assert_eq!(bodies[1]["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(bodies[1]["tools"][0]["strict"], json!(true));
    let replayed: Vec<&str> =
        bodies[2]["input"].as_array().unwrap().iter().filter_map(|i| i["type"].as_str()).collect();
    assert_eq!(replayed, ["reasoning", "function_call", "function_call_output"]);
    assert_eq!(bodies[3]["max_tool_calls"], json!(1));
    let kinds: Vec<(CallKind, CallOutcome)> = entries.iter().map(|e| (e.kind, e.outcome)).collect();
    assert_eq!(
        kinds,
        [
            (CallKind::ReadListing, CallOutcome::Ok),
            (CallKind::Propose, CallOutcome::Ok),
            (CallKind::Propose, CallOutcome::Ok),
            (CallKind::Price, CallOutcome::Ok),
            (CallKind::Propose, CallOutcome::Ok),
            (CallKind::Transcribe, CallOutcome::Ok),
        ]
    );
    // Under one US cent at the default rates.
    assert!(entries.iter().map(|e| e.cost.0).sum::<i64>() < 10_000);
    let shown = check.render();
    assert!(shown.starts_with(&format!("model backend: meta at {}, model muse-spark-1.3\n", server.uri())), "{shown}");
    assert!(shown.ends_with("everything this configuration needs works\n"), "{shown}");
}

#[tokio::test]
async fn a_server_of_your_own_is_not_asked_for_what_it_does_not_offer() {
    let (server, seen) = fake_api(capable).await;

    let (check, entries) =
        check_with(&[("MODEL_PROVIDER", "compatible".to_owned()), ("MODEL_API_URL", server.uri())]).await;

    assert!(check.passed(), "{}", check.render());
    let not_offered: Vec<&str> =
        check.rows.iter().filter(|r| matches!(r.verdict, Verdict::NotOffered(_))).map(|r| r.capability).collect();
    assert_eq!(not_offered, ["web search (max_tool_calls 1)", "audio transcription (1 s)"]);
    let shown = check.render();
    let line = shown.lines().find(|l| l.starts_with("web search")).expect("a web search line");
    assert!(line.contains(" not offered (MODEL_PROVIDER=compatible has no web search) "), "{shown}");
    assert!(line.ends_with(" MODEL_PROVIDER"), "{shown}");
    assert_eq!(seen.bodies().len(), 4);
    assert_eq!(entries.len(), 4);
    // A server of one's own is sent no `store`, `include` or `strict` (off unless switched on).
    for body in seen.bodies() {
        assert!(body.get("store").is_none() && body.get("include").is_none(), "{body}");
        assert!(!body.to_string().contains("\"strict\""), "{body}");
    }
}

#[tokio::test]
async fn a_context_too_small_for_this_households_listing_is_found_and_its_setting_named() {
    // Ollama at its default context: it reads 4,096 tokens of a long prompt and says nothing of the rest.
    let (server, _) = fake_api(|body, n| {
        if body["input"].to_string().contains("items a build may use") {
            ResponseTemplate::new(200).set_body_json(response(vec![message("OK", &[])], 4_096, 1))
        } else {
            capable(body, n)
        }
    })
    .await;
    let mut vars: HashMap<String, String> =
        [("MODEL_PROVIDER", "compatible"), ("MODEL_API_URL", server.uri().as_str())]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
    vars.insert("DATABASE_URL".into(), fresh_database(Db::Sqlite).await);
    let config = trove::Config::from_vars(|k| vars.get(k).cloned()).expect("config");
    let app = trove::build(&config).await.expect("the app builds");
    // A household of 2,000 cells, each its own (the listing groups like items and names alike but their last
    // word): a listing of well over 4,096 tokens.
    let rows: String = (0..2_000)
        .map(|i| format!("Salvaged cell {i} of pack {},lithium_cell,Samsung 25R 2500 mAh,good,keep,,\n", i / 7))
        .collect();
    let dir = std::env::temp_dir().join(format!("trove-context-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("cells.csv");
    std::fs::write(&csv, format!("name,item_type,profile,condition,intent,location,notes\n{rows}")).unwrap();
    trove::exchange::import_file(&app, &csv, "default", false).await.unwrap();

    let check = check::run(&app, &config).await.unwrap();

    assert!(!check.passed(), "{}", check.render());
    let row = check.rows.iter().find(|r| r.capability == "context for this household's listing").unwrap();
    let Verdict::Refused(why) = &row.verdict else { panic!("{row:?}") };
    assert!(why.contains("read 4096 of about") && why.contains("cut without a word"), "{why}");
    assert!(
        row.setting.contains("OLLAMA_CONTEXT_LENGTH") && row.setting.contains("--max-model-len"),
        "{}",
        row.setting
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_refused_capability_fails_the_check_with_the_providers_message() {
    let (server, _) = fake_api(|body, n| {
        if body["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["strict"] == json!(true))) {
            ResponseTemplate::new(400).set_body_json(
                json!({"error": {"message": "Unknown parameter: 'tools[0].strict'.", "type": "invalid_request_error"}}),
            )
        } else {
            capable(body, n)
        }
    })
    .await;
    Mock::given(method("POST"))
        .and(path("/asr/transcribe"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"sessionId": "s", "transcript": ""})))
        .mount(&server)
        .await;

    let (check, entries) = check_with(&settings(&server, "meta")).await;

    assert!(!check.passed());
    let row = &check.rows[1];
    assert_eq!(
        row.verdict,
        Verdict::Refused(
            "the Model API answered 400: invalid_request_error: Unknown parameter: 'tools[0].strict'.".into()
        )
    );
    assert_eq!(row.setting, "MODEL_STRICT_TOOLS");
    assert!(entries.iter().any(|e| e.kind == CallKind::Propose && e.outcome == CallOutcome::Failed), "{entries:?}");
}

#[tokio::test]
async fn a_rejected_key_is_said_plainly_and_stops_the_check() {
    let (server, seen) = fake_api(|_, _| {
        ResponseTemplate::new(401)
            .set_body_json(json!({"error": {"message": "Invalid API key", "type": "authentication_error"}}))
    })
    .await;

    let (check, entries) = check_with(&settings(&server, "meta")).await;

    assert!(!check.passed());
    assert_eq!(
        check.stopped.as_deref(),
        Some("the provider rejected the key (401): authentication_error: Invalid API key; check MODEL_API_KEY")
    );
    assert!(check.rows.is_empty());
    assert_eq!(seen.bodies().len(), 1);
    assert_eq!(entries.iter().map(|e| e.outcome).collect::<Vec<_>>(), [CallOutcome::Failed]);
}

#[tokio::test]
async fn an_unreachable_backend_names_the_address_it_tried() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");

    let (check, _) = check_with(&[("MODEL_API_KEY", "k".to_owned()), ("MODEL_API_URL", url.clone())]).await;

    let stopped = check.stopped.clone().expect("stopped");
    assert!(
        stopped.starts_with(&format!("the model backend could not be reached at {url}: error sending request")),
        "{stopped}"
    );
    assert!(stopped.ends_with("check MODEL_API_URL and that the server runs"), "{stopped}");
    assert!(check.render().contains(&stopped));
    assert!(!check.passed());
}

#[tokio::test]
async fn without_a_model_api_there_is_nothing_to_check() {
    let mut vars = HashMap::new();
    vars.insert("DATABASE_URL".to_owned(), fresh_database(Db::Sqlite).await);
    let config = trove::Config::from_vars(|k| vars.get(k).cloned()).unwrap();
    let app = trove::build(&config).await.unwrap();

    let err = check::run(&app, &config).await.unwrap_err().to_string();

    assert!(err.starts_with("no model api is configured: the local planner answers"), "{err}");
    assert!(err.contains("MODEL_API_KEY"), "{err}");
}
