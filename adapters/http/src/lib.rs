//! Trove's HTTP API: poem + poem-openapi. Only this crate knows HTTP and JSON; its DTOs are its own and convert
//! to domain types with `try_into_domain`.

pub mod api;
pub mod dto;
pub mod error;
pub mod explain;
pub mod intake;
pub mod pack_dto;
pub mod photo;
pub mod selling_dto;
pub mod web;

use poem::listener::TcpAcceptor;
use poem::middleware::Tracing;
use poem::{EndpointExt, Route, Server};
use poem_openapi::OpenApiService;
use std::future::Future;
use std::sync::Arc;
use trove_application::auth::Auth;
use trove_application::catalogue::Catalogue;
use trove_application::exchange::Exchange;
use trove_application::intake::Intake;
use trove_application::items::Inventory;
use trove_application::photo::Photos;
use trove_application::ports::{Clock, IdempotencyStore};
use trove_application::price::Selling;
use trove_application::projects::Projects;
use trove_application::propose::ProposeProjects;
use trove_application::spend_report::Spend;

/// Largest JSON body accepted (1 MiB).
pub const JSON_BODY_LIMIT: usize = 1 << 20;
/// Largest `multipart/form-data` body accepted: a 20 MB photo or a 32 MB voice note, with room for the parts'
/// headers. Each route checks its own file's limit.
pub const UPLOAD_BODY_LIMIT: usize = 33 << 20;
/// Largest `text/csv` body accepted (an import of a few hundred thousand rows).
pub const CSV_BODY_LIMIT: usize = 256 << 20;

/// The body limit of a request by its content type: uploads and CSV imports may be larger than JSON.
pub fn body_limit(content_type: Option<&str>) -> usize {
    if is_media(content_type, "multipart/form-data") {
        UPLOAD_BODY_LIMIT
    } else if is_media(content_type, "text/csv") {
        CSV_BODY_LIMIT
    } else {
        JSON_BODY_LIMIT
    }
}

/// Whether a `Content-Type` is the media type `essence` (parameters such as `; charset=utf-8` aside, any case).
pub(crate) fn is_media(content_type: Option<&str>, essence: &str) -> bool {
    content_type.and_then(|c| c.split(';').next()).is_some_and(|e| e.trim().eq_ignore_ascii_case(essence))
}

/// The use cases the API serves, built by the composition root.
#[derive(Clone)]
pub struct Services {
    pub inventory: Inventory,
    pub catalogue: Catalogue,
    pub projects: Projects,
    pub propose: ProposeProjects,
    pub selling: Selling,
    pub spend: Spend,
    /// Reading labels, listings and voice notes into candidates with matches.
    pub intake: Intake,
    /// CSV export and import.
    pub exchange: Exchange,
    pub auth: Auth,
    /// Answers kept for `Idempotency-Key` replays.
    pub idempotency: Arc<dyn IdempotencyStore>,
    pub clock: Arc<dyn Clock>,
    /// Splits intake photos into regions and measures them (CPU work, run on a blocking thread).
    pub photos: Photos,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services").finish_non_exhaustive()
    }
}

/// The whole HTTP app: `/health`, `/api/*` with its OpenAPI document and docs, and the web page at `/`.
pub fn app(services: Services) -> impl poem::Endpoint {
    let api = OpenApiService::new(api::apis(services.clone()), "Trove", env!("CARGO_PKG_VERSION"))
        .server("/api")
        .description("Trove keeps the inventory of what you own and, with a model behind strict rules, proposes what to build, prices what to sell and drafts the posts.");
    let explainer = Arc::new(explain::Explainer::new(&api.spec()));
    let spec = api.spec_endpoint();
    let docs = api.swagger_ui();
    Route::new()
        .at("/health", poem::get(api::health))
        .nest("/api/openapi.json", spec)
        .nest("/api/docs", docs)
        .nest("/api", api.around(move |next, req| explain_body(next, req, explainer.clone())).around(limit_body))
        .nest("/", web::site())
        .data(services.auth.clone())
        .with(Tracing)
        .catch_all_error(|err| async move { error::render(err) })
}

/// How much of a refused body is still read (and thrown away) before the 413 is sent. A server that answers
/// and closes while the client is still writing makes most clients (browsers included) report a broken
/// connection instead of the answer; reading the rest first lets them see the JSON error. Past this, the
/// connection is closed without reading further.
pub const DRAIN_LIMIT: u64 = 64 << 20;

/// Refuses a request body over its limit ([`body_limit`]: [`JSON_BODY_LIMIT`] unless it is an upload or a CSV)
/// with 413, whether its size is announced (`Content-Length`) or not (a chunked body is kept up to the limit,
/// never further). Either way the rest of the body, up to [`DRAIN_LIMIT`], is read and discarded first.
async fn limit_body<E: poem::Endpoint>(next: Arc<E>, mut req: poem::Request) -> poem::Result<poem::Response> {
    use tokio::io::AsyncReadExt as _;
    let limit = body_limit(req.content_type());
    let too_large = || {
        error::ApiError::new(
            poem::http::StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the request body is larger than {limit} bytes"),
        )
    };
    let announced = req
        .headers()
        .get(poem::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let chunked = req.headers().contains_key(poem::http::header::TRANSFER_ENCODING);
    // A POST without a body (`curl -X POST .../propose`) is an empty JSON body: routes whose body is optional
    // take it, the others refuse it as a missing body (400) rather than as a missing media type.
    if req.method() == poem::http::Method::POST
        && req.content_type().is_none()
        && (announced == Some(0) || (announced.is_none() && !chunked))
    {
        req.headers_mut()
            .insert(poem::http::header::CONTENT_TYPE, poem::http::HeaderValue::from_static("application/json"));
    }
    match announced {
        Some(n) if n > limit as u64 => {
            if n <= DRAIN_LIMIT {
                drain(req.take_body().into_async_read().take(n)).await;
            }
            return Err(too_large().into());
        }
        Some(_) => {}
        None if chunked => {
            let mut reader = req.take_body().into_async_read();
            let mut kept = Vec::new();
            // A body that breaks off is refused whole: half a CSV file must not import as if it were all of it.
            if let Err(e) = (&mut reader).take(limit as u64 + 1).read_to_end(&mut kept).await {
                return Err(error::ApiError::new(
                    poem::http::StatusCode::BAD_REQUEST,
                    "invalid",
                    format!("the request body could not be read to its end: {e}"),
                )
                .into());
            }
            if kept.len() > limit {
                drain(reader.take(DRAIN_LIMIT)).await;
                return Err(too_large().into());
            }
            req.set_body(kept);
        }
        None => {}
    }
    next.call(req).await.map(poem::IntoResponse::into_response)
}

/// Replaces poem-openapi's message for a JSON body it could not parse with one naming the field and the problem
/// ([`explain::Explainer`]), when the body's own schema shows one.
async fn explain_body<E: poem::Endpoint>(
    next: Arc<E>,
    mut req: poem::Request,
    explainer: Arc<explain::Explainer>,
) -> poem::Result<poem::Response> {
    if !is_media(req.content_type(), "application/json") {
        return next.call(req).await.map(poem::IntoResponse::into_response);
    }
    // Its size is already checked ([`limit_body`]): kept to be read again should the route refuse it.
    let body = req.take_body().into_bytes().await?;
    req.set_body(body.clone());
    let (method, path) = (req.method().clone(), req.uri().path().to_owned());
    match next.call(req).await {
        Err(e) if e.is::<poem_openapi::error::ParseRequestPayloadError>() => {
            match explainer.explain(&method, path.strip_prefix("/api").unwrap_or(&path), &body) {
                Some(message) => {
                    Err(error::ApiError::new(poem::http::StatusCode::BAD_REQUEST, "invalid", message).into())
                }
                None => Err(e),
            }
        }
        other => other.map(poem::IntoResponse::into_response),
    }
}

/// Reads `body` to its end and throws it away; a read error ends it early (the answer is a refusal anyway).
/// A slow client is given this long, then the connection is closed without reading further.
async fn drain(mut body: impl tokio::io::AsyncRead + Unpin) {
    const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(30);
    let _ = tokio::time::timeout(DRAIN_TIME, tokio::io::copy(&mut body, &mut tokio::io::sink())).await;
}

/// Serves `app(services)` on `acceptor` until `shutdown` completes. Tests pass a listener bound to port 0.
///
/// # Errors
/// When the server fails.
pub async fn serve(
    acceptor: TcpAcceptor,
    services: Services,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    Server::new_with_acceptor(acceptor).run_with_graceful_shutdown(app(services), shutdown, None).await
}
