//! Stored answers for requests carrying an `Idempotency-Key`.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::{HouseholdId, Timestamp};

/// An answer kept for a repeated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    /// The status the first request was answered with.
    pub status: u16,
    /// The body it was answered with, verbatim.
    pub body: String,
    pub at: Timestamp,
}

/// Answers kept per household, scope (the operation, e.g. `price:42`) and key.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// The answer stored for `(household, scope, key)` at or after `since`, if any.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn find(
        &self,
        household: HouseholdId,
        scope: &str,
        key: &str,
        since: Timestamp,
    ) -> Result<Option<StoredAnswer>, RepoError>;

    /// Keeps an answer; a later answer for the same `(household, scope, key)` replaces an older one.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn keep(
        &self,
        household: HouseholdId,
        scope: &str,
        key: &str,
        answer: &StoredAnswer,
    ) -> Result<(), RepoError>;
}
