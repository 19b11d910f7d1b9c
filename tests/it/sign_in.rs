//! The sign-in throttle, in the database: shared by every process on one database, kept across a restart,
//! counted per client address (behind a trusted proxy, the address it forwards) so that a stranger's failures do
//! not lock a member out; and the made-up passkey credentials of a name without passkeys, the same from every
//! process; and a revoked token refused at once by every process on one PostgreSQL.

use crate::app::{Db, TestApp, assert_error};
use crate::on_both;
use crate::people::{json_of, sign_up};
use reqwest::StatusCode;
use reqwest::header::RETRY_AFTER;
use serde_json::json;

const PASSWORD: &str = "correct horse battery";

/// The settings of a process behind a reverse proxy on loopback, so a test can say where a sign-in comes from.
fn behind_proxy() -> [(&'static str, String); 1] {
    [("TROVE_TRUSTED_PROXIES", "127.0.0.1, ::1".to_owned())]
}

async fn sign_in_from(app: &TestApp, client: &str, name: &str, password: &str) -> reqwest::Response {
    app.client
        .post(app.url("/api/session"))
        .header("x-forwarded-for", client)
        .json(&json!({"name": name, "password": password}))
        .send()
        .await
        .unwrap()
}

async fn the_throttle_is_shared_by_processes_kept_across_restarts_and_spares_the_member(db: Db) {
    let a = TestApp::spawn(db, &behind_proxy()).await;
    sign_up(&a, "member", "Ada").await;
    let b = TestApp::spawn_on(&a.database_url, &behind_proxy()).await;
    let attacker = "203.0.113.9";
    // Five failures for Ada from the attacker, spread over two processes.
    for (i, app) in [&a, &b, &a, &b, &a].into_iter().enumerate() {
        let answer = sign_in_from(app, attacker, "ada", "wrong horse battery").await;
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED, "failure {i}");
    }
    // Either process now refuses the attacker, even with the right password.
    for app in [&a, &b] {
        let refused = sign_in_from(app, attacker, "Ada", PASSWORD).await;
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let wait: u64 = refused.headers()[RETRY_AFTER].to_str().unwrap().parse().unwrap();
        assert!((1..=900).contains(&wait), "{wait}");
        let (status, body) = json_of(refused).await;
        assert_error(status, &body, StatusCode::TOO_MANY_REQUESTS, "throttled");
    }
    // A process started afterwards (a restart) remembers.
    let restarted = TestApp::spawn_on(&a.database_url, &behind_proxy()).await;
    assert_eq!(sign_in_from(&restarted, attacker, "ada", PASSWORD).await.status(), StatusCode::TOO_MANY_REQUESTS);
    // Ada, from home, is not locked out.
    assert_eq!(sign_in_from(&restarted, "198.51.100.7", "ada", PASSWORD).await.status(), StatusCode::OK);
}

async fn one_password_sprayed_over_many_names_is_refused_per_address(db: Db) {
    let app = TestApp::spawn(db, &behind_proxy()).await;
    sign_up(&app, "member", "Ada").await;
    let sprayer = "2001:db8:5:5::10";
    for i in 0..20 {
        let answer = sign_in_from(&app, sprayer, &format!("flood{i}"), "Summer2026!").await;
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED, "name {i}");
    }
    // The next name from that address (another host of the same /64) waits; another address does not.
    let refused = sign_in_from(&app, "2001:db8:5:5::11", "flood20", "Summer2026!").await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(sign_in_from(&app, "192.0.2.44", "flood20", "Summer2026!").await.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(sign_in_from(&app, "192.0.2.45", "ada", PASSWORD).await.status(), StatusCode::OK);
}

async fn a_forwarded_address_from_an_untrusted_peer_is_ignored(db: Db) {
    // No trusted proxies: the header is the client's own text, and every request counts as the peer.
    let app = TestApp::spawn(db, &[]).await;
    sign_up(&app, "member", "Ada").await;
    for i in 0..5 {
        let made_up = format!("198.51.100.{i}");
        assert_eq!(sign_in_from(&app, &made_up, "ada", "wrong horse battery").await.status(), StatusCode::UNAUTHORIZED);
    }
    let refused = sign_in_from(&app, "198.51.100.200", "ada", PASSWORD).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS, "a made-up header does not dodge the throttle");
}

async fn made_up_passkey_credentials_are_the_same_from_every_process(db: Db) {
    let a = TestApp::spawn(db, &[]).await;
    let b = TestApp::spawn_on(&a.database_url, &[]).await;
    // The made-up list of a name may be empty (its length is made up too): over 16 names some are not.
    let mut offered = 0;
    for n in 0..16 {
        let mut seen = Vec::new();
        for app in [&a, &b] {
            let answer = app
                .client
                .post(app.url("/api/session/passkey/start"))
                .json(&json!({"name": format!("nobody here {n}")}))
                .send()
                .await
                .unwrap();
            let (status, body) = json_of(answer).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            seen.push(body["options"]["publicKey"]["allowCredentials"].clone());
        }
        assert_eq!(seen[0], seen[1], "two processes must not tell a name without passkeys by its made-up credentials");
        offered += usize::from(seen[0].as_array().is_some_and(|l| !l.is_empty()));
    }
    assert!(offered > 0, "made-up credentials are offered for some names");
}

/// Waits (at most 20 s: a test that fails says so) until `app` has forgotten token checks more than `seen` times.
async fn heard_after(app: &TestApp, seen: u64) {
    for _ in 0..400 {
        if app.app.services.auth.token_checks().generation() > seen {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the process never heard of the change");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_token_is_refused_at_once_by_every_process_on_postgresql() {
    let a = TestApp::spawn(Db::Postgres, &[]).await;
    let b = TestApp::spawn_on(&a.database_url, &[]).await;
    // B listens (its first "forget everything" comes once it does).
    heard_after(&b, 0).await;
    let (status, _) = b.get_as(&a.token, "/api/items").await;
    assert_eq!(status, StatusCode::OK, "B keeps the token's check");
    let seen = b.app.services.auth.token_checks().generation();

    let (_, tokens) = a.get_as(&a.token, "/api/tokens").await;
    let id = tokens["tokens"][0]["id"].as_i64().unwrap();
    let revoked = a.client.delete(a.url(&format!("/api/tokens/{id}"))).bearer_auth(&a.token).send().await.unwrap();
    assert_eq!(revoked.status(), StatusCode::NO_CONTENT);
    heard_after(&b, seen).await;
    // Heard: refused at once, though B's check would otherwise be kept for 30 s.
    let (status, body) = b.get_as(&a.token, "/api/items").await;
    assert_error(status, &body, StatusCode::UNAUTHORIZED, "unauthorized");
}

async fn any_text_typed_as_a_name_is_counted_without_a_server_error(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    for name in ["nul\u{0}name", "\u{7}bell", &"long".repeat(50), "ünïcödé 名前"] {
        let answer = sign_in_from(&app, "192.0.2.1", name, "wrong horse battery").await;
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED, "{name:?}");
    }
    // Past the request's own limit, a clear 400, not a server error.
    let (status, body) = json_of(sign_in_from(&app, "192.0.2.1", &"long".repeat(500), "wrong").await).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
}

on_both!(
    any_text_typed_as_a_name_is_counted_without_a_server_error,
    the_throttle_is_shared_by_processes_kept_across_restarts_and_spares_the_member,
    one_password_sprayed_over_many_names_is_refused_per_address,
    a_forwarded_address_from_an_untrusted_peer_is_ignored,
    made_up_passkey_credentials_are_the_same_from_every_process,
);
