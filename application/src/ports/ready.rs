//! What readiness asks of the database.

use crate::RepoError;
use async_trait::async_trait;

/// The database answers a query.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait Ping: Send + Sync {
    /// Runs the cheapest query there is.
    ///
    /// # Errors
    /// MUST return `Unavailable` when the database cannot answer now (down, unreachable, no connection free).
    async fn ping(&self) -> Result<(), RepoError>;
}
