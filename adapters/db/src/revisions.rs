//! Reads of a household's item revision, shared by the requests that wait for them.
//!
//! A repeated listing costs one read of `households.item_revision` (`answers`, `counts`), and on SQLite most of
//! that read's cost is handing the statement to the connection's thread and back (docs/perf/http.md). Requests that arrive together need not each read it: a request may take the answer of any read
//! that *started after it arrived*, as such a read sees every write committed before the request. So while one
//! read runs, the requests arriving meanwhile wait for it to end, and the next read serves all of them; a read
//! that was already running when a request arrived is never taken for its answer, since a write may have
//! committed between that read's start and the request's arrival. When the shared read fails, the requests that
//! waited for it fail with it, rather than each trying again in turn (each waiting out the pool's timeout when the
//! database is down).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

/// Households whose slots are kept before they all start over: a bound, not an eviction policy.
const HOUSEHOLDS_MAX: usize = 1_000;

/// The shared reads of every household's revision.
#[derive(Debug, Default)]
pub(crate) struct SharedReads {
    slots: Mutex<HashMap<i64, Arc<Slot>>>,
}

/// One household's reads: the turn to read, and the numbers of the reads started and done.
#[derive(Debug, Default)]
struct Slot {
    /// Held by the request reading; the others wait for their turn, then take its answer (or its failure) or read
    /// again.
    turn: tokio::sync::Mutex<()>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The number of the last read started (reads are numbered from 1, in the order they start).
    started: u64,
    /// The number of the last read done, and its answer.
    done: u64,
    value: Option<i64>,
    /// The number of the last read that failed, and why.
    failed: u64,
    failure: String,
}

impl Slot {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SharedReads {
    fn slot(&self, household: i64) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if slots.len() >= HOUSEHOLDS_MAX && !slots.contains_key(&household) {
            slots.clear();
        }
        Arc::clone(slots.entry(household).or_default())
    }

    /// `household`'s revision as of a moment after this call began: the answer of a read that started after
    /// it, this call's own or another's. `read` reads it from the store.
    ///
    /// # Errors
    /// `read`'s, when this call's own read fails; when the read this call waited for failed, its failure.
    pub(crate) async fn read<E, F, Fut>(&self, household: i64, read: F) -> Result<Option<i64>, E>
    where
        E: From<anyhow::Error> + std::fmt::Display,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<i64>, E>>,
    {
        let slot = self.slot(household);
        // Every read numbered above the last one started by now begins after this request arrived.
        let needed = slot.state().started + 1;
        let _turn = slot.turn.lock().await;
        let number = {
            let mut state = slot.state();
            // Reads take turns, so they end in the order they start: the last one ended is the newest.
            if state.done >= needed {
                return Ok(state.value);
            }
            if state.failed >= needed {
                return Err(anyhow::anyhow!("read the item revision: {}", state.failure).into());
            }
            state.started += 1;
            state.started
        };
        match read().await {
            Ok(value) => {
                let mut state = slot.state();
                state.done = number;
                state.value = value;
                Ok(value)
            }
            Err(e) => {
                let mut state = slot.state();
                state.failed = number;
                state.failure = e.to_string();
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
    use std::time::Duration;

    /// A store's failure, as the tests' reads give it.
    #[derive(Debug, PartialEq)]
    struct Refused(String);

    impl From<anyhow::Error> for Refused {
        fn from(e: anyhow::Error) -> Self {
            Refused(e.to_string())
        }
    }

    impl std::fmt::Display for Refused {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }

    fn refused(why: &str) -> Refused {
        Refused(why.to_owned())
    }

    // Paused time: every sleep below ends when the runtime has nothing else to do, in the order of the clock, so
    // the steps happen in the order written however loaded the machine is.
    #[tokio::test(start_paused = true)]
    async fn requests_arriving_during_a_read_share_the_next_one_and_never_the_running_one() {
        let shared = Arc::new(SharedReads::default());
        let stored = Arc::new(AtomicI64::new(1));
        let reads = Arc::new(AtomicUsize::new(0));
        let read = {
            let (stored, reads) = (Arc::clone(&stored), Arc::clone(&reads));
            move || {
                let (stored, reads) = (Arc::clone(&stored), Arc::clone(&reads));
                async move {
                    reads.fetch_add(1, Ordering::SeqCst);
                    // The value as the read starts, answered a while later: what a statement sees.
                    let seen = stored.load(Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Ok::<_, Refused>(Some(seen))
                }
            }
        };
        // A first read starts and sees revision 1.
        let first = tokio::spawn({
            let (shared, read) = (Arc::clone(&shared), read.clone());
            async move { shared.read(7, read).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        // A write commits while it runs; then ten requests arrive.
        stored.store(2, Ordering::SeqCst);
        let later: Vec<_> = (0..10)
            .map(|_| {
                let (shared, read) = (Arc::clone(&shared), read.clone());
                tokio::spawn(async move { shared.read(7, read).await })
            })
            .collect();
        assert_eq!(first.await.unwrap(), Ok(Some(1)));
        for answer in later {
            assert_eq!(answer.await.unwrap(), Ok(Some(2)), "a request never takes a read that began before it");
        }
        assert_eq!(reads.load(Ordering::SeqCst), 2, "the ten requests shared one read");
        // Another household reads on its own.
        assert_eq!(shared.read(8, read.clone()).await, Ok(Some(2)));
        assert_eq!(reads.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn requests_that_shared_a_failed_read_fail_with_it_and_later_ones_read_again() {
        let shared = Arc::new(SharedReads::default());
        let slow = |value| {
            move || async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok::<_, Refused>(Some(value))
            }
        };
        // A read that began before a write (revision 1)...
        let first = tokio::spawn({
            let shared = Arc::clone(&shared);
            async move { shared.read(1, slow(1)).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        // ... then, the write committed (revision 2), two requests arrive; the first to read fails.
        let failing = tokio::spawn({
            let shared = Arc::clone(&shared);
            async move { shared.read(1, || async { Err::<Option<i64>, _>(refused("pool timed out")) }).await }
        });
        tokio::time::sleep(Duration::from_millis(5)).await;
        let waiting = tokio::spawn({
            let shared = Arc::clone(&shared);
            async move { shared.read(1, slow(2)).await }
        });
        assert_eq!(first.await.unwrap(), Ok(Some(1)));
        assert_eq!(failing.await.unwrap(), Err(refused("pool timed out")));
        // The other waited for that read: it fails with it, and never takes the older answer.
        assert_eq!(waiting.await.unwrap(), Err(refused("read the item revision: pool timed out")));
        // A request arriving after the failure reads again.
        assert_eq!(shared.read(1, slow(2)).await, Ok(Some(2)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_or_abandoned_read_leaves_the_next_request_to_read_again() {
        let shared = SharedReads::default();
        assert_eq!(shared.read(1, || async { Err::<Option<i64>, _>(refused("gone")) }).await, Err(refused("gone")));
        // A read dropped while it runs (its request cancelled) gives the turn back.
        let abandoned = shared.read(1, || async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<_, Refused>(Some(1))
        });
        assert!(tokio::time::timeout(Duration::from_millis(20), abandoned).await.is_err());
        assert_eq!(shared.read(1, || async { Ok::<_, Refused>(Some(5)) }).await, Ok(Some(5)));
    }
}
