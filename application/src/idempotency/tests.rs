//! The reservation protocol against a mocked store: what is reserved, when the request runs, what is kept,
//! replayed, refused and released.

use super::*;
use crate::RepoError;
use crate::ports::clock::MockClock;
use crate::ports::idempotency::MockIdempotencyStore;
use mockall::predicate::eq;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use trove_domain::testing::now;

const HOUSEHOLD: HouseholdId = HouseholdId(4);
const HELD: Reservation = Reservation { row: 12, attempt: 3 };

/// An answer kept as `kept:<text>`; the text `no form` has no kept form.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer(String);

impl Replayable for Answer {
    fn kept(&self) -> Option<String> {
        (self.0 != "no form").then(|| format!("kept:{}", self.0))
    }

    fn replayed(kept: &str) -> Result<Self, String> {
        kept.strip_prefix("kept:").map(|a| Answer(a.to_owned())).ok_or_else(|| format!("{kept:?} is not kept"))
    }
}

fn use_case(store: MockIdempotencyStore) -> Idempotency {
    let mut clock = MockClock::new();
    clock.expect_now().returning(now);
    Idempotency::new(Arc::new(store), Arc::new(clock))
}

/// A store whose `reserve` of key `k1` for `("price:7", "")` finds `found`.
fn reserving(found: Reserve) -> MockIdempotencyStore {
    let mut store = MockIdempotencyStore::new();
    store
        .expect_reserve()
        .with(eq(HOUSEHOLD), eq("price:7"), eq("k1"), eq(Fingerprint::of("price:7", b"")), eq(now()))
        .times(1)
        .return_once(move |_, _, _, _, _| Ok(found));
    store
}

/// Runs `once` for `price:7` with `key`, counting the runs; the run answers `outcome`.
async fn once(
    idempotency: &Idempotency,
    key: Option<&str>,
    outcome: Result<Answer, Error>,
    runs: &AtomicUsize,
) -> Result<Answer, Error> {
    idempotency
        .once(HOUSEHOLD, "price:7", key, b"", || async move {
            runs.fetch_add(1, Ordering::SeqCst);
            outcome
        })
        .await
}

#[tokio::test]
async fn without_a_key_the_request_runs_and_the_store_is_never_asked() {
    let runs = AtomicUsize::new(0);
    let idempotency = use_case(MockIdempotencyStore::new());
    let answer = once(&idempotency, None, Ok(Answer("a".into())), &runs).await.unwrap();
    assert_eq!(answer, Answer("a".into()));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_malformed_key_is_refused_before_anything_runs() {
    let long = "k".repeat(KEY_MAX + 1);
    for key in ["", "with space", "naïve", long.as_str()] {
        let runs = AtomicUsize::new(0);
        let idempotency = use_case(MockIdempotencyStore::new());
        let result = once(&idempotency, Some(key), Ok(Answer("a".into())), &runs).await;
        assert!(
            matches!(&result, Err(Error::Invalid(m)) if m == "Idempotency-Key must be 1 to 200 visible ASCII characters"),
            "{key:?}: {result:?}"
        );
        assert_eq!(runs.load(Ordering::SeqCst), 0, "{key:?}");
    }
}

#[tokio::test]
async fn a_reserved_key_runs_the_request_and_keeps_its_answer() {
    let mut store = reserving(Reserve::Reserved(HELD));
    let kept = StoredAnswer { status: 200, body: "kept:a".into(), at: now() };
    store.expect_complete().with(eq(HOUSEHOLD), eq(HELD), eq(kept)).times(1).returning(|_, _, _| Ok(()));
    store.expect_release().never();
    let runs = AtomicUsize::new(0);
    let answer = once(&use_case(store), Some("k1"), Ok(Answer("a".into())), &runs).await.unwrap();
    assert_eq!(answer, Answer("a".into()));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_fingerprint_is_of_the_scope_and_the_body() {
    let mut store = MockIdempotencyStore::new();
    let fingerprint = Fingerprint::of("propose", br#"{"brief":"a lamp"}"#);
    store
        .expect_reserve()
        .withf(move |_, scope, _, f, _| scope == "propose" && *f == fingerprint)
        .times(1)
        .returning(|_, _, _, _, _| Ok(Reserve::Running));
    let result: Result<Answer, Error> = use_case(store)
        .once(HOUSEHOLD, "propose", Some("k1"), br#"{"brief":"a lamp"}"#, || async { Ok(Answer("a".into())) })
        .await;
    assert!(matches!(result, Err(Error::Refused(Refusal::KeyRunning))), "{result:?}");
}

#[tokio::test]
async fn a_failed_request_releases_its_key_and_answers_its_error_unchanged() {
    let mut store = reserving(Reserve::Reserved(HELD));
    store.expect_complete().never();
    store.expect_release().with(eq(HOUSEHOLD), eq(HELD)).times(1).returning(|_, _| Ok(()));
    let runs = AtomicUsize::new(0);
    let result = once(&use_case(store), Some("k1"), Err(Error::Invalid("brief is too long".into())), &runs).await;
    assert!(matches!(&result, Err(Error::Invalid(m)) if m == "brief is too long"), "{result:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_answer_without_a_kept_form_releases_the_key() {
    let mut store = reserving(Reserve::Reserved(HELD));
    store.expect_complete().never();
    store.expect_release().with(eq(HOUSEHOLD), eq(HELD)).times(1).returning(|_, _| Ok(()));
    let runs = AtomicUsize::new(0);
    let answer = once(&use_case(store), Some("k1"), Ok(Answer("no form".into())), &runs).await.unwrap();
    assert_eq!(answer, Answer("no form".into()));
}

#[tokio::test]
async fn an_answer_that_cannot_be_kept_still_stands() {
    let mut store = reserving(Reserve::Reserved(HELD));
    store.expect_complete().times(1).returning(|_, _, _| Err(RepoError::Conflict(crate::Conflict::KeyNotHeld)));
    store.expect_release().never();
    let runs = AtomicUsize::new(0);
    let answer = once(&use_case(store), Some("k1"), Ok(Answer("a".into())), &runs).await.unwrap();
    assert_eq!(answer, Answer("a".into()));
}

#[tokio::test]
async fn the_same_request_again_is_answered_the_kept_answer_and_runs_nothing() {
    let kept = StoredAnswer { status: 200, body: "kept:first".into(), at: now() };
    let mut store = reserving(Reserve::Replay(kept));
    store.expect_complete().never();
    store.expect_release().never();
    let runs = AtomicUsize::new(0);
    let answer = once(&use_case(store), Some("k1"), Ok(Answer("second".into())), &runs).await.unwrap();
    assert_eq!(answer, Answer("first".into()));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_kept_answer_that_does_not_read_is_unexpected() {
    let kept = StoredAnswer { status: 200, body: "garbled".into(), at: now() };
    let runs = AtomicUsize::new(0);
    let result = once(&use_case(reserving(Reserve::Replay(kept))), Some("k1"), Ok(Answer("a".into())), &runs).await;
    assert!(
        matches!(&result, Err(Error::Unexpected(e)) if e.to_string().contains("\"garbled\" is not kept")),
        "{result:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_key_used_for_another_request_or_still_running_is_refused_and_runs_nothing() {
    for (found, refusal, message) in [
        (Reserve::OtherRequest, Refusal::KeyUsedElsewhere, "this Idempotency-Key was used for a different request"),
        (Reserve::Running, Refusal::KeyRunning, "a request with this Idempotency-Key is still running"),
    ] {
        let runs = AtomicUsize::new(0);
        let result = once(&use_case(reserving(found)), Some("k1"), Ok(Answer("a".into())), &runs).await;
        match result {
            Err(Error::Refused(r)) => {
                assert_eq!(r, refusal);
                assert_eq!(r.to_string(), message);
            }
            other => panic!("{refusal:?}: {other:?}"),
        }
        assert_eq!(runs.load(Ordering::SeqCst), 0);
    }
}

#[tokio::test]
async fn a_store_that_fails_to_reserve_runs_nothing() {
    let mut store = MockIdempotencyStore::new();
    store.expect_reserve().returning(|_, _, _, _, _| Err(RepoError::Unexpected(anyhow::anyhow!("database down"))));
    let runs = AtomicUsize::new(0);
    let result = once(&use_case(store), Some("k1"), Ok(Answer("a".into())), &runs).await;
    assert!(matches!(&result, Err(Error::Unexpected(e)) if e.to_string() == "database down"), "{result:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// A request whose future is dropped while it runs (its client went away) releases its key in the background.
#[tokio::test]
async fn a_cancelled_request_releases_its_key() {
    let (released_tx, released_rx) = tokio::sync::oneshot::channel();
    let released_tx = Mutex::new(Some(released_tx));
    let mut store = reserving(Reserve::Reserved(HELD));
    store.expect_complete().never();
    store.expect_release().with(eq(HOUSEHOLD), eq(HELD)).times(1).returning(move |_, _| {
        if let Some(tx) = released_tx.lock().unwrap().take() {
            let _ = tx.send(());
        }
        Ok(())
    });
    let idempotency = use_case(store);
    let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
    let request = idempotency.once(HOUSEHOLD, "price:7", Some("k1"), b"", || async move {
        let _ = started_tx.send(());
        std::future::pending::<Result<Answer, Error>>().await
    });
    tokio::select! {
        result = request => panic!("a pending request answered {result:?}"),
        started = started_rx => started.expect("the request started"),
    }
    released_rx.await.expect("the key is released");
}
