//! Errors as the API answers them: `{"error": {"code": "...", "message": "..."}}` with a fitting status. The one
//! place where a use case's error becomes a status and a code: [`From<Error>`](ApiError#impl-From<Error>-for-ApiError)
//! for every variant, [`refusal_status`] for the rules that refuse.

use crate::shared::RunSpendDto;
use poem::http::StatusCode;
use poem::{IntoResponse, Response};
use serde_json::json;
use trove_application::labels::ScanError;
use trove_application::media::MediaError;
use trove_application::metered::RunSpend;
use trove_application::photo::PhotoError;
use trove_application::{Error, Refusal};
use trove_domain::history::UndoRefused;
use trove_domain::item::ChangeRefused;
use trove_domain::people::InvitationGone;
use trove_domain::place::PlaceRefused;

/// What a route answers: its payload, or an error rendered in the API's shape.
pub type ApiResult<T> = poem::Result<T>;

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
    /// Seconds a client should wait before trying again (`Retry-After`), for 503 answers of a busy server or an
    /// unavailable storage.
    pub retry_after_s: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self { status, code, message: message.into(), spend: None, retry_after_s: None }
    }

    /// The error body: `{"error": {"code", "message", "spend"?}}`.
    pub fn body(&self) -> serde_json::Value {
        let mut body = json!({ "error": { "code": self.code, "message": self.message } });
        if let Some(spend) = &self.spend {
            body["error"]["spend"] = serde_json::to_value(RunSpendDto::from(spend)).unwrap_or_default();
        }
        body
    }

    /// 400: the request is malformed; the message names the field.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid", message)
    }

    /// 401: no valid bearer token or session.
    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", "sign in, or send a valid bearer token (POST /api/tokens)")
    }

    /// 413: `what` (a body, an image, ...) is larger than `max` bytes.
    pub fn too_large(what: &str, max: usize) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", format!("the {what} is larger than {max} bytes"))
    }

    /// 415: the body or file is of a media type the route does not take.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", message)
    }

    /// 500 for something that should not happen; `what` is logged, not sent.
    pub fn unexpected(what: impl std::fmt::Display) -> Self {
        Error::Unexpected(anyhow::anyhow!("{what}")).into()
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let message = e.to_string();
        match e {
            Error::Invalid(_) => Self::bad_request(message),
            Error::NotFound { .. } => Self::new(StatusCode::NOT_FOUND, "not_found", message),
            Error::Refused(refusal) => {
                let (status, code) = refusal_status(&refusal);
                Self::new(status, code, message)
            }
            Error::Forbidden(_) => Self::new(StatusCode::FORBIDDEN, "forbidden", message),
            Error::SignInFailed => Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message),
            Error::PasskeySignInFailed => Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message),
            Error::SsoFailed(_) => Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message),
            Error::SsoStateMismatch => Self::bad_request(message),
            Error::Throttled { retry_after_secs } => Self {
                retry_after_s: Some(retry_after_secs),
                ..Self::new(StatusCode::TOO_MANY_REQUESTS, "throttled", message)
            },
            Error::Budget(_) => Self::new(StatusCode::PAYMENT_REQUIRED, "budget_reached", message),
            Error::NotConfigured { .. } => Self::new(StatusCode::SERVICE_UNAVAILABLE, "not_configured", message),
            // Passkeys need a configuration of their own (an origin the browser accepts): their code says so, so
            // that a client tells them from a model backend that lacks a capability without reading the message.
            Error::Unavailable { capability: "passkeys", .. } => {
                Self::new(StatusCode::SERVICE_UNAVAILABLE, "passkeys_unavailable", message)
            }
            Error::Unavailable { .. } => Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message),
            Error::ModelFailed { spend, .. } => {
                Self { spend: Some(spend), ..Self::new(StatusCode::BAD_GATEWAY, "model_failed", message) }
            }
            Error::ModelBusy { retry_after_s, spend, .. } => Self {
                retry_after_s: Some(retry_after_s),
                spend: Some(spend),
                ..Self::new(StatusCode::SERVICE_UNAVAILABLE, "model_busy", message)
            },
            Error::Busy { retry_after_s, .. } => Self {
                retry_after_s: Some(retry_after_s),
                ..Self::new(StatusCode::SERVICE_UNAVAILABLE, "busy", message)
            },
            Error::StorageUnavailable { retry_after_s, cause, .. } => {
                tracing::warn!(error = ?cause, "storage unavailable");
                Self {
                    retry_after_s: Some(retry_after_s),
                    ..Self::new(StatusCode::SERVICE_UNAVAILABLE, "storage_unavailable", message)
                }
            }
            Error::Unexpected(e) => {
                tracing::error!(error = ?e, "unexpected error");
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error; see the server log")
            }
        }
    }
}

/// The status and code of a refusal: `409 conflict` when the state of an object stands in the way (the same
/// request may succeed once it changes), `422 rule` when the rules never allow the request as it is.
pub fn refusal_status(refusal: &Refusal) -> (StatusCode, &'static str) {
    const CONFLICT: (StatusCode, &str) = (StatusCode::CONFLICT, "conflict");
    const RULE: (StatusCode, &str) = (StatusCode::UNPROCESSABLE_ENTITY, "rule");
    match refusal {
        Refusal::Change(ChangeRefused::SetByProject(_) | ChangeRefused::SelfComponent(_)) => RULE,
        Refusal::Change(ChangeRefused::Gone(_) | ChangeRefused::Held { .. } | ChangeRefused::UnitsHeld { .. }) => {
            CONFLICT
        }
        Refusal::InvitationGone(InvitationGone::Unknown) => (StatusCode::NOT_FOUND, "not_found"),
        Refusal::InvitationGone(_) => (StatusCode::GONE, "gone"),
        Refusal::LastOwner { .. } | Refusal::NameTaken(_) | Refusal::PlaceStillHolds { .. } => CONFLICT,
        Refusal::CeremonyGone | Refusal::SsoSignInGone => (StatusCode::GONE, "gone"),
        Refusal::PasskeyRefused(_) => RULE,
        Refusal::LastWayIn(_) => CONFLICT,
        Refusal::ForeignComponent(_) | Refusal::NoSpeech | Refusal::KeyUsedElsewhere | Refusal::Bulk(_) => RULE,
        Refusal::ImageTooSmall { .. } | Refusal::NotPendingMedia(_) => RULE,
        Refusal::Undo(UndoRefused::NotUndoable) => RULE,
        Refusal::Undo(UndoRefused::ChangedSince { .. }) => CONFLICT,
        Refusal::Place(PlaceRefused::DuplicateName { .. }) => CONFLICT,
        Refusal::Place(_) => RULE,
        Refusal::VersionMismatch { .. } => (StatusCode::PRECONDITION_FAILED, "precondition_failed"),
        Refusal::Loan(trove_domain::loan::LoanRefused::TooMany { .. }) => CONFLICT,
        Refusal::Loan(_) | Refusal::Schedule(_) | Refusal::Channel(_) => RULE,
        Refusal::AlreadyReturned(_) | Refusal::Change(ChangeRefused::OnLoan { .. }) => CONFLICT,
        Refusal::Gone(_)
        | Refusal::Lifecycle(_)
        | Refusal::NotPriceable(_)
        | Refusal::Listing(_)
        | Refusal::ChangedWhileAccepting(_)
        | Refusal::Stale(_)
        | Refusal::StateChanged(_)
        | Refusal::KeyRunning
        | Refusal::RefreshRunning => CONFLICT,
    }
}

impl From<PhotoError> for ApiError {
    fn from(e: PhotoError) -> Self {
        match e {
            e @ PhotoError::Unsupported => Self::unsupported(e.to_string()),
            e @ PhotoError::TooLarge { .. } => Self::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", e.to_string()),
            PhotoError::Failed(e) => e.into(),
        }
    }
}

impl From<ScanError> for ApiError {
    fn from(e: ScanError) -> Self {
        match e {
            ScanError::Image(e) => e.into(),
            e @ ScanError::NoCode => Self::new(StatusCode::UNPROCESSABLE_ENTITY, "no_code", e.to_string()),
            e @ ScanError::NotOurs(_) => Self::new(StatusCode::NOT_FOUND, "not_found", e.to_string()),
            ScanError::Job(e) => e.into(),
        }
    }
}

impl From<trove_domain::media::MediaRefused> for ApiError {
    /// 415 for a type not taken, 413 for too many bytes or pixels, 400 for the rest (empty, broken, a bad kind
    /// or caption).
    fn from(e: trove_domain::media::MediaRefused) -> Self {
        use trove_domain::media::MediaRefused as R;
        match e {
            R::Unsupported { .. } => Self::unsupported(e.to_string()),
            R::TooLarge { .. } | R::TooManyPixels { .. } => {
                Self::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", e.to_string())
            }
            R::Empty | R::Broken { .. } | R::UnknownKind(_) | R::CaptionTooLong | R::CaptionControl => {
                Self::bad_request(e.to_string())
            }
        }
    }
}

impl From<MediaError> for ApiError {
    fn from(e: MediaError) -> Self {
        match e {
            MediaError::Refused(r) => r.into(),
            e @ MediaError::NoThumbnail(_) => Self::new(StatusCode::NOT_FOUND, "not_found", e.to_string()),
            MediaError::Failed(e) => e.into(),
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
        let mut response = poem::web::Json(self.body()).with_status(self.status).into_response();
        if let Some(seconds) = self.retry_after_s {
            response.headers_mut().insert(poem::http::header::RETRY_AFTER, seconds.into());
        }
        response
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
        StatusCode::UNAUTHORIZED => ("unauthorized", ApiError::unauthorized().message),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_answer_says_when_to_retry() {
        let response =
            poem::error::ResponseError::as_response(&ApiError::from(Error::Busy { work: "images", retry_after_s: 4 }));
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[poem::http::header::RETRY_AFTER], "4");
        let other = poem::error::ResponseError::as_response(&ApiError::bad_request("no"));
        assert!(other.headers().get(poem::http::header::RETRY_AFTER).is_none());
    }

    #[test]
    fn an_unavailable_storage_says_what_and_when_to_retry() {
        let full = Error::from(trove_application::RepoError::Unavailable {
            fault: trove_application::StorageFault::Full,
            cause: anyhow::anyhow!("no space left on device"),
        });
        let response = poem::error::ResponseError::as_response(&ApiError::from(full));
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[poem::http::header::RETRY_AFTER], "10");
        let unreachable = Error::StorageUnavailable {
            fault: trove_application::StorageFault::Unreachable,
            retry_after_s: 10,
            cause: anyhow::anyhow!("connection refused"),
        };
        check(
            unreachable,
            StatusCode::SERVICE_UNAVAILABLE,
            "storage_unavailable",
            "the storage cannot be reached; try again in 10 s",
        );
    }
    use trove_domain::history::ObjectKind;
    use trove_domain::item::{Availability, GoneRefused, HeldBy};
    use trove_domain::{ItemId, ProjectId};

    fn check(error: Error, status: StatusCode, code: &str, message: &str) {
        let api = ApiError::from(error);
        assert_eq!((api.status, api.code, api.message.as_str()), (status, code, message));
    }

    /// Every kind of use-case error gets its status and code here, with the message the use case wrote.
    #[test]
    fn use_case_errors_map_to_statuses_and_codes() {
        let held = HeldBy::id(Some(ProjectId(3))).titled("Bench power supply");
        let cases = [
            (
                Error::Invalid("limit must be between 1 and 500".into()),
                400,
                "invalid",
                "limit must be between 1 and 500",
            ),
            (Error::NotFound { what: ObjectKind::Item, id: 42 }, 404, "not_found", "no such item 42"),
            (Error::NotFound { what: ObjectKind::Template, id: 9 }, 404, "not_found", "no such template 9"),
            (
                Refusal::Change(ChangeRefused::SetByProject(Availability::Reserved)).into(),
                422,
                "rule",
                "availability reserved is set by accepting or building a project",
            ),
            (
                Refusal::Change(ChangeRefused::SelfComponent(ItemId(7))).into(),
                422,
                "rule",
                "item 7 cannot be a component of itself",
            ),
            (
                Refusal::Change(ChangeRefused::Gone(ItemId(7))).into(),
                409,
                "conflict",
                "item 7 is gone; it is history and cannot change",
            ),
            (
                Refusal::Gone(GoneRefused::Reserved { item: ItemId(7), name: "Red drill".into(), project: held })
                    .into(),
                409,
                "conflict",
                "\"Red drill\" is reserved by project \"Bench power supply\"; drop or build that project first",
            ),
            (
                Refusal::ForeignComponent(ItemId(999)).into(),
                422,
                "rule",
                "component 999 is not an item of this household",
            ),
            (Refusal::NoSpeech.into(), 422, "rule", "the voice note holds no speech to read"),
            (
                Refusal::ImageTooSmall { width: 1, height: 1, min: 16 }.into(),
                422,
                "rule",
                "the image is 1 x 1 pixels; at least 16 x 16 are needed to hold an item",
            ),
            (
                Error::Busy { work: "images", retry_after_s: 3 },
                503,
                "busy",
                "the server is busy with other images; try again in 3 s",
            ),
            (Refusal::KeyUsedElsewhere.into(), 422, "rule", "this Idempotency-Key was used for a different request"),
            (Refusal::KeyRunning.into(), 409, "conflict", "a request with this Idempotency-Key is still running"),
            (Refusal::Stale(ItemId(7)).into(), 409, "conflict", "item 7 changed while this request ran; try again"),
            (
                Refusal::ChangedWhileAccepting(ItemId(7)).into(),
                409,
                "conflict",
                "item 7 is no longer buildable (it changed while accepting)",
            ),
            (
                trove_application::Forbidden::Role(trove_domain::people::Role::Owner).into(),
                403,
                "forbidden",
                "this needs the owner role",
            ),
            (Error::SignInFailed, 401, "unauthorized", "wrong name or password"),
            (
                Error::Throttled { retry_after_secs: 60 },
                429,
                "throttled",
                "too many failed sign-ins; try again in 1 minute",
            ),
            (Refusal::InvitationGone(InvitationGone::Used).into(), 410, "gone", "this invitation was already used"),
            (Refusal::InvitationGone(InvitationGone::Unknown).into(), 404, "not_found", "no invitation has this code"),
            (
                Refusal::LastOwner { member: trove_domain::people::MemberId(4), name: "Sam".into() }.into(),
                409,
                "conflict",
                "\"Sam\" is the household's last owner; make another member owner first",
            ),
            (
                Error::NotConfigured { what: "pricing with web search".into(), setting: "MODEL_API_KEY" },
                503,
                "not_configured",
                "pricing with web search needs the Model API: set MODEL_API_KEY",
            ),
            (
                Error::Unexpected(anyhow::anyhow!("database down")),
                500,
                "internal",
                "internal error; see the server log",
            ),
        ];
        for (error, status, code, message) in cases {
            check(error, StatusCode::from_u16(status).unwrap(), code, message);
        }
    }
}
