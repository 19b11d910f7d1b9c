//! The limit of concurrent CPU-heavy jobs (decoding and segmenting images, preparing them for a model): at most
//! one running per core, a bounded queue waiting for a turn, and beyond the queue [`Error::Busy`] at once, with
//! how long to wait. Requests never decode everything at once, so memory and latency stay bounded under load.

use crate::Error;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How many jobs may wait for each core before new ones are refused.
pub const QUEUE_PER_WORKER: usize = 4;

/// The gate. Cloning shares it: every use case of one server holds the same one.
#[derive(Debug, Clone)]
pub struct Jobs {
    /// One permit per job that may run at once.
    running: Arc<Semaphore>,
    /// The jobs waiting for a permit now.
    waiting: Arc<AtomicUsize>,
    workers: usize,
    /// The most jobs that may wait; the next one is refused.
    queue: usize,
    /// What the jobs are, for the refusal's message ("images", "sign-ins").
    work: &'static str,
}

/// Counts a job as waiting until it gets its permit or is dropped (its request cancelled).
struct Waiting(Arc<AtomicUsize>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A job let in by [`Jobs::admit`]: it holds a worker's permit, or a place in the queue, until it runs or is
/// dropped.
pub struct Admitted {
    running: Arc<Semaphore>,
    turn: Turn,
}

enum Turn {
    Now(OwnedSemaphorePermit),
    Queued(Waiting),
}

impl Admitted {
    /// Runs `work` on a blocking thread once a permit is free (at once when one was free at admission).
    ///
    /// The permit is held by the blocking thread, so a job whose request is cancelled keeps its place until its
    /// work is done: the limit counts the work on the cores, not the requests.
    ///
    /// # Errors
    /// [`Error::Unexpected`] when the work panicked.
    pub async fn run<T, F>(self, work: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let permit = match self.turn {
            Turn::Now(permit) => permit,
            Turn::Queued(waiting) => {
                let permit = self
                    .running
                    .acquire_owned()
                    .await
                    .map_err(|e| Error::Unexpected(anyhow::anyhow!("the job gate is closed: {e}")))?;
                drop(waiting);
                permit
            }
        };
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            work()
        })
        .await
        .map_err(|e| Error::Unexpected(anyhow::anyhow!("a job failed: {e}")))
    }
}

impl Jobs {
    /// At most `workers` image jobs running (at least one) and `queue` waiting.
    pub fn new(workers: usize, queue: usize) -> Self {
        let workers = workers.max(1);
        Self { running: Arc::new(Semaphore::new(workers)), waiting: Arc::default(), workers, queue, work: "images" }
    }

    /// One job running per core the process may use, and [`QUEUE_PER_WORKER`] waiting per core.
    pub fn for_cores() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        Self::new(cores, cores * QUEUE_PER_WORKER)
    }

    /// One job running per two cores (at least one), and [`QUEUE_PER_WORKER`] waiting per worker: for work that
    /// may come in floods (password hashes), so that the other requests always keep cores of their own.
    pub fn for_half_the_cores() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let workers = (cores / 2).max(1);
        Self::new(workers, workers * QUEUE_PER_WORKER)
    }

    /// The same gate for jobs of another `work` (its refusals name it: "sign-ins").
    #[must_use]
    pub fn doing(self, work: &'static str) -> Self {
        Self { work, ..self }
    }

    /// Lets a job in before any work is done for it: a worker's permit when one is free, else a place in the
    /// queue. A request that would only be refused later asks first, so a flood is refused before it costs
    /// anything (a sign-in reads the store before it hashes).
    ///
    /// # Errors
    /// [`Error::Busy`] at once, when the queue is full.
    pub fn admit(&self) -> Result<Admitted, Error> {
        let turn = match self.running.clone().try_acquire_owned() {
            Ok(permit) => Turn::Now(permit),
            Err(_) => {
                let before = self.waiting.fetch_add(1, Ordering::SeqCst);
                let waiting = Waiting(self.waiting.clone());
                if before >= self.queue {
                    drop(waiting);
                    return Err(Error::Busy { work: self.work, retry_after_s: self.retry_after_s(before) });
                }
                Turn::Queued(waiting)
            }
        };
        Ok(Admitted { running: self.running.clone(), turn })
    }

    /// Runs `work` on a blocking thread once a permit is free, waiting in the queue for it ([`Jobs::admit`], then
    /// [`Admitted::run`]).
    ///
    /// # Errors
    /// [`Error::Busy`] at once, when the queue is full (nothing ran); [`Error::Unexpected`] when the work
    /// panicked.
    pub async fn run<T, F>(&self, work: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        self.admit()?.run(work).await
    }

    /// A guess of when a turn is likely free: about a second a job, shared by the workers.
    fn retry_after_s(&self, waiting: usize) -> u64 {
        1 + (waiting / self.workers) as u64
    }

    /// The jobs waiting now (for tests, logs and the metrics).
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// The jobs running now.
    pub fn running(&self) -> usize {
        self.workers.saturating_sub(self.running.available_permits())
    }

    /// What the jobs are ("images", "sign-ins").
    pub fn work(&self) -> &'static str {
        self.work
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Polls `done` until it holds, or fails after five seconds.
    async fn until(what: &str, done: impl Fn() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !done() {
            assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn beyond_the_queue_a_job_is_refused_and_those_within_wait_and_complete() {
        let jobs = Jobs::new(2, 3);
        // Two jobs hold both workers until they are released.
        let (release, held) = mpsc::channel::<()>();
        let held = Arc::new(std::sync::Mutex::new(held));
        let started = Arc::new(AtomicUsize::new(0));
        let mut running = Vec::new();
        for i in 0..5 {
            let (gate, held, starts) = (jobs.clone(), held.clone(), started.clone());
            running.push(tokio::spawn(async move {
                gate.run(move || {
                    starts.fetch_add(1, Ordering::SeqCst);
                    held.lock().unwrap().recv().unwrap();
                    i
                })
                .await
            }));
            if i < 2 {
                let started = started.clone();
                until("the job runs", move || started.load(Ordering::SeqCst) == i + 1).await;
            }
        }
        until("three jobs wait", || jobs.waiting() == 3).await;
        assert_eq!(started.load(Ordering::SeqCst), 2, "only two run at once");

        // The sixth is beyond the queue: refused at once, with a wait to retry after.
        let refused = jobs.run(|| 6).await;
        assert!(matches!(refused, Err(Error::Busy { retry_after_s: 2, .. })), "{refused:?}");
        assert_eq!(jobs.waiting(), 3);

        for _ in 0..5 {
            release.send(()).unwrap();
        }
        let mut done = Vec::new();
        for job in running {
            done.push(job.await.unwrap().unwrap());
        }
        assert_eq!(done, [0, 1, 2, 3, 4]);
        assert_eq!(jobs.waiting(), 0);
        assert_eq!(jobs.run(|| 7).await.unwrap(), 7, "the gate is free again");
    }

    #[tokio::test]
    async fn a_cancelled_waiting_job_leaves_the_queue() {
        let jobs = Jobs::new(1, 1);
        let (release, held) = mpsc::channel::<()>();
        let first = tokio::spawn({
            let jobs = jobs.clone();
            async move { jobs.run(move || held.recv().unwrap()).await }
        });
        until("the first job runs", || jobs.running.available_permits() == 0).await;
        let second = tokio::spawn({
            let jobs = jobs.clone();
            async move { jobs.run(|| ()).await }
        });
        until("the second job waits", || jobs.waiting() == 1).await;
        second.abort();
        assert!(second.await.unwrap_err().is_cancelled());
        assert_eq!(jobs.waiting(), 0);
        release.send(()).unwrap();
        first.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn a_panicking_job_is_unexpected_and_frees_its_worker() {
        let jobs = Jobs::new(1, 0);
        let failed = jobs.run(|| panic!("boom")).await;
        assert!(matches!(failed, Err(Error::Unexpected(_))), "{failed:?}");
        assert_eq!(jobs.run(|| 1).await.unwrap(), 1);
    }
}
