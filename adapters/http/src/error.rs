//! Errors as the API answers them: `{"error": {"code": "...", "message": "..."}}` with a fitting status.

use poem::http::StatusCode;
use poem::{IntoResponse, Response};
use serde_json::json;
use trove_application::Error;
use trove_application::metered::RunSpend;

/// An error the API answers. Built from a use case's error; the cause chain of an unexpected error is logged,
/// never sent.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// What a failed model run cost, for 502 answers.
    pub spend: Option<RunSpend>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), spend: None }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", "a valid bearer token is required (trove token new)")
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        match e {
            Error::Invalid(m) => Self::new(StatusCode::BAD_REQUEST, "invalid", m),
            Error::NotFound(m) => Self::new(StatusCode::NOT_FOUND, "not_found", m),
            Error::Conflict(m) => Self::new(StatusCode::CONFLICT, "conflict", m),
            Error::Rule(m) => Self::new(StatusCode::UNPROCESSABLE_ENTITY, "rule", m),
            e @ Error::Budget(_) => Self::new(StatusCode::PAYMENT_REQUIRED, "budget_reached", e.to_string()),
            e @ Error::NotConfigured { .. } => {
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "not_configured", e.to_string())
            }
            Error::Unavailable { message, .. } => Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message),
            Error::ModelFailed { reason, spend } => {
                Self { spend: Some(spend), ..Self::new(StatusCode::BAD_GATEWAY, "model_failed", reason) }
            }
            Error::Unexpected(e) => {
                tracing::error!(error = ?e, "unexpected error");
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error; see the server log")
            }
        }
    }
}

impl From<trove_domain::item::ItemError> for ApiError {
    fn from(e: trove_domain::item::ItemError) -> Self {
        Self::bad_request(e.to_string())
    }
}

impl From<trove_domain::template::TemplateError> for ApiError {
    fn from(e: trove_domain::template::TemplateError) -> Self {
        Self::bad_request(e.to_string())
    }
}

impl poem::error::ResponseError for ApiError {
    fn status(&self) -> StatusCode {
        self.status
    }

    fn as_response(&self) -> Response {
        let mut body = json!({ "error": { "code": self.code, "message": self.message } });
        if let Some(spend) = &self.spend {
            body["error"]["spend"] = crate::dto::spend_json(spend);
        }
        poem::web::Json(body).with_status(self.status).into_response()
    }
}

/// Renders any error poem or poem-openapi raised (malformed JSON, an unknown enum value, a missing token, a
/// body over the limit, an unknown route) in the API's error shape.
pub fn render(err: poem::Error) -> Response {
    if let Some(api) = err.downcast_ref::<ApiError>() {
        return poem::error::ResponseError::as_response(api);
    }
    let status = err.status();
    let (code, message) = match status {
        StatusCode::UNAUTHORIZED => ("unauthorized", "a valid bearer token is required (trove token new)".to_owned()),
        StatusCode::NOT_FOUND => ("not_found", "no such route".to_owned()),
        StatusCode::METHOD_NOT_ALLOWED => ("method_not_allowed", "method not allowed on this route".to_owned()),
        StatusCode::PAYLOAD_TOO_LARGE => ("too_large", "the request body is too large".to_owned()),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported_media_type", lower_first(&err.to_string())),
        s if s.is_client_error() => ("invalid", lower_first(&err.to_string())),
        _ => {
            tracing::error!(error = %err, "request failed");
            ("internal", "internal error; see the server log".to_owned())
        }
    };
    poem::error::ResponseError::as_response(&ApiError::new(status, code, message))
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}
