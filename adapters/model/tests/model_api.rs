//! The adapter against a fake Model API (wiremock): what exactly goes over the wire, how answers are read,
//! retries, and error bodies.

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use trove_application::ports::model::{
    ApproximateLocation, Attempt, CallWatch, Capabilities, Citation, InputItem, ModelError, ModelPort, ModelRequest,
    OutputSchema, OutputView, SearchContextSize, SearchPage, Streamed, Tool, Transcript, watching,
};
use trove_domain::spend::{CallKind, Usage};
use trove_model::{ModelApi, ModelApiConfig, Provider};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "sk-test-key";

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Settings against `server`, with waits so short that no test sleeps for long. Answers whole (not streamed),
/// as the tests of the answer's shapes answer; the streaming tests switch it on.
fn config(server: &MockServer) -> ModelApiConfig {
    ModelApiConfig {
        idle_timeout: Duration::from_secs(10),
        stream: false,
        backoff_base: ms(1),
        backoff_cap: ms(20),
        retry_after_cap: Duration::from_secs(5),
        ..ModelApiConfig::new(KEY).with_base_url(format!("{}/v1", server.uri()))
    }
}

fn api(config: ModelApiConfig) -> ModelApi {
    ModelApi::new(config).expect("client")
}

/// A mock of `POST /v1/responses` that checks the bearer key.
fn responses() -> wiremock::MockBuilder {
    Mock::given(method("POST")).and(path("/v1/responses")).and(header("authorization", format!("Bearer {KEY}")))
}

fn json_answer(body: &Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

async fn sent(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.expect("request recording is on")
}

async fn sent_bodies(server: &MockServer) -> Vec<Value> {
    sent(server).await.iter().map(|r| serde_json::from_slice(&r.body).expect("a json body")).collect()
}

fn strict_object(properties: Value, required: Value) -> String {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false}).to_string()
}

fn function_tools() -> Vec<Tool> {
    vec![
        Tool::Function {
            name: "list_inventory".into(),
            description: "every item a build may use".into(),
            parameters: strict_object(json!({}), json!([])),
        },
        Tool::Function {
            name: "item_details".into(),
            description: "one item in full".into(),
            parameters: strict_object(json!({"item_id": {"type": "integer"}}), json!(["item_id"])),
        },
    ]
}

fn proposal_schema() -> OutputSchema {
    OutputSchema {
        name: "ProposalSet".into(),
        schema: strict_object(
            json!({"proposals": {"type": "array", "items": {"type": "string"}}}),
            json!(["proposals"]),
        ),
    }
}

fn proposal_request(input: Vec<InputItem>) -> ModelRequest {
    ModelRequest {
        kind: CallKind::Propose,
        instructions: "choose projects".into(),
        input,
        tools: function_tools(),
        output_schema: Some(proposal_schema()),
        max_output_tokens: 16000,
        max_tool_calls: None,
        include_search_results: false,
        household: None,
    }
}

/// The body the proposal request must produce, with `input` as given.
fn proposal_body(input: Value) -> Value {
    json!({
        "model": "muse-spark-1.3",
        "instructions": "choose projects",
        "input": input,
        "tools": [
            {"type": "function", "name": "list_inventory", "description": "every item a build may use", "strict": true,
             "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}},
            {"type": "function", "name": "item_details", "description": "one item in full", "strict": true,
             "parameters": {"type": "object", "properties": {"item_id": {"type": "integer"}},
                            "required": ["item_id"], "additionalProperties": false}}
        ],
        "text": {"format": {"type": "json_schema", "name": "ProposalSet", "strict": true,
                            "schema": {"type": "object",
                                       "properties": {"proposals": {"type": "array", "items": {"type": "string"}}},
                                       "required": ["proposals"], "additionalProperties": false}}},
        "store": false,
        "max_output_tokens": 16000,
        "include": ["reasoning.encrypted_content"]
    })
}

fn message(text: &str) -> Value {
    json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": []}]})
}

fn completed(output: Value) -> Value {
    json!({"id": "resp_9", "object": "response", "status": "completed", "error": null, "incomplete_details": null,
           "output": output,
           "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 40}, "output_tokens": 7,
                     "output_tokens_details": {"reasoning_tokens": 5}, "total_tokens": 107}})
}

const USAGE: Usage = Usage { input_tokens: 100, cached_tokens: 40, output_tokens: 7, searches: 0, audio_ms: 0 };

#[tokio::test]
async fn the_proposal_request_is_exactly_the_reference_shape() {
    let server = MockServer::start().await;
    responses()
        .and(header("content-type", "application/json"))
        .respond_with(json_answer(&completed(json!([message("{\"proposals\":[]}")]))))
        .expect(1)
        .mount(&server)
        .await;

    let api = api(config(&server));
    let answer = api.respond(&proposal_request(vec![InputItem::UserText("a lamp".into())])).await.unwrap();

    let want = proposal_body(json!([{"role": "user", "content": [{"type": "input_text", "text": "a lamp"}]}]));
    assert_eq!(sent_bodies(&server).await, vec![want]);
    assert_eq!(answer.final_text(), Some("{\"proposals\":[]}"));
    assert_eq!(answer.usage, USAGE);
    assert_eq!(api.model_name(CallKind::Propose), "muse-spark-1.3");
    assert_eq!(api.model_name(CallKind::Transcribe), "muse-voice-transcribe-1.0");
    assert_eq!(api.capabilities(), Capabilities { web_search: true, images: true, audio: true, remote: true });
}

#[tokio::test]
async fn an_image_goes_beside_its_text_and_empty_fields_are_left_out() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).expect(1).mount(&server).await;

    let request = ModelRequest {
        kind: CallKind::ReadLabel,
        instructions: String::new(),
        input: vec![InputItem::UserImage {
            text: "read this label".into(),
            image_data_url: "data:image/jpeg;base64,/9j/4AAQ".into(),
        }],
        tools: Vec::new(),
        output_schema: Some(OutputSchema { name: "Reading".into(), schema: "{\"type\":\"object\"}".into() }),
        max_output_tokens: 8000,
        max_tool_calls: Some(3),
        include_search_results: false,
        household: None,
    };
    api(config(&server)).respond(&request).await.unwrap();

    let want = json!({
        "model": "muse-spark-1.3",
        "input": [{"role": "user", "content": [
            {"type": "input_text", "text": "read this label"},
            {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ", "detail": "auto"}
        ]}],
        "text": {"format": {"type": "json_schema", "name": "Reading", "strict": true, "schema": {"type": "object"}}},
        "store": false,
        "max_output_tokens": 8000,
        "max_tool_calls": 3
    });
    assert_eq!(sent_bodies(&server).await, vec![want]);
}

/// The first answer of the loop, written with odd spacing so a re-serialisation would show.
const STEP_ONE: &str = r#"{"id": "resp_1", "object": "response", "status": "completed", "error": null,
 "incomplete_details": null,
 "output": [
  {"type":"reasoning",  "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB-opaque"},
  {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "list_inventory", "arguments": "{}", "status": "completed"},
  {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "item_details", "arguments": "{\"item_id\":42}",   "status": "completed"}],
 "usage": {"input_tokens": 1830, "input_tokens_details": {"cached_tokens": 0},
           "output_tokens": 412, "output_tokens_details": {"reasoning_tokens": 350}, "total_tokens": 2242}}"#;

const RAW_ITEMS: [&str; 3] = [
    r#"{"type":"reasoning",  "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB-opaque"}"#,
    r#"{"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "list_inventory", "arguments": "{}", "status": "completed"}"#,
    r#"{"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "item_details", "arguments": "{\"item_id\":42}",   "status": "completed"}"#,
];

#[tokio::test]
async fn a_two_step_function_call_exchange_replays_items_verbatim() {
    let server = MockServer::start().await;
    responses()
        .respond_with(ResponseTemplate::new(200).set_body_raw(STEP_ONE, "application/json"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    responses()
        .respond_with(json_answer(&completed(json!([message("{\"proposals\":[\"lamp\"]}")]))))
        .expect(1)
        .mount(&server)
        .await;
    let api = api(config(&server));

    let mut input = vec![InputItem::UserText("a lamp".into())];
    let first = api.respond(&proposal_request(input.clone())).await.unwrap();
    let raws: Vec<&str> = first.output.iter().map(|o| o.raw.0.as_str()).collect();
    assert_eq!(raws, RAW_ITEMS);
    assert_eq!(first.output[0].view, OutputView::Reasoning { replayable: true });
    assert_eq!(
        first.function_calls().collect::<Vec<_>>(),
        vec![("call_a", "list_inventory", "{}"), ("call_b", "item_details", "{\"item_id\":42}")]
    );
    assert_eq!(
        first.usage,
        Usage { input_tokens: 1830, cached_tokens: 0, output_tokens: 412, searches: 0, audio_ms: 0 }
    );

    // What the loop does: every item so far, then one output per call, matched by call_id.
    input.extend(first.output.iter().map(|o| InputItem::Replay(o.raw.clone())));
    input.push(InputItem::FunctionCallOutput { call_id: "call_a".into(), output: "1 lamp shade".into() });
    input.push(InputItem::FunctionCallOutput {
        call_id: "call_b".into(),
        output: "{\"error\": \"no such item\"}".into(),
    });
    let second = api.respond(&proposal_request(input)).await.unwrap();
    assert_eq!(second.final_text(), Some("{\"proposals\":[\"lamp\"]}"));

    let requests = sent(&server).await;
    assert_eq!(requests.len(), 2);
    let replayed = String::from_utf8(requests[1].body.clone()).unwrap();
    for raw in RAW_ITEMS {
        assert!(replayed.contains(raw), "{raw} not replayed verbatim in {replayed}");
    }
    let want = proposal_body(json!([
        {"role": "user", "content": [{"type": "input_text", "text": "a lamp"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB-opaque"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "list_inventory", "arguments": "{}",
         "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "item_details",
         "arguments": "{\"item_id\":42}", "status": "completed"},
        {"type": "function_call_output", "call_id": "call_a", "output": "1 lamp shade"},
        {"type": "function_call_output", "call_id": "call_b", "output": "{\"error\": \"no such item\"}"}
    ]));
    assert_eq!(sent_bodies(&server).await[1], want);
}

#[tokio::test]
async fn reasoning_without_encrypted_content_is_not_replayable() {
    let server = MockServer::start().await;
    let output = json!([
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thinking"}]},
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": null},
        {"type": "reasoning", "id": "rs_3", "summary": [], "encrypted_content": "enc"},
        message("done")
    ]);
    responses().respond_with(json_answer(&completed(output))).expect(1).mount(&server).await;

    let answer = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap();
    let views: Vec<_> = answer.output.iter().map(|o| o.view.clone()).collect();
    assert_eq!(
        views,
        vec![
            OutputView::Reasoning { replayable: false },
            OutputView::Reasoning { replayable: false },
            OutputView::Reasoning { replayable: true },
            OutputView::Message { text: "done".into(), citations: vec![] },
        ]
    );
}

fn location() -> ApproximateLocation {
    ApproximateLocation {
        country: Some("GB".into()),
        region: Some("England".into()),
        city: Some("London".into()),
        timezone: Some("Europe/London".into()),
    }
}

fn price_request(location: Option<ApproximateLocation>) -> ModelRequest {
    ModelRequest {
        kind: CallKind::Price,
        instructions: "price it".into(),
        input: vec![InputItem::UserText("Raspberry Pi 4 4GB".into())],
        tools: vec![Tool::WebSearch { context_size: SearchContextSize::Medium, location }],
        output_schema: Some(OutputSchema { name: "Comparables".into(), schema: "{\"type\":\"object\"}".into() }),
        max_output_tokens: 16000,
        max_tool_calls: Some(4),
        include_search_results: true,
        household: None,
    }
}

fn price_body(tool: Value) -> Value {
    json!({
        "model": "muse-spark-1.3",
        "instructions": "price it",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "Raspberry Pi 4 4GB"}]}],
        "tools": [tool],
        "text": {"format": {"type": "json_schema", "name": "Comparables", "strict": true, "schema": {"type": "object"}}},
        "store": false,
        "max_output_tokens": 16000,
        "max_tool_calls": 4,
        "include": ["web_search_call.results"]
    })
}

#[tokio::test]
async fn the_web_search_request_with_and_without_a_location() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).expect(3).mount(&server).await;
    let api = api(config(&server));

    api.respond(&price_request(Some(location()))).await.unwrap();
    api.respond(&price_request(None)).await.unwrap();
    api.respond(&price_request(Some(ApproximateLocation {
        country: Some("GB".into()),
        region: None,
        city: Some("Leeds".into()),
        timezone: Some(String::new()),
    })))
    .await
    .unwrap();

    let bodies = sent_bodies(&server).await;
    assert_eq!(
        bodies,
        vec![
            price_body(json!({"type": "web_search", "search_context_size": "medium",
                              "user_location": {"type": "approximate", "country": "GB", "region": "England",
                                                "city": "London", "timezone": "Europe/London"}})),
            price_body(json!({"type": "web_search", "search_context_size": "medium"})),
            price_body(json!({"type": "web_search", "search_context_size": "medium",
                              "user_location": {"type": "approximate", "country": "GB", "city": "Leeds"}})),
        ]
    );
}

#[tokio::test]
async fn an_empty_location_is_left_out_entirely() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).expect(1).mount(&server).await;

    api(config(&server)).respond(&price_request(Some(ApproximateLocation::default()))).await.unwrap();

    assert_eq!(
        sent_bodies(&server).await,
        vec![price_body(json!({"type": "web_search", "search_context_size": "medium"}))]
    );
}

#[tokio::test]
async fn strict_and_max_tool_calls_can_be_switched_off() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).expect(1).mount(&server).await;
    let config = ModelApiConfig { strict_tools: false, send_max_tool_calls: false, ..config(&server) };

    let mut request = price_request(None);
    request.tools.extend(function_tools().into_iter().take(1));
    api(config).respond(&request).await.unwrap();

    let mut want = price_body(json!({"type": "web_search", "search_context_size": "medium"}));
    want["tools"] = json!([
        {"type": "web_search", "search_context_size": "medium"},
        {"type": "function", "name": "list_inventory", "description": "every item a build may use",
         "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}}
    ]);
    want.as_object_mut().unwrap().remove("max_tool_calls");
    want["include"] = json!(["web_search_call.results", "reasoning.encrypted_content"]);
    assert_eq!(sent_bodies(&server).await, vec![want]);
}

#[tokio::test]
async fn searches_are_counted_and_pages_and_citations_read() {
    let server = MockServer::start().await;
    let output = json!([
        {"type": "web_search_call", "id": "ws_1", "status": "completed",
         "action": {"type": "search", "query": "used Raspberry Pi 4 4GB price",
                    "sources": [{"type": "url", "url": "https://a.example/pi"}, {"type": "url"}]},
         "results": [{"title": "Pi 4 sold", "url": "https://b.example/item/1", "snippet": "GBP 35"},
                     {"url": "https://c.example/x"}]},
        {"type": "web_search_call", "id": "ws_2", "status": "completed",
         "action": {"type": "open_page", "url": "https://b.example/item/1"}},
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [
            {"type": "output_text", "text": "{\"comparables\":", "annotations": [
                {"type": "url_citation", "url": "https://b.example/item/1", "title": "Pi 4 sold",
                 "start_index": 0, "end_index": 5}]},
            {"type": "output_text", "text": "[]}", "annotations": [
                {"type": "url_citation", "url": "https://d.example/", "start_index": 0, "end_index": 2}]}
        ]}
    ]);
    responses().respond_with(json_answer(&completed(output))).expect(1).mount(&server).await;

    let answer = api(config(&server)).respond(&price_request(Some(location()))).await.unwrap();

    assert_eq!(answer.usage, Usage { searches: 1, ..USAGE });
    let views: Vec<_> = answer.output.iter().map(|o| o.view.clone()).collect();
    assert_eq!(
        views,
        vec![
            OutputView::WebSearchCall {
                action: Some("search".into()),
                query: Some("used Raspberry Pi 4 4GB price".into()),
                sources: vec![SearchPage { url: "https://a.example/pi".into(), title: None }],
                results: vec![
                    SearchPage { url: "https://b.example/item/1".into(), title: Some("Pi 4 sold".into()) },
                    SearchPage { url: "https://c.example/x".into(), title: None },
                ],
            },
            OutputView::WebSearchCall {
                action: Some("open_page".into()),
                query: None,
                sources: vec![],
                results: vec![]
            },
            OutputView::Message {
                text: "{\"comparables\":[]}".into(),
                citations: vec![
                    Citation { url: "https://b.example/item/1".into(), title: Some("Pi 4 sold".into()) },
                    Citation { url: "https://d.example/".into(), title: None },
                ],
            },
        ]
    );
}

#[tokio::test]
async fn incomplete_failed_and_refused_answers_keep_their_usage() {
    let server = MockServer::start().await;
    let mut incomplete = completed(json!([]));
    incomplete["status"] = json!("incomplete");
    incomplete["incomplete_details"] = json!({"reason": "max_output_tokens"});
    let mut failed = completed(json!([]));
    failed["status"] = json!("failed");
    // A code of the request's making: not retried (`server_error` is, see below).
    failed["error"] = json!({"code": "invalid_prompt", "message": "the model crashed"});
    let mut failed_without_code = completed(json!([]));
    failed_without_code["status"] = json!("failed");
    failed_without_code["error"] = json!({"code": null, "message": "no capacity"});
    let refused = completed(json!([
        {"type": "message", "id": "msg_1", "role": "assistant",
         "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    ]));
    for body in [&incomplete, &failed, &failed_without_code, &refused] {
        responses().respond_with(json_answer(body)).up_to_n_times(1).expect(1).mount(&server).await;
    }
    let api = api(config(&server));

    let mut errors = Vec::new();
    for _ in 0..4 {
        errors.push(api.respond(&proposal_request(vec![])).await.unwrap_err());
    }

    assert_eq!(
        errors,
        vec![
            ModelError::Incomplete { reason: "max_output_tokens".into(), usage: USAGE },
            ModelError::Failed { message: "the model crashed (invalid_prompt)".into(), usage: USAGE },
            ModelError::Failed { message: "no capacity".into(), usage: USAGE },
            ModelError::Refused { refusal: "I can't help with that.".into(), usage: USAGE },
        ]
    );
    assert_eq!(errors[0].usage(), Some(USAGE));
}

#[tokio::test]
async fn an_unreadable_answer_is_a_bad_response() {
    let server = MockServer::start().await;
    responses()
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>oops</html>"))
        .expect(1)
        .mount(&server)
        .await;

    let err = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap_err();

    assert!(
        matches!(&err, ModelError::BadResponse { message: m, .. } if m.starts_with("the response is not the expected json")),
        "{err:?}"
    );
}

fn error_body(message: &str, kind: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_out_then_retried() {
    let server = MockServer::start().await;
    responses()
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_json(error_body("Rate limit reached", "rate_limit_error")),
        )
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    responses().respond_with(json_answer(&completed(json!([message("ok")])))).expect(1).mount(&server).await;

    let started = Instant::now();
    let answer = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap();

    assert_eq!(answer.final_text(), Some("ok"));
    assert!(started.elapsed() >= Duration::from_secs(1), "retried after {:?}", started.elapsed());
    assert_eq!(sent(&server).await.len(), 2);
}

#[tokio::test]
async fn a_retry_after_beyond_what_a_request_waits_is_passed_on_never_cut_short() {
    let server = MockServer::start().await;
    responses()
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "3600")
                .set_body_json(error_body("Rate limit reached", "rate_limit_error")),
        )
        .expect(1)
        .mount(&server)
        .await;
    let config = ModelApiConfig { retry_after_cap: ms(10), ..config(&server) };

    // A request that waited the hour would hang here: the bound turns that into a failure.
    let err = tokio::time::timeout(Duration::from_secs(30), api(config).respond(&proposal_request(vec![])))
        .await
        .expect("no wait at all")
        .unwrap_err();

    assert_eq!(
        err,
        ModelError::RateLimited {
            message: "rate_limit_error: Rate limit reached".into(),
            retry_after: Some(Duration::from_secs(3600))
        },
        "the provider's wait, as it asked"
    );
    assert_eq!(sent(&server).await.len(), 1, "not tried again early");
}

#[tokio::test]
async fn a_429_that_outlasts_the_retries_is_rate_limiting_not_a_broken_call() {
    let server = MockServer::start().await;
    responses()
        .respond_with(ResponseTemplate::new(429).set_body_json(error_body("Rate limit reached", "rate_limit_error")))
        .expect(3)
        .mount(&server)
        .await;
    let config = ModelApiConfig { max_attempts: 3, ..config(&server) };

    let err = api(config).respond(&proposal_request(vec![])).await.unwrap_err();

    assert_eq!(
        err,
        ModelError::RateLimited { message: "rate_limit_error: Rate limit reached".into(), retry_after: None }
    );
}

#[tokio::test]
async fn an_account_out_of_quota_is_known_by_its_type_when_its_code_is_null() {
    let server = MockServer::start().await;
    responses()
        .respond_with(
            ResponseTemplate::new(429)
                .set_body_json(error_body("You exceeded your current quota", "insufficient_quota")),
        )
        .expect(1)
        .mount(&server)
        .await;

    let err = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap_err();

    let ModelError::Http { status: 429, message } = &err else { panic!("{err:?}") };
    assert!(message.starts_with("the provider account has no quota left"), "{message}");
    assert_eq!(sent(&server).await.len(), 1, "never retried");
}

#[tokio::test]
async fn a_503_is_retried_until_it_succeeds() {
    let server = MockServer::start().await;
    responses()
        .respond_with(ResponseTemplate::new(503).set_body_json(error_body("overloaded", "server_error")))
        .up_to_n_times(2)
        .expect(2)
        .mount(&server)
        .await;
    responses().respond_with(json_answer(&completed(json!([message("ok")])))).expect(1).mount(&server).await;

    let answer = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap();

    assert_eq!(answer.final_text(), Some("ok"));
}

#[tokio::test]
async fn server_errors_give_up_after_max_attempts() {
    let server = MockServer::start().await;
    responses()
        .respond_with(ResponseTemplate::new(500).set_body_json(error_body("The server had an error", "server_error")))
        .expect(3)
        .mount(&server)
        .await;
    let config = ModelApiConfig { max_attempts: 3, ..config(&server) };

    let err = api(config).respond(&proposal_request(vec![])).await.unwrap_err();

    assert_eq!(err, ModelError::Http { status: 500, message: "server_error: The server had an error".into() });
}

#[tokio::test]
async fn a_408_is_retried() {
    let server = MockServer::start().await;
    responses().respond_with(ResponseTemplate::new(408)).up_to_n_times(1).expect(1).mount(&server).await;
    responses().respond_with(json_answer(&completed(json!([message("ok")])))).expect(1).mount(&server).await;

    let answer = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap();

    assert_eq!(answer.final_text(), Some("ok"));
}

#[tokio::test]
async fn a_400_is_never_retried_and_its_body_is_read() {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": "Unknown parameter: 'response_format'.", "type": "invalid_request_error",
                                "param": "response_format", "code": "unknown_parameter"}});
    responses().respond_with(ResponseTemplate::new(400).set_body_json(body)).expect(1).mount(&server).await;

    let err = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap_err();

    assert_eq!(
        err,
        ModelError::Http {
            status: 400,
            message: "invalid_request_error: Unknown parameter: 'response_format'.".into()
        }
    );
}

#[tokio::test]
async fn other_client_errors_are_never_retried() {
    for (status, body, want) in [
        (401, error_body("Invalid API key", "authentication_error"), "authentication_error: Invalid API key"),
        (403, error_body("Model not allowed", "permission_error"), "permission_error: Model not allowed"),
        (404, json!({"error": {"message": "No such route", "type": null}}), "No such route"),
        (422, json!({"detail": "x"}), "{\"detail\":\"x\"}"),
    ] {
        let server = MockServer::start().await;
        responses().respond_with(ResponseTemplate::new(status).set_body_json(body)).expect(1).mount(&server).await;

        let err = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap_err();

        assert_eq!(err, ModelError::Http { status, message: want.into() }, "{status}");
        server.verify().await;
    }
}

#[tokio::test]
async fn a_stalled_answer_is_sent_again_once_then_unanswered_with_its_estimate() {
    let server = MockServer::start().await;
    responses()
        .respond_with(json_answer(&completed(json!([message("late")]))).set_delay(Duration::from_secs(3)))
        .expect(2)
        .mount(&server)
        .await;
    let config = ModelApiConfig { idle_timeout: Duration::from_secs(1), max_attempts: 5, ..config(&server) };
    let request = proposal_request(vec![]);
    let watch = Arc::new(Watched::default());

    let err = watching(watch.clone(), api(config).respond(&request)).await.unwrap_err();

    // Sent twice, not five times: what reached the provider is retried once.
    let estimate = Usage { input_tokens: request.estimated_input_tokens(), ..Usage::default() };
    assert_eq!(err, ModelError::Unanswered { reason: "no byte came for 1s (after 2 attempts)".into(), estimate });
    assert_eq!(err.usage(), Some(estimate));
    let retried = watch.retried.lock().unwrap().clone();
    assert_eq!(retried.len(), 1, "the first attempt is told to the ledger, the last is the error");
    assert_eq!((retried[0].usage, retried[0].estimated), (estimate, true));
    assert!(estimate.input_tokens > 100, "{estimate:?}");
}

#[tokio::test]
async fn a_timeout_then_an_answer_succeeds() {
    let server = MockServer::start().await;
    responses()
        .respond_with(json_answer(&completed(json!([message("late")]))).set_delay(Duration::from_secs(3)))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    responses().respond_with(json_answer(&completed(json!([message("ok")])))).expect(1).mount(&server).await;
    let config = ModelApiConfig { idle_timeout: Duration::from_secs(1), ..config(&server) };

    let answer = api(config).respond(&proposal_request(vec![])).await.unwrap();

    assert_eq!(answer.final_text(), Some("ok"));
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_unreachable() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = ModelApiConfig {
        max_attempts: 2,
        backoff_base: ms(1),
        backoff_cap: ms(5),
        ..ModelApiConfig::new(KEY).with_base_url(format!("http://127.0.0.1:{port}/v1"))
    };

    let err = api(config).respond(&proposal_request(vec![])).await.unwrap_err();

    match err {
        ModelError::Unreachable(reason) => {
            assert!(reason.starts_with("error sending request"), "{reason}");
            assert!(reason.ends_with("(after 2 attempts)"), "{reason}");
        }
        other => panic!("expected unreachable, got {other:?}"),
    }
}

/// The parts of a multipart body: each part's header lines (lower-cased) and its bytes.
fn multipart_parts(request: &Request) -> Vec<(String, Vec<u8>)> {
    let content_type = request.headers.get("content-type").unwrap().to_str().unwrap().to_owned();
    let boundary = content_type.split("boundary=").nth(1).expect("a boundary").trim_matches('"');
    let delimiter = format!("--{boundary}").into_bytes();
    let body = &request.body;
    let mut starts = Vec::new();
    let mut i = 0;
    while i + delimiter.len() <= body.len() {
        if body[i..].starts_with(&delimiter) {
            starts.push(i);
            i += delimiter.len();
        } else {
            i += 1;
        }
    }
    starts
        .windows(2)
        .map(|w| {
            let part = &body[w[0] + delimiter.len()..w[1]];
            let part = part.strip_prefix(b"\r\n").unwrap().strip_suffix(b"\r\n").unwrap();
            let split = part.windows(4).position(|x| x == b"\r\n\r\n").expect("part headers end");
            (String::from_utf8(part[..split].to_vec()).unwrap().to_lowercase(), part[split + 4..].to_vec())
        })
        .collect()
}

/// A WAV of `seconds` of silence: 16-bit PCM, `channels` channels at `rate` Hz, format tag `tag`.
fn wav_of(tag: u16, channels: u16, rate: u32, seconds: u32) -> Vec<u8> {
    let data_len = rate * seconds * u32::from(channels) * 2;
    let mut w = b"RIFF".to_vec();
    w.extend_from_slice(&(36 + data_len).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt \x10\x00\x00\x00");
    w.extend_from_slice(&tag.to_le_bytes());
    w.extend_from_slice(&channels.to_le_bytes());
    w.extend_from_slice(&rate.to_le_bytes());
    w.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
    w.extend_from_slice(&(channels * 2).to_le_bytes());
    w.extend_from_slice(&16u16.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&data_len.to_le_bytes());
    w.resize(w.len() + data_len as usize, 0);
    w
}

/// One second of silence as the transcription takes it: sent as it is.
fn wav() -> Vec<u8> {
    wav_of(1, 1, 16_000, 1)
}

fn transcribe_mock() -> wiremock::MockBuilder {
    Mock::given(method("POST")).and(path("/v1/asr/transcribe")).and(header("authorization", format!("Bearer {KEY}")))
}

#[tokio::test]
async fn transcription_sends_both_parts_and_reads_the_transcript() {
    let server = MockServer::start().await;
    let answer = json!({"sessionId": "s-1", "transcript": "a ten amp hour battery", "audioDurationMs": 4250,
                        "turns": [{"text": "a ten amp hour battery"}]});
    transcribe_mock().respond_with(json_answer(&answer)).expect(1).mount(&server).await;

    let transcript = api(config(&server)).transcribe(&wav()).await.unwrap();

    assert_eq!(transcript, Transcript { text: "a ten amp hour battery".into(), audio_ms: 4250 });
    let requests = sent(&server).await;
    assert!(
        requests[0]
            .headers
            .get("content-type")
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("multipart/form-data; boundary="),
        "{:?}",
        requests[0].headers
    );
    let parts = multipart_parts(&requests[0]);
    assert_eq!(parts.len(), 2);
    let (request_headers, request_json) = &parts[0];
    assert!(request_headers.contains("content-disposition: form-data; name=\"request\""), "{request_headers}");
    assert!(request_headers.contains("content-type: application/json"), "{request_headers}");
    assert_eq!(
        serde_json::from_slice::<Value>(request_json).unwrap(),
        json!({"model": "muse-voice-transcribe-1.0", "audioEncoding": "WAV", "mode": "PUSH_TO_TALK"})
    );
    let (audio_headers, audio) = &parts[1];
    assert!(
        audio_headers.contains("content-disposition: form-data; name=\"audio\"; filename=\"audio.wav\""),
        "{audio_headers}"
    );
    assert!(audio_headers.contains("content-type: audio/wav"), "{audio_headers}");
    assert_eq!(audio.as_slice(), wav().as_slice());
}

#[tokio::test]
async fn audio_the_transcription_does_not_take_is_converted_or_refused_before_sending() {
    let server = MockServer::start().await;
    let answer = json!({"sessionId": "s-4", "transcript": "a drill", "turns": []});
    transcribe_mock().respond_with(json_answer(&answer)).expect(1).mount(&server).await;
    let api = api(config(&server));

    // Two seconds of CD-rate stereo go out as mono 16 kHz, and with no duration in the answer, its length counts.
    let transcript = api.transcribe(&wav_of(1, 2, 44_100, 2)).await.unwrap();
    assert_eq!(transcript, Transcript { text: "a drill".into(), audio_ms: 2000 });
    let audio = multipart_parts(&sent(&server).await[0])[1].1.clone();
    let out = trove_model::wav::Wav::read(&audio).unwrap();
    assert!(out.is_sendable(), "{out:?}");
    assert_eq!((out.channels, out.sample_rate, out.duration_ms()), (1, 16_000, 2000));

    // A compressed WAV is refused with what to do; nothing more is sent.
    let err = api.transcribe(&wav_of(0x55, 1, 16_000, 1)).await.unwrap_err();
    assert_eq!(
        err,
        ModelError::BadInput(
            "the WAV file is compressed (format 0x0055); save the voice note as uncompressed PCM WAV".into()
        )
    );
    assert_eq!(sent(&server).await.len(), 1);
}

#[tokio::test]
async fn transcription_is_retried_with_the_whole_audio_and_errors_are_mapped() {
    let server = MockServer::start().await;
    transcribe_mock().respond_with(ResponseTemplate::new(502)).up_to_n_times(1).expect(1).mount(&server).await;
    transcribe_mock()
        .respond_with(json_answer(&json!({"sessionId": "s-2", "transcript": "", "turns": []})))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    transcribe_mock()
        .respond_with(ResponseTemplate::new(413).set_body_json(error_body("audio too long", "invalid_request_error")))
        .expect(1)
        .mount(&server)
        .await;
    let api = api(config(&server));

    let transcript = api.transcribe(&wav()).await.unwrap();
    let err = api.transcribe(&wav()).await.unwrap_err();

    assert_eq!(transcript, Transcript { text: String::new(), audio_ms: 1000 });
    assert_eq!(err, ModelError::Http { status: 413, message: "invalid_request_error: audio too long".into() });
    let requests = sent(&server).await;
    assert_eq!(requests.len(), 3);
    assert_eq!(multipart_parts(&requests[1])[1].1.as_slice(), wav().as_slice());
}

#[tokio::test]
async fn an_unreadable_transcription_is_a_bad_response() {
    let server = MockServer::start().await;
    transcribe_mock().respond_with(json_answer(&json!({"sessionId": "s-3"}))).expect(1).mount(&server).await;

    let err = api(config(&server)).transcribe(&wav()).await.unwrap_err();

    assert!(
        matches!(&err, ModelError::BadResponse { message: m, .. } if m.starts_with("the transcription is not the expected json")),
        "{err:?}"
    );
    // The audio went out and was billed: its length is the usage.
    assert_eq!(err.usage(), Some(Usage { audio_ms: 1000, ..Usage::default() }));
}

// What a read against OpenAI's published OpenAPI document found.

#[tokio::test]
async fn reasoning_is_asked_for_and_replayed_or_dropped_by_the_setting() {
    let server = MockServer::start().await;
    let reasoned = completed(json!([{"type": "reasoning", "id": "rs_9", "summary": []}, message("{}")]));
    responses().respond_with(json_answer(&reasoned)).expect(4).mount(&server).await;
    let replayed = || {
        let mut input = vec![InputItem::UserText("a lamp".into())];
        input.extend(
            RAW_ITEMS.iter().map(|raw| InputItem::Replay(trove_application::ports::model::RawJson((*raw).into()))),
        );
        input.push(InputItem::FunctionCallOutput { call_id: "call_a".into(), output: "1 lamp shade".into() });
        input.push(InputItem::FunctionCallOutput { call_id: "call_b".into(), output: "{}".into() });
        proposal_request(input)
    };

    // On: the encrypted content is asked for and the reasoning item travels with its function calls.
    let on = api(config(&server)).respond(&replayed()).await.unwrap();
    // Off (a provider that refuses the include value) for a reasoning model on a provider that keeps responses:
    // nothing asked for, the response stored, and reasoning items replayed by id, never a function call alone.
    let stored = api(ModelApiConfig { replay_reasoning: false, ..config(&server) }).respond(&replayed()).await.unwrap();
    // Off on a server of one's own, which keeps nothing: reasoning items are dropped.
    let own = ModelApiConfig {
        replay_reasoning: false,
        ..ModelApiConfig::for_provider(Provider::Compatible, KEY).with_base_url(format!("{}/v1", server.uri()))
    };
    api(own).respond(&replayed()).await.unwrap();
    // A model that does not reason (gpt-4.1) is never asked for reasoning (it refuses the include), and keeps
    // nothing.
    let plain = ModelApiConfig {
        model: "gpt-4.1".into(),
        replay_reasoning: false,
        ..ModelApiConfig::for_provider(Provider::OpenAi, KEY).with_base_url(format!("{}/v1", server.uri()))
    };
    api(plain).respond(&replayed()).await.unwrap();

    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies[0]["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(bodies[0]["store"], json!(false));
    let types = |body: &Value| -> Vec<String> {
        body["input"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap_or("message").to_owned()).collect()
    };
    let with_reasoning =
        ["message", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output"];
    let without = ["message", "function_call", "function_call", "function_call_output", "function_call_output"];
    assert_eq!(types(&bodies[0]), with_reasoning);
    assert_eq!((bodies[1].get("include"), &bodies[1]["store"]), (None, &json!(true)));
    assert_eq!(types(&bodies[1]), with_reasoning);
    assert_eq!((bodies[2].get("include"), bodies[2].get("store")), (None, None));
    assert_eq!(types(&bodies[2]), without);
    assert_eq!((bodies[3].get("include"), &bodies[3]["store"]), (None, &json!(false)));
    // An answer's reasoning without encrypted content is replayable only where the provider stored it.
    let reasoning = |r: &trove_application::ports::model::ModelResponse| {
        r.output.iter().find_map(|o| match o.view {
            OutputView::Reasoning { replayable } => Some(replayable),
            _ => None,
        })
    };
    assert_eq!((reasoning(&on), reasoning(&stored)), (Some(false), Some(true)));
    // A request without function tools replays nothing, so it asks for no reasoning either.
    let reading = ModelRequest { tools: Vec::new(), ..proposal_request(vec![InputItem::UserText("x".into())]) };
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).expect(1).mount(&server).await;
    api(config(&server)).respond(&reading).await.unwrap();
    assert_eq!(sent_bodies(&server).await[0].get("include"), None);
}

#[tokio::test]
async fn strict_off_is_sent_as_false_where_the_profile_takes_it() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).expect(2).mount(&server).await;
    let openai = ModelApiConfig {
        strict_tools: false,
        ..ModelApiConfig::for_provider(Provider::OpenAi, KEY).with_base_url(format!("{}/v1", server.uri()))
    };
    let meta = ModelApiConfig { strict_tools: false, ..config(&server) };

    api(openai).respond(&proposal_request(vec![])).await.unwrap();
    api(meta).respond(&proposal_request(vec![])).await.unwrap();

    let bodies = sent_bodies(&server).await;
    let strict =
        |body: &Value| body["tools"].as_array().unwrap().iter().map(|t| t.get("strict").cloned()).collect::<Vec<_>>();
    assert_eq!(strict(&bodies[0]), vec![Some(json!(false)), Some(json!(false))]);
    // Meta's `strict` is unconfirmed and any unknown field is a 400: switched off, it is left out.
    assert_eq!(strict(&bodies[1]), vec![None, None]);
    assert_eq!(bodies[0]["model"], "gpt-5-mini");
}

#[tokio::test]
async fn a_429_for_an_account_out_of_quota_is_not_retried_and_says_so() {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                                "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}});
    responses().respond_with(ResponseTemplate::new(429).set_body_json(body)).expect(1).mount(&server).await;

    let err = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap_err();

    let ModelError::Http { status: 429, message } = &err else { panic!("{err:?}") };
    assert!(
        message.starts_with("the provider account has no quota left (insufficient_quota: You exceeded"),
        "{message}"
    );
    assert!(
        message.ends_with("check the plan, credit and billing of your account with the model provider"),
        "{message}"
    );
    assert_eq!(sent(&server).await.len(), 1);
}

fn failed_answer(code: &str) -> Value {
    let mut failed = completed(json!([]));
    failed["status"] = json!("failed");
    failed["error"] = json!({"code": code, "message": "try again later"});
    failed
}

#[tokio::test]
async fn a_failed_response_of_the_providers_making_is_retried() {
    for code in ["server_error", "rate_limit_exceeded"] {
        let server = MockServer::start().await;
        responses().respond_with(json_answer(&failed_answer(code))).up_to_n_times(1).expect(1).mount(&server).await;
        responses().respond_with(json_answer(&completed(json!([message("ok")])))).expect(1).mount(&server).await;

        let answer = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap();

        assert_eq!(answer.final_text(), Some("ok"), "{code}");
        assert_eq!(sent(&server).await.len(), 2, "{code}");
    }
}

#[tokio::test]
async fn a_failed_response_is_retried_once_then_read_as_failed() {
    let server = MockServer::start().await;
    // A failed answer was billed: it is sent again once, however many attempts errors of status may take.
    responses().respond_with(json_answer(&failed_answer("server_error"))).expect(2).mount(&server).await;
    let config = ModelApiConfig { max_attempts: 5, ..config(&server) };
    let watch = Arc::new(Watched::default());

    let err = watching(watch.clone(), api(config).respond(&proposal_request(vec![]))).await.unwrap_err();

    assert_eq!(err, ModelError::Failed { message: "try again later (server_error)".into(), usage: USAGE });
    let retried = watch.retried.lock().unwrap().clone();
    assert_eq!(retried.iter().map(|a| (a.usage, a.estimated)).collect::<Vec<_>>(), vec![(USAGE, false)]);
}

#[tokio::test]
async fn a_failed_response_of_the_requests_making_is_not_retried() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&failed_answer("invalid_prompt"))).expect(1).mount(&server).await;

    let err = api(config(&server)).respond(&proposal_request(vec![])).await.unwrap_err();

    assert_eq!(err, ModelError::Failed { message: "try again later (invalid_prompt)".into(), usage: USAGE });
}

// Provider profiles: fakes that behave as each provider documents, and Trove sending each only what it takes.

/// A fake provider: answers 400 with `refuse(body)`'s message when it refuses the request, else `answer`.
struct Provider400<F> {
    refuse: F,
    answer: Value,
}

impl<F: Fn(&Value) -> Option<String> + Send + Sync> wiremock::Respond for Provider400<F> {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        match (self.refuse)(&body) {
            Some(message) => ResponseTemplate::new(400)
                .set_body_json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
            None => json_answer(&self.answer),
        }
    }
}

/// The first key of `value` (an object) outside `known`.
fn unknown_key(value: &Value, known: &[&str]) -> Option<String> {
    value.as_object()?.keys().find(|k| !known.contains(&k.as_str())).cloned()
}

/// Meta: any unknown or unsupported field is a 400. `stream` is the Responses surface's own (the answer as
/// server-sent events); should the service refuse it, `MODEL_STREAM=false` leaves it out.
fn meta_refuses(body: &Value) -> Option<String> {
    const TOP: &[&str] = &[
        "model",
        "instructions",
        "input",
        "tools",
        "text",
        "store",
        "max_output_tokens",
        "max_tool_calls",
        "include",
        "stream",
    ];
    const TOOL: &[&str] =
        &["type", "name", "description", "strict", "parameters", "search_context_size", "user_location"];
    const PART: &[&str] = &["type", "text", "image_url", "detail"];
    const INCLUDE: &[&str] = &["web_search_call.results", "reasoning.encrypted_content"];
    let unknown = unknown_key(body, TOP)
        .or_else(|| body["tools"].as_array().into_iter().flatten().find_map(|t| unknown_key(t, TOOL)))
        .or_else(|| {
            body["input"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|i| i["content"].as_array().into_iter().flatten())
                .find_map(|p| unknown_key(p, PART))
        })
        .or_else(|| {
            body["include"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .find(|v| !INCLUDE.contains(v))
                .map(str::to_owned)
        });
    unknown.map(|k| format!("Unknown parameter: '{k}'."))
}

/// vLLM: `include` takes only a fixed list, without `web_search_call.results`.
fn vllm_refuses(body: &Value) -> Option<String> {
    const INCLUDE: &[&str] = &[
        "code_interpreter_call.outputs",
        "computer_call_output.output.image_url",
        "file_search_call.results",
        "message.input_image.image_url",
        "message.output_text.logprobs",
        "reasoning.encrypted_content",
    ];
    let bad =
        body["include"].as_array().into_iter().flatten().filter_map(Value::as_str).find(|v| !INCLUDE.contains(v))?;
    Some(format!("1 validation error for ResponsesRequest include: input should be one of {INCLUDE:?}, got '{bad}'"))
}

/// Ollama: only message, function_call, function_call_output and reasoning input items.
fn ollama_refuses(body: &Value) -> Option<String> {
    let bad = body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i.get("type").and_then(Value::as_str))
        .find(|t| !["message", "function_call", "function_call_output", "reasoning"].contains(t))?;
    Some(format!("unsupported input item type '{bad}'"))
}

fn image_request() -> ModelRequest {
    ModelRequest {
        kind: CallKind::ReadLabel,
        instructions: "read".into(),
        input: vec![InputItem::UserImage { text: "label".into(), image_data_url: "data:image/png;base64,AA==".into() }],
        tools: Vec::new(),
        output_schema: Some(OutputSchema { name: "Reading".into(), schema: "{\"type\":\"object\"}".into() }),
        max_output_tokens: 8000,
        max_tool_calls: None,
        include_search_results: false,
        household: None,
    }
}

/// The two steps of a tool loop: a first call, then its items replayed with the outputs.
fn loop_steps() -> [ModelRequest; 2] {
    let mut input = vec![InputItem::UserText("a lamp".into())];
    let first = proposal_request(input.clone());
    input
        .extend(RAW_ITEMS.iter().map(|raw| InputItem::Replay(trove_application::ports::model::RawJson((*raw).into()))));
    input.push(InputItem::FunctionCallOutput { call_id: "call_a".into(), output: "1 lamp shade".into() });
    input.push(InputItem::FunctionCallOutput { call_id: "call_b".into(), output: "{}".into() });
    [first, proposal_request(input)]
}

async fn provider(refuse: fn(&Value) -> Option<String>, answer: Value) -> MockServer {
    let server = MockServer::start().await;
    responses().respond_with(Provider400 { refuse, answer }).mount(&server).await;
    server
}

fn with_provider(p: Provider, server: &MockServer) -> ModelApiConfig {
    ModelApiConfig {
        backoff_base: ms(1),
        backoff_cap: ms(20),
        ..ModelApiConfig::for_provider(p, KEY).with_base_url(format!("{}/v1", server.uri()))
    }
}

#[tokio::test]
async fn the_fakes_refuse_what_their_providers_refuse() {
    // The emulations themselves bite: what Trove must never send is a 400 from each.
    assert!(meta_refuses(&json!({"model": "m", "response_format": {}})).is_some());
    assert!(
        meta_refuses(&json!({"model": "m", "tools": [{"type": "function", "name": "t", "defer_loading": true}]}))
            .is_some()
    );
    assert!(meta_refuses(&json!({"include": ["message.output_text.logprobs"]})).is_some());
    assert!(vllm_refuses(&json!({"include": ["web_search_call.results"]})).is_some());
    assert!(ollama_refuses(&json!({"input": [{"type": "web_search_call", "id": "ws_1"}]})).is_some());

    let server = provider(vllm_refuses, completed(json!([message("{}")]))).await;
    let err = api(with_provider(Provider::Meta, &server)).respond(&price_request(None)).await.unwrap_err();
    assert!(matches!(err, ModelError::Http { status: 400, .. }), "{err:?}");
}

#[tokio::test]
async fn meta_is_sent_no_field_it_does_not_know_whatever_the_switches() {
    let server = provider(meta_refuses, completed(json!([message("{}")]))).await;
    let configs = [
        with_provider(Provider::Meta, &server),
        ModelApiConfig { strict_tools: false, send_max_tool_calls: false, ..with_provider(Provider::Meta, &server) },
        ModelApiConfig { replay_reasoning: false, ..with_provider(Provider::Meta, &server) },
    ];
    for config in configs {
        let api = api(config);
        for request in
            [loop_steps()[0].clone(), loop_steps()[1].clone(), price_request(Some(location())), image_request()]
        {
            api.respond(&request).await.unwrap_or_else(|e| panic!("{:?}: {e}", request.kind));
        }
    }
    assert_eq!(sent(&server).await.len(), 12);
}

#[tokio::test]
async fn pricing_on_openai_asks_for_the_pages_searched_and_meta_only_for_results() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).mount(&server).await;

    api(with_provider(Provider::OpenAi, &server)).respond(&price_request(None)).await.unwrap();
    api(with_provider(Provider::Meta, &server)).respond(&price_request(None)).await.unwrap();

    let bodies = sent_bodies(&server).await;
    // OpenAI answers its searches with `action.sources` and no `results`: the sources are what grounds a price.
    assert_eq!(bodies[0]["include"], json!(["web_search_call.results", "web_search_call.action.sources"]));
    assert_eq!(bodies[1]["include"], json!(["web_search_call.results"]), "unconfirmed on Meta: not asked");
}

#[tokio::test]
async fn vllm_is_sent_only_include_values_of_its_list_and_no_search() {
    let server = provider(vllm_refuses, completed(json!([message("{}")]))).await;
    let api = api(with_provider(Provider::Compatible, &server));

    for request in loop_steps() {
        api.respond(&request).await.unwrap();
    }
    // Pricing is refused before anything is sent, naming what is missing.
    let err = api.respond(&price_request(None)).await.unwrap_err();

    assert_eq!(
        err,
        ModelError::Unavailable {
            capability: "web_search",
            message: "this model backend cannot search the web; pricing needs a provider with web search, \
                      e.g. MODEL_PROVIDER=meta"
                .into()
        }
    );
    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    assert_eq!(api.capabilities(), Capabilities { web_search: false, images: true, audio: false, remote: true });
    // Only what such servers take: no `store`, no `include`, no `strict` (it is off unless switched on).
    for body in &bodies {
        for field in ["store", "include", "max_tool_calls"] {
            assert_eq!(body.get(field), None, "{field}: {body}");
        }
        assert!(!body.to_string().contains("\"strict\""), "{body}");
    }
}

#[tokio::test]
async fn a_server_of_ones_own_is_sent_strict_only_when_switched_on() {
    let server = provider(vllm_refuses, completed(json!([message("{}")]))).await;
    let config = ModelApiConfig { strict_tools: true, ..with_provider(Provider::Compatible, &server) };

    for request in loop_steps() {
        api(config.clone()).respond(&request).await.unwrap();
    }

    let bodies = sent_bodies(&server).await;
    let tools = bodies[0]["tools"].as_array().unwrap();
    assert!(tools.iter().filter(|t| t["type"] == "function").all(|t| t["strict"] == true), "{tools:?}");
    assert_eq!(bodies[1]["text"]["format"]["strict"], true, "{}", bodies[1]);
    assert_eq!(bodies[0].get("store"), None);
}

#[tokio::test]
async fn ollama_gets_its_loop_and_never_a_search_nor_audio() {
    // Ollama answers `completed` with `cached_tokens: 0`, never `incomplete`.
    let answer = json!({"id": "resp_o", "object": "response", "status": "completed", "output": [message("{\"proposals\":[]}")],
                        "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 9}});
    // A server of your own needs no key: this one takes requests without any.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(Provider400 { refuse: ollama_refuses, answer })
        .mount(&server)
        .await;
    let config = ModelApiConfig { api_key: String::new(), ..with_provider(Provider::Compatible, &server) };
    let api = ModelApi::new(config).unwrap();

    let mut usages = Vec::new();
    for request in loop_steps() {
        usages.push(api.respond(&request).await.unwrap().usage);
    }
    let price = api.respond(&price_request(Some(location()))).await.unwrap_err();
    let audio = api.transcribe(&wav()).await.unwrap_err();

    assert_eq!(usages, vec![Usage { input_tokens: 50, output_tokens: 9, ..Usage::default() }; 2]);
    assert!(matches!(price, ModelError::Unavailable { capability: "web_search", .. }), "{price:?}");
    assert!(
        matches!(&audio, ModelError::Unavailable { capability: "audio_transcription", message }
                     if message.starts_with("this model backend cannot transcribe audio")),
        "{audio:?}"
    );
    let requests = sent(&server).await;
    assert_eq!(requests.len(), 2);
    // A server of your own with no key is sent no key; nothing it drops silently is sent either.
    assert!(requests.iter().all(|r| r.headers.get("authorization").is_none()));
    for body in sent_bodies(&server).await {
        assert_eq!(body.get("max_tool_calls"), None);
        assert!(!body.to_string().contains("web_search"), "{body}");
    }
}

#[tokio::test]
async fn openai_transcribes_at_audio_transcriptions() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/audio/transcriptions"))
        .and(header("authorization", format!("Bearer {KEY}")))
        .respond_with(json_answer(&json!({"text": "a drill", "usage": {"type": "duration", "seconds": 1.2}})))
        .expect(1)
        .mount(&server)
        .await;
    let api = api(with_provider(Provider::OpenAi, &server));

    let transcript = api.transcribe(&wav()).await.unwrap();

    assert_eq!(transcript, Transcript { text: "a drill".into(), audio_ms: 1200 });
    assert_eq!(api.model_name(CallKind::Transcribe), "gpt-4o-mini-transcribe");
    let parts = multipart_parts(&sent(&server).await[0]);
    let names: Vec<&str> =
        parts.iter().map(|(h, _)| h.split("name=\"").nth(1).unwrap().split('"').next().unwrap()).collect();
    assert_eq!(names, ["file", "model", "response_format"]);
    assert_eq!(parts[0].1.as_slice(), wav().as_slice());
    assert_eq!(parts[1].1.as_slice(), b"gpt-4o-mini-transcribe");
}

// ---------------------------------------------------------------------------------------------------------------
// Streaming: an idle timeout, not a total one; a retry is not free.
// ---------------------------------------------------------------------------------------------------------------

/// A watch that keeps what it is told.
#[derive(Default)]
struct Watched {
    streamed: Mutex<Vec<u64>>,
    retried: Mutex<Vec<Attempt>>,
}

impl CallWatch for Watched {
    fn streamed(&self, progress: Streamed) {
        self.streamed.lock().unwrap().push(progress.output_tokens);
    }

    fn retried(&self, attempt: Attempt) {
        self.retried.lock().unwrap().push(attempt);
    }
}

/// One server-sent event.
fn sse(event: &Value) -> String {
    format!("event: {}\ndata: {event}\n\n", event["type"].as_str().unwrap())
}

/// The events of an answer writing `text` in `deltas` pieces, then completing with it.
fn answer_events(text: &str, deltas: usize) -> Vec<String> {
    let mut events = vec![sse(&json!({"type": "response.created", "sequence_number": 0,
                                      "response": {"id": "resp_9", "status": "in_progress", "output": []}}))];
    let chars: Vec<char> = text.chars().collect();
    for (n, piece) in chars.chunks(chars.len().div_ceil(deltas)).enumerate() {
        let delta: String = piece.iter().collect();
        events.push(sse(&json!({"type": "response.output_text.delta", "sequence_number": n + 1,
                                "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": delta})));
    }
    events.push(sse(&json!({"type": "response.completed", "sequence_number": deltas + 1,
                            "response": completed(json!([message(text)]))})));
    events
}

/// A server that answers each request with `events`, waiting `gap` before each, then closes; a request's events
/// stop after `stall_after` of them (and the connection hangs) when it is given. Counts the requests it read.
async fn slow_server(
    events: Vec<String>,
    gap: Duration,
    stall_after: Option<usize>,
) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let (events, seen) = (events.clone(), seen.clone());
            tokio::spawn(async move {
                // The request: headers, then as many bytes as `content-length` says.
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let body_start = loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..body_start]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while buf.len() < body_start + length {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                seen.lock().unwrap().push(serde_json::from_slice(&buf[body_start..]).unwrap_or(Value::Null));
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                            connection: close\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for (n, event) in events.iter().enumerate() {
                    if stall_after == Some(n) {
                        tokio::time::sleep(Duration::from_secs(30)).await;
                        return;
                    }
                    tokio::time::sleep(gap).await;
                    if socket.write_all(event.as_bytes()).await.is_err() {
                        return;
                    }
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, bodies)
}

fn streaming(url: &str, idle: Duration) -> ModelApiConfig {
    ModelApiConfig {
        idle_timeout: idle,
        stream: true,
        backoff_base: ms(1),
        backoff_cap: ms(20),
        ..ModelApiConfig::new(KEY).with_base_url(url)
    }
}

#[tokio::test]
async fn a_streamed_answer_is_read_from_its_events_and_its_progress_told() {
    let server = MockServer::start().await;
    let text = "x".repeat(1_000);
    responses()
        .respond_with(ResponseTemplate::new(200).set_body_raw(answer_events(&text, 10).concat(), "text/event-stream"))
        .expect(1)
        .mount(&server)
        .await;
    let watch = Arc::new(Watched::default());
    let config = ModelApiConfig { stream: true, ..config(&server) };

    let answer = watching(watch.clone(), api(config).respond(&proposal_request(vec![]))).await.unwrap();

    assert_eq!(answer.final_text(), Some(text.as_str()));
    assert_eq!(answer.usage, USAGE);
    assert_eq!(sent_bodies(&server).await[0]["stream"], json!(true));
    assert!(watch.retried.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_slow_but_steady_answer_longer_than_the_idle_timeout_is_not_cut_or_retried() {
    // Twelve events 300 ms apart: 3.6 seconds in all against an idle timeout of one second.
    let text = "z".repeat(1_000);
    let (url, bodies) = slow_server(answer_events(&text, 10), ms(300), None).await;
    let watch = Arc::new(Watched::default());
    let started = Instant::now();

    let answer =
        watching(watch.clone(), api(streaming(&url, Duration::from_secs(1))).respond(&proposal_request(vec![]))).await;

    assert_eq!(answer.unwrap().final_text(), Some(text.as_str()));
    assert!(started.elapsed() >= Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(bodies.lock().unwrap().len(), 1, "sent once");
    assert_eq!(bodies.lock().unwrap()[0]["stream"], json!(true));
    assert!(watch.retried.lock().unwrap().is_empty());
    // 1,000 characters in ten deltas of 100: about 250 tokens, told as they came (every 50 tokens or so).
    let told = watch.streamed.lock().unwrap().clone();
    assert_eq!(told, vec![50, 100, 150, 200, 250]);
}

#[tokio::test]
async fn a_stream_that_stalls_is_sent_again_once_and_each_attempt_is_costed() {
    let text = "y".repeat(800);
    // Every attempt streams 4 of its events (three deltas of 80 characters), then stalls.
    let (url, bodies) = slow_server(answer_events(&text, 10), ms(10), Some(4)).await;
    let watch = Arc::new(Watched::default());
    let request = proposal_request(vec![]);

    let err = watching(watch.clone(), api(streaming(&url, ms(700))).respond(&request)).await.unwrap_err();

    assert_eq!(bodies.lock().unwrap().len(), 2, "what reached the provider is sent again once, not five times");
    // 240 characters had streamed: about 60 output tokens, with the input sent.
    let estimate = Usage { input_tokens: request.estimated_input_tokens(), output_tokens: 60, ..Usage::default() };
    match &err {
        ModelError::Unanswered { reason, estimate: e } => {
            assert_eq!(*e, estimate);
            assert!(reason.contains("no byte came for 700ms") && reason.contains("after 2 attempts"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let retried = watch.retried.lock().unwrap().clone();
    assert_eq!(retried.iter().map(|a| (a.usage, a.estimated)).collect::<Vec<_>>(), vec![(estimate, true)]);
}

#[tokio::test]
async fn a_failed_answer_is_sent_again_once_and_its_usage_told() {
    let server = MockServer::start().await;
    let failed = json!({"id": "resp_f", "status": "failed", "output": [],
                        "error": {"code": "server_error", "message": "The model crashed"},
                        "usage": {"input_tokens": 900, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 30}});
    responses().respond_with(json_answer(&failed)).up_to_n_times(1).expect(1).mount(&server).await;
    responses().respond_with(json_answer(&completed(json!([message("ok")])))).expect(1).mount(&server).await;
    let watch = Arc::new(Watched::default());

    let answer = watching(watch.clone(), api(config(&server)).respond(&proposal_request(vec![]))).await.unwrap();

    assert_eq!(answer.final_text(), Some("ok"));
    let retried = watch.retried.lock().unwrap().clone();
    let billed = Usage { input_tokens: 900, output_tokens: 30, ..Usage::default() };
    assert_eq!(retried.iter().map(|a| (a.usage, a.estimated)).collect::<Vec<_>>(), vec![(billed, false)]);
}

#[tokio::test]
async fn openai_is_given_a_prompt_cache_key_per_household_and_call_kind_and_meta_none() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).expect(3).mount(&server).await;
    let openai = || ModelApiConfig {
        stream: false,
        ..ModelApiConfig::for_provider(Provider::OpenAi, KEY).with_base_url(format!("{}/v1", server.uri()))
    };
    let household = ModelRequest {
        household: Some(trove_domain::HouseholdId(7)),
        ..proposal_request(vec![InputItem::UserText("x".into())])
    };

    api(openai()).respond(&household).await.unwrap();
    api(openai()).respond(&proposal_request(vec![InputItem::UserText("x".into())])).await.unwrap();
    api(config(&server)).respond(&household).await.unwrap();

    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies[0]["prompt_cache_key"], json!("trove-propose-7"));
    assert_eq!(bodies[1]["prompt_cache_key"], json!("trove-propose"));
    assert_eq!(bodies[2].get("prompt_cache_key"), None, "Meta refuses what it does not know");
}

/// The Python of the test tools (`TROVE_TEST_PYTHON`, or the venv `.ci/run` makes), with `openai` installed.
fn python() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("TROVE_TEST_PYTHON") {
        return p.into();
    }
    let venv = std::path::PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/trove-ci/py-venv/bin/python3");
    assert!(venv.is_file(), "the test tools' Python is missing: run .ci/run, or set TROVE_TEST_PYTHON");
    venv
}

/// The proposal loop's first step as `ProposeProjects` opens it: the listing and the catalogue answered (calls
/// with no `id`: no model output stands behind them), then the wish.
fn opened_loop() -> ModelRequest {
    let answered = |call_id: &str, name: &str| {
        let raw = json!({"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"});
        InputItem::Replay(trove_application::ports::model::RawJson(raw.to_string()))
    };
    let output =
        |call_id: &str, text: &str| InputItem::FunctionCallOutput { call_id: call_id.into(), output: text.into() };
    ModelRequest {
        household: Some(trove_domain::HouseholdId(3)),
        ..proposal_request(vec![
            answered("call_list_inventory", "list_inventory"),
            output("call_list_inventory", "items a build may use\n#lithium_cell|capacity mAh\n12,13 Cell|green|2500"),
            answered("call_template_catalog", "template_catalog"),
            output("call_template_catalog", "templates\n1|Lamp|Light|an hour|cell: a cell"),
            InputItem::UserText("The owner's wish: a lamp".into()),
        ])
    }
}

fn receipt_request() -> ModelRequest {
    ModelRequest {
        kind: CallKind::ReadReceipt,
        input: vec![InputItem::UserFile {
            text: "the receipt".into(),
            filename: "receipt.pdf".into(),
            file_data_url: "data:application/pdf;base64,JVBERi0=".into(),
        }],
        ..image_request()
    }
}

/// One variant of the settings.
type Setting = fn(ModelApiConfig) -> ModelApiConfig;

#[tokio::test]
async fn every_body_sent_to_openai_or_meta_validates_against_openais_published_types() {
    let server = MockServer::start().await;
    responses().respond_with(json_answer(&completed(json!([message("{}")])))).mount(&server).await;
    let variants: [(&str, Setting); 5] = [
        ("defaults", |c| c),
        ("strict off", |c| ModelApiConfig { strict_tools: false, ..c }),
        ("replay off", |c| ModelApiConfig { replay_reasoning: false, ..c }),
        ("max_tool_calls off", |c| ModelApiConfig { send_max_tool_calls: false, ..c }),
        ("not streamed", |c| ModelApiConfig { stream: false, ..c }),
    ];
    let [first, second] = loop_steps();
    let requests = [
        ("loop opened", opened_loop()),
        ("loop step 1", first),
        ("loop step 2", second),
        ("price", price_request(Some(location()))),
        ("label photo", image_request()),
        ("receipt file", receipt_request()),
    ];
    let mut labels = Vec::new();
    for (provider, p) in [("openai", Provider::OpenAi), ("meta", Provider::Meta)] {
        for (variant, set) in variants {
            // Meta's profile leaves out what its service may refuse (`strict: false`), which OpenAI's schema
            // requires: only its defaults are held to OpenAI's schema.
            if p == Provider::Meta && variant != "defaults" {
                continue;
            }
            let api = api(set(with_provider(p, &server)));
            for (name, request) in &requests {
                api.respond(request).await.unwrap_or_else(|e| panic!("{provider} {variant} {name}: {e}"));
                labels.push(format!("{provider}, {variant}: {name}"));
            }
        }
    }
    let bodies = sent_bodies(&server).await;
    assert_eq!(bodies.len(), labels.len());
    let lines: String = labels
        .iter()
        .zip(&bodies)
        .map(|(label, body)| format!("{}\n", json!({"label": label, "body": body})))
        .collect();
    let file = std::env::temp_dir().join(format!("trove-bodies-{}.jsonl", std::process::id()));
    std::fs::write(&file, lines).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schema/validate_bodies.py");
    let out = std::process::Command::new(python()).arg(&script).arg(&file).output().expect("python runs");
    let _ = std::fs::remove_file(&file);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{said}");
    assert!(said.contains(&format!("{} bodies checked, 0 with violations", labels.len())), "{said}");
}
