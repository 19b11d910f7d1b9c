//! The history: one event per change, who made it and what it changed, kept per household.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::HouseholdId;
use trove_domain::history::{Event, ObjectKind};
use trove_domain::people::EventId;

/// The events of households' histories, as read. Events are written only by the store's writes, each in its
/// write's own transaction (`history::Recording`, `InventoryRepo::update`...): there is no way to append one apart.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait EventRepo: Send + Sync {
    /// The events of one object of the household, oldest first.
    ///
    /// # Errors
    /// `Unexpected` only (an object with no event answers an empty list).
    async fn of_object(
        &self,
        household: HouseholdId,
        kind: ObjectKind,
        id: i64,
    ) -> Result<Vec<(EventId, Event)>, RepoError>;

    /// The household's events, newest first: at most `limit`, all older than `before` when given.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn activity(
        &self,
        household: HouseholdId,
        limit: u32,
        before: Option<EventId>,
    ) -> Result<Vec<(EventId, Event)>, RepoError>;

    /// The event `id` of the household.
    ///
    /// # Errors
    /// MUST return `NotFound` when there is no such event in this household (another household's included);
    /// `Unexpected` otherwise.
    async fn get(&self, household: HouseholdId, id: EventId) -> Result<Event, RepoError>;
}
