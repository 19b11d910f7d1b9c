//! Single sign-on against a real OpenID provider: `oidc-provider` (tests/e2e/oidc-provider.mjs, the certified
//! Node implementation), started here with a client for Trove, one for another application and three people. A
//! browser is played by hand: no redirect followed, each site's cookies kept, the provider's own login form filled.

use crate::app::{Db, TestApp};
use crate::on_both;
use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};

/// Where the provider sends the browser back: Trove's public URL here (the test carries the answer over itself).
const PUBLIC_URL: &str = "http://trove.test";

on_both!(single_sign_on_makes_members_by_group_or_invitation_and_finds_them_by_issuer_and_subject);

/// The provider, killed when dropped.
struct Provider {
    issuer: String,
    child: Child,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    /// `mint`: "" (honest), "audience" or "expired" (see the script).
    fn start(mint: &str) -> Self {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/oidc-provider.mjs");
        let mut child = Command::new(std::env::var("NODE").unwrap_or_else(|_| "node".into()))
            .arg(&script)
            .arg(format!("{PUBLIC_URL}/api/session/oidc/callback"))
            .env("OIDC_MINT", mint)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs (tests/e2e: npm ci installs oidc-provider)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let started: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("oidc-provider did not start (is `npm ci` done in tests/e2e?): {line:?}"));
        Self { issuer: started["issuer"].as_str().unwrap().to_owned(), child }
    }
}

/// Trove configured for `provider`, mapping `trove-owners` to owner and `trove-viewers` to viewer.
async fn trove(db: Db, provider: &Provider, extra: &[(&str, &str)]) -> TestApp {
    let mut settings = vec![
        ("TROVE_PUBLIC_URL", PUBLIC_URL.to_owned()),
        ("TROVE_OIDC_ISSUER", provider.issuer.clone()),
        ("TROVE_OIDC_CLIENT_ID", "trove".to_owned()),
        ("TROVE_OIDC_CLIENT_SECRET", "trove-secret".to_owned()),
        ("TROVE_OIDC_NAME", "Test ID".to_owned()),
        ("TROVE_OIDC_OWNER_GROUPS", "trove-owners".to_owned()),
        ("TROVE_OIDC_VIEWER_GROUPS", "trove-viewers".to_owned()),
    ];
    settings.extend(extra.iter().map(|(k, v)| (*k, (*v).to_owned())));
    TestApp::spawn(db, &settings).await
}

/// A browser: follows nothing by itself, keeps each host's cookies.
struct Browser {
    http: reqwest::Client,
    cookies: BTreeMap<(String, String), String>,
}

impl Browser {
    fn new() -> Self {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Self { http, cookies: BTreeMap::new() }
    }

    fn host(url: &str) -> String {
        reqwest::Url::parse(url).unwrap().authority().to_owned()
    }

    async fn send(&mut self, req: reqwest::RequestBuilder, url: &str) -> reqwest::Response {
        let host = Self::host(url);
        let jar: Vec<String> =
            self.cookies.iter().filter(|((h, _), _)| *h == host).map(|((_, n), v)| format!("{n}={v}")).collect();
        let req = if jar.is_empty() { req } else { req.header(COOKIE, jar.join("; ")) };
        let resp = req.send().await.unwrap();
        for set in resp.headers().get_all(SET_COOKIE) {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            let gone = set.to_str().unwrap().to_ascii_lowercase().contains("max-age=0");
            if value.is_empty() || gone {
                self.cookies.remove(&(host.clone(), name.to_owned()));
            } else {
                self.cookies.insert((host.clone(), name.to_owned()), value.to_owned());
            }
        }
        resp
    }

    async fn get(&mut self, url: &str) -> reqwest::Response {
        let req = self.http.get(url);
        self.send(req, url).await
    }

    fn cookie(&self, url: &str, name: &str) -> Option<String> {
        self.cookies.get(&(Self::host(url), name.to_owned())).cloned()
    }
}

fn location(resp: &reqwest::Response, base: &str) -> String {
    let to = resp.headers().get(LOCATION).unwrap_or_else(|| panic!("no Location: {}", resp.status())).to_str().unwrap();
    reqwest::Url::parse(base).unwrap().join(to).unwrap().to_string()
}

/// Begins a sign-in at Trove (`query`: e.g. `?invitation=...`) and signs in at the provider as `login`: the
/// callback URL the provider sends the browser to (on Trove's public URL), not yet followed.
async fn through_the_provider(b: &mut Browser, app: &TestApp, query: &str, login: &str) -> String {
    let start = app.url(&format!("/api/session/oidc/start{query}"));
    let resp = b.get(&start).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "start: {}", resp.text().await.unwrap());
    let mut url = location(&resp, &start);
    let authorize = reqwest::Url::parse(&url).unwrap();
    let asked: BTreeMap<_, _> = authorize.query_pairs().into_owned().collect();
    assert_eq!(asked.get("code_challenge_method").map(String::as_str), Some("S256"), "PKCE: {url}");
    assert!(asked.contains_key("state") && asked.contains_key("nonce"), "{url}");
    assert!(b.cookie(&start, "trove_sso_state").is_some(), "the browser keeps the state");
    for _ in 0..10 {
        if url.starts_with(PUBLIC_URL) {
            return url;
        }
        let resp = b.get(&url).await;
        if resp.status() == StatusCode::OK {
            // The provider's login form: its action, filled with the login (any password).
            let page = resp.text().await.unwrap();
            let action = page.split("action=\"").nth(1).and_then(|r| r.split('"').next()).expect("a login form");
            let submit = reqwest::Url::parse(&url).unwrap().join(action).unwrap().to_string();
            let form = format!("prompt=login&login={login}&password=any");
            let req = b
                .http
                .post(&submit)
                .header(reqwest::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(form);
            let resp = b.send(req, &submit).await;
            assert!(resp.status().is_redirection(), "login: {}", resp.status());
            url = location(&resp, &submit);
        } else {
            assert!(resp.status().is_redirection(), "{url}: {} {}", resp.status(), resp.text().await.unwrap());
            url = location(&resp, &url);
        }
    }
    panic!("the provider did not send the browser back");
}

/// Follows the provider's redirect to Trove's callback (its public URL is this test's server).
async fn come_back(b: &mut Browser, app: &TestApp, callback: &str) -> reqwest::Response {
    let path = callback.strip_prefix(PUBLIC_URL).unwrap();
    b.get(&app.url(path)).await
}

/// A full sign-in as `login`: the member signed in (`GET /api/me` with the session cookie), or the refusal.
async fn sign_in(app: &TestApp, query: &str, login: &str) -> Result<Value, (StatusCode, Value)> {
    let mut b = Browser::new();
    let callback = through_the_provider(&mut b, app, query, login).await;
    let resp = come_back(&mut b, app, &callback).await;
    if resp.status() != StatusCode::SEE_OTHER {
        let status = resp.status();
        return Err((status, resp.json().await.unwrap()));
    }
    assert_eq!(resp.headers()[LOCATION], "/");
    let session = b.cookie(&app.base, "trove_session").expect("the session cookie");
    let me =
        app.client.get(app.url("/api/me")).header(COOKIE, format!("trove_session={session}")).send().await.unwrap();
    assert_eq!(me.status(), StatusCode::OK);
    Ok(me.json().await.unwrap())
}

async fn members(app: &TestApp) -> Vec<Value> {
    let (status, body) = app.get("/api/members").await;
    assert_eq!(status, StatusCode::OK);
    body["members"].as_array().unwrap().clone()
}

async fn single_sign_on_makes_members_by_group_or_invitation_and_finds_them_by_issuer_and_subject(db: Db) {
    let provider = Provider::start("");
    let app = trove(db, &provider, &[]).await;
    let (status, options) = app.get("/api/session/options").await;
    assert_eq!((status, &options), (StatusCode::OK, &json!({"passwords": true, "sso": "Test ID"})));

    // Alice is in trove-owners: her first sign-in makes her an owner of the default household.
    let alice = sign_in(&app, "", "alice").await.unwrap();
    assert_eq!(alice["member"]["name"], "alice");
    assert_eq!(alice["member"]["role"], "owner");
    assert_eq!(alice["household"]["name"], "default");
    let before = members(&app).await.len();
    // Her next sign-in finds her by issuer and subject: the same member, no one added.
    let again = sign_in(&app, "", "alice").await.unwrap();
    assert_eq!(again["member"]["id"], alice["member"]["id"]);
    assert_eq!(members(&app).await.len(), before);

    // Carol's provider account has Alice's e-mail: she is someone else (a viewer by her group), never Alice.
    let carol = sign_in(&app, "", "carol").await.unwrap();
    assert_ne!(carol["member"]["id"], alice["member"]["id"]);
    assert_eq!((carol["member"]["name"].as_str(), carol["member"]["role"].as_str()), (Some("carol"), Some("viewer")));

    // Bob's group maps to nothing: refused, no one added.
    let (status, body) = sign_in(&app, "", "bob").await.unwrap_err();
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("invitation"), "{body}");
    assert_eq!(members(&app).await.len(), before + 1);
    // With an invitation he joins, with its household and role; it is used up; he then signs in without it.
    let link = trove::invite(&app.app, "default", trove_domain::people::Role::Member).await.unwrap();
    let code = link.rsplit('/').next().unwrap().to_owned();
    let bob = sign_in(&app, &format!("?invitation={code}"), "bob").await.unwrap();
    assert_eq!((bob["member"]["name"].as_str(), bob["member"]["role"].as_str()), (Some("bob"), Some("member")));
    let resp = app.client.get(app.url(&format!("/api/session/oidc/start?invitation={code}"))).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::GONE, "an invitation works once");
    let returning = sign_in(&app, "", "bob").await.unwrap();
    assert_eq!(returning["member"]["id"], bob["member"]["id"]);

    // The members SSO made have no password: their names do not sign in with one.
    let (status, _) = app.post("/api/session", json!({"name": "alice", "password": "any password at all"})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_state_and_a_replayed_code_are_refused_and_write_nothing() {
    let provider = Provider::start("");
    let app = trove(Db::Sqlite, &provider, &[]).await;
    let before = members(&app).await.len();

    // A state not the one this browser began with (a forged link): refused, and the sign-in is still there.
    let mut b = Browser::new();
    let callback = through_the_provider(&mut b, &app, "", "alice").await;
    let state =
        reqwest::Url::parse(&callback).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
    let forged = callback.replace(&format!("state={state}"), "state=someone-elses");
    // A bad request (RFC 6749's CSRF defence), not a failed sign-in.
    let resp = come_back(&mut b, &app, &forged).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("state"), "{body}");
    // A person's browser is sent back to the sign-in page with the reason instead.
    let path = forged.strip_prefix(PUBLIC_URL).unwrap();
    let req = b.http.get(app.url(path)).header(reqwest::header::ACCEPT, "text/html,application/xhtml+xml");
    let resp = b.send(req, &app.url(path)).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let to = resp.headers()[LOCATION].to_str().unwrap().to_owned();
    assert!(to.starts_with("/#/sign-in/refused?why=single%20sign-on%20failed"), "{to}");
    // The right callback from another browser (no state cookie): refused too.
    let mut other = Browser::new();
    let resp = come_back(&mut other, &app, &callback).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(members(&app).await.len(), before, "nothing written");

    // The real one signs in; the same callback again (a replay) is refused: the sign-in is finished.
    let resp = come_back(&mut b, &app, &callback).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let resp = come_back(&mut b, &app, &callback).await;
    assert_eq!(resp.status(), StatusCode::GONE);
    // The used code with a fresh sign-in's state: the provider refuses a code used once.
    let mut c = Browser::new();
    let fresh = through_the_provider(&mut c, &app, "", "carol").await;
    let fresh_state =
        reqwest::Url::parse(&fresh).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
    let replayed = callback.replace(&format!("state={state}"), &format!("state={fresh_state}"));
    let resp = come_back(&mut c, &app, &replayed).await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let body: Value = resp.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("refused the code"), "{body}");
    assert_eq!(members(&app).await.len(), before + 1, "only alice was added");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_token_for_another_audience_or_expired_is_refused() {
    for (mint, why) in [("audience", "audience"), ("expired", "expired")] {
        let provider = Provider::start(mint);
        let app = trove(Db::Sqlite, &provider, &[]).await;
        let before = members(&app).await.len();
        let (status, body) = sign_in(&app, "", "alice").await.unwrap_err();
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{mint}: {body}");
        let message = body["error"]["message"].as_str().unwrap().to_ascii_lowercase();
        assert!(message.contains("id token") && message.contains(why), "{mint}: {message}");
        assert_eq!(members(&app).await.len(), before, "{mint}: nothing written");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_sso_only_passwords_neither_sign_in_nor_join() {
    let provider = Provider::start("");
    let app = trove(Db::Sqlite, &provider, &[("TROVE_OIDC_ONLY", "1")]).await;
    let (_, options) = app.get("/api/session/options").await;
    assert_eq!(options, json!({"passwords": false, "sso": "Test ID"}));
    let link = trove::invite(&app.app, "default", trove_domain::people::Role::Member).await.unwrap();
    let code = link.rsplit('/').next().unwrap();
    let body = json!({"code": code, "name": "Dana", "password": "a long enough password"});
    let (status, answer) = app.post("/api/invitations/accept", body).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    let (status, answer) =
        app.post("/api/session", json!({"name": "Dana", "password": "a long enough password"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("passwords are turned off"), "{answer}");
    // Single sign-on still works.
    assert_eq!(sign_in(&app, "", "alice").await.unwrap()["member"]["role"], "owner");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_sso_its_routes_say_it_is_not_configured() {
    let app = TestApp::spawn(Db::Sqlite, &[]).await;
    let (_, options) = app.get("/api/session/options").await;
    assert_eq!(options, json!({"passwords": true, "sso": null}));
    let resp = app.client.get(app.url("/api/session/oidc/start")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let body: Value = resp.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("TROVE_OIDC_ISSUER"), "{body}");
}
