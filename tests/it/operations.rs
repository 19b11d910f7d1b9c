//! Running Trove as a service: secrets read from files, logs as JSON lines, `trove migrate --dry-run`, and a
//! database of a newer schema refused before anything runs. The `trove` binary itself is run.

use crate::app::{Db, fresh_database};
use crate::on_both;
use sea_orm::{ConnectionTrait, Database, Statement};
use std::path::PathBuf;
use std::process::{Command, Output};

on_both!(migrate_dry_run_lists_what_would_run_and_a_newer_schema_is_refused);

/// A directory of its own for a run's data.
fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trove-operations-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `trove ARGS` with the settings given (and no others of the test's environment that Trove reads).
fn trove(args: &[&str], settings: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_trove"));
    command.args(args);
    for name in ["DATABASE_URL", "MODEL_API_KEY", "RUST_LOG", "TROVE_LOG_FORMAT", "TROVE_MEDIA_URL"] {
        command.env_remove(name);
    }
    for (name, value) in settings {
        command.env(name, value);
    }
    command.output().expect("trove runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

async fn migrate_dry_run_lists_what_would_run_and_a_newer_schema_is_refused(db: Db) {
    let url = fresh_database(db).await;
    let dir = data_dir(&format!("migrate-{db:?}"));
    let dir_str = dir.to_string_lossy().into_owned();
    let settings = [("DATABASE_URL", url.as_str()), ("TROVE_DATA_DIR", dir_str.as_str())];

    // A new database: every migration would run, oldest first, and nothing is written.
    let out = trove(&["migrate", "--dry-run"], &settings);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Vec<String> =
        text(&out.stdout).lines().filter_map(|l| l.strip_prefix("  ")).map(str::to_owned).collect();
    assert!(
        text(&out.stdout).starts_with(&format!("{} migration(s) would run:", listed.len())),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(listed.first().map(String::as_str), Some("m0001_initial"));
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(listed, sorted, "oldest first");
    let conn = Database::connect(&url).await.unwrap();
    let backend = conn.get_database_backend();
    let count = |sql: &'static str| {
        let conn = &conn;
        async move { conn.query_one_raw(Statement::from_string(backend, sql)).await }
    };
    assert!(count("SELECT COUNT(*) AS n FROM seaql_migrations").await.is_err(), "a dry run creates no table");

    // Migrated: nothing would run.
    let out = trove(&["migrate"], &settings);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = trove(&["migrate", "--dry-run"], &settings);
    assert_eq!(text(&out.stdout).trim(), "the schema is up to date: no migration would run");

    // A migration this build does not know: a newer Trove migrated the database. Refused, unchanged, by
    // `migrate`, its dry run and a start alike.
    conn.execute_unprepared(
        "INSERT INTO seaql_migrations (version, applied_at) VALUES ('m9999_from_a_newer_trove', 0)",
    )
    .await
    .unwrap();
    let rows = || async {
        let row = count("SELECT COUNT(*) AS n FROM seaql_migrations").await.unwrap().unwrap();
        row.try_get::<i64>("", "n").unwrap()
    };
    let before = rows().await;
    for args in [&["migrate"][..], &["migrate", "--dry-run"], &["serve"]] {
        let out = trove(args, &[settings[0], settings[1], ("TROVE_BIND", "127.0.0.1:0")]);
        assert!(!out.status.success(), "{args:?} ran on a newer schema");
        let err = text(&out.stderr);
        assert!(
            err.contains("the database was migrated by a newer Trove (it has migration m9999_from_a_newer_trove"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(rows().await, before, "nothing was changed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn secrets_are_read_from_files_and_logs_can_be_json_lines() {
    let dir = data_dir("logs");
    let dir_str = dir.to_string_lossy().into_owned();
    // The database URL from a file, as Docker secrets give it (a line end after it).
    let url_file = dir.join("database_url");
    std::fs::write(&url_file, format!("{}\n", trove_db::testing::fresh_sqlite_url())).unwrap();
    let url_file = url_file.to_string_lossy().into_owned();
    let out = trove(
        &["migrate"],
        &[
            ("DATABASE_URL_FILE", &url_file),
            ("TROVE_DATA_DIR", &dir_str),
            ("TROVE_LOG_FORMAT", "json"),
            ("RUST_LOG", "info"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stderr).lines().map(str::to_owned).collect();
    assert!(lines.len() > 3, "the migrations are logged: {lines:?}");
    for line in &lines {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(entry["timestamp"].is_string() && entry["level"].is_string(), "{line}");
        assert!(entry["fields"]["message"].is_string(), "{line}");
    }
    assert!(lines.iter().any(|l| l.contains("m0001_initial")), "{lines:?}");
    // The file's database was the one migrated: its migrations are all there now.
    let out = trove(&["migrate", "--dry-run"], &[("DATABASE_URL_FILE", &url_file), ("TROVE_DATA_DIR", &dir_str)]);
    assert_eq!(text(&out.stdout).trim(), "the schema is up to date: no migration would run", "{}", text(&out.stderr));

    // A bad format, and a secret set both ways: refused at start, naming the setting.
    let out = trove(&["migrate"], &[("TROVE_DATA_DIR", &dir_str), ("TROVE_LOG_FORMAT", "xml")]);
    assert!(!out.status.success() && text(&out.stderr).contains("TROVE_LOG_FORMAT=\"xml\" must be text or json"));
    let out = trove(
        &["migrate"],
        &[("TROVE_DATA_DIR", &dir_str), ("DATABASE_URL_FILE", &url_file), ("DATABASE_URL", "sqlite::memory:")],
    );
    assert!(!out.status.success() && text(&out.stderr).contains("DATABASE_URL and DATABASE_URL_FILE are both set"));
    let _ = std::fs::remove_dir_all(&dir);
}

on_both!(ready_answers_503_naming_what_is_down);

/// A TCP relay to `target` on a port of its own, for a server the test can stop as if it went down: stopping
/// it closes its port and every connection through it.
struct Relay {
    port: u16,
    target: std::net::SocketAddr,
    stop: Option<tokio::sync::watch::Sender<bool>>,
}

impl Relay {
    async fn start(target: std::net::SocketAddr, port: u16) -> Relay {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("the relay's port");
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            let mut stopped = stopped;
            loop {
                tokio::select! {
                    _ = stopped.changed() => break,
                    accepted = listener.accept() => {
                        let Ok((mut inbound, _)) = accepted else { break };
                        connections.spawn(async move {
                            if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                            }
                        });
                    }
                }
            }
            // Down: the port closes with the listener, and every connection is cut.
            connections.abort_all();
        });
        Relay { port, target, stop: Some(stop) }
    }

    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
    }

    async fn restart(&mut self) {
        *self = Relay::start(self.target, self.port).await;
    }
}

/// `GET /health/ready`: its status and body.
async fn ready(app: &crate::app::TestApp) -> (reqwest::StatusCode, serde_json::Value) {
    let resp = app.client.get(app.url("/health/ready")).send().await.unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap())
}

async fn ready_answers_503_naming_what_is_down(db: Db) {
    let Some(moto) = crate::media::moto() else { return };
    let url = fresh_database(db).await;
    // On PostgreSQL the app reaches the server through a relay the test can take down.
    let (url, mut relay) = match db {
        Db::Postgres => {
            let (head, tail) = url.split_once('@').expect("a postgres URL names its host");
            let (host, name) = tail.split_once('/').expect("and its database");
            let target = tokio::net::lookup_host(host).await.unwrap().next().unwrap();
            let relay = Relay::start(target, 0).await;
            (format!("{head}@127.0.0.1:{}/{name}", relay.port), Some(relay))
        }
        Db::Sqlite => (url, None),
    };
    let dir = data_dir(&format!("ready-{db:?}"));
    let mut settings = crate::media::s3_settings(&moto);
    settings.push(("TROVE_DATA_DIR", dir.to_string_lossy().into_owned()));
    let app = crate::app::TestApp::spawn_on(&url, &settings).await;

    let (status, body) = ready(&app).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    assert_eq!(body["status"], "ready");
    assert_eq!(
        (body["checks"]["database"]["ok"].as_bool(), body["checks"]["media"]["ok"].as_bool()),
        (Some(true), Some(true))
    );
    // `/health` stays the cheap answer.
    let health = app.client.get(app.url("/health")).send().await.unwrap();
    assert_eq!(health.text().await.unwrap(), r#"{"status":"ok"}"#);

    if let Some(relay) = relay.as_mut() {
        // PostgreSQL down: 503 naming the database, within the checks' time; the media store still answers.
        relay.stop();
        let started = std::time::Instant::now();
        let (status, body) = ready(&app).await;
        assert_eq!(status, reqwest::StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(body["status"], "unready");
        assert_eq!(body["checks"]["database"]["ok"], false, "{body}");
        assert!(body["checks"]["database"]["error"].as_str().is_some_and(|e| !e.is_empty()), "{body}");
        assert_eq!(body["checks"]["media"]["ok"], true, "{body}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "answered in {:?}", started.elapsed());
        // Back up: ready again once the pool has a connection.
        relay.restart().await;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while ready(&app).await.0 != reqwest::StatusCode::OK {
            assert!(std::time::Instant::now() < deadline, "not ready again after PostgreSQL came back");
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    }

    // The S3 store down: 503 naming the media store; the database still answers.
    drop(moto);
    let (status, body) = ready(&app).await;
    assert_eq!(status, reqwest::StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["checks"]["media"]["ok"], false, "{body}");
    assert!(
        body["checks"]["media"]["error"].as_str().is_some_and(|e| e.contains("probe file") || e.contains("no answer")),
        "{body}"
    );
    assert_eq!(body["checks"]["database"]["ok"], true, "{body}");
    if let Some(relay) = relay.as_mut() {
        relay.stop();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

on_both!(metrics_are_served_only_when_asked_and_count_requests_jobs_the_pool_and_model_calls);

async fn metrics_are_served_only_when_asked_and_count_requests_jobs_the_pool_and_model_calls(db: Db) {
    use trove_application::ports::SpendLedger;
    use trove_domain::spend::{CallKind, CallOutcome, Rates, SpendEntry, Usage};

    // Off by default: no metrics at /metrics.
    let plain = crate::app::TestApp::spawn(db, &[]).await;
    let resp = plain.client.get(plain.url("/metrics")).send().await.unwrap();
    let text = resp.text().await.unwrap();
    assert!(!text.contains("trove_http_requests_total"), "{text}");

    let app = crate::app::TestApp::spawn(
        db,
        &[("TROVE_METRICS", "1".to_owned()), ("TROVE_METRICS_TOKEN", "scrape-me".to_owned())],
    )
    .await;
    // The token is asked for.
    let resp = app.client.get(app.url("/metrics")).send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::UNAUTHORIZED);
    let resp = app.client.get(app.url("/metrics")).bearer_auth("wrong-token").send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::UNAUTHORIZED);

    // Some requests, and a model call in the ledger.
    assert_eq!(app.get("/api/items").await.0, reqwest::StatusCode::OK);
    for id in [999_991, 999_992] {
        assert_eq!(app.get(&format!("/api/items/{id}")).await.0, reqwest::StatusCode::NOT_FOUND);
    }
    let (_, me) = app.get("/api/me").await;
    let household = trove_domain::HouseholdId(me["household"]["id"].as_i64().unwrap());
    let usage = Usage { input_tokens: 1_000_000, cached_tokens: 0, output_tokens: 0, searches: 0, audio_ms: 0 };
    let at = trove_domain::Timestamp::from_timestamp(1_790_000_000, 0).unwrap();
    let entry = SpendEntry::new(at, CallKind::Price, "muse-spark-1.3", &usage, &Rates::default(), CallOutcome::Failed);
    app.app.store.record(household, &entry).await.unwrap();

    let resp = app.client.get(app.url("/metrics")).bearer_auth("scrape-me").send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::OK);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
    let text = resp.text().await.unwrap();
    let value = |series: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
            .unwrap_or_else(|| panic!("no {series} in\n{text}"))
            .parse()
            .unwrap()
    };
    // Requests by the document's route, never by id.
    assert_eq!(value(r#"trove_http_requests_total{method="GET",route="/api/items",status="200"}"#), 1.0);
    assert_eq!(value(r#"trove_http_requests_total{method="GET",route="/api/items/{id}",status="404"}"#), 2.0);
    assert!(!text.contains("999991"), "an id never names a series");
    assert_eq!(value(r#"trove_http_request_duration_seconds_count{method="GET",route="/api/items/{id}"}"#), 2.0);
    assert_eq!(
        value(r#"trove_http_request_duration_seconds_bucket{method="GET",route="/api/items/{id}",le="+Inf"}"#),
        2.0
    );
    // Jobs, the pool, the model calls and their cost.
    assert_eq!(value(r#"trove_jobs_waiting{work="images"}"#), 0.0);
    assert_eq!(value(r#"trove_jobs_running{work="sign-ins"}"#), 0.0);
    assert!(value(r#"trove_db_pool_connections{state="max"}"#) >= 1.0);
    assert!(value(r#"trove_db_pool_connections{state="open"}"#) >= 1.0);
    assert_eq!(value(r#"trove_model_calls_total{kind="price",outcome="failed"}"#), 1.0);
    assert_eq!(value(r#"trove_model_spend_micro_usd_total{kind="price",outcome="failed"}"#), entry.cost.0 as f64);
    assert!(entry.cost.0 > 0);
}

#[test]
fn trove_health_asks_the_running_server_as_a_container_health_check_does() {
    let dir = data_dir("health");
    let dir_str = dir.to_string_lossy().into_owned();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // Bound on every address, as in the image: the check asks on loopback.
    let bind = format!("0.0.0.0:{port}");
    let settings = [("TROVE_DATA_DIR", dir_str.as_str()), ("TROVE_BIND", bind.as_str())];
    // Nothing serves yet: not healthy.
    let out = trove(&["health"], &settings);
    assert!(!out.status.success());
    let mut server = Command::new(env!("CARGO_BIN_EXE_trove"));
    server.arg("serve").env_remove("DATABASE_URL").env_remove("TROVE_MEDIA_URL").env_remove("MODEL_API_KEY");
    for (name, value) in settings {
        server.env(name, value);
    }
    let mut server = server.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let ready = loop {
        let out = trove(&["health"], &settings);
        if out.status.success() {
            break out;
        }
        assert!(std::time::Instant::now() < deadline, "never ready: {}", text(&out.stderr));
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(text(&ready.stdout).starts_with(r#"200 {"checks":"#), "{}", text(&ready.stdout));
    let live = trove(&["health", "--live"], &settings);
    assert_eq!(text(&live.stdout).trim(), r#"200 {"status":"ok"}"#);
    server.kill().unwrap();
    server.wait().unwrap();
    let down = trove(&["health", "--live"], &settings);
    assert!(!down.status.success(), "a stopped server is not healthy");
    let _ = std::fs::remove_dir_all(&dir);
}
