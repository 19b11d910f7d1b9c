//! The history of a household: who changed what. `Actor` is who asks for a change (the member, or `None` for
//! the command line); `Recorder` appends the events the use cases make; `History` reads them and undoes a
//! change of an item's fields.

use crate::auth::Caller;
use crate::error::named;
use crate::items::Inventory;
use crate::ports::{EventRepo, MemberRepo, PlaceRepo};
use crate::{Error, Refusal};
use std::collections::HashMap;
use std::sync::Arc;
use trove_domain::history::{Event, ObjectKind, UndoRefused, check_undo, reverse, undoable};
use trove_domain::people::{EventId, MemberId, Permission};
use trove_domain::{HouseholdId, ItemId, PlaceId};

/// Largest page of the activity feed.
pub const ACTIVITY_MAX: u32 = 200;

/// An event as the history shows it: with its id and the name of the member who made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownEvent {
    pub id: EventId,
    pub event: Event,
    /// The member's name; `None` for the command line (and `Some("former member")` for one removed since).
    pub member: Option<(MemberId, String)>,
}

/// The history use cases.
#[derive(Clone)]
pub struct History {
    events: Arc<dyn EventRepo>,
    members: Arc<dyn MemberRepo>,
    inventory: Inventory,
    /// To tell a missing place (404) from one with no history.
    places: Arc<dyn PlaceRepo>,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History").finish_non_exhaustive()
    }
}

impl History {
    pub fn new(
        events: Arc<dyn EventRepo>,
        members: Arc<dyn MemberRepo>,
        inventory: Inventory,
        places: Arc<dyn PlaceRepo>,
    ) -> Self {
        Self { events, members, inventory, places }
    }

    async fn shown(&self, household: HouseholdId, events: Vec<(EventId, Event)>) -> Result<Vec<ShownEvent>, Error> {
        let names: HashMap<MemberId, String> =
            self.members.members(household).await?.into_iter().map(|m| (m.id, m.name.as_str().to_owned())).collect();
        Ok(events
            .into_iter()
            .map(|(id, event)| {
                let member =
                    event.member.map(|m| (m, names.get(&m).cloned().unwrap_or_else(|| "former member".to_owned())));
                ShownEvent { id, event, member }
            })
            .collect())
    }

    /// The history of an item, oldest first.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the item when it is not one of the household.
    pub async fn of_item(&self, household: HouseholdId, id: ItemId) -> Result<Vec<ShownEvent>, Error> {
        self.inventory.get(household, id).await?;
        let events = self.events.of_object(household, ObjectKind::Item, id.0).await?;
        self.shown(household, events).await
    }

    /// The history of a place, oldest first (a deleted place has none to show: it is not found).
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the place when it is not one of the household.
    pub async fn of_place(&self, household: HouseholdId, id: PlaceId) -> Result<Vec<ShownEvent>, Error> {
        self.places.get(household, id).await.map_err(named(ObjectKind::Place, id.0))?;
        let events = self.events.of_object(household, ObjectKind::Place, id.0).await?;
        self.shown(household, events).await
    }

    /// The household's feed, newest first: at most `limit` events, older than `before` when given.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a limit outside 1..=200.
    pub async fn activity(
        &self,
        household: HouseholdId,
        limit: u32,
        before: Option<EventId>,
    ) -> Result<Vec<ShownEvent>, Error> {
        if limit == 0 || limit > ACTIVITY_MAX {
            return Err(Error::Invalid(format!("limit must be between 1 and {ACTIVITY_MAX}")));
        }
        let events = self.events.activity(household, limit, before).await?;
        self.shown(household, events).await
    }

    /// Undoes a change of an item's fields: puts back the values it changed, while the item is still at the
    /// version the change left it at; the undo is an event itself (`undo`).
    ///
    /// # Errors
    /// [`Error::Forbidden`] for a caller who may not write; [`Error::NotFound`] naming the event when it is not
    /// one of the household; [`Refusal::Undo`] when it cannot be undone or the item changed since.
    pub async fn undo(&self, caller: &Caller, id: EventId) -> Result<ShownEvent, Error> {
        caller.require(Permission::WriteInventory)?;
        let household = caller.household;
        let event = self.events.get(household, id).await.map_err(named(ObjectKind::Event, id.0))?;
        // The rule by kind first (`history::undoable`): a project's steps, for one, move items with the project
        // and are undone only by the project's own steps; then whether the item changed since.
        if !undoable(&event) {
            return Err(Refusal::Undo(UndoRefused::NotUndoable).into());
        }
        let item = ItemId(event.object);
        let current = self.inventory.get(household, item).await?;
        let later = self.events.of_object(household, ObjectKind::Item, item.0).await?.last().map(|(id, _)| *id);
        check_undo(id, &event, current.version, later).map_err(Refusal::Undo)?;
        let back = reverse(&event.changes).map_err(Refusal::Undo)?;
        let undone = self.inventory.revert(caller.into(), item, back, current.version).await?;
        let mut shown = self.shown(household, vec![undone]).await?;
        Ok(shown.remove(0))
    }
}
