//! Trove's HTTP API: poem + poem-openapi. Only this crate knows HTTP and JSON; its DTOs are its own and convert
//! to domain types with `try_into_domain`.
//!
//! One file per feature under [`features`] holds its routes and DTOs; [`error`] turns every use-case error into
//! a status and a code; [`auth`] is who is asking; [`body_limit`] and [`explain`] are the middleware every
//! `/api` request goes through; [`document`] makes the OpenAPI document exact; [`security`] sets the browser
//! security headers and [`panics`] turns a panic into a 500, around everything.

pub mod answers;
pub mod auth;
pub mod body_limit;
pub mod document;
pub mod error;
pub mod explain;
pub mod features;
pub mod json_bytes;
pub mod media;
pub mod metrics;
pub mod panics;
pub mod security;
pub mod services;
pub mod shared;
pub mod site;
pub mod watched;
pub mod web;

pub use body_limit::{CSV_BODY_LIMIT, DRAIN_LIMIT, JSON_BODY_LIMIT, UPLOAD_BODY_LIMIT, body_limit};
pub use services::Services;

use poem::listener::TcpAcceptor;
use poem::middleware::Tracing;
use poem::{EndpointExt, Route, Server};
use poem_openapi::OpenApiService;
use std::future::Future;
use std::sync::Arc;

/// `GET /health`: the process is up. The answer is the same bytes every time (`{"status":"ok"}`), written once.
#[poem::handler]
pub fn health() -> poem::Response {
    poem::Response::builder()
        .content_type("application/json; charset=utf-8")
        .body(poem::Body::from_bytes(bytes::Bytes::from_static(br#"{"status":"ok"}"#)))
}

/// `GET /health/ready`: whether this server can work now. The database answers a query and the media store
/// takes a probe file and lets it go, each within two seconds; 200 when both do, else 503 naming what failed.
/// Either way each check's outcome and time:
/// `{"status":"ready"|"unready","checks":{"database":{"ok":true,"ms":1},"media":{"ok":false,"ms":2000,"error":"..."}}}`.
#[poem::handler]
pub async fn ready(services: poem::web::Data<&Services>) -> poem::Response {
    let checked = services.readiness.check().await;
    let ready = checked.iter().all(|c| c.failure.is_none());
    let checks: serde_json::Map<String, serde_json::Value> = checked
        .iter()
        .map(|c| {
            let mut check = serde_json::json!({"ok": c.failure.is_none(), "ms": c.took.as_millis() as u64});
            if let Some(failure) = &c.failure {
                check["error"] = failure.clone().into();
            }
            (c.name.to_owned(), check)
        })
        .collect();
    let body = serde_json::json!({"status": if ready { "ready" } else { "unready" }, "checks": checks});
    poem::Response::builder()
        .status(if ready { poem::http::StatusCode::OK } else { poem::http::StatusCode::SERVICE_UNAVAILABLE })
        .header(poem::http::header::CACHE_CONTROL, "no-store")
        .content_type("application/json; charset=utf-8")
        .body(body.to_string())
}

/// The `/api` routes as an OpenAPI service, which also writes the API's OpenAPI document (`spec()`).
pub fn api_service(services: Services) -> OpenApiService<features::Apis, ()> {
    OpenApiService::new(features::apis(services), "Trove", env!("CARGO_PKG_VERSION"))
        .server("/api")
        .description("Trove keeps the inventory of what you own and, with a model behind strict rules, proposes what to build, prices what to sell and drafts the posts.")
}

/// The whole HTTP app: `/health`, `/api/*` with its OpenAPI document and docs, and the web page at `/`.
pub fn app(services: Services) -> impl poem::Endpoint {
    let api = api_service(services.clone());
    let spec = document::exact(&api.spec());
    let explainer = Arc::new(explain::Explainer::new(&spec));
    let methods = Arc::new(document::Methods::new(&spec));
    let docs = document::docs(&api.swagger_ui_html());
    let metrics =
        services.metrics.on.then(|| Arc::new(metrics::Metrics::new(methods.clone(), services.metrics.token.clone())));
    let counted = metrics.clone();
    let mut routes = Route::new();
    if let Some(metrics) = &metrics {
        routes = routes.at("/metrics", poem::get(metrics::scrape).data(metrics.clone()));
    }
    routes
        .at("/health", poem::get(health))
        .at("/health/ready", poem::get(ready))
        .at("/api/openapi.json", poem::get(document::served(spec)))
        .nest("/api/docs", docs)
        .nest(
            "/api",
            api.around(move |next, req| explain::explain_body(next, req, explainer.clone()))
                .around(body_limit::limit_body)
                .around(auth::slide_session),
        )
        .nest("/", web::site())
        .data(services.clone())
        .data(services.auth.clone())
        .data(services.site.clone())
        .with_if(services.site.logs_requests(), Tracing)
        .catch_all_error(|err| async move { error::render(err) })
        .with(panics::catch_panics())
        .around(move |next, req| document::allow(next, req, methods.clone()))
        .around(move |next, req| metrics::counted(next, req, counted.clone()))
        .around(security::headers)
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
