//! Price history of items.

use crate::RepoError;
use async_trait::async_trait;
use std::collections::HashMap;
use trove_domain::pricing::PriceReport;
use trove_domain::{HouseholdId, ItemId};

/// Price reports, kept per item as its price history.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait PriceRepo: Send + Sync {
    /// Keeps a report.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn add(&self, household: HouseholdId, report: &PriceReport) -> Result<(), RepoError>;

    /// The item's reports, newest first.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn history(&self, household: HouseholdId, item: ItemId) -> Result<Vec<PriceReport>, RepoError>;

    /// The latest report of every item of the household that has one (the newest by time, then by the order
    /// they were kept).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn latest(&self, household: HouseholdId) -> Result<HashMap<ItemId, PriceReport>, RepoError>;
}
