//! The inventory's use cases: create, read, list, change (one item or many at once), measure, record faults
//! and tests, mark gone.

use crate::error::{Refusal, named};
use crate::places::resolve;
use crate::ports::{Clock, InventoryRepo, ItemPage, ItemQuery, PlaceRepo, ProjectRepo};
use crate::recorder::{Actor, Recorder};
use crate::{Error, RepoError};
use std::sync::Arc;
use trove_domain::bulk::{self, BULK_MAX, BulkSet};
use trove_domain::code::Code;
use trove_domain::history::{Action, Event, ObjectKind};
use trove_domain::item::{
    self, ChangeRefused, Fault, Gone, GoneReason, Item, ItemChanges, ItemError, Measurement, NewItem, TestDone,
};
use trove_domain::people::EventId;
use trove_domain::place::{PlacePath, PlaceRefused};
use trove_domain::text::{self, ControlCharacter, Lines};
use trove_domain::{HouseholdId, ItemId, PlaceId};

/// Largest page of a listing.
pub const LIMIT_MAX: u32 = 500;
/// How often a change is retried when another writer changed the item in between.
const RETRIES: usize = 3;

/// Where the next page of a listing starts; clients see it only as an opaque string.
///
/// A listing in id order pages by keyset (the items after the last one seen), so a page costs the same at any
/// depth and inserts never shift a page; a search, ordered by relevance, pages by the count of items seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cursor {
    /// The items after this one, in id order.
    After(ItemId),
    /// The items after the first this many.
    Skip(u64),
}

impl Cursor {
    /// The cursor as a client passes it back.
    pub fn encode(self) -> String {
        match self {
            Self::After(id) => format!("a{:x}", id.0),
            Self::Skip(n) => format!("s{n:x}"),
        }
    }

    /// Reads a cursor given by a client.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a string no page ever answered.
    pub fn decode(text: &str) -> Result<Self, Error> {
        let bad = || Error::Invalid(format!("after is not a cursor this listing answered: {text:?}"));
        let (kind, hex) = text.split_at_checked(1).ok_or_else(bad)?;
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
            return Err(bad());
        }
        match kind {
            "a" => i64::from_str_radix(hex, 16).map(|id| Self::After(ItemId(id))).map_err(|_| bad()),
            "s" => u64::from_str_radix(hex, 16).map(Self::Skip).map_err(|_| bad()),
            _ => Err(bad()),
        }
    }

    /// Sets `query` to start where the cursor points.
    pub fn apply(self, query: &mut ItemQuery) {
        match self {
            Self::After(id) => {
                query.after = Some(id);
                query.offset = 0;
            }
            Self::Skip(n) => {
                query.after = None;
                query.offset = n;
            }
        }
    }

    /// The cursor of the page after `page`, the answer to `query`; `None` at the end.
    pub fn next(query: &ItemQuery, page: &ItemPage) -> Option<Self> {
        if !page.more {
            return None;
        }
        if query.q.is_some() || query.sort.is_some() {
            // Ranked by relevance, or sorted by a key: the next page skips what was seen.
            return Some(Self::Skip(query.offset + page.items.len() as u64));
        }
        page.items.last().map(|i| Self::After(i.id))
    }
}

/// The fields a PATCH may change: the domain's [`ItemChanges`], whose rules decide what is allowed. Its
/// `location` text is found or created as a path of places and becomes its `place_id`.
pub type ItemPatch = ItemChanges;

/// Input the domain's text check refused.
fn invalid(e: ControlCharacter) -> Error {
    Error::Invalid(e.to_string())
}

/// A value out of the bounds of what an item records (its field keys, its dates).
fn out_of_bounds(e: ItemError) -> Error {
    Error::Invalid(e.to_string())
}

/// A change the item's rules refused.
fn refused(e: ChangeRefused) -> Error {
    Refusal::Change(e).into()
}

/// The inventory use cases.
#[derive(Clone)]
pub struct Inventory {
    items: Arc<dyn InventoryRepo>,
    /// Where items are put: a `place_id` is checked and a `location` text found or created here.
    places: Arc<dyn PlaceRepo>,
    /// The pending media a new item takes (`media_ids`), read back once attached so that they are recorded.
    /// Read to name the project holding an item when a change is refused for it.
    projects: Arc<dyn ProjectRepo>,
    clock: Arc<dyn Clock>,
    /// Where every change is recorded, with who made it.
    recorder: Recorder,
}

impl std::fmt::Debug for Inventory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inventory").finish_non_exhaustive()
    }
}

fn no_item(id: ItemId) -> impl Fn(RepoError) -> Error {
    named(ObjectKind::Item, id.0)
}

impl Inventory {
    pub fn new(
        items: Arc<dyn InventoryRepo>,
        places: Arc<dyn PlaceRepo>,
        projects: Arc<dyn ProjectRepo>,
        clock: Arc<dyn Clock>,
        recorder: Recorder,
    ) -> Self {
        Self { items, places, projects, clock, recorder }
    }

    /// A refusal that names the project holding an item, with the project's title ("\"Red drill\" is reserved
    /// by project \"Bench power supply\""); by its id still when the project cannot be read.
    async fn name_holder(&self, household: HouseholdId, mut error: Error) -> Error {
        let held = match &mut error {
            Error::Refused(Refusal::Gone(g)) => g.held_by(),
            Error::Refused(Refusal::Change(c)) => c.held_by(),
            Error::Refused(Refusal::Bulk(b)) => b.reason.held_by(),
            _ => None,
        };
        if let Some(held) = held
            && let Some(id) = held.project
            && let Ok(project) = self.projects.get(household, id).await
        {
            *held = held.clone().titled(&project.title);
        }
        error
    }

    /// Checks that `id` is a place of the household.
    async fn check_place(&self, household: HouseholdId, id: PlaceId) -> Result<(), Error> {
        match self.places.get(household, id).await {
            Ok(_) => Ok(()),
            Err(RepoError::NotFound) => Err(Refusal::Place(PlaceRefused::NoSuchParent(id)).into()),
            Err(e) => Err(e.into()),
        }
    }

    /// Where a created or changed item goes: a `place_id` (checked), or the place a `location` text names
    /// (found or created, each place created recorded as made by `actor`), never both. `None`: no word of it;
    /// `Some(None)`: out of any place.
    async fn placement(
        &self,
        actor: Actor,
        place_id: Option<Option<PlaceId>>,
        location: Option<Option<&str>>,
    ) -> Result<Option<Option<PlaceId>>, Error> {
        let household = actor.household;
        match (place_id, location) {
            (Some(_), Some(_)) => Err(Error::Invalid("give place_id or location, not both".into())),
            (Some(Some(id)), None) => {
                self.check_place(household, id).await?;
                Ok(Some(Some(id)))
            }
            (Some(None), None) | (None, Some(None)) => Ok(Some(None)),
            (None, Some(Some(text))) => {
                let path = resolve(self.places.as_ref(), &self.recorder, actor, text).await?;
                Ok(Some(path.map(|p| p.id())))
            }
            (None, None) => Ok(None),
        }
    }

    /// Checks that every component is an item of the household (the rule that an item is not its own component
    /// is the domain's, applied with the change).
    async fn check_components(&self, household: HouseholdId, ids: &[ItemId]) -> Result<(), Error> {
        let found = self.items.get_many(household, ids).await?;
        if let Some(missing) = ids.iter().find(|id| !found.iter().any(|i| i.id == **id)) {
            return Err(Refusal::ForeignComponent(*missing).into());
        }
        Ok(())
    }

    /// Stores a new item, in the place `place_id` names or the one its `location` text names ("Garage / Shelf
    /// B2", found or created). Recorded as the event `create` of `actor`, with a `create` of each place made for
    /// the `location` and of each pending medium of `media_ids` it takes.
    ///
    /// # Errors
    /// [`Error::Refused`] when a component is not an item of the household, the availability is one only a
    /// project sets, or `place_id` is not a place of the household; [`Error::Invalid`] for both a `place_id`
    /// and a `location`, or a `location` part that is not a place name, or what is recorded on it out of its
    /// bounds (`NewItem::check_bounds`). Nothing is written then.
    pub async fn create(&self, actor: Actor, mut item: NewItem) -> Result<Item, Error> {
        let household = actor.household;
        item.check_texts().map_err(invalid)?;
        item.check_bounds(self.clock.now()).map_err(out_of_bounds)?;
        item.components.sort_unstable();
        item.components.dedup();
        self.check_components(household, &item.components).await?;
        item::check_manual_availability(item.availability).map_err(refused)?;
        let location = item.location.take();
        if let Some(place) = self.placement(actor, item.place_id.map(Some), location.as_deref().map(Some)).await? {
            item.place_id = place;
        }
        // Recorded by the store in the insert's transaction, with the pending media it takes (recorded by no one
        // until now: they show in the history once they are on the item).
        let rec = self.recorder.recording(actor, Action::Create);
        Ok(self.items.insert(household, item, &rec).await?)
    }

    /// One item.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the item.
    pub async fn get(&self, household: HouseholdId, id: ItemId) -> Result<Item, Error> {
        self.items.get(household, id).await.map_err(no_item(id))
    }

    /// A page of items, with the paths of the places they are in.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a limit outside 1..=500 or a search `item::search` refuses (a control character,
    /// more than `item::SEARCH_WORDS_MAX` words); [`Error::NotFound`] when the query's place is not a place of
    /// the household.
    pub async fn list(&self, household: HouseholdId, query: &ItemQuery) -> Result<ItemPage, Error> {
        if query.limit == 0 || query.limit > LIMIT_MAX {
            return Err(Error::Invalid(format!("limit must be between 1 and {LIMIT_MAX}")));
        }
        // The search's words are checked once here: no control character, a bounded count of words.
        let q = query.q.as_deref().map(item::search).transpose().map_err(|e| Error::Invalid(e.to_string()))?.flatten();
        // A search that reads as a code finds the items carrying it first, whichever form of it was typed.
        let code = q.as_deref().and_then(|q| Code::parse(None, q).ok()).map(|c| c.key().to_owned());
        let query = ItemQuery { q, code, ..query.clone() };
        let page = self.items.list(household, &query).await?;
        // Only a page with no item may be of a place that is not the household's (the store's filter holds the
        // household's places only): the place is looked up then, and not for every page.
        if let Some(filter) = query.place
            && page.items.is_empty()
        {
            self.places.get(household, filter.place).await.map_err(crate::places::no_place(filter.place))?;
        }
        Ok(page)
    }

    /// The household's item revision ([`InventoryRepo::revision`]): an answer built from its listing at one
    /// revision stays current while the revision is unchanged.
    ///
    /// # Errors
    /// `Unexpected` when the store fails.
    pub async fn revision(&self, household: HouseholdId) -> Result<i64, Error> {
        Ok(self.items.revision(household).await?)
    }

    /// Reads the item, applies `change`, writes it conditional on its version; retried when another writer got
    /// in between, unless the caller asked for the change only at the version `expected` (`If-Match`). The
    /// change is recorded as the event `action` of `actor`, in the write's transaction, so that the history of
    /// the item is in the order of its writes. A change that changes nothing writes nothing: no event, the same
    /// version.
    async fn modify(
        &self,
        actor: Actor,
        action: Action,
        id: ItemId,
        expected: Option<&[i64]>,
        change: impl Fn(&mut Item) -> Result<(), Error>,
    ) -> Result<Item, Error> {
        let household = actor.household;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let before = self.get(household, id).await?;
            if let Some(expected) = expected
                && !expected.contains(&before.version)
            {
                let expected = expected.to_vec();
                return Err(Refusal::VersionMismatch { item: id, expected, current: before.version }.into());
            }
            let mut item = before.clone();
            if let Err(refused) = change(&mut item) {
                return Err(self.name_holder(household, refused).await);
            }
            if item == before {
                return Ok(before);
            }
            self.name_place(household, &before, &mut item).await?;
            item.updated_at = self.clock.now();
            let changes = trove_domain::history::diff(&before, &item);
            let event = self.recorder.event(actor, action, ObjectKind::Item, id.0, changes, Some(before.version + 1));
            match self.items.update(household, &item, &event).await {
                Err(RepoError::Stale(_)) if expected.is_none() && attempt < RETRIES => continue,
                Err(RepoError::Stale(_)) if expected.is_some() => {
                    // Another writer got in between the read and the write: the client's version is not current.
                    let current = self.get(household, id).await?.version;
                    let expected = expected.map(<[i64]>::to_vec).unwrap_or_default();
                    return Err(Refusal::VersionMismatch { item: id, expected, current }.into());
                }
                other => return Ok(other.map_err(no_item(id))?.0),
            }
        }
    }

    /// The path of `place`, as an item in it carries it.
    async fn path_of(&self, household: HouseholdId, place: PlaceId) -> Result<Option<PlacePath>, Error> {
        Ok(self.places.paths(household, &[place]).await?.remove(&place))
    }

    /// When `item` moved away from `before`'s place, its `place_path` is the path of its new place, so that the
    /// history names both places as they were ([`trove_domain::history::diff`]).
    async fn name_place(&self, household: HouseholdId, before: &Item, item: &mut Item) -> Result<(), Error> {
        if item.place_id != before.place_id {
            item.place_path = match item.place_id {
                Some(place) => self.path_of(household, place).await?,
                None => None,
            };
        }
        Ok(())
    }

    /// Puts back the fields `back` names, only while the item is still at `version` (never retried: a change
    /// in between refuses the undo); recorded as the event `undo`. Answers that event.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Stale`] when the item changed since `version`; the item's rules'
    /// refusals.
    pub(crate) async fn revert(
        &self,
        actor: Actor,
        id: ItemId,
        back: ItemPatch,
        version: i64,
    ) -> Result<(EventId, Event), Error> {
        let household = actor.household;
        let before = self.get(household, id).await?;
        if before.version != version {
            return Err(Refusal::Stale(id).into());
        }
        if let Some(Some(place)) = back.place_id {
            self.check_place(household, place).await?;
        }
        let mut item = before.clone();
        item.apply(&back).map_err(refused)?;
        self.name_place(household, &before, &mut item).await?;
        item.updated_at = self.clock.now();
        let changes = trove_domain::history::diff(&before, &item);
        let event = self.recorder.event(actor, Action::Undo, ObjectKind::Item, id.0, changes, Some(before.version + 1));
        let (_, event_id) = self.items.update(household, &item, &event).await.map_err(no_item(id))?;
        Ok((event_id, event))
    }

    /// Changes the fields given; a `location` text moves the item to the place it names (found or created).
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Error::Refused`] for an availability other than available/lent, a component that
    /// is not an item of the household (or the item itself), or a `place_id` that is not a place of the
    /// household; [`Error::Invalid`] for both a `place_id` and a `location`, or a `location` part that is not a
    /// place name; [`Error::Refused`] when the change would take a reserved or in-use item away from its
    /// project, or touches a gone item.
    /// With `expected` (the versions the client's `If-Match` names), the change is made only while the item is
    /// at one of them (never, for none).
    /// A patch that changes nothing writes nothing: no event, and the version stays.
    ///
    /// # Errors (besides those above)
    /// [`Refusal::VersionMismatch`] when `expected` is given and the item is at another version.
    pub async fn patch(
        &self,
        actor: Actor,
        id: ItemId,
        mut patch: ItemPatch,
        expected: Option<&[i64]>,
    ) -> Result<Item, Error> {
        let household = actor.household;
        patch.check_texts().map_err(invalid)?;
        if let Some(a) = patch.availability {
            item::check_manual_availability(a).map_err(refused)?;
        }
        if let Some(components) = &patch.components {
            self.check_components(household, components).await?;
        }
        let location = patch.location.take();
        let location = location.as_ref().map(|l| l.as_deref());
        if let Some(place) = self.placement(actor, patch.place_id, location).await? {
            patch.place_id = Some(place);
        }
        self.modify(actor, Action::Patch, id, expected, |item| item.apply(&patch).map_err(refused)).await
    }

    /// Applies one set of changes (a place, an intent, a condition) to many items at once: all or nothing, in
    /// one transaction, each item checked by the same rules as a single change. Answers how many items were
    /// changed.
    ///
    /// # Errors
    /// [`Error::Invalid`] for no ids, more than [`BULK_MAX`], or a set that changes nothing;
    /// [`Error::NotFound`] naming an item that is not in the household; [`Error::Refused`] for a `place_id` that
    /// is not a place of the household, or naming the first item the rules refuse and why (a gone item, one
    /// held by a project). Nothing is written then.
    pub async fn bulk_update(&self, actor: Actor, ids: &[ItemId], set: BulkSet) -> Result<u64, Error> {
        let household = actor.household;
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Err(Error::Invalid("ids must name at least one item".into()));
        }
        if ids.len() > BULK_MAX {
            return Err(Error::Invalid(format!("ids must name at most {BULK_MAX} items, not {}", ids.len())));
        }
        if set.is_empty() {
            return Err(Error::Invalid("set must change at least one of place_id, intent, condition".into()));
        }
        if let Some(Some(place)) = set.place_id {
            self.check_place(household, place).await?;
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let found = self.items.get_many(household, &ids).await?;
            if let Some(missing) = ids.iter().find(|id| !found.iter().any(|i| i.id == **id)) {
                return Err(Error::NotFound { what: ObjectKind::Item, id: missing.0 });
            }
            let mut changed = match bulk::apply_all(&found, &set) {
                Ok(changed) => changed,
                Err(refused) => return Err(self.name_holder(household, Refusal::from(refused).into()).await),
            };
            let now = self.clock.now();
            let moved_to = match set.place_id {
                Some(Some(place)) => self.path_of(household, place).await?,
                _ => None,
            };
            for (before, item) in found.iter().zip(&mut changed) {
                item.updated_at = now;
                if item.place_id != before.place_id {
                    item.place_path.clone_from(&moved_to);
                }
            }
            // The store bumps each version by one in the same write, and appends the events in it.
            let events: Vec<Event> = found
                .iter()
                .zip(&changed)
                .map(|(before, after)| {
                    let changes = trove_domain::history::diff(before, after);
                    let version = Some(after.version + 1);
                    self.recorder.event(actor, Action::Bulk, ObjectKind::Item, after.id.0, changes, version)
                })
                .collect();
            match self.items.update_many(household, &changed, &events).await {
                Err(RepoError::Stale(_)) if attempt < RETRIES => continue,
                Err(RepoError::Conflict(m)) => return Err(Refusal::StateChanged(m).into()),
                other => return Ok(other?),
            }
        }
    }

    /// Records a measurement; the current field of its key becomes this value when it is the latest.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Change`] for a gone item; [`Error::Invalid`] for a date out of the
    /// window (`item::check_recorded_at`) or a key past `item::FIELD_KEYS_MAX`.
    pub async fn add_measurement(&self, actor: Actor, id: ItemId, m: Measurement) -> Result<Item, Error> {
        let now = self.clock.now();
        self.modify(actor, Action::Measurement, id, None, |item| {
            refuse_gone(item)?;
            item.check_measurement(&m, now).map_err(out_of_bounds)?;
            item.measurements.push(m.clone());
            Ok(())
        })
        .await
    }

    /// Records a fault.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Change`] for a gone item.
    pub async fn add_fault(&self, actor: Actor, id: ItemId, fault: Fault) -> Result<Item, Error> {
        text::check("text", &fault.text, Lines::One).map_err(invalid)?;
        self.modify(actor, Action::Fault, id, None, |item| {
            refuse_gone(item)?;
            item.faults.push(fault.clone());
            Ok(())
        })
        .await
    }

    /// Records a test.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Change`] for a gone item; [`Error::Invalid`] for a date out of the
    /// window (`item::check_recorded_at`).
    pub async fn add_test(&self, actor: Actor, id: ItemId, test: TestDone) -> Result<Item, Error> {
        text::check("name", &test.name, Lines::One).map_err(invalid)?;
        text::check("note", test.note.as_deref().unwrap_or_default(), Lines::Many).map_err(invalid)?;
        item::check_recorded_at("at", test.at, self.clock.now()).map_err(out_of_bounds)?;
        self.modify(actor, Action::Test, id, None, |item| {
            refuse_gone(item)?;
            item.tests_done.push(test.clone());
            Ok(())
        })
        .await
    }

    /// Marks an item gone. Releases nothing silently: refused while reserved.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Gone`] while reserved or when already gone.
    pub async fn mark_gone(
        &self,
        actor: Actor,
        id: ItemId,
        reason: GoneReason,
        note: Option<String>,
    ) -> Result<Item, Error> {
        text::check("note", note.as_deref().unwrap_or_default(), Lines::Many).map_err(invalid)?;
        let at = self.clock.now();
        self.modify(actor, Action::Gone, id, None, |item| {
            item.mark_gone(Gone { reason, at, note: note.clone() }).map_err(|e| Refusal::Gone(e).into())
        })
        .await
    }
}

fn refuse_gone(item: &Item) -> Result<(), Error> {
    item.check_changeable().map_err(refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::FoundPath;
    use crate::ports::clock::MockClock;
    use crate::ports::inventory::MockInventoryRepo;
    use crate::ports::places::MockPlaceRepo;

    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use trove_domain::ProjectId;
    use trove_domain::item::{Availability, Condition, Intent, ItemName, ItemType};
    use trove_domain::place::{Place, PlaceName, PlacePath, PlaceStep};

    const H: Actor = Actor { household: HouseholdId(2), member: None };

    use trove_domain::testing::now;

    fn item(id: i64) -> Item {
        trove_domain::testing::item(id, "laptop", Condition::Good)
    }

    /// Places 1..=9 exist; any other id is missing.
    fn places() -> MockPlaceRepo {
        let mut places = MockPlaceRepo::new();
        places.expect_get().returning(|_, id| {
            if (1..=9).contains(&id.0) {
                Ok(Place {
                    id,
                    name: PlaceName::new(&format!("place {id}")).unwrap(),
                    parent_id: None,
                    note: None,
                    created_at: now(),
                })
            } else {
                Err(RepoError::NotFound)
            }
        });
        // Each place 1 to 9 is at the root: its path is its own name.
        places.expect_paths().returning(|_, ids| {
            Ok(ids
                .iter()
                .filter(|id| (1..=9).contains(&id.0))
                .map(|id| {
                    let step = PlaceStep { id: *id, name: PlaceName::new(&format!("place {id}")).unwrap() };
                    (*id, PlacePath::new(vec![step]).unwrap())
                })
                .collect())
        });
        places
    }

    /// The use cases over the mocks given.
    fn inventory(items: MockInventoryRepo, places: MockPlaceRepo) -> Inventory {
        let mut clock = MockClock::new();
        clock.expect_now().returning(now);
        let recorder = crate::recorder::capturing_at(now());
        // Project 8 is "Weather station"; any other is missing.
        let mut projects = crate::ports::projects::MockProjectRepo::new();
        projects.expect_get().returning(|_, id| {
            if id != ProjectId(8) {
                return Err(RepoError::NotFound);
            }
            Ok(trove_domain::project::Project {
                id,
                template_id: trove_domain::TemplateId(1),
                title: "Weather station".into(),
                reason: String::new(),
                status: trove_domain::project::ProjectStatus::Accepted,
                allocations: Vec::new(),
                missing: Vec::new(),
                created_at: now(),
                updated_at: now(),
            })
        });
        Inventory::new(Arc::new(items), Arc::new(places), Arc::new(projects), Arc::new(clock), recorder)
    }

    /// The events recorded: (kind, action, object, [(field, before, after)]).
    type Shown = (ObjectKind, String, i64, Vec<(String, Option<String>, Option<String>)>);

    fn change(field: &str, before: Option<&str>, after: Option<&str>) -> (String, Option<String>, Option<String>) {
        (field.to_owned(), before.map(Into::into), after.map(Into::into))
    }

    /// A store holding `stored`, whose first `stale` bulk writes find a changed version.
    fn store(stored: Vec<Item>, stale: usize, written: Arc<Mutex<Vec<Item>>>) -> MockInventoryRepo {
        let mut items = MockInventoryRepo::new();
        items
            .expect_get_many()
            .returning(move |_, ids| Ok(stored.iter().filter(|i| ids.contains(&i.id)).cloned().collect()));
        let calls = AtomicUsize::new(0);
        items.expect_update_many().returning(move |_, changed, _| {
            if calls.fetch_add(1, Ordering::SeqCst) < stale {
                return Err(RepoError::Stale(changed[0].id));
            }
            written.lock().unwrap().extend_from_slice(changed);
            Ok(changed.len() as u64)
        });
        items
    }

    #[tokio::test]
    async fn bulk_changes_every_item_or_none() {
        let mut held = item(3);
        held.availability = Availability::Reserved;
        held.project = Some(ProjectId(8));
        let stored = vec![item(1), item(2), held];
        let move_to = |p| BulkSet { place_id: Some(Some(PlaceId(p))), ..BulkSet::default() };
        let sell = BulkSet { intent: Some(Intent::Sell), ..BulkSet::default() };

        let written = Arc::new(Mutex::new(Vec::new()));
        let inv = inventory(store(stored.clone(), 1, written.clone()), places());
        assert_eq!(inv.bulk_update(H, &[ItemId(1), ItemId(3), ItemId(1)], move_to(4)).await.unwrap(), 2);
        let written = written.lock().unwrap().clone();
        assert_eq!(
            written.iter().map(|i| (i.id.0, i.place_id, i.updated_at)).collect::<Vec<_>>(),
            [(1, Some(PlaceId(4)), now()), (3, Some(PlaceId(4)), now())]
        );

        let untouched = Arc::new(Mutex::new(Vec::new()));
        let inv = inventory(store(stored.clone(), 0, untouched.clone()), places());
        let check = |r: Result<u64, Error>, want: &str| {
            let e = r.unwrap_err();
            assert_eq!(e.to_string(), want);
            e
        };
        let e = check(
            inv.bulk_update(H, &[ItemId(1), ItemId(3)], sell).await,
            "\"item 3\" is reserved by project \"Weather station\"; drop that project first",
        );
        // The ids stay in the refusal's fields.
        let Error::Refused(Refusal::Bulk(refused)) = &e else { panic!("{e:?}") };
        let ChangeRefused::Held { item, project, .. } = &refused.reason else { panic!("{refused:?}") };
        assert_eq!((refused.item, *item, project.project), (ItemId(3), ItemId(3), Some(ProjectId(8))));
        let e = check(inv.bulk_update(H, &[ItemId(1), ItemId(77)], sell).await, "no such item 77");
        assert!(matches!(e, Error::NotFound { .. }));
        let e = check(inv.bulk_update(H, &[ItemId(1)], move_to(42)).await, "no such place 42");
        assert!(matches!(e, Error::Refused(_)));
        let e = check(inv.bulk_update(H, &[], sell).await, "ids must name at least one item");
        assert!(matches!(e, Error::Invalid(_)));
        let many: Vec<ItemId> = (1..=1001).map(ItemId).collect();
        check(inv.bulk_update(H, &many, sell).await, "ids must name at most 1000 items, not 1001");
        check(
            inv.bulk_update(H, &[ItemId(1)], BulkSet::default()).await,
            "set must change at least one of place_id, intent, condition",
        );
        assert!(untouched.lock().unwrap().is_empty(), "nothing was written");
    }

    #[tokio::test]
    async fn a_location_text_becomes_a_place() {
        let mut places = places();
        places
            .expect_find_or_create()
            // The shelf made for the text is recorded by the store, as a `create` of the same actor.
            .withf(|_, names, rec| {
                names.iter().map(PlaceName::as_str).collect::<Vec<_>>() == ["Garage", "Shelf B2"]
                    && (rec.action.as_str(), rec.member, rec.at) == ("create", H.member, now())
            })
            .times(1)
            .returning(|_, _, _| {
                let path = PlacePath::new(vec![
                    PlaceStep { id: PlaceId(1), name: PlaceName::new("Garage").unwrap() },
                    PlaceStep { id: PlaceId(5), name: PlaceName::new("Shelf B2").unwrap() },
                ])
                .unwrap();
                // The garage was there; the shelf is made for this text.
                let shelf = Place {
                    id: PlaceId(5),
                    name: PlaceName::new("Shelf B2").unwrap(),
                    parent_id: Some(PlaceId(1)),
                    note: None,
                    created_at: now(),
                };
                Ok(Some(FoundPath { path, created: vec![shelf] }))
            });
        let mut items = MockInventoryRepo::new();
        items.expect_get_many().returning(|_, _| Ok(Vec::new()));
        items.expect_get().returning(|_, id| Ok(item(id.0)));
        // The item's event is appended by the store, in the write's transaction.
        let updates: Arc<Mutex<Vec<Event>>> = Arc::default();
        let into = updates.clone();
        items.expect_update().withf(|_, i, _| i.place_id == Some(PlaceId(5))).times(1).returning(move |_, i, e| {
            into.lock().unwrap().push(e.clone());
            Ok((i.clone(), EventId(1)))
        });
        items
            .expect_insert()
            .withf(|_, i, rec| i.place_id == Some(PlaceId(2)) && i.location.is_none() && rec.action == Action::Create)
            .times(1)
            .returning(|_, i, rec| Ok(i.stored(ItemId(9), rec.at)));
        let inv = inventory(items, places);

        let patch = ItemPatch { location: Some(Some("Garage / Shelf B2".into())), ..ItemPatch::default() };
        inv.patch(H, ItemId(1), patch, None).await.unwrap();
        // Every event is the store's, in its writes' transactions: none is appended apart.
        let moved: Vec<Shown> = updates
            .lock()
            .unwrap()
            .iter()
            .map(|e| {
                assert_eq!((e.member, e.version_after), (H.member, Some(2)));
                let changes =
                    e.changes.iter().map(|c| (c.field.to_string(), c.before.clone(), c.after.clone())).collect();
                (e.kind, e.action.to_string(), e.object, changes)
            })
            .collect();
        assert_eq!(moved, [(ObjectKind::Item, "patch".into(), 1, vec![change("place_id", None, Some("5"))])]);

        let mut new = NewItem::new(
            ItemName::new("Pi").unwrap(),
            ItemType::new("sbc").unwrap(),
            String::new(),
            Condition::Good,
            Intent::Keep,
        );
        new.place_id = Some(PlaceId(2));
        inv.create(H, new.clone()).await.unwrap();

        new.location = Some("Garage".into());
        let e = inv.create(H, new.clone()).await.unwrap_err();
        assert!(matches!(&e, Error::Invalid(m) if m == "give place_id or location, not both"), "{e:?}");
        new.location = None;
        new.place_id = Some(PlaceId(40));
        let e = inv.create(H, new).await.unwrap_err();
        assert!(matches!(&e, Error::Refused(_)) && e.to_string() == "no such place 40", "{e:?}");
        let patch = ItemPatch { location: Some(Some("Garage / \u{1}x".into())), ..ItemPatch::default() };
        assert!(matches!(inv.patch(H, ItemId(1), patch, None).await, Err(Error::Invalid(_))));
    }

    #[tokio::test]
    async fn a_new_item_is_inserted_with_its_pending_media_and_the_recording_of_its_maker() {
        use trove_domain::MediaId;
        let mut items = MockInventoryRepo::new();
        items.expect_get_many().returning(|_, _| Ok(Vec::new()));
        // The store writes the item's `create` and one for each medium it takes, in its transaction.
        items
            .expect_insert()
            .withf(|h, i, rec| {
                *h == H.household
                    && i.media_ids == [MediaId(4), MediaId(6)]
                    && (rec.action.as_str(), rec.member, rec.at) == ("create", H.member, now())
            })
            .times(1)
            .returning(|_, i, rec| Ok(i.stored(ItemId(9), rec.at)));
        let inv = inventory(items, places());
        let mut new = NewItem::new(
            ItemName::new("Pi").unwrap(),
            ItemType::new("sbc").unwrap(),
            String::new(),
            Condition::Good,
            Intent::Keep,
        );
        new.media_ids = vec![MediaId(4), MediaId(6)];
        assert_eq!(inv.create(H, new).await.unwrap().id, ItemId(9));
    }

    /// A search that reads as a code asks the store for the items carrying its key first, whatever form of the
    /// code was typed (its words as one shop's code, any text being one); a number that is no code (a wrong check
    /// digit) asks for none.
    #[tokio::test]
    async fn a_search_that_is_a_code_asks_for_its_key() {
        let asked: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
        let into = asked.clone();
        let mut items = MockInventoryRepo::new();
        items.expect_list().returning(move |_, q| {
            into.lock().unwrap().push(q.code.clone());
            Ok(ItemPage { items: Vec::new(), total: 0, more: false })
        });
        let inv = inventory(items, places());
        for q in ["036000291452", " 0-306-40615-2 ", "Shelf-A  12", "40063813339x1", "4006381333932"] {
            let query = ItemQuery { q: Some(q.into()), limit: 10, ..ItemQuery::default() };
            inv.list(H.household, &query).await.unwrap();
        }
        let want = [
            Some("00036000291452"),
            Some("09780306406157"),
            Some("other:shelf-a 12"),
            Some("other:40063813339x1"),
            None,
        ];
        assert_eq!(*asked.lock().unwrap(), want.map(|k| k.map(str::to_owned)));
    }

    #[test]
    fn cursors_round_trip_and_refuse_strangers() {
        for c in [Cursor::After(ItemId(1)), Cursor::After(ItemId(123_456)), Cursor::Skip(0), Cursor::Skip(99_950)] {
            assert_eq!(Cursor::decode(&c.encode()).unwrap(), c);
        }
        for bad in ["", "a", "x12", "a-1", "aZZ", "A12", "a+1", "s 1", "a1ffffffffffffffffff"] {
            assert!(matches!(Cursor::decode(bad), Err(Error::Invalid(_))), "{bad:?}");
        }
    }

    #[test]
    fn the_next_cursor_follows_the_order_of_the_listing() {
        let page = |more| ItemPage { items: Vec::new(), total: 0, more };
        let plain = ItemQuery { limit: 2, offset: 4, ..ItemQuery::default() };
        assert_eq!(Cursor::next(&plain, &page(false)), None);
        let search = ItemQuery { q: Some("pi".into()), ..plain.clone() };
        assert_eq!(Cursor::next(&search, &page(true)), Some(Cursor::Skip(4)));
        let mut q = plain;
        Cursor::After(ItemId(9)).apply(&mut q);
        assert_eq!((q.after, q.offset), (Some(ItemId(9)), 0));
    }
}
