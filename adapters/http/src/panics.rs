//! A panic while a request is handled is a bug, but it must not drop the connection: it becomes the API's JSON
//! `500 internal`, and the server log gets the panic's message with the backtrace of where it happened.
//!
//! The backtrace is taken by a panic hook (installed once, in front of the hook already set, which still runs)
//! and kept for the thread that panicked; [`CatchPanic`](poem::middleware::CatchPanic), which catches the panic
//! on that same thread, hands it to [`answer`], which logs both.

use crate::error::ApiError;
use poem::middleware::CatchPanic;
use poem::{IntoResponse, Response};
use std::any::Any;
use std::backtrace::Backtrace;
use std::cell::RefCell;
use std::sync::Once;

thread_local! {
    /// The backtrace of this thread's latest panic, until a request's panic answer takes it.
    static LAST_BACKTRACE: RefCell<Option<Backtrace>> = const { RefCell::new(None) };
}

/// The middleware turning a panic in request handling into [`answer`]'s 500. Installs the hook that keeps
/// backtraces (once per process).
pub fn catch_panics() -> CatchPanic<fn(Box<dyn Any + Send + 'static>) -> Response> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            LAST_BACKTRACE.with(|b| *b.borrow_mut() = Some(Backtrace::force_capture()));
            previous(info);
        }));
    });
    CatchPanic::new().with_handler(answer as fn(Box<dyn Any + Send + 'static>) -> Response)
}

/// The answer to a request whose handling panicked: `500 {"error": {"code": "internal", ...}}`, the panic's
/// message and backtrace logged, never sent.
pub fn answer(panic: Box<dyn Any + Send + 'static>) -> Response {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    let backtrace = LAST_BACKTRACE.with(|b| b.borrow_mut().take());
    let backtrace = backtrace.map_or_else(|| "no backtrace kept".to_owned(), |b| b.to_string());
    tracing::error!(panic = %message, %backtrace, "request handling panicked");
    poem::error::ResponseError::as_response(&ApiError::new(
        poem::http::StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "internal error; see the server log",
    ))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use poem::{Endpoint, EndpointExt, Request, Route, get, handler};

    #[handler]
    fn boom() -> &'static str {
        panic!("the handler broke")
    }

    #[handler]
    fn fine() -> &'static str {
        "fine"
    }

    /// A route that panics answers the JSON 500; the app keeps answering afterwards.
    #[tokio::test]
    async fn a_panic_is_a_json_500() {
        let app = Route::new().at("/boom", get(boom)).at("/fine", get(fine)).with(catch_panics());
        let answer = app.call(Request::builder().uri_str("/boom").finish()).await.unwrap();
        assert_eq!(answer.status(), poem::http::StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(answer.content_type(), Some("application/json; charset=utf-8"));
        let body: serde_json::Value = serde_json::from_slice(&answer.into_body().into_vec().await.unwrap()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"error": {"code": "internal", "message": "internal error; see the server log"}})
        );
        let again = app.call(Request::builder().uri_str("/fine").finish()).await.unwrap();
        assert_eq!(again.status(), poem::http::StatusCode::OK);
    }

    /// The panic's backtrace is kept for the answer to log, and taken by it.
    #[tokio::test]
    async fn the_backtrace_is_kept_for_the_log() {
        let _ = catch_panics();
        let caught = std::panic::catch_unwind(|| panic!("kept"));
        assert!(caught.is_err());
        assert!(LAST_BACKTRACE.with(|b| b.borrow().is_some()));
        let _ = answer(caught.unwrap_err());
        assert!(LAST_BACKTRACE.with(|b| b.borrow().is_none()));
    }
}
