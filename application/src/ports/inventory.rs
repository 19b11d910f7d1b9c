//! The inventory: items of a household.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::history::{Event, FieldChange, Recording};
use trove_domain::item::{Availability, Intent, Item, ItemLine, ItemType, NewItem};
use trove_domain::people::EventId;
use trove_domain::place::Place;
use trove_domain::{HouseholdId, ItemId, PlaceId, Timestamp};

/// Items in a place: directly in it, or anywhere within it (in it and in every place below it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaceFilter {
    pub place: PlaceId,
    /// In the place and every place below it; `false`: directly in it only.
    pub within: bool,
}

/// Which items to list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemQuery {
    pub intent: Option<Intent>,
    pub availability: Option<Availability>,
    pub item_type: Option<ItemType>,
    /// Words that must all match, ignoring case, the start of a word of the name, type, profile, place path or
    /// notes; when nothing matches, a word of 4 to 24 letters may carry one typo. With `q`, items come best first
    /// (relevance, then id), `offset` counts places in that order and `after` continues after that item's place.
    pub q: Option<String>,
    /// The key of the code `q` reads as (`trove_domain::code::Code::key`; the use case sets it): the items
    /// carrying that code come first, before the other matches of `q`, and are found even where `q`'s words match
    /// nothing of them (a UPC-A typed for an EAN-13, an ISBN-10 for an ISBN-13). Only without `sort` and `after`.
    pub code: Option<String>,
    /// Only items in this place (and, `within`, in the places below it).
    pub place: Option<PlaceFilter>,
    /// Include items that are gone (history); excluded by default.
    pub include_gone: bool,
    /// Only items with this tag (ignoring case).
    pub tag: Option<String>,
    /// Only items low on stock: a minimum set and the quantity at or under it (`trove_domain::item::low_stock`).
    pub low_stock: bool,
    /// The order of the items (ties by id); `None`: by id, or best first with `q`.
    pub sort: Option<ItemSort>,
    /// At most this many items (1..=500).
    pub limit: u32,
    /// Items skipped before the page, in the listing's order.
    pub offset: u64,
    /// Only items after this one in id order (a keyset: its cost does not grow with depth).
    pub after: Option<ItemId>,
}

/// What a listing may be ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// The name, ignoring case.
    Name,
    /// The time of the last change.
    Updated,
    /// The path of the item's place as text; items in no place last.
    Place,
    /// The asking price set by hand, else the purchase price (minor units, whatever the currency); items with
    /// neither last.
    Value,
}

/// An order of a listing: a key, ascending or descending (then by id, so the order is stable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemSort {
    pub key: SortKey,
    pub descending: bool,
}

impl ItemSort {
    /// `name`, `updated`, `place`, `value`, each with `-` before it for descending.
    ///
    /// ```
    /// use trove_application::ports::{ItemSort, SortKey};
    /// assert_eq!(ItemSort::parse("-updated"), Some(ItemSort { key: SortKey::Updated, descending: true }));
    /// assert_eq!(ItemSort::parse("colour"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        let (descending, word) = match text.trim().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.trim()),
        };
        let key = match word {
            "name" => SortKey::Name,
            "updated" => SortKey::Updated,
            "place" => SortKey::Place,
            "value" => SortKey::Value,
            _ => return None,
        };
        Some(Self { key, descending })
    }
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemPage {
    /// Ordered by id.
    pub items: Vec<Item>,
    /// How many items match the query, all pages together.
    pub total: u64,
    /// Whether more items follow this page.
    pub more: bool,
}

/// An item an import updated because it already held the import reference of one of its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reimported {
    pub id: ItemId,
    /// What the update changed (`trove_domain::history::diff` of the item before and after it; empty when it
    /// changed nothing).
    pub changes: Vec<FieldChange>,
    /// The version the update left the item at.
    pub version: i64,
}

/// What an import wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportWritten {
    /// The item each item given became, in the order given: a new one, or the one that already held its
    /// import reference (a reference repeated within the import is one item).
    pub ids: Vec<ItemId>,
    /// The updates of items that already held a reference, one per row written that way, in the order written.
    pub updated: Vec<Reimported>,
    /// The places created for the items' `location` texts, in the order created.
    pub places: Vec<Place>,
}

/// The history of an import, made from what it wrote: the events the store appends in the import's own
/// transaction (`Exchange` makes them; the store knows only what it wrote). Any
/// `Fn(&ImportWritten) -> Vec<Event>` is one.
pub trait ImportHistory: Send + Sync {
    /// The events of an import that wrote `written`, in the order they are appended.
    fn events(&self, written: &ImportWritten) -> Vec<Event>;
}

impl<F: Fn(&ImportWritten) -> Vec<Event> + Send + Sync> ImportHistory for F {
    fn events(&self, written: &ImportWritten) -> Vec<Event> {
        self(written)
    }
}

/// The [`ImportHistory`] `InventoryRepo::import` takes: one that borrows nothing, so that it can be handed over.
pub type ImportEvents = dyn ImportHistory + 'static;

/// The items of each household. Every method is scoped to one household: another household's item is never
/// read nor written, and looks exactly like a missing one.
///
/// Where an item is: an item read has `place_id` as stored and `location` as that place's path joined with
/// " / " (read with it, so a renamed or moved place shows at once); a write stores `place_id` only.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait InventoryRepo: Send + Sync {
    /// Stores a new item with `created_at = updated_at = at` and version 1. An item with no `place_id` but a
    /// `location` text is put in the place that text names, found or created in the same transaction (read
    /// leniently: `trove_domain::place::parse_location_lenient`). The places made so are not answered: the use
    /// cases find or create a `location` through `PlaceRepo::find_or_create` first, which answers them so that
    /// they are recorded, and give the `place_id`; only the demo seed leaves the text to the store.
    ///
    /// The pending media `media_ids` name (of `household`, on no item) are attached to the item in the same
    /// transaction.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: the item's (`rec.item_created`), then a `create` of each medium it took (`rec.object`)
    /// and of each place made for its `location` (`rec.place_created`). `rec.at` is its `created_at`.
    ///
    /// # Errors
    /// MUST return `Conflict(NoSuchPlace)` when `place_id` is not a place of `household`; MUST return `NotPending` naming the
    /// first of `media_ids` that is not pending media of `household` (unknown, another household's, or already
    /// on an item); nothing is written then. `Unexpected` otherwise.
    async fn insert(&self, household: HouseholdId, item: NewItem, rec: &Recording) -> Result<Item, RepoError>;

    /// Which of `refs` (import references) an item of the household already holds: an import of a row with one
    /// updates that item. In any order.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn refs_held(&self, household: HouseholdId, refs: &[String]) -> Result<Vec<String>, RepoError>;

    /// Stores many new items in one transaction: all or nothing. Items whose `import_ref` is already held by
    /// an item of the household update that item instead (name, type, profile, condition, fields, faults,
    /// tests, accessories, place), so a re-import does not duplicate. `location` texts are found or created as
    /// places in the same transaction, as by `insert`. Answers the item each row became, what each update
    /// changed and the places created. The events `history` makes of what was written are appended to the
    /// household's history in the same transaction, in the order given: the items and their history commit
    /// together or not at all.
    ///
    /// # Errors
    /// `Unexpected` only (the history's write included); nothing is written then.
    async fn import(
        &self,
        household: HouseholdId,
        items: Vec<NewItem>,
        at: Timestamp,
        history: &ImportEvents,
    ) -> Result<ImportWritten, RepoError>;

    /// One item.
    ///
    /// # Errors
    /// MUST return `NotFound` when no item `id` exists in `household`.
    async fn get(&self, household: HouseholdId, id: ItemId) -> Result<Item, RepoError>;

    /// The items of `ids` that exist in `household`, in id order; missing ids are skipped.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn get_many(&self, household: HouseholdId, ids: &[ItemId]) -> Result<Vec<Item>, RepoError>;

    /// A page of the items matching `query`, ordered by id (by relevance, then id, with a search `q`).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn list(&self, household: HouseholdId, query: &ItemQuery) -> Result<ItemPage, RepoError>;

    /// How many present (not gone) items of the household have each type, for the types they have.
    ///
    /// # Errors
    /// [`RepoError::Unexpected`] only.
    async fn type_counts(&self, household: HouseholdId) -> Result<Vec<(ItemType, u64)>, RepoError>;

    /// Every item of the household that is not gone, ordered by id (for planning and matching; the rules
    /// decide what of it is buildable).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn all_present(&self, household: HouseholdId) -> Result<Vec<Item>, RepoError>;

    /// The [`ItemLine`] of every item of the household that is not gone, ordered by id: what `list_inventory`
    /// shows, read without the rest of each item (the rules decide what of it is buildable).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn lines(&self, household: HouseholdId) -> Result<Vec<ItemLine>, RepoError>;

    /// The household's item revision: a number that moves on in the same transaction as every write of one of
    /// its items, places or media on an item (in this process or any other sharing the database), so that an
    /// answer built from the listing at one revision is current while the revision is unchanged. 0 for a
    /// household with nothing written yet, or no such household.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn revision(&self, household: HouseholdId) -> Result<i64, RepoError>;

    /// Writes every field of `item` (the one read earlier and then changed), conditional on the stored version
    /// still being `item.version`; bumps the version, appends `event` (the change's, its `version_after` being
    /// `item.version + 1`) to the household's history in the same transaction, and returns the item as stored
    /// with the event's id. So the history of an item is in the order of its writes: each event's `before` is
    /// what the write before it left.
    ///
    /// # Errors
    /// MUST return `NotFound` when the item does not exist in `household`, `Stale` when its version
    /// changed since it was read, and `Conflict(NoSuchPlace)` when `place_id` is not a place of `household` (nothing is
    /// written then, the event neither).
    async fn update(&self, household: HouseholdId, item: &Item, event: &Event) -> Result<(Item, EventId), RepoError>;

    /// Writes many items as `update` does, and appends `events` in the order given, all in one transaction: all
    /// or nothing. Answers how many items were written.
    ///
    /// # Errors
    /// MUST return `NotFound` when one of them does not exist in `household`, `Stale` naming the first whose
    /// version changed since it was read, and `Conflict(NoSuchPlace)` when a `place_id` is not a place of `household`;
    /// nothing is written then.
    async fn update_many(&self, household: HouseholdId, items: &[Item], events: &[Event]) -> Result<u64, RepoError>;
}
