//! Passkeys over HTTP: their error paths on both databases (the browser's successful ceremonies are the
//! Chromium suite's, through its virtual authenticator). An IP address as the public URL's host makes them
//! unavailable; unknown, finished and other kinds of ceremonies are gone; a used code and a taken name are
//! refused at the start; bad credential JSON is a 400 and a forged credential is refused; failed passkey
//! sign-ins count toward the same throttle as passwords; a member's own passkey routes need the page's Origin.

use crate::app::{Db, TestApp, assert_error};
use crate::on_both;
use crate::people::{from_page, json_of, sign_up};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::header::{ORIGIN, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The app at a public URL on `localhost`: a host name browsers accept as the relying party.
async fn on_localhost(db: Db) -> TestApp {
    TestApp::spawn(db, &[("TROVE_PUBLIC_URL", "http://localhost:8080".into())]).await
}

async fn invitation(app: &TestApp, role: &str) -> String {
    let role = trove_domain::people::Role::parse(role).unwrap();
    let link = trove::invite(&app.app, "default", role).await.unwrap();
    link.split("#/join/").nth(1).unwrap().to_owned()
}

async fn post(app: &TestApp, path: &str, body: Value) -> (StatusCode, Value) {
    json_of(app.client.post(app.url(path)).json(&body).send().await.unwrap()).await
}

/// A registration credential that is well formed but made by no authenticator.
fn forged_registration() -> Value {
    let client_data = json!({"type": "webauthn.create", "challenge": "AAAA", "origin": "http://localhost:8080"});
    json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key",
        "response": {
            "attestationObject": URL_SAFE_NO_PAD.encode(b"not an attestation"),
            "clientDataJSON": URL_SAFE_NO_PAD.encode(client_data.to_string()),
        }
    })
}

/// A sign-in assertion that is well formed but signed by no authenticator.
fn forged_assertion() -> Value {
    let client_data = json!({"type": "webauthn.get", "challenge": "AAAA", "origin": "http://localhost:8080"});
    json!({
        "id": "AQID", "rawId": "AQID", "type": "public-key",
        "response": {
            "authenticatorData": URL_SAFE_NO_PAD.encode([0u8; 37]),
            "clientDataJSON": URL_SAFE_NO_PAD.encode(client_data.to_string()),
            "signature": URL_SAFE_NO_PAD.encode([1u8; 64]),
            "userHandle": null,
        }
    })
}

async fn passkeys_need_a_host_name_as_the_public_url(db: Db) {
    // A public URL that is an IP address (the default names a loopback bind `localhost`).
    let app = TestApp::spawn(db, &[("TROVE_PUBLIC_URL", "http://192.168.1.20:8080".to_owned())]).await;
    let code = invitation(&app, "member").await;
    let (status, body) =
        post(&app, "/api/invitations/accept/passkey/start", json!({"code": code, "name": "Ada"})).await;
    assert_error(status, &body, StatusCode::SERVICE_UNAVAILABLE, "passkeys_unavailable");
    assert!(body["error"]["message"].as_str().unwrap().contains("not an IP address"), "{body}");
    let (status, body) = post(&app, "/api/session/passkey/start", json!({"name": "Ada"})).await;
    assert_error(status, &body, StatusCode::SERVICE_UNAVAILABLE, "passkeys_unavailable");
    // The invitation is still good for a password.
    let (status, _) = post(
        &app,
        "/api/invitations/accept",
        json!({"code": code, "name": "Ada", "password": "correct horse battery"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
}

async fn a_passkey_sign_up_is_refused_for_a_used_code_a_taken_name_and_a_bad_credential(db: Db) {
    let app = on_localhost(db).await;
    let code = invitation(&app, "member").await;
    let start = |code: String, name: &str| {
        let body = json!({"code": code, "name": name});
        let app = &app;
        async move { post(app, "/api/invitations/accept/passkey/start", body).await }
    };
    let (status, body) = start("no-such-code".into(), "Grace").await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = start(code.clone(), " ").await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let (status, begun) = start(code.clone(), "Grace").await;
    assert_eq!(status, StatusCode::OK, "{begun}");
    let pk = &begun["options"]["publicKey"];
    assert_eq!((pk["rp"]["id"].as_str(), pk["user"]["name"].as_str()), (Some("localhost"), Some("Grace")));
    assert!(pk["challenge"].as_str().is_some_and(|c| !c.is_empty()), "{begun}");
    let ceremony = begun["ceremony"].as_str().unwrap().to_owned();

    let finish = |ceremony: &str, credential: Value| {
        let body = json!({"ceremony": ceremony, "credential": credential});
        let app = &app;
        async move { post(app, "/api/invitations/accept/passkey/finish", body).await }
    };
    let (status, body) = finish("no-such-ceremony", forged_registration()).await;
    assert_error(status, &body, StatusCode::GONE, "gone");
    let (status, body) = finish(&ceremony, json!({"id": 1})).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    assert!(body["error"]["message"].as_str().unwrap().starts_with("credential"), "{body}");
    // Any finish spends its ceremony: the browser starts again.
    let (status, body) = finish(&ceremony, forged_registration()).await;
    assert_error(status, &body, StatusCode::GONE, "gone");
    let (_, begun) = start(code.clone(), "Grace").await;
    let (status, body) = finish(begun["ceremony"].as_str().unwrap(), forged_registration()).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    assert!(app.client.get(app.url("/api/me")).send().await.unwrap().status() == StatusCode::UNAUTHORIZED);

    // A name someone has is refused at the start, and a used code too.
    sign_up(&app, "viewer", "Hedy").await;
    let (status, body) = start(code.clone(), "hedy").await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    let (status, begun) = start(code.clone(), "Grace").await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = post(
        &app,
        "/api/invitations/accept",
        json!({"code": code, "name": "Grace", "password": "correct horse battery"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = start(code.clone(), "Linus").await;
    assert_error(status, &body, StatusCode::GONE, "gone");
    // The code was used between the start and the finish: the finish is refused before any check.
    let (status, body) = finish(begun["ceremony"].as_str().unwrap(), forged_registration()).await;
    assert_error(status, &body, StatusCode::GONE, "gone");
}

async fn failed_passkey_sign_ins_are_throttled_with_passwords(db: Db) {
    let app = on_localhost(db).await;
    let start = |name: &str| {
        let body = json!({"name": name});
        let app = &app;
        async move { app.client.post(app.url("/api/session/passkey/start")).json(&body).send().await.unwrap() }
    };
    // An unknown name gets options like anyone's, the same made-up credentials each time.
    let (status, first) = json_of(start("Nobody").await).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (_, second) = json_of(start("nobody").await).await;
    assert_eq!(first["options"]["publicKey"]["allowCredentials"], second["options"]["publicKey"]["allowCredentials"]);
    assert_eq!(first["options"]["publicKey"]["rpId"], "localhost");
    assert_eq!(first["options"]["publicKey"]["userVerification"], "required");

    let finish = |ceremony: String, credential: Value| {
        let body = json!({"ceremony": ceremony, "credential": credential});
        let app = &app;
        async move { app.client.post(app.url("/api/session/passkey/finish")).json(&body).send().await.unwrap() }
    };
    let (status, body) = json_of(finish("no-such-ceremony".into(), forged_assertion()).await).await;
    assert_error(status, &body, StatusCode::GONE, "gone");
    // A sign-up's ceremony does not sign anyone in.
    let code = invitation(&app, "member").await;
    let (_, begun) = post(&app, "/api/invitations/accept/passkey/start", json!({"code": code, "name": "Grace"})).await;
    let (status, body) = json_of(finish(begun["ceremony"].as_str().unwrap().into(), forged_assertion()).await).await;
    assert_error(status, &body, StatusCode::GONE, "gone");
    // Bad JSON is a 400 and no failed sign-in.
    let (_, begun) = json_of(start("Nobody").await).await;
    let (status, body) = json_of(finish(begun["ceremony"].as_str().unwrap().into(), json!([1, 2])).await).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    for _ in 0..5 {
        let (status, begun) = json_of(start("Nobody").await).await;
        assert_eq!(status, StatusCode::OK, "{begun}");
        let resp = finish(begun["ceremony"].as_str().unwrap().into(), forged_assertion()).await;
        let (status, body) = json_of(resp).await;
        assert_error(status, &body, StatusCode::UNAUTHORIZED, "unauthorized");
        assert_eq!(body["error"]["message"], "the passkey was not accepted");
    }
    let resp = start("NOBODY").await;
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(resp.headers()[RETRY_AFTER].to_str().unwrap().parse::<u64>().unwrap() > 0);
    // The same throttle refuses a password for the name.
    let (status, body) = post(&app, "/api/session", json!({"name": "Nobody", "password": "whatever it is"})).await;
    assert_error(status, &body, StatusCode::TOO_MANY_REQUESTS, "throttled");
    // Another name is not throttled.
    assert_eq!(start("Somebody").await.status(), StatusCode::OK);
}

async fn a_members_own_passkeys_need_a_session_from_the_page(db: Db) {
    let app = on_localhost(db).await;
    let viewer = sign_up(&app, "viewer", "Vera").await;
    let member = sign_up(&app, "member", "Max").await;

    let (status, list) =
        json_of(from_page(&app, Method::GET, "/api/passkeys", &viewer.cookie).send().await.unwrap()).await;
    assert_eq!((status, list), (StatusCode::OK, json!({"passkeys": []})));
    // A viewer may add a passkey of their own: it is a way to sign in, not a change to the household.
    let resp = from_page(&app, Method::POST, "/api/passkeys/start", &viewer.cookie)
        .json(&json!({"name": "phone"}))
        .send()
        .await;
    let (status, begun) = json_of(resp.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{begun}");
    assert_eq!(begun["options"]["publicKey"]["user"]["name"], "Vera");
    // The cookie from another site's page is refused.
    let resp = app
        .client
        .post(app.url("/api/passkeys/start"))
        .header(reqwest::header::COOKIE, &viewer.cookie)
        .header(ORIGIN, "http://evil.example")
        .json(&json!({"name": "phone"}))
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(resp).await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden");
    // Another member cannot finish Vera's ceremony, and it is spent for Vera too.
    let body = json!({"ceremony": begun["ceremony"], "credential": forged_registration()});
    let resp = from_page(&app, Method::POST, "/api/passkeys/finish", &member.cookie).json(&body).send().await;
    let (status, answer) = json_of(resp.unwrap()).await;
    assert_error(status, &answer, StatusCode::GONE, "gone");
    let resp = from_page(&app, Method::POST, "/api/passkeys/finish", &viewer.cookie).json(&body).send().await;
    let (status, answer) = json_of(resp.unwrap()).await;
    assert_error(status, &answer, StatusCode::GONE, "gone");
    // A forged credential on a fresh ceremony is refused, and a bad name before anything starts.
    let resp = from_page(&app, Method::POST, "/api/passkeys/start", &member.cookie)
        .json(&json!({"name": "laptop"}))
        .send()
        .await;
    let (_, begun) = json_of(resp.unwrap()).await;
    let body = json!({"ceremony": begun["ceremony"], "credential": forged_registration()});
    let resp = from_page(&app, Method::POST, "/api/passkeys/finish", &member.cookie).json(&body).send().await;
    let (status, answer) = json_of(resp.unwrap()).await;
    assert_error(status, &answer, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let resp =
        from_page(&app, Method::POST, "/api/passkeys/start", &member.cookie).json(&json!({"name": " "})).send().await;
    let (status, answer) = json_of(resp.unwrap()).await;
    assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");

    let resp = from_page(&app, Method::DELETE, "/api/passkeys/987654", &member.cookie).send().await;
    let (status, answer) = json_of(resp.unwrap()).await;
    assert_error(status, &answer, StatusCode::NOT_FOUND, "not_found");
    // Without a session or token: 401.
    let (status, answer) = post(&app, "/api/passkeys/start", json!({"name": "phone"})).await;
    assert_error(status, &answer, StatusCode::UNAUTHORIZED, "unauthorized");
}

on_both!(
    passkeys_need_a_host_name_as_the_public_url,
    a_passkey_sign_up_is_refused_for_a_used_code_a_taken_name_and_a_bad_credential,
    failed_passkey_sign_ins_are_throttled_with_passwords,
    a_members_own_passkeys_need_a_session_from_the_page,
);
