//! Reading the answer of `POST /responses` (and the provider's error bodies).
//!
//! Each output item is kept as the exact text the provider sent, for verbatim replay, and read into a typed view.
//! The reading is defensive: the reference leaves several members unconfirmed on Meta's service, so a missing
//! member is an empty view, never an error, unless the caller could not go on without it (a function call without
//! its `call_id`).

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use trove_application::ports::model::{
    Citation, ModelError, ModelResponse, OutputItem, OutputView, RawJson, SearchPage,
};
use trove_domain::spend::Usage;

#[derive(Debug, Deserialize)]
struct WireResponse {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    output: Option<Vec<Box<RawValue>>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    incomplete_details: Option<WireIncomplete>,
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<WireInputDetails>,
    #[serde(default)]
    output_tokens: u64,
}

#[derive(Debug, Default, Deserialize)]
struct WireInputDetails {
    #[serde(default)]
    cached_tokens: u64,
}

/// The `error` member of a failed response, and the inside of an HTTP error body.
#[derive(Debug, Default, Deserialize)]
struct WireError {
    #[serde(default)]
    message: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    code: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct WireIncomplete {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireErrorBody {
    error: WireError,
}

/// Reads a `200` answer of `/responses`.
///
/// # Errors
/// `Incomplete`, `Failed` or `Refused` (with the usage) for a response of that status or with a refusal part;
/// `BadResponse` for a body that is not a response, with the usage it still reports (it was billed).
pub(crate) fn parse(body: &[u8]) -> Result<ModelResponse, ModelError> {
    read(body).map_err(|e| match e {
        ModelError::BadResponse { message, usage: None } => ModelError::BadResponse { message, usage: billed(body) },
        other => other,
    })
}

fn read(body: &[u8]) -> Result<ModelResponse, ModelError> {
    let wire: WireResponse = serde_json::from_slice(body)
        .map_err(|e| ModelError::bad_response(format!("the response is not the expected json: {e}")))?;
    let mut output = Vec::new();
    let mut refusal = None;
    let mut searches = 0;
    for raw in wire.output.unwrap_or_default() {
        let value: Value = serde_json::from_str(raw.get())
            .map_err(|e| ModelError::bad_response(format!("an output item is not json: {e}")))?;
        let view = view(&value)?;
        refusal = refusal.or_else(|| refusal_of(&value));
        searches += usize::from(is_search(&value));
        output.push(OutputItem { raw: RawJson(raw.get().to_owned()), view });
    }
    let usage = usage(wire.usage.unwrap_or_default(), searches);

    match wire.status.as_deref() {
        Some("incomplete") => {
            let reason = wire.incomplete_details.and_then(|d| d.reason).filter(|r| !r.is_empty());
            return Err(ModelError::Incomplete { reason: reason.unwrap_or_else(|| "no reason given".into()), usage });
        }
        Some("failed") => {
            let message = wire.error.map(|e| failure_message(&e)).unwrap_or_else(|| "no error given".into());
            return Err(ModelError::Failed { message, usage });
        }
        // A missing status is read as completed: the output decides.
        Some("completed") | None => {}
        Some(other) => {
            return Err(ModelError::bad_response(format!("unexpected response status {other}")));
        }
    }
    if let Some(refusal) = refusal {
        return Err(ModelError::Refused { refusal, usage });
    }
    Ok(ModelResponse { output, usage })
}

/// The message of an HTTP error answer: the provider's `error.type` and `error.message` when the body has them,
/// else the start of the body, else the status's reason.
pub(crate) fn http_error_message(status: reqwest::StatusCode, body: &[u8]) -> String {
    if let Ok(WireErrorBody { error }) = serde_json::from_slice::<WireErrorBody>(body) {
        let message = error.message.filter(|m| !m.trim().is_empty());
        match (error.kind.filter(|k| !k.trim().is_empty()), message) {
            (Some(kind), Some(message)) => return format!("{kind}: {message}"),
            (None, Some(message)) => return message,
            (Some(kind), None) => return kind,
            (None, None) => {}
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        status.canonical_reason().unwrap_or("no reason given").to_lowercase()
    } else {
        text.chars().take(300).collect()
    }
}

/// Whether an HTTP error body says the account is out of quota (`insufficient_quota`), in its `code` or, since the
/// reference says `code` is often null, in its `type`: a billing state, which no retry helps.
pub(crate) fn out_of_quota(body: &[u8]) -> bool {
    let Ok(wire) = serde_json::from_slice::<WireErrorBody>(body) else { return false };
    let code = matches!(&wire.error.code, Some(Value::String(c)) if c == INSUFFICIENT_QUOTA);
    code || wire.error.kind.as_deref() == Some(INSUFFICIENT_QUOTA)
}

/// The error code and type of an account out of quota.
const INSUFFICIENT_QUOTA: &str = "insufficient_quota";

/// Whether a `200` answer is a failed response worth another attempt: `status: failed` with the error code
/// `server_error` or `rate_limit_exceeded`, which say the provider's side broke, not the request. Its message
/// when it is.
pub(crate) fn retryable_failure(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    if text(&value, "status") != Some("failed") {
        return None;
    }
    let error = WireError::deserialize(value.get("error")?).ok()?;
    match &error.code {
        Some(Value::String(code)) if code == "server_error" || code == "rate_limit_exceeded" => {
            Some(failure_message(&error))
        }
        _ => None,
    }
}

/// `message (code)` of a failed response's `error`; `code` is often null and then left out.
fn failure_message(error: &WireError) -> String {
    let message = error.message.clone().filter(|m| !m.is_empty()).unwrap_or_else(|| "no message given".into());
    match &error.code {
        Some(Value::String(code)) if !code.is_empty() => format!("{message} ({code})"),
        Some(Value::Number(code)) => format!("{message} ({code})"),
        _ => message,
    }
}

/// The usage an unreadable `200` body still reports, read as leniently as it can be: its `usage` member and its
/// searches. `None` when the body is not JSON or has no readable `usage`.
pub(crate) fn billed(body: &[u8]) -> Option<Usage> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let wire = WireUsage::deserialize(value.get("usage")?).ok()?;
    Some(usage(wire, items(value.get("output")).iter().filter(|item| is_search(item)).count()))
}

/// Whether an output item is a web search query the provider bills. Opening or reading a page is not a query; a
/// call that does not say what it did is counted.
fn is_search(item: &Value) -> bool {
    text(item, "type") == Some("web_search_call")
        && item.get("action").and_then(|a| text(a, "type")).is_none_or(|a| a == "search")
}

fn usage(wire: WireUsage, searches: usize) -> Usage {
    Usage {
        input_tokens: wire.input_tokens,
        cached_tokens: wire.input_tokens_details.map_or(0, |d| d.cached_tokens),
        output_tokens: wire.output_tokens,
        searches: u32::try_from(searches).unwrap_or(u32::MAX),
        audio_ms: 0,
    }
}

fn text<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn view(item: &Value) -> Result<OutputView, ModelError> {
    let kind = text(item, "type").unwrap_or("unknown");
    Ok(match kind {
        "reasoning" => {
            OutputView::Reasoning { replayable: text(item, "encrypted_content").is_some_and(|c| !c.is_empty()) }
        }
        "function_call" => {
            let call_id = text(item, "call_id")
                .filter(|c| !c.is_empty())
                .ok_or_else(|| ModelError::bad_response("a function call has no call_id"))?;
            let name = text(item, "name")
                .ok_or_else(|| ModelError::bad_response(format!("function call {call_id} has no name")))?;
            // `arguments` is a JSON string; should it come as an object, its JSON text is what the caller parses.
            let arguments = match item.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            };
            OutputView::FunctionCall { call_id: call_id.to_owned(), name: name.to_owned(), arguments }
        }
        "message" => {
            let mut joined = String::new();
            let mut citations = Vec::new();
            for part in items(item.get("content")) {
                if text(part, "type") != Some("output_text") {
                    continue;
                }
                joined.push_str(text(part, "text").unwrap_or_default());
                for note in items(part.get("annotations")) {
                    if text(note, "type") == Some("url_citation")
                        && let Some(url) = text(note, "url")
                    {
                        citations.push(Citation { url: url.to_owned(), title: text(note, "title").map(str::to_owned) });
                    }
                }
            }
            OutputView::Message { text: joined, citations }
        }
        "web_search_call" => {
            let action = item.get("action").filter(|a| a.is_object());
            OutputView::WebSearchCall {
                action: action.and_then(|a| text(a, "type")).map(str::to_owned),
                query: action.and_then(|a| text(a, "query")).map(str::to_owned),
                sources: pages(items(action.and_then(|a| a.get("sources")))),
                results: pages(items(item.get("results"))),
            }
        }
        other => OutputView::Other { kind: other.to_owned() },
    })
}

/// The pages of a list of sources or results; entries without a `url` say nothing a comparable could cite.
fn pages(entries: &[Value]) -> Vec<SearchPage> {
    entries
        .iter()
        .filter_map(|e| {
            let url = text(e, "url").filter(|u| !u.trim().is_empty())?;
            Some(SearchPage { url: url.to_owned(), title: text(e, "title").map(str::to_owned) })
        })
        .collect()
}

/// The first refusal part of a message item.
fn refusal_of(item: &Value) -> Option<String> {
    if text(item, "type") != Some("message") {
        return None;
    }
    items(item.get("content"))
        .iter()
        .find(|part| text(part, "type") == Some("refusal"))
        .map(|part| text(part, "refusal").unwrap_or("no reason given").to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_json(v: Value) -> Result<ModelResponse, ModelError> {
        parse(v.to_string().as_bytes())
    }

    #[test]
    fn an_action_without_a_type_counts_as_a_search() {
        let r = parse_json(json!({"status": "completed", "output": [
            {"type": "web_search_call", "id": "ws_1", "action": {"query": "q"}},
            {"type": "web_search_call", "id": "ws_2"},
            {"type": "web_search_call", "id": "ws_3", "action": {"type": "find_in_page"}}
        ]}))
        .unwrap();
        assert_eq!(r.usage, Usage { searches: 2, ..Usage::default() });
        assert_eq!(
            r.output[0].view,
            OutputView::WebSearchCall { action: None, query: Some("q".into()), sources: vec![], results: vec![] }
        );
        assert_eq!(
            r.output[1].view,
            OutputView::WebSearchCall { action: None, query: None, sources: vec![], results: vec![] }
        );
    }

    #[test]
    fn odd_items_and_missing_members() {
        let r = parse_json(json!({"output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": ""},
            {"id": "x_1"},
            {"type": "image_generation_call", "id": "ig_1"},
            {"type": "function_call", "call_id": "c", "name": "list_inventory", "arguments": {"a": 1}},
            {"type": "message", "content": [{"type": "output_text", "text": "a"}, {"type": "output_text", "text": "b",
              "annotations": [{"type": "file_citation", "file_id": "f"}, {"type": "url_citation", "title": "no url"}]}]}
        ]}))
        .unwrap();
        let views: Vec<_> = r.output.into_iter().map(|o| o.view).collect();
        assert_eq!(
            views,
            vec![
                OutputView::Reasoning { replayable: false },
                OutputView::Other { kind: "unknown".into() },
                OutputView::Other { kind: "image_generation_call".into() },
                OutputView::FunctionCall {
                    call_id: "c".into(),
                    name: "list_inventory".into(),
                    arguments: "{\"a\":1}".into()
                },
                OutputView::Message { text: "ab".into(), citations: vec![] },
            ]
        );
        assert_eq!(r.usage, Usage::default());
    }

    #[test]
    fn unreadable_bodies() {
        let check = |body: &[u8], want: &str| match parse(body) {
            Err(ModelError::BadResponse { message: m, .. }) => assert!(m.starts_with(want), "{m}"),
            other => panic!("{other:?}"),
        };
        check(b"<html>", "the response is not the expected json");
        check(b"{\"output\": 3}", "the response is not the expected json");
        check(b"{\"output\": [{\"type\": \"function_call\", \"name\": \"x\"}]}", "a function call has no call_id");
        check(b"{\"status\": \"queued\", \"output\": []}", "unexpected response status queued");
    }

    #[test]
    fn an_unreadable_answer_keeps_the_usage_it_reports() {
        let body = json!({
            "status": "completed",
            "output": [
                {"type": "web_search_call", "action": {"type": "search", "query": "q"}},
                {"type": "web_search_call", "action": {"type": "open_page", "url": "https://a.example"}},
                {"type": "function_call", "name": "list_inventory", "arguments": "{}"}
            ],
            "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 200}, "output_tokens": 80}
        });
        match parse(body.to_string().as_bytes()) {
            Err(e @ ModelError::BadResponse { .. }) => assert_eq!(
                e.usage(),
                Some(Usage { input_tokens: 1200, cached_tokens: 200, output_tokens: 80, searches: 1, audio_ms: 0 })
            ),
            other => panic!("{other:?}"),
        }
        let queued = json!({"status": "queued", "output": [], "usage": {"input_tokens": 7, "output_tokens": 0}});
        assert_eq!(parse(queued.to_string().as_bytes()).unwrap_err().usage().map(|u| u.input_tokens), Some(7));
        // Nothing readable about the cost: no usage rather than a made-up zero.
        assert_eq!(parse(b"<html>").unwrap_err().usage(), None);
        assert_eq!(parse(b"{\"output\": 3}").unwrap_err().usage(), None);
    }

    #[test]
    fn failed_responses_worth_retrying() {
        let check = |body: Value, want: Option<&str>| {
            assert_eq!(retryable_failure(body.to_string().as_bytes()).as_deref(), want, "{body}");
        };
        let failed = |code: Value| json!({"status": "failed", "error": {"code": code, "message": "m"}, "output": []});
        check(failed(json!("server_error")), Some("m (server_error)"));
        check(failed(json!("rate_limit_exceeded")), Some("m (rate_limit_exceeded)"));
        check(failed(json!("invalid_prompt")), None);
        check(failed(Value::Null), None);
        check(json!({"status": "completed", "error": {"code": "server_error"}}), None);
        check(json!({"status": "failed"}), None);
        assert_eq!(retryable_failure(b"<html>"), None);
    }

    #[test]
    fn out_of_quota_by_code_or_by_type() {
        let quota = |body: &str| out_of_quota(body.as_bytes());
        assert!(quota(r#"{"error": {"message": "m", "type": "insufficient_quota", "code": "insufficient_quota"}}"#));
        assert!(quota(r#"{"error": {"message": "m", "type": "insufficient_quota", "code": null}}"#), "by type");
        assert!(quota(r#"{"error": {"message": "m", "code": "insufficient_quota"}}"#), "by code");
        assert!(!quota(r#"{"error": {"message": "m", "type": "rate_limit_error", "code": null}}"#));
        assert!(!quota(r#"{"error": {"message": "m", "code": 7}}"#));
        assert!(!quota("busy"));
    }

    #[test]
    fn error_messages() {
        let check = |body: &str, want: &str| {
            assert_eq!(http_error_message(reqwest::StatusCode::BAD_GATEWAY, body.as_bytes()), want);
        };
        check(r#"{"error": {"message": "m", "type": "t", "param": null, "code": null}}"#, "t: m");
        check(r#"{"error": {"message": "m"}}"#, "m");
        check(r#"{"error": {"type": "t"}}"#, "t");
        check(" upstream down \n", "upstream down");
        check("", "bad gateway");
        check(&"x".repeat(400), &"x".repeat(300));
    }
}
