//! A streamed answer of `POST /responses` (`stream: true`): server-sent events, read as they come.
//!
//! The stream ends with `response.completed`, `response.incomplete` or `response.failed`, each carrying the whole
//! response object, which is then read like an answer that was not streamed (there is no `[DONE]` sentinel). On
//! the way, the deltas of the text, the reasoning and the call arguments tell how much the model has written, and
//! each `response.output_item.done` carries a finished item: a server whose final event leaves `output` empty
//! still gives its items. An `error` event ends the stream as a failure.

use serde_json::Value;
use std::collections::BTreeMap;

/// Characters a token, about, for the progress and the estimate of what a broken stream cost.
const CHARS_PER_TOKEN: u64 = 4;

/// The events read so far.
#[derive(Debug, Default)]
pub(crate) struct Events {
    /// Bytes of an event not complete yet.
    pending: Vec<u8>,
    /// Finished output items, by their `output_index`.
    items: BTreeMap<u64, Value>,
    /// Characters of deltas streamed so far.
    chars: u64,
}

/// What one chunk of the stream brought.
#[derive(Debug, PartialEq)]
pub(crate) enum Fed {
    /// More is to come.
    More,
    /// The stream's terminal event: the whole response, as the JSON a non-streamed answer would have been.
    Done(Vec<u8>),
    /// An `error` event: its message.
    Error(String),
}

impl Events {
    /// Output tokens streamed so far, about.
    pub fn output_tokens(&self) -> u64 {
        self.chars.div_ceil(CHARS_PER_TOKEN)
    }

    /// Reads `chunk`: the events it completes, up to a terminal one.
    pub fn feed(&mut self, chunk: &[u8]) -> Fed {
        self.pending.extend_from_slice(chunk);
        while let Some((end, gap)) = event_end(&self.pending) {
            let block: Vec<u8> = self.pending.drain(..end + gap).take(end).collect();
            let Some(data) = data_of(&block) else { continue };
            let Ok(event) = serde_json::from_str::<Value>(&data) else { continue };
            match event["type"].as_str().unwrap_or_default() {
                "response.completed" | "response.incomplete" | "response.failed" => {
                    let mut response = event["response"].clone();
                    let empty = response["output"].as_array().is_none_or(Vec::is_empty);
                    if empty && !self.items.is_empty() {
                        response["output"] = Value::Array(std::mem::take(&mut self.items).into_values().collect());
                    }
                    return Fed::Done(response.to_string().into_bytes());
                }
                "error" => {
                    let message = event["message"]
                        .as_str()
                        .or_else(|| event["error"]["message"].as_str())
                        .unwrap_or("the stream reported an error without a message");
                    return Fed::Error(message.to_owned());
                }
                "response.output_item.done" => {
                    let index = event["output_index"].as_u64().unwrap_or(self.items.len() as u64);
                    self.items.insert(index, event["item"].clone());
                }
                kind if kind.ends_with(".delta") => {
                    self.chars += event["delta"].as_str().map_or(0, |d| d.chars().count() as u64);
                }
                _ => {}
            }
        }
        Fed::More
    }
}

/// Where the first complete event of `bytes` ends, and the length of the blank line that ends it.
fn event_end(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = bytes.windows(4).position(|w| w == b"\r\n\r\n").map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// The `data:` lines of one event, joined by line breaks; `None` for an event without data (a comment).
fn data_of(block: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(block);
    let lines: Vec<&str> =
        text.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| d.strip_prefix(' ').unwrap_or(d)).collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(value: &Value) -> String {
        format!("event: {}\ndata: {value}\n\n", value["type"].as_str().unwrap())
    }

    #[test]
    fn a_stream_cut_anywhere_gives_the_terminal_response() {
        let item = json!({"type": "message", "id": "msg_1", "role": "assistant",
                          "content": [{"type": "output_text", "text": "hello", "annotations": []}]});
        let done = json!({"type": "response.completed", "sequence_number": 5,
                          "response": {"id": "r", "status": "completed", "output": [item.clone()],
                                       "usage": {"input_tokens": 10, "output_tokens": 2}}});
        let stream = [
            ": keep-alive comment\n\n".to_owned(),
            event(&json!({"type": "response.created", "sequence_number": 0, "response": {"status": "in_progress"}})),
            event(&json!({"type": "response.output_text.delta", "sequence_number": 1, "delta": "hel"})),
            event(&json!({"type": "response.output_text.delta", "sequence_number": 2, "delta": "lo world!"})),
            event(&json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0,
                          "item": item})),
            event(&done),
        ]
        .concat();
        for cut in [1, 7, 50, stream.len() / 2, stream.len() - 1] {
            let mut events = Events::default();
            let (a, b) = stream.as_bytes().split_at(cut);
            let first = events.feed(a);
            let second = if first == Fed::More { events.feed(b) } else { first };
            let Fed::Done(body) = second else { panic!("cut at {cut}: {second:?}") };
            assert_eq!(serde_json::from_slice::<Value>(&body).unwrap(), done["response"], "cut at {cut}");
            assert_eq!(events.output_tokens(), 3, "12 characters streamed");
        }
    }

    #[test]
    fn crlf_events_and_items_gathered_when_the_final_output_is_empty() {
        let item = json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"});
        let mut events = Events::default();
        let stream = format!(
            "data: {}\r\n\r\ndata: {}\r\n\r\n",
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
            json!({"type": "response.completed", "response": {"status": "completed", "output": []}})
        );
        let Fed::Done(body) = events.feed(stream.as_bytes()) else { panic!() };
        assert_eq!(serde_json::from_slice::<Value>(&body).unwrap()["output"], json!([item]));
    }

    #[test]
    fn an_error_event_ends_the_stream() {
        let mut events = Events::default();
        let error = json!({"type": "error", "code": "server_error", "message": "The server had an error"});
        assert_eq!(events.feed(event(&error).as_bytes()), Fed::Error("The server had an error".into()));
        let nothing = json!({"type": "response.in_progress"});
        assert_eq!(Events::default().feed(event(&nothing).as_bytes()), Fed::More);
    }
}
