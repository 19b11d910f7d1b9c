//! The spend ledger.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::money::MicroUsd;
use trove_domain::spend::{CallKind, CallOutcome, SpendEntry};
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

    /// Every household's calls since the ledger began, counted and costed per kind and outcome (for the
    /// metrics), in no particular order.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn totals(&self) -> Result<Vec<SpendTotal>, RepoError>;
}

/// The calls of one kind that ended one way, over every household.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpendTotal {
    pub kind: CallKind,
    pub outcome: CallOutcome,
    pub calls: u64,
    pub cost: MicroUsd,
}
