//! The spend ledger.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::money::MicroUsd;
use trove_domain::spend::SpendEntry;
use trove_domain::{HouseholdId, Timestamp};

/// One entry per model call, per household.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait SpendLedger: Send + Sync {
    /// Records one call.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn record(&self, household: HouseholdId, entry: &SpendEntry) -> Result<(), RepoError>;

    /// The entries with `from <= at < to` (each bound optional), oldest first.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn entries(
        &self,
        household: HouseholdId,
        from: Option<Timestamp>,
        to: Option<Timestamp>,
    ) -> Result<Vec<SpendEntry>, RepoError>;

    /// The sum of the costs of the entries at or after `since`.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn total_since(&self, household: HouseholdId, since: Timestamp) -> Result<MicroUsd, RepoError>;
}
