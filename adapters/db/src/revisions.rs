//! Reads of a household's item revision, shared by the requests that wait for them.
//!
//! A repeated listing costs one read of `households.item_revision` (`answers`, `counts`), and on SQLite most of
//! that read's cost is handing the statement to the connection's thread and back (BENCHMARKS.md, "HTTP
//! answers"). Requests that arrive together need not each read it: a request may take the answer of any read
//! that *started after it arrived*, as such a read sees every write committed before the request. So while one
//! read runs, the requests arriving meanwhile wait for it to end, and the next read serves all of them; a read
//! that was already running when a request arrived is never taken for its answer, since a write may have
//! committed between that read's start and the request's arrival.

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
    /// Held by the request reading; the others wait for their turn, then take its answer or read again.
    turn: tokio::sync::Mutex<()>,
    state: Mutex<State>,
}

#[derive(Debug, Default, Clone, Copy)]
struct State {
    /// The number of the last read started (reads are numbered from 1, in the order they start).
    started: u64,
    /// The number of the last read done, and its answer.
    done: u64,
    value: Option<i64>,
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
    /// `read`'s, when this call's own read fails.
    pub(crate) async fn read<E, F, Fut>(&self, household: i64, read: F) -> Result<Option<i64>, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Option<i64>, E>>,
    {
        let slot = self.slot(household);
        // Every read numbered above the last one started by now begins after this request arrived.
        let needed = slot.state().started + 1;
        let _turn = slot.turn.lock().await;
        let number = {
            let mut state = slot.state();
            if state.done >= needed {
                return Ok(state.value);
            }
            state.started += 1;
            state.started
        };
        let value = read().await?;
        let mut state = slot.state();
        // Reads take turns, so they end in the order they start.
        state.done = number;
        state.value = value;
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
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
                    Ok::<_, ()>(Some(seen))
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

    #[tokio::test]
    async fn a_failed_or_abandoned_read_leaves_the_next_request_to_read_again() {
        let shared = SharedReads::default();
        assert_eq!(shared.read(1, || async { Err::<Option<i64>, &str>("gone") }).await, Err("gone"));
        // A read dropped while it runs (its request cancelled) gives the turn back.
        let abandoned = shared.read(1, || async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<_, &str>(Some(1))
        });
        assert!(tokio::time::timeout(Duration::from_millis(20), abandoned).await.is_err());
        assert_eq!(shared.read(1, || async { Ok::<_, &str>(Some(5)) }).await, Ok(Some(5)));
    }
}
