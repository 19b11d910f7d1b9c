//! The inventory's use cases: create, read, list, change, measure, record faults and tests, mark gone.

use crate::error::named;
use crate::ports::{Clock, InventoryRepo, ItemPage, ItemQuery};
use crate::{Error, RepoError};
use std::sync::Arc;
use trove_domain::item::{
    Availability, Condition, Fault, Gone, GoneReason, Intent, Item, ItemName, ItemType, Measurement, NewItem, TestDone,
};
use trove_domain::{HouseholdId, ItemId};

/// Largest page of a listing.
pub const LIMIT_MAX: u32 = 500;
/// How often a change is retried when another writer changed the item in between.
const RETRIES: usize = 3;

/// The fields a PATCH may change; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ItemPatch {
    pub name: Option<ItemName>,
    pub item_type: Option<ItemType>,
    pub profile: Option<String>,
    pub condition: Option<Condition>,
    pub intent: Option<Intent>,
    /// Only `available` and `lent`: reserving and building go through projects.
    pub availability: Option<Availability>,
    /// `Some(None)` clears the location.
    pub location: Option<Option<String>>,
    pub accessories: Option<Vec<String>>,
    pub components: Option<Vec<ItemId>>,
}

/// The inventory use cases.
#[derive(Clone)]
pub struct Inventory {
    items: Arc<dyn InventoryRepo>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Inventory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inventory").finish_non_exhaustive()
    }
}

fn no_item(id: ItemId) -> impl Fn(RepoError) -> Error {
    named(move || format!("no such item {id}"))
}

impl Inventory {
    pub fn new(items: Arc<dyn InventoryRepo>, clock: Arc<dyn Clock>) -> Self {
        Self { items, clock }
    }

    /// Checks that every component exists in the household and is not the item itself.
    async fn check_components(&self, household: HouseholdId, own: Option<ItemId>, ids: &[ItemId]) -> Result<(), Error> {
        if let Some(own) = own
            && ids.contains(&own)
        {
            return Err(Error::Invalid(format!("item {own} cannot be a component of itself")));
        }
        let found = self.items.get_many(household, ids).await?;
        if let Some(missing) = ids.iter().find(|id| !found.iter().any(|i| i.id == **id)) {
            return Err(Error::Invalid(format!("component {missing} is not an item of this household")));
        }
        Ok(())
    }

    /// Stores a new item.
    ///
    /// # Errors
    /// [`Error::Invalid`] when a component does not exist; nothing is written then.
    pub async fn create(&self, household: HouseholdId, mut item: NewItem) -> Result<Item, Error> {
        item.components.sort_unstable();
        item.components.dedup();
        self.check_components(household, None, &item.components).await?;
        if matches!(item.availability, Availability::Reserved | Availability::InUse) {
            return Err(Error::Invalid(format!(
                "availability {} is set by accepting or building a project",
                item.availability
            )));
        }
        Ok(self.items.insert(household, item, self.clock.now()).await?)
    }

    /// One item.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the item.
    pub async fn get(&self, household: HouseholdId, id: ItemId) -> Result<Item, Error> {
        self.items.get(household, id).await.map_err(no_item(id))
    }

    /// A page of items.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a limit outside 1..=500.
    pub async fn list(&self, household: HouseholdId, query: &ItemQuery) -> Result<ItemPage, Error> {
        if query.limit == 0 || query.limit > LIMIT_MAX {
            return Err(Error::Invalid(format!("limit must be between 1 and {LIMIT_MAX}")));
        }
        Ok(self.items.list(household, query).await?)
    }

    /// Reads the item, applies `change`, writes it conditional on its version; retried when another writer got
    /// in between.
    async fn modify(
        &self,
        household: HouseholdId,
        id: ItemId,
        change: impl Fn(&mut Item) -> Result<(), Error>,
    ) -> Result<Item, Error> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut item = self.get(household, id).await?;
            change(&mut item)?;
            item.updated_at = self.clock.now();
            match self.items.update(household, &item).await {
                Err(RepoError::Stale(_)) if attempt < RETRIES => continue,
                other => return other.map_err(no_item(id)),
            }
        }
    }

    /// Changes the fields given.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Invalid`] for an availability other than available/lent or a bad
    /// component; [`Error::Conflict`] when the change would take a reserved or in-use item away from its project,
    /// or touches a gone item.
    pub async fn patch(&self, household: HouseholdId, id: ItemId, patch: ItemPatch) -> Result<Item, Error> {
        if let Some(a) = patch.availability
            && !matches!(a, Availability::Available | Availability::Lent)
        {
            return Err(Error::Invalid(format!("availability {a} is set by accepting or building a project")));
        }
        if let Some(components) = &patch.components {
            self.check_components(household, Some(id), components).await?;
        }
        self.modify(household, id, |item| {
            if item.gone.is_some() {
                return Err(Error::Conflict(format!("item {id} is gone; it is history and cannot change")));
            }
            let held = matches!(item.availability, Availability::Reserved | Availability::InUse);
            let project = item.project.map(|p| p.to_string()).unwrap_or_else(|| "(unknown)".into());
            if held && (patch.availability.is_some() || patch.intent.is_some_and(|i| i != Intent::Keep)) {
                return Err(Error::Conflict(format!(
                    "item {id} is {} by project {project}; drop the project first",
                    if item.availability == Availability::Reserved { "reserved" } else { "in use" }
                )));
            }
            if let Some(v) = &patch.name {
                item.name = v.clone();
            }
            if let Some(v) = &patch.item_type {
                item.item_type = v.clone();
            }
            if let Some(v) = &patch.profile {
                item.profile = v.clone();
            }
            if let Some(v) = patch.condition {
                item.condition = v;
            }
            if let Some(v) = patch.intent {
                item.intent = v;
            }
            if let Some(v) = patch.availability {
                item.availability = v;
            }
            if let Some(v) = &patch.location {
                item.location = v.clone();
            }
            if let Some(v) = &patch.accessories {
                item.accessories = v.clone();
            }
            if let Some(v) = &patch.components {
                let mut v = v.clone();
                v.sort_unstable();
                v.dedup();
                item.components = v;
            }
            Ok(())
        })
        .await
    }

    /// Records a measurement; the current field of its key becomes this value when it is the latest.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Conflict`] for a gone item.
    pub async fn add_measurement(&self, household: HouseholdId, id: ItemId, m: Measurement) -> Result<Item, Error> {
        self.modify(household, id, |item| {
            refuse_gone(item)?;
            item.measurements.push(m.clone());
            Ok(())
        })
        .await
    }

    /// Records a fault.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Conflict`] for a gone item.
    pub async fn add_fault(&self, household: HouseholdId, id: ItemId, fault: Fault) -> Result<Item, Error> {
        self.modify(household, id, |item| {
            refuse_gone(item)?;
            item.faults.push(fault.clone());
            Ok(())
        })
        .await
    }

    /// Records a test.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Conflict`] for a gone item.
    pub async fn add_test(&self, household: HouseholdId, id: ItemId, test: TestDone) -> Result<Item, Error> {
        self.modify(household, id, |item| {
            refuse_gone(item)?;
            item.tests_done.push(test.clone());
            Ok(())
        })
        .await
    }

    /// Marks an item gone. Releases nothing silently: refused while reserved.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Conflict`] while reserved or when already gone.
    pub async fn mark_gone(
        &self,
        household: HouseholdId,
        id: ItemId,
        reason: GoneReason,
        note: Option<String>,
    ) -> Result<Item, Error> {
        let at = self.clock.now();
        self.modify(household, id, |item| {
            item.mark_gone(Gone { reason, at, note: note.clone() }).map_err(|e| Error::Conflict(e.to_string()))
        })
        .await
    }
}

fn refuse_gone(item: &Item) -> Result<(), Error> {
    match item.gone {
        Some(_) => Err(Error::Conflict(format!("item {} is gone; it is history and cannot change", item.id))),
        None => Ok(()),
    }
}
