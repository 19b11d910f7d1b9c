//! Import and export: the inventory as a sheet (CSV). An import is all or nothing: every row is read first, a
//! bad row refuses the whole file, and the items are written in one store call that updates the items already
//! holding an import reference.

use crate::Error;
use crate::ports::{Clock, InventoryRepo, ItemQuery, ItemSheet};
use std::collections::BTreeSet;
use std::sync::Arc;
use trove_domain::HouseholdId;
use trove_domain::item::{Item, NewItem};

/// Items read per page when exporting.
const PAGE: u32 = 500;

/// What an import did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Imported {
    /// Rows written (new items and updates of items imported earlier).
    pub rows: u64,
    /// Distinct items those rows are (a reference repeated in the file is one item).
    pub items: u64,
    /// Rows left out on purpose (items that were gone when exported).
    pub skipped: u64,
}

/// The import and export use cases.
#[derive(Clone)]
pub struct Exchange {
    items: Arc<dyn InventoryRepo>,
    sheet: Arc<dyn ItemSheet>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange").finish_non_exhaustive()
    }
}

impl Exchange {
    pub fn new(items: Arc<dyn InventoryRepo>, sheet: Arc<dyn ItemSheet>, clock: Arc<dyn Clock>) -> Self {
        Self { items, sheet, clock }
    }

    /// Imports a sheet: our own export or a Homebox CSV export.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the line of the first bad row (nothing is written then); `Unexpected` when the
    /// store fails (nothing is written either).
    pub async fn import(&self, household: HouseholdId, bytes: &[u8]) -> Result<Imported, Error> {
        let read = self.sheet.read(bytes, self.clock.now()).map_err(|e| Error::Invalid(e.to_string()))?;
        let mut done = self.import_items(household, read.items).await?;
        done.skipped = read.skipped;
        Ok(done)
    }

    /// Writes items already read (by the command line, which shows its own progress), all or nothing.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an item with a control character in a text (`NewItem::check_texts`);
    /// `Unexpected` when the store fails; nothing is written then.
    pub async fn import_items(&self, household: HouseholdId, items: Vec<NewItem>) -> Result<Imported, Error> {
        if items.is_empty() {
            return Ok(Imported::default());
        }
        // The one text check of the domain, over every item whatever sheet it came from.
        for (n, item) in items.iter().enumerate() {
            item.check_texts().map_err(|e| Error::Invalid(format!("item {} of the sheet: {e}", n + 1)))?;
        }
        let rows = items.len() as u64;
        let ids = self.items.import(household, items, self.clock.now()).await?;
        let distinct: BTreeSet<i64> = ids.iter().map(|i| i.0).collect();
        Ok(Imported { rows, items: distinct.len() as u64, skipped: 0 })
    }

    /// Every item of the household, gone ones included, ordered by id.
    ///
    /// # Errors
    /// `Unexpected` when the store fails.
    pub async fn all_items(&self, household: HouseholdId) -> Result<Vec<Item>, Error> {
        let mut out = Vec::new();
        loop {
            // Keyset paging: each page starts after the last item read, at the same cost at any depth.
            let after = out.last().map(|i: &Item| i.id);
            let query = ItemQuery { include_gone: true, limit: PAGE, after, ..ItemQuery::default() };
            let page = self.items.list(household, &query).await?;
            out.extend(page.items);
            if !page.more {
                return Ok(out);
            }
        }
    }

    /// The household's inventory as a sheet.
    ///
    /// # Errors
    /// `Unexpected` when the store or the writing fails.
    pub async fn export(&self, household: HouseholdId) -> Result<Vec<u8>, Error> {
        let items = self.all_items(household).await?;
        Ok(self.sheet.write(&items)?)
    }

    /// The sheet adapter, for callers that read with progress (the command line).
    pub fn sheet(&self) -> &Arc<dyn ItemSheet> {
        &self.sheet
    }
}
