//! A fake Model API: wiremock answering the Responses surface the way the reference says the provider does.

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// A Responses API answer with the given output items and usage.
pub fn response(output: Vec<Value>, input_tokens: u64, output_tokens: u64) -> Value {
    json!({
        "id": "resp_fake", "object": "response", "status": "completed", "error": null, "incomplete_details": null,
        "output": output,
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + output_tokens}
    })
}

/// A function call output item.
pub fn function_call(call_id: &str, name: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": name,
           "arguments": arguments, "status": "completed"})
}

/// An assistant message output item.
pub fn message(text: &str, citations: &[&str]) -> Value {
    let annotations: Vec<Value> = citations
        .iter()
        .map(|u| json!({"type": "url_citation", "url": u, "title": "cited", "start_index": 0, "end_index": 1}))
        .collect();
    json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
           "content": [{"type": "output_text", "text": text, "annotations": annotations}]})
}

/// A web search call output item with its results.
pub fn web_search(query: &str, results: &[&str]) -> Value {
    let results: Vec<Value> = results.iter().map(|u| json!({"title": "result", "url": u, "snippet": "..."})).collect();
    json!({"type": "web_search_call", "id": "ws_1", "status": "completed",
           "action": {"type": "search", "query": query, "sources": []}, "results": results})
}

/// Every request the fake received, as JSON.
#[derive(Clone, Default)]
pub struct Seen(pub Arc<Mutex<Vec<Value>>>);

impl Seen {
    pub fn bodies(&self) -> Vec<Value> {
        self.0.lock().unwrap().clone()
    }
}

/// Answers each request with `answer(request body, index of the request)`.
struct Scripted<F> {
    seen: Seen,
    answer: F,
}

impl<F: Fn(&Value, usize) -> ResponseTemplate + Send + Sync> Respond for Scripted<F> {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let n = {
            let mut seen = self.seen.0.lock().unwrap();
            seen.push(body.clone());
            seen.len() - 1
        };
        (self.answer)(&body, n)
    }
}

/// A fake API whose `/responses` answers with `answer`; returns the server and what it saw.
pub async fn fake_api<F>(answer: F) -> (MockServer, Seen)
where
    F: Fn(&Value, usize) -> ResponseTemplate + Send + Sync + 'static,
{
    let server = MockServer::start().await;
    let seen = Seen::default();
    Mock::given(method("POST"))
        .and(path("/responses"))
        .respond_with(Scripted { seen: seen.clone(), answer })
        .mount(&server)
        .await;
    (server, seen)
}

/// The settings pointing the app at a fake API.
pub fn settings(server: &MockServer) -> Vec<(&'static str, String)> {
    vec![("MODEL_API_KEY", "test-key".to_owned()), ("MODEL_API_URL", server.uri())]
}

/// True when the request's input holds the output of a call the model made (a later step of the loop; the
/// listing and the catalogue answered before the first step do not count).
pub fn has_tool_outputs(body: &Value) -> bool {
    let answered_first = [trove_application::propose::LISTED_CALL_ID, trove_application::propose::CATALOGUED_CALL_ID];
    body["input"].as_array().is_some_and(|items| {
        items
            .iter()
            .any(|i| i["type"] == "function_call_output" && !answered_first.iter().any(|id| i["call_id"] == *id))
    })
}

/// The output of the tool call `call_id` in the request's input.
pub fn tool_output<'a>(body: &'a Value, call_id: &str) -> Option<&'a str> {
    body["input"].as_array()?.iter().find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)?["output"]
        .as_str()
}
