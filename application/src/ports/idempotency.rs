//! Reservations of an `Idempotency-Key`, and the answers kept for repeated requests.
//!
//! A request carrying a key first reserves `(household, scope, key)` with the fingerprint of what it asks; only
//! the request holding the reservation runs. It then completes the reservation with its answer, or releases it
//! when it failed, so that the client may retry with the same key. A repeated request with the same fingerprint
//! is answered the kept answer for [`ANSWER_KEPT_FOR`]; one with another fingerprint is refused.

use crate::RepoError;
use async_trait::async_trait;
use chrono::TimeDelta;
use sha2::{Digest, Sha256};
use trove_domain::{HouseholdId, Timestamp};

/// How long a completed answer is replayed; an older one is replaced by a new reservation.
pub const ANSWER_KEPT_FOR: TimeDelta = TimeDelta::hours(24);

/// How long a pending reservation holds its key. An older one belongs to a request that will never finish (the
/// server stopped while it ran), and a new request takes it over.
pub const PENDING_HELD_FOR: TimeDelta = TimeDelta::minutes(10);

/// What a request asks, for telling a repeated request from a different one under the same key: the SHA-256 of
/// its scope and its body, in lower-case hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// The fingerprint of a request to `scope` with `body` (empty when the request has none).
    ///
    /// ```
    /// use trove_application::ports::idempotency::Fingerprint;
    /// let a = Fingerprint::of("propose", br#"{"brief":"a"}"#);
    /// assert_eq!(a, Fingerprint::of("propose", br#"{"brief":"a"}"#));
    /// assert_ne!(a, Fingerprint::of("propose", br#"{"brief":"b"}"#));
    /// assert_ne!(Fingerprint::of("price:1", b""), Fingerprint::of("price:2", b""));
    /// assert_eq!(a.as_str().len(), 64);
    /// ```
    pub fn of(scope: &str, body: &[u8]) -> Self {
        let mut hash = Sha256::new();
        // The scope's length first, so that no scope and body pair can read as another one.
        hash.update((scope.len() as u64).to_be_bytes());
        hash.update(scope.as_bytes());
        hash.update(body);
        Self(hex::encode(hash.finalize()))
    }

    /// The lower-case hex digest, as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A reservation held by one request: the row and the attempt on it. A request whose stale reservation was
/// taken over holds an older attempt, so it can neither complete nor release the new one. Opaque to callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    /// The stored row of `(household, scope, key)`.
    pub row: i64,
    /// Counts the reservations made on that row: each takeover or renewal adds one.
    pub attempt: i64,
}

/// What reserving a key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reserve {
    /// The key is now held by this request: run it, then `complete` or `release` the reservation.
    Reserved(Reservation),
    /// The same request was answered within [`ANSWER_KEPT_FOR`]: answer this again, run nothing.
    Replay(StoredAnswer),
    /// The key was answered within [`ANSWER_KEPT_FOR`] for a request with another fingerprint.
    OtherRequest,
    /// Another request holds the key and is still running (reserved within [`PENDING_HELD_FOR`]).
    Running,
}

/// An answer kept for a repeated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    /// The status the first request was answered with.
    pub status: u16,
    /// The body it was answered with, verbatim.
    pub body: String,
    /// When it was answered; it is replayed until [`ANSWER_KEPT_FOR`] after this.
    pub at: Timestamp,
}

/// Reservations and answers per household, scope (the operation, e.g. `price:42`) and key.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Reserves `(household, scope, key)` for a request with `fingerprint`, at `now`, atomically: of several
    /// concurrent callers (also in other processes sharing the database) at most one gets `Reserved`.
    ///
    /// MUST answer `Reserved` when the key is unused, when its completed answer is older than
    /// [`ANSWER_KEPT_FOR`], or when its pending reservation is older than [`PENDING_HELD_FOR`] (taken over);
    /// `Replay` with the kept answer when it was completed within [`ANSWER_KEPT_FOR`] with the same fingerprint
    /// (or with none: answers kept before fingerprints were); `OtherRequest` when it was completed within
    /// [`ANSWER_KEPT_FOR`] with another fingerprint; `Running` when it is pending and reserved within
    /// [`PENDING_HELD_FOR`], whatever the fingerprint. Keys of other households and scopes are never seen.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn reserve(
        &self,
        household: HouseholdId,
        scope: &str,
        key: &str,
        fingerprint: &Fingerprint,
        now: Timestamp,
    ) -> Result<Reserve, RepoError>;

    /// Completes a reservation with its answer, which later requests with the same fingerprint replay.
    ///
    /// # Errors
    /// MUST return `Conflict(KeyNotHeld)` when `reservation` no longer holds its key (it was released, or taken over by
    /// another request), and then change nothing; `Unexpected` otherwise.
    async fn complete(
        &self,
        household: HouseholdId,
        reservation: Reservation,
        answer: &StoredAnswer,
    ) -> Result<(), RepoError>;

    /// Releases a reservation whose request failed: its pending row is deleted, so the key may be used again at
    /// once.
    ///
    /// # Errors
    /// MUST return `Conflict(KeyNotHeld)` when `reservation` no longer holds its key (it was released, completed, or taken
    /// over by another request), and then change nothing; `Unexpected` otherwise.
    async fn release(&self, household: HouseholdId, reservation: Reservation) -> Result<(), RepoError>;
}
