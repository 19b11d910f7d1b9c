//! A provider's gate: its rate limit and its wait after a 429 or 503, in this process.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The span a rate limit counts in.
const MINUTE: Duration = Duration::from_secs(60);

/// Whether a provider may be asked now: not while it asked us to wait, and not more than its rate limit.
#[derive(Debug, Default)]
pub struct Gate {
    /// The most requests a minute, if the provider states a limit.
    per_minute: Option<usize>,
    state: Mutex<GateState>,
}

#[derive(Debug, Default)]
struct GateState {
    /// Not asked before this instant (a `Retry-After`).
    closed_until: Option<Instant>,
    /// The instants of the requests of the last minute, oldest first.
    recent: VecDeque<Instant>,
}

impl Gate {
    /// A gate letting at most `per_minute` requests through a minute (`None`: no limit but the waits).
    pub fn new(per_minute: Option<usize>) -> Self {
        Self { per_minute, state: Mutex::default() }
    }

    /// Takes a request's place and answers `true`, or answers `false` when the provider must not be asked now:
    /// it asked us to wait, or its limit for the last minute is spent.
    pub fn enter(&self) -> bool {
        let now = Instant::now();
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.closed_until.is_some_and(|until| now < until) {
            return false;
        }
        while state.recent.front().is_some_and(|t| now.duration_since(*t) >= MINUTE) {
            state.recent.pop_front();
        }
        if self.per_minute.is_some_and(|most| state.recent.len() >= most) {
            return false;
        }
        if self.per_minute.is_some() {
            state.recent.push_back(now);
        }
        true
    }

    /// Asks nothing of the provider for `wait` from now.
    pub fn wait(&self, wait: Duration) {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.closed_until = Some(Instant::now() + wait);
    }
}
