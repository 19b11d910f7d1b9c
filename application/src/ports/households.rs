//! Households and their members' bearer tokens.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::HouseholdId;

/// Households and tokens. Tokens are stored as hashes only; this port never sees a token in clear.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait HouseholdRepo: Send + Sync {
    /// The household called `name`, created if it does not exist yet. Safe to call concurrently.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn ensure_household(&self, name: &str) -> Result<HouseholdId, RepoError>;

    /// Stores the hash of a new token for a member of `household`.
    ///
    /// # Errors
    /// `Conflict` when the hash is already stored (a token was reused); `Unexpected` otherwise.
    async fn add_token(&self, household: HouseholdId, token_hash: &str, member: &str) -> Result<(), RepoError>;

    /// The household a token hash belongs to, `None` for an unknown hash.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn household_for_token(&self, token_hash: &str) -> Result<Option<HouseholdId>, RepoError>;
}
