//! Requests carrying an `Idempotency-Key`: the reservation protocol of the [`IdempotencyStore`] port (reserve,
//! then replay, refuse, or run and then keep the answer or release the key) in one use case, so that every route
//! taking a key calls [`Idempotency::once`] and nothing else.

use crate::error::{Error, Refusal};
use crate::ports::idempotency::{Fingerprint, Reservation, Reserve, StoredAnswer};
use crate::ports::{Clock, IdempotencyStore};
use std::future::Future;
use std::sync::Arc;
use trove_domain::HouseholdId;

/// The longest `Idempotency-Key` accepted, in characters.
pub const KEY_MAX: usize = 200;

/// An answer a keyed request keeps for its replays: written as text when it is kept, read back when the same
/// request comes again. The HTTP adapter writes its DTOs as JSON.
pub trait Replayable: Sized {
    /// The answer as it is kept; `None` when it has no such form, and then the key is released rather than
    /// kept (a retry runs again).
    fn kept(&self) -> Option<String>;

    /// The kept answer read back.
    ///
    /// # Errors
    /// Why it does not read, in words (the answer was kept by another version of the program).
    fn replayed(kept: &str) -> Result<Self, String>;
}

/// The use case of keyed requests.
#[derive(Clone)]
pub struct Idempotency {
    store: Arc<dyn IdempotencyStore>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Idempotency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idempotency").finish_non_exhaustive()
    }
}

/// Checks an `Idempotency-Key`: 1 to [`KEY_MAX`] visible ASCII characters.
fn check_key(key: &str) -> Result<(), Error> {
    if !key.is_empty() && key.len() <= KEY_MAX && key.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(())
    } else {
        Err(Error::Invalid(format!("Idempotency-Key must be 1 to {KEY_MAX} visible ASCII characters")))
    }
}

impl Idempotency {
    pub fn new(store: Arc<dyn IdempotencyStore>, clock: Arc<dyn Clock>) -> Self {
        Self { store, clock }
    }

    /// Runs `run`, the request to `scope` with `body` (empty when the request has none), at most once per
    /// `key`. Without a key it simply runs. With one, the key is reserved first: the same request answered
    /// before gets the kept answer and nothing runs; otherwise `run` runs while the key is held, and its answer
    /// is kept for replays, or, when it fails (or is cancelled: its future dropped), the key is released so that
    /// the client may retry with it. The outcome of `run` is answered unchanged.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a key that is not 1 to [`KEY_MAX`] visible ASCII characters;
    /// [`Refusal::KeyUsedElsewhere`] when the key was answered for a request with another scope or body;
    /// [`Refusal::KeyRunning`] while another request holds it; [`Error::Unexpected`] when the store fails or a
    /// kept answer does not read back; otherwise what `run` answers. Failures to keep an answer or release a key
    /// are only logged: the answer stands.
    pub async fn once<T, E, Fut>(
        &self,
        household: HouseholdId,
        scope: &str,
        key: Option<&str>,
        body: &[u8],
        run: impl FnOnce() -> Fut,
    ) -> Result<T, E>
    where
        T: Replayable,
        E: From<Error>,
        Fut: Future<Output = Result<T, E>>,
    {
        let Some(key) = key else { return run().await };
        check_key(key)?;
        let fingerprint = Fingerprint::of(scope, body);
        let reserved = self.store.reserve(household, scope, key, &fingerprint, self.clock.now()).await;
        let reservation = match reserved.map_err(Error::from)? {
            Reserve::Reserved(reservation) => reservation,
            Reserve::Replay(kept) => {
                return T::replayed(&kept.body).map_err(|e| {
                    Error::Unexpected(anyhow::anyhow!("the answer kept for this Idempotency-Key does not read: {e}"))
                        .into()
                });
            }
            Reserve::OtherRequest => return Err(Error::from(Refusal::KeyUsedElsewhere).into()),
            Reserve::Running => return Err(Error::from(Refusal::KeyRunning).into()),
        };
        let held = HeldKey { store: self.store.clone(), household, reservation, settled: false };
        let outcome = run().await;
        match outcome.as_ref().ok().map(Replayable::kept) {
            Some(Some(body)) => held.complete(StoredAnswer { status: 200, body, at: self.clock.now() }).await,
            Some(None) => {
                tracing::warn!("an answer to keep for its Idempotency-Key has no kept form; the key is released");
                held.release().await;
            }
            None => held.release().await,
        }
        outcome
    }
}

/// A key reserved for one running request, to be settled when it ends: completed with its answer or released.
struct HeldKey {
    /// Where the reservation is, cloned so that a release may outlive the request.
    store: Arc<dyn IdempotencyStore>,
    household: HouseholdId,
    reservation: Reservation,
    /// Set once completed or released, so that dropping does not release again.
    settled: bool,
}

impl HeldKey {
    /// Keeps the answer for replays. A failure is only logged: the answer stands, and the key stays pending
    /// until it may be taken over.
    async fn complete(mut self, answer: StoredAnswer) {
        if let Err(e) = self.store.complete(self.household, self.reservation, &answer).await {
            tracing::warn!(error = %e, "could not keep the answer of an Idempotency-Key");
        }
        self.settled = true;
    }

    /// Frees the key of a failed request so that the client may retry with it. A failure is only logged.
    async fn release(mut self) {
        if let Err(e) = self.store.release(self.household, self.reservation).await {
            tracing::warn!(error = %e, "could not release an Idempotency-Key");
        }
        self.settled = true;
    }
}

impl Drop for HeldKey {
    /// A key dropped unsettled belongs to a request that was cancelled (its client went away) or panicked: it
    /// is released in the background, so a retry is not refused as still running for the takeover timeout.
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let (store, household, reservation) = (self.store.clone(), self.household, self.reservation);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = store.release(household, reservation).await {
                    tracing::warn!(error = %e, "could not release the Idempotency-Key of a cancelled request");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests;
