//! `GET /metrics` (with `TROVE_METRICS`): Prometheus's text format, through the `prometheus` crate. Requests by
//! route (the OpenAPI document's path template, so ids never make a new series) and status, with a latency
//! histogram; at each scrape, the jobs waiting and running, the database's connection pool, and the model calls
//! and their cost by kind and outcome from the spend ledger. Unauthenticated unless a token is set
//! (`TROVE_METRICS_TOKEN`, then `Authorization: Bearer <token>`).

use crate::document::Methods;
use crate::services::Services;
use poem::http::StatusCode;
use poem::{Endpoint, IntoResponse, Request, Response};
use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};
use std::sync::Arc;
use std::time::Instant;

/// The registry and the series kept between scrapes.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    jobs_waiting: IntGaugeVec,
    jobs_running: IntGaugeVec,
    pool: IntGaugeVec,
    calls: IntCounterVec,
    cost: IntCounterVec,
    methods: Arc<Methods>,
    token: Option<String>,
    /// Held while a scrape sets the series and gathers them: two scrapes at once never see each other's half.
    scraping: std::sync::Mutex<()>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn registered<T: prometheus::core::Collector + Clone + 'static>(registry: &Registry, metric: T) -> T {
    registry.register(Box::new(metric.clone())).expect("each metric is registered once");
    metric
}

impl Metrics {
    pub fn new(methods: Arc<Methods>, token: Option<String>) -> Self {
        let registry = Registry::new();
        let counter = |name: &str, help: &str, labels: &[&str]| {
            registered(&registry, IntCounterVec::new(Opts::new(name, help), labels).expect("a valid metric"))
        };
        let gauge = |name: &str, help: &str, labels: &[&str]| {
            registered(&registry, IntGaugeVec::new(Opts::new(name, help), labels).expect("a valid metric"))
        };
        let requests = counter(
            "trove_http_requests_total",
            "HTTP requests answered, by route and status",
            &["method", "route", "status"],
        );
        let latency = registered(
            &registry,
            HistogramVec::new(
                HistogramOpts::new("trove_http_request_duration_seconds", "Time to answer a request, by route")
                    .buckets(vec![0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0]),
                &["method", "route"],
            )
            .expect("a valid metric"),
        );
        Self {
            requests,
            latency,
            jobs_waiting: gauge("trove_jobs_waiting", "CPU-heavy jobs waiting for a core, by work", &["work"]),
            jobs_running: gauge("trove_jobs_running", "CPU-heavy jobs running, by work", &["work"]),
            pool: gauge("trove_db_pool_connections", "The database pool's connections: open, idle, max", &["state"]),
            calls: counter("trove_model_calls_total", "Model calls recorded in the spend ledger", &["kind", "outcome"]),
            cost: counter(
                "trove_model_spend_micro_usd_total",
                "What the model calls cost, in millionths of a US dollar",
                &["kind", "outcome"],
            ),
            registry,
            methods,
            token,
            scraping: std::sync::Mutex::new(()),
        }
    }

    /// The route a path is counted under: the document's template for an API path, the path itself for the few
    /// fixed ones, `page` for the web page, `unknown` for anything else under `/api`.
    fn route(&self, path: &str) -> String {
        match path {
            "/health" | "/health/ready" | "/metrics" | "/api/openapi.json" => path.to_owned(),
            p if p.starts_with("/api/docs") => "/api/docs".to_owned(),
            p if p.starts_with("/api/") => self.methods.template(p).unwrap_or("unknown").to_owned(),
            _ => "page".to_owned(),
        }
    }

    /// Counts one answered request.
    pub fn observe(&self, method: &str, path: &str, status: u16, seconds: f64) {
        let route = self.route(path);
        self.requests.with_label_values(&[method, &route, &status.to_string()]).inc();
        self.latency.with_label_values(&[method, &route]).observe(seconds);
    }

    /// The text of a scrape: the state read now, then every series.
    async fn scrape(&self, services: &Services) -> Result<String, crate::error::ApiError> {
        let now = services
            .observed
            .observe()
            .await
            .map_err(|e| crate::error::ApiError::from(trove_application::Error::from(e)))?;
        let _scraping = self.scraping.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (work, waiting, running) in &now.jobs {
            self.jobs_waiting.with_label_values(&[work]).set(i64::try_from(*waiting).unwrap_or(i64::MAX));
            self.jobs_running.with_label_values(&[work]).set(i64::try_from(*running).unwrap_or(i64::MAX));
        }
        for (state, n) in [("open", now.pool.open), ("idle", now.pool.idle), ("max", now.pool.max)] {
            self.pool.with_label_values(&[state]).set(i64::from(n));
        }
        // The ledger's totals are the counters' values: it only grows.
        self.calls.reset();
        self.cost.reset();
        for total in &now.calls {
            let labels = [total.kind.as_str(), total.outcome.as_str()];
            self.calls.with_label_values(&labels).inc_by(total.calls);
            self.cost.with_label_values(&labels).inc_by(u64::try_from(total.cost.0).unwrap_or(0));
        }
        let mut text = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut text)
            .map_err(|e| crate::error::ApiError::from(trove_application::Error::Unexpected(e.into())))?;
        Ok(String::from_utf8_lossy(&text).into_owned())
    }

    /// Whether the request carries the token, when one is set.
    fn allowed(&self, req: &Request) -> bool {
        let Some(token) = &self.token else { return true };
        let given = req
            .headers()
            .get(poem::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        // Every byte compared, whatever the first difference: the time says nothing of the token.
        given.len() == token.len() && given.bytes().zip(token.bytes()).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
    }
}

/// `GET /metrics`.
#[poem::handler]
pub async fn scrape(
    req: &Request,
    metrics: poem::web::Data<&Arc<Metrics>>,
    services: poem::web::Data<&Services>,
) -> Response {
    if !metrics.allowed(req) {
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(poem::http::header::WWW_AUTHENTICATE, "Bearer")
            .content_type("application/json; charset=utf-8")
            .body(r#"{"error":{"code":"unauthorized","message":"the metrics need the token set in TROVE_METRICS_TOKEN"}}"#);
    }
    match metrics.scrape(&services).await {
        Ok(text) => Response::builder().content_type("text/plain; version=0.0.4; charset=utf-8").body(text),
        Err(e) => crate::error::render(poem::Error::from(e)),
    }
}

/// Counts each request and its time, when the metrics are on.
pub async fn counted<E: Endpoint>(next: E, req: Request, metrics: Option<Arc<Metrics>>) -> poem::Result<Response> {
    let Some(metrics) = metrics else { return next.call(req).await.map(IntoResponse::into_response) };
    let (method, path) = (req.method().as_str().to_owned(), req.uri().path().to_owned());
    let start = Instant::now();
    let answer = next.call(req).await.map(IntoResponse::into_response);
    let status = match &answer {
        Ok(resp) => resp.status().as_u16(),
        Err(e) => e.status().as_u16(),
    };
    metrics.observe(&method, &path, status, start.elapsed().as_secs_f64());
    answer
}
