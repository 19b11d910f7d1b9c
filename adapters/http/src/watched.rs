//! Answers of long model runs, as JSON or, with `Accept: text/event-stream`, as server-sent events while the run
//! goes: `step` (its number, the most steps, the tools called), `tool` (its name and the size of its output),
//! `searching` (the pricing call was sent), then `result` (the JSON of the plain answer) or `error` (the error
//! body of the plain answer, with the status it would have had).
//!
//! The run itself is the same closure either way; only the [`Watch`] it reports to differs. A streamed run goes
//! on in its own task when the client leaves: what it writes and spends is the same as an unstreamed run's.

use crate::error::ApiError;
use futures_util::stream::{self, BoxStream, StreamExt};
use poem::web::sse::{Event, SSE};
use poem_openapi::ApiResponse;
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaMediaType, MetaResponses, MetaSchema, MetaSchemaRef, Registry};
use poem_openapi::types::ToJSON;
use serde_json::json;
use std::future::Future;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use trove_application::progress::{Progress, ProgressSink};

/// The media type of the streamed answer.
pub const EVENT_STREAM: &str = "text/event-stream";

/// Whether an `Accept` header asks for server-sent events.
pub fn wants_events(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.split(',').any(|part| part.trim().to_ascii_lowercase().starts_with(EVENT_STREAM)))
}

/// Where a run reports: a stream's channel, or nowhere.
#[derive(Debug, Clone, Default)]
pub struct Watch(Option<UnboundedSender<Event>>);

impl ProgressSink for Watch {
    fn report(&self, event: Progress) {
        if let Some(tx) = &self.0 {
            // A client that left closes the channel; the run goes on without it.
            let _ = tx.send(progress_event(&event));
        }
    }
}

/// One report as an SSE event: its name in `event:`, its fields as JSON in `data:`.
pub fn progress_event(event: &Progress) -> Event {
    let (name, data) = match event {
        Progress::Step { number, max, tools } => ("step", json!({ "number": number, "max": max, "tools": tools })),
        Progress::Tool { name, output_bytes } => ("tool", json!({ "name": name, "output_bytes": output_bytes })),
        Progress::Searching { max_searches } => ("searching", json!({ "max_searches": max_searches })),
        Progress::Writing { output_tokens } => ("writing", json!({ "output_tokens": output_tokens })),
    };
    Event::message(data.to_string()).event_type(name)
}

/// The `error` event of a failed run: the error body the plain answer would have had, plus its `status`.
pub fn error_event(error: &ApiError) -> Event {
    let mut body = error.body();
    body["error"]["status"] = json!(error.status.as_u16());
    Event::message(body.to_string()).event_type("error")
}

/// A run's answer: the JSON of `T`, or the stream of its events.
pub enum Watched<T> {
    Json(Json<T>),
    Events(BoxStream<'static, Event>),
}

impl<T: ToJSON + Send + Sync + 'static> Watched<T> {
    /// Runs `work` watched when `accept` asks for events (in its own task, answering at once with the stream),
    /// else unwatched, answering its JSON or its error.
    pub async fn answer<W, F>(accept: Option<&str>, work: W) -> poem::Result<Self>
    where
        W: FnOnce(Watch) -> F + Send + 'static,
        F: Future<Output = Result<T, ApiError>> + Send + 'static,
    {
        if !wants_events(accept) {
            return Ok(Self::Json(Json(work(Watch::default()).await?)));
        }
        let (tx, rx) = unbounded_channel();
        let last = tx.clone();
        tokio::spawn(async move {
            let event = match work(Watch(Some(tx))).await {
                Ok(answer) => Event::message(answer.to_json_string()).event_type("result"),
                Err(error) => error_event(&error),
            };
            let _ = last.send(event);
        });
        let events = stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|event| (event, rx)) });
        Ok(Self::Events(events.boxed()))
    }
}

impl<T: ToJSON + Send + Sync + 'static> poem::IntoResponse for Watched<T> {
    fn into_response(self) -> poem::Response {
        match self {
            Watched::Json(json) => json.into_response(),
            Watched::Events(events) => SSE::new(events).keep_alive(Duration::from_secs(15)).into_response(),
        }
    }
}

/// Written by hand: both answers are the one `200` of the route, told apart by `Accept`, so the document lists
/// them as two media types of a single response.
impl<T: ToJSON + Send + Sync + 'static> ApiResponse for Watched<T> {
    fn meta() -> MetaResponses {
        let mut meta = <Json<T> as ApiResponse>::meta();
        if let Some(answer) = meta.responses.first_mut() {
            answer.description = "The answer as JSON; with `Accept: text/event-stream`, server-sent events while the \
                run goes (`step`, `tool`, `searching`), then `result` (this JSON) or `error` (the error body and \
                its `status`)";
            answer.content.push(MetaMediaType {
                content_type: EVENT_STREAM,
                schema: MetaSchemaRef::Inline(Box::new(MetaSchema::new_with_format("string", "event-stream"))),
            });
        }
        meta
    }

    fn register(registry: &mut Registry) {
        <Json<T> as ApiResponse>::register(registry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_headers_that_ask_for_events() {
        assert!(wants_events(Some("text/event-stream")));
        assert!(wants_events(Some("application/json;q=0.5, Text/Event-Stream")));
        assert!(!wants_events(Some("application/json")));
        assert!(!wants_events(None));
    }
}
