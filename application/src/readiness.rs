//! Readiness: whether this server can do its work now. The database answers a query, and the media store takes
//! a probe file and removes it, each within [`READY_TIMEOUT`]; both are asked at once. And what the metrics
//! read of the server's state ([`Observed`]).

use crate::RepoError;
use crate::jobs::Jobs;
use crate::media::content_hash;
use crate::ports::ready::{Ping, PoolUse};
use crate::ports::spend::SpendTotal;
use crate::ports::{MediaStore, SpendLedger};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long each check may take before it counts as failed.
pub const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// `database` or `media`.
    pub name: &'static str,
    /// What failed, or `None` when it answered.
    pub failure: Option<String>,
    /// How long it took (up to the timeout).
    pub took: Duration,
}

/// The readiness checks.
#[derive(Clone)]
pub struct Readiness {
    db: Arc<dyn Ping>,
    blobs: Arc<dyn MediaStore>,
    timeout: Duration,
}

impl std::fmt::Debug for Readiness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Readiness").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Readiness {
    pub fn new(db: Arc<dyn Ping>, blobs: Arc<dyn MediaStore>) -> Self {
        Self { db, blobs, timeout: READY_TIMEOUT }
    }

    /// As [`Readiness::new`] with another timeout (tests).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Both checks, the database's first; ready when neither has a failure.
    pub async fn check(&self) -> [Checked; 2] {
        let database = timed("database", self.timeout, async { self.db.ping().await.map_err(|e| described(&e)) });
        let media = timed("media", self.timeout, self.probe_media());
        let (database, media) = tokio::join!(database, media);
        [database, media]
    }

    /// Writes a probe file of its own (its bytes name the moment, so two servers' probes never share a name) and
    /// removes it.
    async fn probe_media(&self) -> Result<(), String> {
        let bytes = format!("trove readiness probe {:?} {}", Instant::now(), std::process::id()).into_bytes();
        let hash = content_hash(&bytes);
        self.blobs.put(&hash, &bytes).await.map_err(|e| format!("writing a probe file: {}", described(&e)))?;
        self.blobs.delete(&hash).await.map_err(|e| format!("removing the probe file: {}", described(&e)))
    }
}

/// An error and its causes, each after a colon: what an operator reads to know what failed.
fn described(e: &RepoError) -> String {
    let mut out = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.ends_with(&text) {
            out = format!("{out}: {text}");
        }
        cause = c.source();
    }
    out
}

/// What the metrics read at each scrape: the job queues, the connection pool, and the model calls and their cost
/// from the ledger (every household's, since it began).
#[derive(Clone)]
pub struct Observed {
    jobs: Vec<Jobs>,
    db: Arc<dyn Ping>,
    ledger: Arc<dyn SpendLedger>,
}

/// One scrape's reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// Per kind of job (`Jobs::work`): waiting, running.
    pub jobs: Vec<(&'static str, usize, usize)>,
    pub pool: PoolUse,
    pub calls: Vec<SpendTotal>,
}

impl std::fmt::Debug for Observed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observed").finish_non_exhaustive()
    }
}

impl Observed {
    pub fn new(jobs: Vec<Jobs>, db: Arc<dyn Ping>, ledger: Arc<dyn SpendLedger>) -> Self {
        Self { jobs, db, ledger }
    }

    /// The state now.
    ///
    /// # Errors
    /// When the ledger cannot be read.
    pub async fn observe(&self) -> Result<Observation, RepoError> {
        Ok(Observation {
            jobs: self.jobs.iter().map(|j| (j.work(), j.waiting(), j.running())).collect(),
            pool: self.db.pool(),
            calls: self.ledger.totals().await?,
        })
    }
}

async fn timed(name: &'static str, timeout: Duration, check: impl Future<Output = Result<(), String>>) -> Checked {
    let start = Instant::now();
    let failure = match tokio::time::timeout(timeout, check).await {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => Some(format!("no answer within {} ms", timeout.as_millis())),
    };
    Checked { name, failure, took: start.elapsed() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::StorageFault;
    use crate::ports::media::MockMediaStore;
    use crate::ports::ready::MockPing;

    fn store(put: Result<(), RepoError>) -> MockMediaStore {
        let mut blobs = MockMediaStore::new();
        let ok = put.is_ok();
        blobs.expect_put().times(1).return_once(move |_, _| put);
        blobs.expect_delete().times(usize::from(ok)).returning(|_| Ok(()));
        blobs
    }

    #[tokio::test]
    async fn ready_when_the_database_answers_and_the_media_store_takes_a_probe_and_lets_it_go() {
        let mut db = MockPing::new();
        db.expect_ping().times(1).returning(|| Ok(()));
        let checked = Readiness::new(Arc::new(db), Arc::new(store(Ok(())))).check().await;
        assert_eq!(checked.map(|c| (c.name, c.failure)), [("database", None), ("media", None)]);
    }

    #[tokio::test]
    async fn each_failure_is_named_and_a_slow_check_times_out() {
        let mut db = MockPing::new();
        db.expect_ping().returning(|| {
            Err(RepoError::Unavailable {
                fault: StorageFault::Unreachable,
                cause: anyhow::anyhow!("connection refused"),
            })
        });
        let blobs = store(Err(RepoError::Unavailable {
            fault: StorageFault::TimedOut,
            cause: anyhow::anyhow!("the bucket does not answer"),
        }));
        let [database, media] = Readiness::new(Arc::new(db), Arc::new(blobs)).check().await;
        assert_eq!(database.failure.as_deref(), Some("the storage cannot be reached: connection refused"));
        assert_eq!(
            media.failure.as_deref(),
            Some("writing a probe file: the storage did not answer in time: the bucket does not answer")
        );

        struct Stuck;
        #[async_trait::async_trait]
        impl Ping for Stuck {
            async fn ping(&self) -> Result<(), RepoError> {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(())
            }
            fn pool(&self) -> PoolUse {
                PoolUse::default()
            }
        }
        let readiness =
            Readiness::new(Arc::new(Stuck), Arc::new(store(Ok(())))).with_timeout(Duration::from_millis(50));
        let [database, media] = readiness.check().await;
        assert_eq!(database.failure.as_deref(), Some("no answer within 50 ms"));
        assert!(database.took < Duration::from_secs(5) && media.failure.is_none());
    }
}
