//! One request at a time per key within this process: later ones wait for the one ahead to finish, then go
//! on and see what it did. Used where concurrent requests for the same thing would otherwise each spend a
//! scarce resource only for all but one to lose at the store (several people accepting one invitation, each
//! hashing a password under the hashing limit).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The keys being worked on, each with its queue.
#[derive(Debug, Default)]
pub struct OneAtATime {
    held: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// The turn of one request for a key: the next waiting request goes on when it is dropped.
#[derive(Debug)]
pub struct Turn<'a> {
    gate: &'a OneAtATime,
    key: String,
    queue: Arc<tokio::sync::Mutex<()>>,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl OneAtATime {
    /// Waits for the turn of `key` (at once when no request holds it).
    pub async fn enter(&self, key: &str) -> Turn<'_> {
        let queue = {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            held.entry(key.to_owned()).or_default().clone()
        };
        let guard = queue.clone().lock_owned().await;
        Turn { gate: self, key: key.to_owned(), queue, guard: Some(guard) }
    }

    /// The keys with a request holding or waiting for them (for tests).
    pub fn keys(&self) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        // Under the map's lock no one can take another handle of this queue: with only the map's and this
        // one left, nobody waits and the key is forgotten.
        let mut held = self.gate.held.lock().unwrap_or_else(PoisonError::into_inner);
        if Arc::strong_count(&self.queue) == 2 {
            held.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_for_one_key_run_one_after_another_and_other_keys_do_not_wait() {
        let gate = Arc::new(OneAtATime::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let runs: Vec<_> = (0..8)
            .map(|_| {
                let (gate, inside, most) = (gate.clone(), inside.clone(), most.clone());
                tokio::spawn(async move {
                    let _turn = gate.enter("code").await;
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        // Another key goes in while "code" is held.
        let held = gate.enter("code").await;
        let other = tokio::time::timeout(std::time::Duration::from_secs(5), gate.enter("other")).await;
        assert!(other.is_ok(), "another key waited");
        drop(other);
        drop(held);
        for run in runs {
            run.await.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1, "two requests for one key ran at once");
        assert_eq!(gate.keys(), 0, "every key is forgotten once no one holds it");
    }
}
