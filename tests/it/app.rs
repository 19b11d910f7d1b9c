//! Starting the whole app for a test.

use poem::listener::{Acceptor, Listener, TcpListener};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use tokio::sync::oneshot;

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// Runs a scenario `async fn name(db: Db)` once per backend.
#[macro_export]
macro_rules! on_both {
    ($($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    super::$scenario($crate::app::Db::Sqlite).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    super::$scenario($crate::app::Db::Postgres).await
                }
            }
        )+
    };
}

/// A fresh database of the given kind.
pub async fn fresh_database(db: Db) -> String {
    match db {
        Db::Sqlite => trove_db::testing::fresh_sqlite_url(),
        Db::Postgres => trove_db::testing::fresh_postgres_url().await.expect("a fresh postgresql database"),
    }
}

/// A running app.
pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    /// A token of the default household.
    pub token: String,
    pub app: trove::App,
    pub database_url: String,
    _shutdown: oneshot::Sender<()>,
}

impl TestApp {
    /// The app on `db` with the local planner and the demo inventory.
    pub async fn demo(db: Db) -> Self {
        let app = Self::spawn(db, &[]).await;
        assert!(trove::seed_demo(&app.app).await.unwrap() > 30);
        app
    }

    /// The app on `db` with extra settings (e.g. `MODEL_API_KEY` and `MODEL_API_URL` of a fake API).
    pub async fn spawn(db: Db, settings: &[(&str, String)]) -> Self {
        let database_url = fresh_database(db).await;
        Self::spawn_on(&database_url, settings).await
    }

    /// The app on an existing database.
    pub async fn spawn_on(database_url: &str, settings: &[(&str, String)]) -> Self {
        let mut vars: HashMap<String, String> = settings.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        vars.insert("DATABASE_URL".into(), database_url.to_owned());
        // Intake keeps its photos: media files go to a temporary directory unless a test names its own.
        vars.entry("TROVE_DATA_DIR".into())
            .or_insert_with(|| std::env::temp_dir().join("trove-it-data").display().to_string());
        let config = trove::Config::from_vars(|k| vars.get(k).cloned()).expect("config");
        let app = trove::build(&config).await.expect("the app builds");
        // Served here as `trove serve` serves: hearing access changes from other processes.
        let _hearing = app.hear_access_changes();
        let token = trove::issue_token(&app, "default", "test").await.unwrap();
        let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
        let addr = acceptor.local_addr()[0].as_socket_addr().copied().unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        let services = app.services.clone();
        tokio::spawn(async move {
            trove_http::serve(acceptor, services, async move {
                let _ = rx.await;
            })
            .await
            .unwrap();
        });
        Self {
            base: format!("http://{addr}"),
            client: reqwest::Client::new(),
            token,
            app,
            database_url: database_url.to_owned(),
            _shutdown: tx,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A token of another household.
    pub async fn token_of(&self, household: &str) -> String {
        trove::issue_token(&self.app, household, "someone").await.unwrap()
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let resp = req.send().await.expect("the server answers");
        let status = resp.status();
        let text = resp.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body)
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.get_as(&self.token, path).await
    }

    pub async fn get_as(&self, token: &str, path: &str) -> (StatusCode, Value) {
        self.send(self.client.get(self.url(path)).bearer_auth(token)).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.post_as(&self.token, path, body).await
    }

    pub async fn post_as(&self, token: &str, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.client.post(self.url(path)).bearer_auth(token).json(&body)).await
    }

    pub async fn post_with_key(&self, path: &str, body: Value, key: &str) -> (StatusCode, Value) {
        self.send(self.client.post(self.url(path)).bearer_auth(&self.token).header("Idempotency-Key", key).json(&body))
            .await
    }

    /// Uploads media to an item (`POST /api/items/{item}/media`, multipart).
    pub async fn upload_media(&self, item: i64, form: reqwest::multipart::Form) -> (StatusCode, Value) {
        self.send(
            self.client.post(self.url(&format!("/api/items/{item}/media"))).bearer_auth(&self.token).multipart(form),
        )
        .await
    }

    pub async fn put(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.client.put(self.url(path)).bearer_auth(&self.token).json(&body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.send(self.client.patch(self.url(path)).bearer_auth(&self.token).json(&body)).await
    }

    /// Creates an item and answers its id.
    pub async fn create_item(&self, body: Value) -> i64 {
        let (status, item) = self.post("/api/items", body).await;
        assert_eq!(status, StatusCode::CREATED, "{item}");
        item["id"].as_i64().unwrap()
    }

    /// Every item of the household (gone included), as the API lists them.
    pub async fn all_items(&self) -> Vec<Value> {
        let (status, page) = self.get("/api/items?include_gone=true&limit=500").await;
        assert_eq!(status, StatusCode::OK, "{page}");
        page["items"].as_array().unwrap().clone()
    }
}

/// A one-page PDF, as a receipt or a manual is kept.
pub const PDF: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

/// A minimal valid item.
pub fn item(name: &str, item_type: &str) -> Value {
    json!({"name": name, "item_type": item_type, "profile": "", "condition": "good", "intent": "keep"})
}

/// Asserts the API's error shape and code.
pub fn assert_error(status: StatusCode, body: &Value, want_status: StatusCode, want_code: &str) {
    assert_eq!(status, want_status, "{body}");
    assert_eq!(body["error"]["code"], want_code, "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
}

/// The events of a `text/event-stream` answer, in order: (`event:`, the JSON of `data:`).
async fn sse_events(response: reqwest::Response) -> Vec<(String, Value)> {
    assert_eq!(response.status(), StatusCode::OK);
    let kind = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(kind.starts_with("text/event-stream"), "{kind}");
    let text = response.text().await.unwrap();
    text.split("\n\n")
        .filter_map(|block| {
            let mut name = "message".to_owned();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(n) = line.strip_prefix("event:") {
                    name = n.trim().to_owned();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            (!data.is_empty()).then(|| (name, serde_json::from_str(&data).unwrap()))
        })
        .collect()
}

impl TestApp {
    /// POSTs `body` to `path` asking for server-sent events (`Accept: text/event-stream`); answers the events.
    pub async fn post_streamed(&self, path: &str, body: Value) -> Vec<(String, Value)> {
        let response = self
            .client
            .post(self.url(path))
            .bearer_auth(&self.token)
            .header("Accept", "text/event-stream")
            .json(&body)
            .send()
            .await
            .unwrap();
        sse_events(response).await
    }
}
