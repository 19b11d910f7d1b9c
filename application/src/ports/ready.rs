//! What readiness and the metrics ask of the database.

use crate::RepoError;
use async_trait::async_trait;

/// The database answers a query, and says how its connections are used.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait Ping: Send + Sync {
    /// Runs the cheapest query there is.
    ///
    /// # Errors
    /// MUST return `Unavailable` when the database cannot answer now (down, unreachable, no connection free).
    async fn ping(&self) -> Result<(), RepoError>;

    /// The connection pool now.
    fn pool(&self) -> PoolUse;
}

/// A connection pool's use at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolUse {
    /// Connections open (idle ones included).
    pub open: u32,
    /// Of those, idle.
    pub idle: u32,
    /// The most it opens.
    pub max: u32,
}
