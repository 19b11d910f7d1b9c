//! Places: where a household's things are, as a tree (house > garage > shelf B2 > box 4).

use crate::RepoError;
use async_trait::async_trait;
use std::collections::HashMap;
use trove_domain::history::Recording;
use trove_domain::place::{NewPlace, Place, PlaceName, PlacePath};
use trove_domain::{HouseholdId, PlaceId};

/// The path a `location` text names, and the places made for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundPath {
    pub path: PlacePath,
    /// The places of the path that did not exist and were created, root first (none when all were found).
    pub created: Vec<Place>,
}

/// The places of each household. Every method is scoped to one household: another household's place is never
/// read nor written, and looks exactly like a missing one.
///
/// The rules of the tree (no cycles, sibling names distinct ignoring case) are the domain's
/// (`trove_domain::place::PlaceTree`); the use case checks them first, and the writes below guard them
/// again against concurrent writers, so a tree is never left broken.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait PlaceRepo: Send + Sync {
    /// Stores a new place with `created_at = rec.at`.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: its `create` (`rec.place_created`).
    ///
    /// # Errors
    /// MUST return `NotFound` when `place.parent_id` is not a place of `household`, and `Conflict(Place(..))` naming
    /// the name when a sibling already has it (ignoring case); nothing is written then.
    async fn insert(&self, household: HouseholdId, place: NewPlace, rec: &Recording) -> Result<Place, RepoError>;

    /// One place.
    ///
    /// # Errors
    /// MUST return `NotFound` when no place `id` exists in `household`.
    async fn get(&self, household: HouseholdId, id: PlaceId) -> Result<Place, RepoError>;

    /// Every place of the household, ordered by id.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn all(&self, household: HouseholdId) -> Result<Vec<Place>, RepoError>;

    /// How many present (not gone) items are directly in each place; places holding none are left out. One
    /// aggregate query.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn item_counts(&self, household: HouseholdId) -> Result<HashMap<PlaceId, u64>, RepoError>;

    /// Writes the name, the parent and the note of `place` (read earlier, then changed by the rules).
    /// Serialised with every other write of the household's places, it checks the tree's rules again against
    /// the stored tree, so two concurrent moves never make a cycle together.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: the place's fields before and after (`rec.object`; none when nothing changed).
    ///
    /// # Errors
    /// MUST return `NotFound` when the place does not exist in `household`, and `Conflict(Place(..))` when the
    /// change breaks a rule of the tree as it is stored now (another writer got in between: a cycle, a name taken, a
    /// parent gone); nothing is written then.
    async fn update(&self, household: HouseholdId, place: &Place, rec: &Recording) -> Result<Place, RepoError>;

    /// Deletes an empty place. Gone items still recorded in it (history, which cannot be moved) lose their
    /// place.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: the place's fields before (`rec.object`).
    ///
    /// # Errors
    /// MUST return `NotFound` when the place does not exist in `household`, and `Conflict(StillHolds)` with
    /// what it holds while a present item or a place is in it; nothing is written then.
    async fn delete(&self, household: HouseholdId, id: PlaceId, rec: &Recording) -> Result<(), RepoError>;

    /// Finds the path named by `names` (root first), creating the places missing from it, in one
    /// transaction; names match siblings ignoring case, so "garage / shelf b2" finds "Garage / Shelf B2".
    /// Safe against a concurrent writer creating the same place. Answers the path and the places it created.
    /// `None` for no names.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: a `create` of each place it made (`rec.place_created`).
    ///
    /// # Errors
    /// `Unexpected` only; nothing is written then.
    async fn find_or_create(
        &self,
        household: HouseholdId,
        names: &[PlaceName],
        rec: &Recording,
    ) -> Result<Option<FoundPath>, RepoError>;

    /// The path of each place of `ids` in the household, in one query; missing ids are left out.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn paths(&self, household: HouseholdId, ids: &[PlaceId]) -> Result<HashMap<PlaceId, PlacePath>, RepoError>;
}
