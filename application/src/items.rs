//! The inventory's use cases: create, read, list, change, measure, record faults and tests, mark gone.

use crate::error::{Object, Refusal, named};
use crate::ports::{Clock, InventoryRepo, ItemPage, ItemQuery};
use crate::{Error, RepoError};
use std::sync::Arc;
use trove_domain::item::{
    self, ChangeRefused, Fault, Gone, GoneReason, Item, ItemChanges, Measurement, NewItem, TestDone,
};
use trove_domain::{HouseholdId, ItemId};

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
        if query.q.is_some() {
            // Ranked by relevance: the next page skips what was seen.
            return Some(Self::Skip(query.offset + page.items.len() as u64));
        }
        page.items.last().map(|i| Self::After(i.id))
    }
}

/// The fields a PATCH may change: the domain's [`ItemChanges`], whose rules decide what is allowed.
pub type ItemPatch = ItemChanges;

/// A change the item's rules refused.
fn refused(e: ChangeRefused) -> Error {
    Refusal::Change(e).into()
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
    named(Object::Item, id.0)
}

impl Inventory {
    pub fn new(items: Arc<dyn InventoryRepo>, clock: Arc<dyn Clock>) -> Self {
        Self { items, clock }
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

    /// Stores a new item.
    ///
    /// # Errors
    /// [`Refusal::ForeignComponent`] when a component is not an item of the household, [`Refusal::Change`] when
    /// the availability is one only a project sets; nothing is written then.
    pub async fn create(&self, household: HouseholdId, mut item: NewItem) -> Result<Item, Error> {
        item.components.sort_unstable();
        item.components.dedup();
        self.check_components(household, &item.components).await?;
        item::check_manual_availability(item.availability).map_err(refused)?;
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
    /// [`Error::NotFound`]; [`Refusal::ForeignComponent`] for a component that is not an item of the household;
    /// [`Refusal::Change`] for an availability other than available/lent, the item as its own component, a
    /// change that would take a reserved or in-use item away from its project, or one that touches a gone item.
    pub async fn patch(&self, household: HouseholdId, id: ItemId, patch: ItemPatch) -> Result<Item, Error> {
        if let Some(a) = patch.availability {
            item::check_manual_availability(a).map_err(refused)?;
        }
        if let Some(components) = &patch.components {
            self.check_components(household, components).await?;
        }
        self.modify(household, id, |item| item.apply(&patch).map_err(refused)).await
    }

    /// Records a measurement; the current field of its key becomes this value when it is the latest.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Change`] for a gone item.
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
    /// [`Error::NotFound`]; [`Refusal::Change`] for a gone item.
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
    /// [`Error::NotFound`]; [`Refusal::Change`] for a gone item.
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
    /// [`Error::NotFound`]; [`Refusal::Gone`] while reserved or when already gone.
    pub async fn mark_gone(
        &self,
        household: HouseholdId,
        id: ItemId,
        reason: GoneReason,
        note: Option<String>,
    ) -> Result<Item, Error> {
        let at = self.clock.now();
        self.modify(household, id, |item| {
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
