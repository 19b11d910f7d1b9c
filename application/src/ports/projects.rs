//! Projects and the lifecycle writes that move items with them.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::history::Recording;
use trove_domain::item::Hold;
use trove_domain::project::{NewProject, Project};
use trove_domain::{HouseholdId, ProjectId};

/// The projects of each household. Lifecycle writes are one transaction each, conditional on the state they
/// expect, so that concurrent writers (also in other processes) never both win. Each writes its events in its
/// transaction (`rec`): the project's fields before and after (`rec.object` of
/// `trove_domain::history::project_fields`), then what it did to each of its items (`rec.item_changed`, read in
/// the transaction before and after the write).
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait ProjectRepo: Send + Sync {
    /// Stores projects written by the rules (status `proposed`), all in one transaction, with a `create` event of
    /// each (`rec.object` of `trove_domain::history::project_fields`) in that transaction, in the order given.
    ///
    /// # Errors
    /// `Unexpected` only; nothing is written then.
    async fn insert_many(
        &self,
        household: HouseholdId,
        projects: Vec<NewProject>,
        rec: &Recording,
    ) -> Result<Vec<Project>, RepoError>;

    /// Gives a `proposed` project the title and reason of a run that proposed it again, and `rec.at` as its
    /// `updated_at`, with its event (`rec.object`, the project's fields before and after) in the same
    /// transaction.
    ///
    /// # Errors
    /// MUST return `Conflict(ProjectStatus)` when the project is no longer `proposed`, `NotFound` when it does not
    /// exist; nothing is written then.
    async fn refresh(
        &self,
        household: HouseholdId,
        id: ProjectId,
        title: &str,
        reason: &str,
        rec: &Recording,
    ) -> Result<Project, RepoError>;

    /// One project.
    ///
    /// # Errors
    /// MUST return `NotFound` when no project `id` exists in `household`.
    async fn get(&self, household: HouseholdId, id: ProjectId) -> Result<Project, RepoError>;

    /// Every project of the household, newest first.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn list(&self, household: HouseholdId) -> Result<Vec<Project>, RepoError>;

    /// Accepts a `proposed` project and takes its holds ([`Hold`], from `trove_domain::project::check_accept`),
    /// in one transaction: the project's status changes only if it is still `proposed`; an item held whole
    /// becomes `reserved` (held by the project) only if its stored version is still the one given (the version
    /// the rules checked it at); units of a stock are added to its `units_held` only if it is still buildable and
    /// its quantity less the units already held still covers them, so two accepts can never hold more units
    /// than exist. Items are taken in id order, so two accepts sharing items never deadlock.
    ///
    /// # Errors
    /// MUST return `Stale(item)` naming an item whose version changed or whose units no longer suffice,
    /// `Conflict(ProjectStatus)` when the project is no longer `proposed`, `NotFound` when it does not exist;
    /// nothing is written in any of these cases.
    async fn accept(
        &self,
        household: HouseholdId,
        id: ProjectId,
        holds: &[Hold],
        rec: &Recording,
    ) -> Result<Project, RepoError>;

    /// Marks an `accepted` project built, in one transaction: the items it holds whole become `in_use`; the
    /// units it holds of a stock are consumed (out of both the quantity and `units_held`).
    ///
    /// # Errors
    /// MUST return `Conflict(ProjectStatus)` when the project is not `accepted`, `NotFound` when it does not exist.
    async fn build(&self, household: HouseholdId, id: ProjectId, rec: &Recording) -> Result<Project, RepoError>;

    /// Drops a `proposed` or `accepted` project, in one transaction: the items it held whole become `available`
    /// again; the units it held of a stock are given back (out of `units_held`).
    ///
    /// # Errors
    /// MUST return `Conflict(ProjectStatus)` when the project is built or dropped, `NotFound` when it does not exist.
    async fn drop_project(&self, household: HouseholdId, id: ProjectId, rec: &Recording) -> Result<Project, RepoError>;
}
