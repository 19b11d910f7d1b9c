//! Households (their members and tokens: `people`).

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::HouseholdId;

/// Households.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait HouseholdRepo: Send + Sync {
    /// The household called `name`, created if it does not exist yet. Safe to call concurrently.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn ensure_household(&self, name: &str) -> Result<HouseholdId, RepoError>;
}
