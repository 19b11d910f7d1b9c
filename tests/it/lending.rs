//! Lending, maintenance and reminders (issue 29): loans and their history, schedules, what falls due, reminders
//! delivered to a real SMTP server (aiosmtpd) and a local webhook receiver exactly once, also with two processes
//! on one database and one of them killed, and the calendar feed read by the `icalendar` Python package.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use chrono::{Days, NaiveDate, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn today() -> NaiveDate {
    Utc::now().date_naive()
}

fn day(offset: i64) -> String {
    let t = today();
    let d = if offset >= 0 {
        t.checked_add_days(Days::new(offset as u64))
    } else {
        t.checked_sub_days(Days::new(offset.unsigned_abs()))
    };
    d.unwrap().to_string()
}

async fn history_actions(app: &TestApp, id: i64) -> Vec<(String, Value)> {
    let (status, history) = app.get(&format!("/api/items/{id}/history")).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap().to_owned(), e["changes"].clone()))
        .collect()
}

async fn lend_and_return_with_history(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let cells = app
        .create_item(json!({"name": "AA cells", "item_type": "battery", "profile": "", "condition": "good",
        "intent": "keep", "quantity": 10}))
        .await;

    // Refused, and nothing written: a date before the start, a start in the future, both kinds of borrower, no
    // borrower name, an item of no one, more units than there are.
    let sam = json!({"name": "Sam next door", "contact": "07700 900123"});
    for (body, want, code) in [
        (json!({"to": sam, "due": day(-1)}), StatusCode::UNPROCESSABLE_ENTITY, "rule"),
        (json!({"to": sam, "since": day(2)}), StatusCode::UNPROCESSABLE_ENTITY, "rule"),
        (json!({"to": {"member_id": 1, "name": "Sam"}}), StatusCode::BAD_REQUEST, "invalid"),
        (json!({"to": {"name": "  "}}), StatusCode::UNPROCESSABLE_ENTITY, "rule"),
        (json!({"to": sam, "units": 2}), StatusCode::CONFLICT, "conflict"),
        (json!({"to": {"member_id": 999_999}}), StatusCode::NOT_FOUND, "not_found"),
    ] {
        let (status, answer) = app.post(&format!("/api/items/{drill}/loans"), body.clone()).await;
        assert_error(status, &answer, want, code);
    }
    let (status, answer) = app.post("/api/items/999999/loans", json!({"to": sam})).await;
    assert_error(status, &answer, StatusCode::NOT_FOUND, "not_found");
    let (_, loans) = app.get("/api/loans").await;
    assert_eq!(loans["loans"], json!([]), "nothing was lent");

    // The drill, lent whole: it is `lent`, shows its loan, has nothing left to lend or build with.
    let (status, made) = app.post(&format!("/api/items/{drill}/loans"), json!({"to": sam, "due": day(7)})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let loan = made["loan"]["id"].as_i64().unwrap();
    assert_eq!(made["item"]["availability"], "lent");
    assert_eq!(made["item"]["loan"], json!({"id": loan, "to": "Sam next door", "since": day(0), "due": day(7)}));
    assert_eq!((made["item"]["units_available"].as_u64(), made["item"]["units_lent"].as_u64()), (Some(0), Some(1)));
    let (_, read) = app.get(&format!("/api/items/{drill}")).await;
    assert_eq!(read, made["item"], "the read answers what the loan answered");
    let (status, again) = app.post(&format!("/api/items/{drill}/loans"), json!({"to": {"name": "Alex"}})).await;
    assert_error(status, &again, StatusCode::CONFLICT, "conflict");
    let (status, changed) = app.patch(&format!("/api/items/{drill}"), json!({"availability": "available"})).await;
    assert_error(status, &changed, StatusCode::CONFLICT, "conflict");

    // A stock lends units: what is lent counts like what projects hold.
    let (status, made) =
        app.post(&format!("/api/items/{cells}/loans"), json!({"to": {"name": "Alex"}, "units": 4})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made["item"]["availability"], "available");
    assert_eq!((made["item"]["units_lent"].as_u64(), made["item"]["units_available"].as_u64()), (Some(4), Some(6)));
    let (status, too_many) =
        app.post(&format!("/api/items/{cells}/loans"), json!({"to": {"name": "Kim"}, "units": 7})).await;
    assert_error(status, &too_many, StatusCode::CONFLICT, "conflict");
    let (status, under) = app.patch(&format!("/api/items/{cells}"), json!({"quantity": 3})).await;
    assert_error(status, &under, StatusCode::CONFLICT, "conflict");

    let (_, open) = app.get("/api/loans?open=true").await;
    let names: Vec<&str> = open["loans"].as_array().unwrap().iter().map(|l| l["to"].as_str().unwrap()).collect();
    assert_eq!(names, ["Sam next door", "Alex"], "due back first, then without a date: {open}");
    assert_eq!(open["loans"][0]["contact"], "07700 900123");
    let (_, overdue) = app.get("/api/loans?overdue=true").await;
    assert_eq!(overdue["loans"], json!([]));

    // Returned: available again, its history says who had it.
    let (status, back) = app.post(&format!("/api/loans/{loan}/return"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{back}");
    assert!(back["returned_at"].is_string(), "{back}");
    let (status, twice) = app.post(&format!("/api/loans/{loan}/return"), json!({})).await;
    assert_error(status, &twice, StatusCode::CONFLICT, "conflict");
    let (status, none) = app.post("/api/loans/999999/return", json!({})).await;
    assert_error(status, &none, StatusCode::NOT_FOUND, "not_found");
    let (_, read) = app.get(&format!("/api/items/{drill}")).await;
    assert_eq!((read["availability"].clone(), read["loan"].clone()), (json!("available"), Value::Null), "{read}");
    assert_eq!(read["units_available"], 1);
    let events = history_actions(&app, drill).await;
    let actions: Vec<&str> = events.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(actions, ["create", "lend", "return"]);
    let lent = &events[1].1;
    assert!(
        lent.as_array()
            .unwrap()
            .iter()
            .any(|c| c["field"] == "loan" && c["after"] == format!("Sam next door, due back {}", day(7))),
        "{lent}"
    );
    assert!(lent.as_array().unwrap().iter().any(|c| c["field"] == "availability" && c["after"] == "lent"), "{lent}");

    // A member borrows too, and another household sees none of it.
    let (_, members) = app.get("/api/members").await;
    let me = members["members"][0]["id"].as_i64().unwrap();
    let (status, made) = app.post(&format!("/api/items/{drill}/loans"), json!({"to": {"member_id": me}})).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let (_, mine) = app.get(&format!("/api/loans?member_id={me}")).await;
    assert_eq!(mine["loans"].as_array().unwrap().len(), 1, "{mine}");
    let other = app.token_of("elsewhere").await;
    let (_, theirs) = app.get_as(&other, "/api/loans").await;
    assert_eq!(theirs["loans"], json!([]));
    let (status, _) = app.post_as(&other, &format!("/api/loans/{}/return", made["loan"]["id"]), json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

async fn schedules_move_on_and_everything_due_is_listed(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let kettle = app
        .create_item(json!({"name": "Kettle", "item_type": "appliance", "profile": "", "condition": "good",
        "intent": "keep", "location": "Kitchen / Counter", "warranty_until": day(10)}))
        .await;
    let drill = app.create_item(item("Drill", "tool")).await;

    for (body, want) in [
        (json!({"title": "Descale", "every": {"days": 0}}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"title": "", "every": {"months": 3}}), StatusCode::UNPROCESSABLE_ENTITY),
        (json!({"title": "Descale", "every": {"days": 3, "months": 1}}), StatusCode::BAD_REQUEST),
        (json!({"title": "Descale", "every": {"weeks": 1}}), StatusCode::BAD_REQUEST),
    ] {
        let (status, answer) = app.post(&format!("/api/items/{kettle}/schedules"), body.clone()).await;
        assert_eq!(status, want, "{body}: {answer}");
    }
    let (status, s) = app
        .post(
            &format!("/api/items/{kettle}/schedules"),
            json!({"title": "Descale", "every": {"months": 3}, "next": day(-1)}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{s}");
    let schedule = s["id"].as_i64().unwrap();
    let (status, s2) = app
        .post(&format!("/api/items/{drill}/schedules"), json!({"title": "Oil the chuck", "every": {"days": 20}}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{s2}");
    assert_eq!(s2["next"], day(20), "one period from today");
    let (_, loan) = app
        .post(&format!("/api/items/{drill}/loans"), json!({"to": {"name": "Sam"}, "since": day(-9), "due": day(-2)}))
        .await;
    assert_eq!(loan["loan"]["overdue"], true, "{loan}");

    let (status, due) = app.get("/api/due?within_days=30").await;
    assert_eq!(status, StatusCode::OK, "{due}");
    let seen: Vec<(String, String, bool)> = due["due"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (d["kind"].as_str().unwrap().into(), d["on"].as_str().unwrap().into(), d["overdue"].as_bool().unwrap())
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("loan_back".into(), day(-2), true),
            ("maintenance".into(), day(-1), true),
            ("warranty_ends".into(), day(10), false),
            ("maintenance".into(), day(20), false),
        ],
        "{due}"
    );
    assert_eq!(due["overdue"], 2);
    assert_eq!(
        (due["due"][2]["item_name"].as_str(), due["due"][2]["place"].as_str()),
        (Some("Kettle"), Some("Kitchen / Counter"))
    );
    let (_, soon) = app.get("/api/due?within_days=5").await;
    assert_eq!(soon["due"].as_array().unwrap().len(), 2, "only the overdue within 5 days: {soon}");
    let (status, _) = app.get("/api/due?within_days=99999").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Done: logged, and the next date moves a period on from the day it was done.
    let (status, future) = app.post(&format!("/api/schedules/{schedule}/done"), json!({"at": day(1)})).await;
    assert_error(status, &future, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let (status, moved) = app
        .post(
            &format!("/api/schedules/{schedule}/done"),
            json!({"note": "citric acid", "cost": {"amount": 250, "currency": "EUR"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    let three_months = today().checked_add_months(chrono::Months::new(3)).unwrap().to_string();
    assert_eq!(moved["next"], three_months);
    let (_, log) = app.get(&format!("/api/items/{kettle}/maintenance")).await;
    assert_eq!(log["done"].as_array().unwrap().len(), 1, "{log}");
    assert_eq!(
        (log["done"][0]["at"].as_str(), log["done"][0]["note"].as_str()),
        (Some(day(0).as_str()), Some("citric acid"))
    );
    assert_eq!(log["done"][0]["cost"], json!({"amount": 250, "currency": "EUR"}));
    let actions: Vec<String> = history_actions(&app, kettle).await.into_iter().map(|(a, _)| a).collect();
    assert_eq!(actions, ["create", "schedule", "maintain"]);
    let (_, all) = app.get("/api/schedules").await;
    assert_eq!(all["schedules"].as_array().unwrap().len(), 2);
    let (_, due) = app.get("/api/due?within_days=30").await;
    assert_eq!(due["overdue"], 1, "the maintenance done is no longer due: {due}");
}

on_both!(lend_and_return_with_history, schedules_move_on_and_everything_due_is_listed);

/// The Python of the test tools (aiosmtpd, icalendar): `TROVE_TEST_PYTHON`, or the venv `.ci/run` makes.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("TROVE_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/trove-ci/py-venv/bin/python3");
    assert!(venv.is_file(), "the test tools' Python is missing: run .ci/run, or set TROVE_TEST_PYTHON");
    venv
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A real SMTP server (aiosmtpd) keeping what it receives in a maildir; killed when dropped.
struct Smtp {
    child: Child,
    port: u16,
    maildir: PathBuf,
}

impl Drop for Smtp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Smtp {
    fn start(dir: &Path) -> Self {
        let port = free_port();
        let maildir = dir.join("maildir");
        let child = Command::new(python())
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}"), "-c", "aiosmtpd.handlers.Mailbox"])
            .arg(&maildir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("aiosmtpd starts");
        let smtp = Smtp { child, port, maildir };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "aiosmtpd did not listen within 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
        smtp
    }

    fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message received, as text.
    fn messages(&self) -> Vec<String> {
        let Ok(all) = std::fs::read_dir(self.maildir.join("new")) else { return Vec::new() };
        let mut out: Vec<String> = all.map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap()).collect();
        out.sort();
        out
    }
}

/// A header of a mail, its folded lines joined (RFC 5322).
fn header(mail: &str, name: &str) -> String {
    let unfolded = mail.replace("\r\n", "\n").replace("\n ", " ").replace("\n\t", " ");
    let prefix = format!("{name}: ");
    unfolded.lines().find_map(|l| l.strip_prefix(&prefix)).unwrap_or_else(|| panic!("no {name} in {mail}")).to_owned()
}

/// A webhook receiver: answers 500 to its first `failures` calls, then 200; keeps every call.
async fn receiver(failures: u64) -> MockServer {
    let server = MockServer::start().await;
    if failures > 0 {
        Mock::given(method("POST"))
            .and(path("/hook"))
            .respond_with(ResponseTemplate::new(500).set_body_string("busy"))
            .up_to_n_times(failures)
            .with_priority(1)
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/hook"))
        .respond_with(ResponseTemplate::new(200))
        .with_priority(2)
        .mount(&server)
        .await;
    server
}

async fn hook_calls(server: &MockServer) -> Vec<wiremock::Request> {
    server.received_requests().await.unwrap_or_default()
}

/// HMAC-SHA256 of `body` under `key`, hex, by Python's `hmac` (not the code under test).
fn python_hmac(key: &str, body: &[u8]) -> String {
    let out = Command::new(python())
        .args(["-c", "import hmac,hashlib,sys; k=sys.argv[1].encode(); print(hmac.new(k, sys.stdin.buffer.read(), hashlib.sha256).hexdigest())", key])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            c.stdin.take().unwrap().write_all(body)?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trove-lending-{name}-{}-{}", std::process::id(), free_port()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn an_overdue_loan_is_reminded_once_by_email_and_webhook(db: Db) {
    let dir = scratch("remind");
    let smtp = Smtp::start(&dir);
    let hooks = receiver(1).await;
    let settings = [
        ("TROVE_SMTP_URL", smtp.url()),
        ("TROVE_MAIL_FROM", "Trove <trove@example.org>".to_owned()),
        ("TROVE_WEBHOOK_ALLOW_PRIVATE", "1".to_owned()),
        ("TROVE_REMINDERS_EVERY", "1s".to_owned()),
    ];
    let app = TestApp::spawn(db, &settings).await;
    let hook = format!("{}/hook", hooks.uri());
    let (status, set) =
        app.put("/api/me/notifications", json!({"email": "sam@example.org", "urls": [hook], "lead_days": 3})).await;
    assert_eq!(status, StatusCode::OK, "{set}");
    let (_, read) = app.get("/api/me/notifications").await;
    assert_eq!(read, set);

    let drill = app
        .create_item(json!({"name": "Cordless drill", "item_type": "tool", "profile": "", "condition": "good",
        "intent": "keep", "location": "Garage"}))
        .await;
    let (status, made) = app
        .post(
            &format!("/api/items/{drill}/loans"),
            json!({"to": {"name": "Sam next door"}, "since": day(-10), "due": day(-3)}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let (_, due) = app.get("/api/due").await;
    assert_eq!((due["due"][0]["kind"].as_str(), due["due"][0]["overdue"].as_bool()), (Some("loan_back"), Some(true)));

    let reminders = &app.app.services.reminders;
    let first = reminders.tick().await.unwrap();
    assert_eq!((first.written, first.sent, first.failed), (2, 1, 1), "the e-mail went, the webhook failed once");
    let (_, log) = app.get("/api/notifications/deliveries").await;
    let failed = log["deliveries"].as_array().unwrap().iter().find(|d| d["status"] == "pending").unwrap().clone();
    assert_eq!(failed["attempts"], 1);
    assert!(failed["last_error"].as_str().unwrap().contains("500"), "{failed}");
    assert!(failed["channel"].as_str().unwrap().ends_with("/…"), "the URL's path is not shown: {failed}");
    // Tried again only after its wait (twice the scheduler's period after the first failure).
    let again = reminders.tick().await.unwrap();
    assert_eq!((again.written, again.sent), (0, 0));
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    let retried = reminders.tick().await.unwrap();
    assert_eq!((retried.written, retried.sent, retried.failed), (0, 1, 0));
    for _ in 0..2 {
        let t = reminders.tick().await.unwrap();
        assert_eq!((t.written, t.sent, t.failed), (0, 0, 0), "once per thing and lead time");
    }

    let mails = smtp.messages();
    assert_eq!(mails.len(), 1, "{mails:?}");
    let mail = &mails[0];
    assert!(mail.contains("To: sam@example.org"), "{mail}");
    assert!(mail.contains("From: Trove <trove@example.org>"), "{mail}");
    let subject = header(mail, "Subject");
    assert!(
        subject.contains("Cordless drill") && subject.contains(&day(-3)) && subject.contains("overdue"),
        "{subject}"
    );
    assert!(mail.contains("Where it is: Garage"), "{mail}");

    let calls = hook_calls(&hooks).await;
    assert_eq!(calls.len(), 2, "one failed call and its retry");
    let body: Value = serde_json::from_slice(&calls[1].body).unwrap();
    assert_eq!(body["event"], "reminder");
    assert_eq!(body["item_id"], drill);
    assert!(body["subject"].as_str().unwrap().contains("Cordless drill"), "{body}");
    let (_, log) = app.get("/api/notifications/deliveries").await;
    let secret = log["webhook_secret"].as_str().unwrap();
    let signed = calls[1].headers.get("x-trove-signature").unwrap().to_str().unwrap();
    assert_eq!(signed, format!("sha256={}", python_hmac(secret, &calls[1].body)));
    let statuses: Vec<&str> =
        log["deliveries"].as_array().unwrap().iter().map(|d| d["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["sent", "sent"]);

    // A new due date is a new thing to remind of.
    let loan = made["loan"]["id"].as_i64().unwrap();
    app.post(&format!("/api/loans/{loan}/return"), json!({})).await;
    let (status, _) =
        app.post(&format!("/api/items/{drill}/loans"), json!({"to": {"name": "Sam next door"}, "due": day(1)})).await;
    assert_eq!(status, StatusCode::CREATED);
    let t = reminders.tick().await.unwrap();
    assert_eq!((t.written, t.sent), (2, 2));
    assert_eq!(smtp.messages().len(), 2);

    // Only owners read the log; channels are checked; a test send says how it went.
    let (status, bad) =
        app.put("/api/me/notifications", json!({"email": "not an address", "urls": [], "lead_days": 3})).await;
    assert_error(status, &bad, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let (status, bad) =
        app.put("/api/me/notifications", json!({"email": null, "urls": ["ftp://x/y"], "lead_days": 3})).await;
    assert_error(status, &bad, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    let (status, bad) = app.put("/api/me/notifications", json!({"email": null, "urls": [], "lead_days": 999})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    let (status, sent) = app.post("/api/me/notifications/test", json!({"channel": "email:kim@example.org"})).await;
    assert_eq!((status, sent["delivered"].as_bool()), (StatusCode::OK, Some(true)), "{sent}");
    assert!(smtp.messages().iter().any(|m| m.contains("To: kim@example.org") && m.contains("a test")));
    let (_, sent) =
        app.post("/api/me/notifications/test", json!({"channel": format!("{}/nowhere", hooks.uri())})).await;
    assert_eq!(sent["delivered"], false, "{sent}");
    assert!(sent["error"].as_str().unwrap().contains("404"), "{sent}");
    let _ = std::fs::remove_dir_all(&dir);
}

async fn pushes_never_reach_private_addresses_unless_allowed(db: Db) {
    let hooks = receiver(0).await;
    let app = TestApp::spawn(db, &[]).await;
    // An address written in the URL is refused when saved...
    for url in ["http://127.0.0.1:9/x", "https://169.254.169.254/latest", "ntfy://192.168.1.5/house", "http://[::1]/x"]
    {
        let (status, bad) =
            app.put("/api/me/notifications", json!({"email": null, "urls": [url], "lead_days": 1})).await;
        assert_error(status, &bad, StatusCode::UNPROCESSABLE_ENTITY, "rule");
        assert!(bad["error"]["message"].as_str().unwrap().contains("TROVE_WEBHOOK_ALLOW_PRIVATE"), "{bad}");
    }
    // ... and a name that resolves to one is refused when sent: nothing reaches the receiver.
    let port = hooks.address().port();
    let (status, sent) =
        app.post("/api/me/notifications/test", json!({"channel": format!("http://localhost:{port}/hook")})).await;
    assert_eq!((status, sent["delivered"].as_bool()), (StatusCode::OK, Some(false)), "{sent}");
    assert!(sent["error"].as_str().unwrap().contains("private"), "{sent}");
    assert!(hook_calls(&hooks).await.is_empty());
    // A home network allows them.
    let home = TestApp::spawn(db, &[("TROVE_WEBHOOK_ALLOW_PRIVATE", "1".to_owned())]).await;
    let (_, sent) =
        home.post("/api/me/notifications/test", json!({"channel": format!("http://localhost:{port}/hook")})).await;
    assert_eq!(sent["delivered"], true, "{sent}");
    assert_eq!(hook_calls(&hooks).await.len(), 1);

    // ntfy and Gotify on the home network, in the URLs people paste into Shoutrrr.
    Mock::given(method("POST")).and(path("/")).respond_with(ResponseTemplate::new(200)).mount(&hooks).await;
    Mock::given(method("POST")).and(path("/message")).respond_with(ResponseTemplate::new(200)).mount(&hooks).await;
    for channel in [
        format!("ntfy://127.0.0.1:{port}/house?scheme=http"),
        format!("gotify://127.0.0.1:{port}/AppTok3n?disabletls=yes"),
    ] {
        let (_, sent) = home.post("/api/me/notifications/test", json!({"channel": channel})).await;
        assert_eq!(sent["delivered"], true, "{channel}: {sent}");
    }
    let calls = hook_calls(&hooks).await;
    let ntfy = calls.iter().find(|c| c.url.path() == "/").expect("the ntfy publish");
    let body: Value = serde_json::from_slice(&ntfy.body).unwrap();
    assert_eq!(
        (body["topic"].as_str(), body["title"].as_str()),
        (Some("house"), Some("Trove: a test reminder")),
        "{body}"
    );
    let gotify = calls.iter().find(|c| c.url.path() == "/message").expect("the Gotify message");
    assert_eq!(gotify.headers.get("x-gotify-key").unwrap(), "AppTok3n");
    let body: Value = serde_json::from_slice(&gotify.body).unwrap();
    assert!(body["message"].as_str().unwrap().contains("This is a test from Trove"), "{body}");
}

async fn the_calendar_feed_parses_and_holds_what_falls_due(db: Db) {
    let app = TestApp::spawn(db, &[("TROVE_PUBLIC_URL", "http://trove.example:8080".to_owned())]).await;
    let drill = app
        .create_item(json!({"name": "Drill, 18 V", "item_type": "tool", "profile": "", "condition": "good",
        "intent": "keep", "warranty_until": day(200)}))
        .await;
    let (_, lent) = app.post(&format!("/api/items/{drill}/loans"), json!({"to": {"name": "Sam"}, "due": day(5)})).await;
    let loan = lent["loan"]["id"].as_i64().unwrap();
    let (status, s) = app
        .post(&format!("/api/items/{drill}/schedules"), json!({"title": "Oil the chuck", "every": {"months": 6}}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{s}");

    let (status, link) = app.get("/api/me/calendar").await;
    assert_eq!(status, StatusCode::OK, "{link}");
    let url = link["url"].as_str().unwrap();
    assert!(url.starts_with("http://trove.example:8080/api/calendar.ics?key="), "{url}");
    let (_, same) = app.get("/api/me/calendar").await;
    assert_eq!(same, link, "the same link until a new one is asked for");
    let path = url.trim_start_matches("http://trove.example:8080");
    let resp = app.client.get(app.url(path)).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/calendar"));
    let ics = resp.text().await.unwrap();

    let script = "import sys, json, icalendar\n\
        cal = icalendar.Calendar.from_ical(sys.stdin.read())\n\
        out = [{'uid': str(e['UID']), 'summary': str(e['SUMMARY']), 'start': e.decoded('DTSTART').isoformat(),\n\
                'end': e.decoded('DTEND').isoformat()} for e in cal.walk('VEVENT')]\n\
        print(json.dumps(sorted(out, key=lambda e: e['start'])))";
    let parse = |ics: &str| -> Value {
        let out = Command::new(python())
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write as _;
                c.stdin.take().unwrap().write_all(ics.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        assert!(out.status.success(), "icalendar refused the feed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let events = parse(&ics);
    let six_months = today().checked_add_months(chrono::Months::new(6)).unwrap();
    let summaries: Vec<(&str, &str)> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["summary"].as_str().unwrap(), e["start"].as_str().unwrap()))
        .collect();
    let (d5, m6, w200) = (day(5), six_months.to_string(), day(200));
    assert_eq!(
        summaries,
        [
            ("Drill, 18 V: lent to Sam", d5.as_str()),
            ("Drill, 18 V: Oil the chuck", m6.as_str()),
            ("Drill, 18 V: warranty", w200.as_str()),
        ],
        "{ics}"
    );
    assert_eq!(events[0]["end"], day(6), "an all-day event ends the next day");
    assert_eq!(events[0]["uid"], format!("loan_back-{loan}-{}@trove", day(5).replace('-', "")));
    // Stable UIDs from one fetch to the next.
    let again = app.client.get(app.url(path)).send().await.unwrap().text().await.unwrap();
    assert_eq!(parse(&again), events);

    // A new link: the old one stops working.
    let (status, fresh) = app.post("/api/me/calendar", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{fresh}");
    assert_ne!(fresh, link);
    assert_eq!(app.client.get(app.url(path)).send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let fresh_path = fresh["url"].as_str().unwrap().trim_start_matches("http://trove.example:8080");
    assert_eq!(app.client.get(app.url(fresh_path)).send().await.unwrap().status(), StatusCode::OK);
    assert_eq!(
        app.client.get(app.url("/api/calendar.ics?key=nothing")).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

on_both!(
    an_overdue_loan_is_reminded_once_by_email_and_webhook,
    pushes_never_reach_private_addresses_unless_allowed,
    the_calendar_feed_parses_and_holds_what_falls_due
);

/// A `trove serve` process sending reminders every second; killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(database_url: &str, data: &Path, smtp: &Smtp) -> Server {
    Server(
        Command::new(env!("CARGO_BIN_EXE_trove"))
            .arg("serve")
            .env("DATABASE_URL", database_url)
            .env("TROVE_DATA_DIR", data)
            .env("TROVE_BIND", "127.0.0.1:0")
            .env("TROVE_SMTP_URL", smtp.url())
            .env("TROVE_WEBHOOK_ALLOW_PRIVATE", "1")
            .env("TROVE_REMINDERS_EVERY", "1s")
            .env("RUST_LOG", "warn")
            .env_remove("MODEL_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("trove serve starts"),
    )
}

/// Waits until `n` mails and `n` webhook calls arrived (60 s at most), then two more ticks of both processes.
async fn wait_for(smtp: &Smtp, hooks: &MockServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while smtp.messages().len() < n || hook_calls(hooks).await.len() < n {
        assert!(Instant::now() < deadline, "{n} reminders did not arrive within 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(2_500)).await;
}

async fn two_processes_remind_exactly_once_even_when_one_is_killed(db: Db) {
    let dir = scratch("processes");
    let smtp = Smtp::start(&dir);
    let hooks = receiver(0).await;
    let app = TestApp::spawn(db, &[("TROVE_WEBHOOK_ALLOW_PRIVATE", "1".to_owned())]).await;
    let (status, _) = app
        .put(
            "/api/me/notifications",
            json!({"email": "sam@example.org", "urls": [format!("{}/hook", hooks.uri())], "lead_days": 2}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let mut a = serve(&app.database_url, &dir.join("a"), &smtp);
    let _b = serve(&app.database_url, &dir.join("b"), &smtp);

    // Both processes tick every second: the first reminder is claimed by one of them and sent once.
    let drill = app.create_item(item("Drill", "tool")).await;
    let (status, _) = app
        .post(&format!("/api/items/{drill}/loans"), json!({"to": {"name": "Sam"}, "since": day(-5), "due": day(-1)}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    wait_for(&smtp, &hooks, 1).await;
    assert_eq!((smtp.messages().len(), hook_calls(&hooks).await.len()), (1, 1), "exactly once with two processes");

    // One is killed outright while both run; the other sends what falls due next, once, and nothing again.
    a.0.kill().unwrap();
    a.0.wait().unwrap();
    let saw = app.create_item(item("Saw", "tool")).await;
    let (status, _) = app
        .post(&format!("/api/items/{saw}/loans"), json!({"to": {"name": "Kim"}, "since": day(-3), "due": day(1)}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    wait_for(&smtp, &hooks, 2).await;
    assert_eq!((smtp.messages().len(), hook_calls(&hooks).await.len()), (2, 2), "exactly once after a kill -9");
    let mails = smtp.messages();
    assert_eq!(mails.iter().filter(|m| header(m, "Subject").starts_with("Trove: Drill")).count(), 1, "{mails:?}");
    assert_eq!(mails.iter().filter(|m| header(m, "Subject").starts_with("Trove: Saw")).count(), 1, "{mails:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

on_both!(two_processes_remind_exactly_once_even_when_one_is_killed);
