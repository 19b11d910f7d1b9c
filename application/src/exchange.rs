//! Import and export: the inventory as a sheet (CSV). An import is all or nothing: every row is read first, a
//! bad row refuses the whole file, and the items are written in one store call that updates the items already
//! holding an import reference.
//!
//! Media travel beside the sheet as files named by the exported ids (`ITEMID-MEDIAID.ext`,
//! [`media_file_name`]). A row of our own export carries its item's id, which the import keeps as the reference
//! `trove:<id>` ([`own_ref`]); [`Exchange::import_items_mapped`] answers which item each exported id became, so
//! each file goes back to the item its row became.

use crate::Error;
use crate::ports::{Clock, InventoryRepo, ItemQuery, ItemSheet};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use trove_domain::item::{Item, NewItem};
use trove_domain::media::MediaType;
use trove_domain::{HouseholdId, ItemId, MediaId};

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

/// What an import did, and which item each row of our own export became.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportedItems {
    pub done: Imported,
    /// The item each exported id (the sheet's `id` column) became: new, or updated by a re-import.
    pub by_exported_id: BTreeMap<ItemId, ItemId>,
}

/// The prefix of the import reference of a row of our own export: `trove:<id>`.
const OWN_REF_PREFIX: &str = "trove:";

/// The import reference of the row whose `id` cell is `id` in our own export, so importing the same file again
/// updates instead of duplicating.
///
/// ```
/// assert_eq!(trove_application::exchange::own_ref("42"), "trove:42");
/// ```
pub fn own_ref(id: &str) -> String {
    format!("{OWN_REF_PREFIX}{id}")
}

/// The exported item id an import reference names, when it is one of our own export's ([`own_ref`]).
///
/// ```
/// use trove_application::exchange::exported_id;
/// use trove_domain::ItemId;
/// assert_eq!(exported_id("trove:42"), Some(ItemId(42)));
/// assert_eq!(exported_id("hb-asset:000-001"), None);
/// ```
pub fn exported_id(import_ref: &str) -> Option<ItemId> {
    import_ref.strip_prefix(OWN_REF_PREFIX)?.parse().ok().map(ItemId)
}

/// The name of a medium's file beside an export: `ITEMID-MEDIAID.ext`, the extension its media type's.
///
/// ```
/// use trove_application::exchange::media_file_name;
/// use trove_domain::media::MediaType;
/// use trove_domain::{ItemId, MediaId};
/// assert_eq!(media_file_name(ItemId(12), MediaId(5), MediaType::Jpeg), "12-5.jpg");
/// ```
pub fn media_file_name(item: ItemId, medium: MediaId, media_type: MediaType) -> String {
    format!("{}-{}.{}", item.0, medium.0, media_type.extension())
}

/// A media file's name read back ([`media_file_name`]): the exported item and medium ids. `None` for any other
/// name (the sheet itself, a note left beside it); the file's type is told by its bytes on import, not its
/// extension.
///
/// ```
/// use trove_application::exchange::read_media_file_name;
/// use trove_domain::{ItemId, MediaId};
/// assert_eq!(read_media_file_name("12-5.jpg"), Some((ItemId(12), MediaId(5))));
/// assert_eq!(read_media_file_name("export.csv"), None);
/// ```
pub fn read_media_file_name(name: &str) -> Option<(ItemId, MediaId)> {
    let (stem, extension) = name.rsplit_once('.')?;
    if !MediaType::ALL.iter().any(|t| t.extension() == extension) {
        return None;
    }
    let (item, medium) = stem.split_once('-')?;
    let number = |s: &str| s.bytes().all(|b| b.is_ascii_digit()).then(|| s.parse::<i64>().ok()).flatten();
    Some((ItemId(number(item)?), MediaId(number(medium)?)))
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
        Ok(self.import_items_mapped(household, items).await?.done)
    }

    /// As [`Exchange::import_items`], also answering which item each row of our own export became (by the
    /// exported id its import reference carries), for bringing its media back.
    ///
    /// # Errors
    /// As [`Exchange::import_items`].
    pub async fn import_items_mapped(
        &self,
        household: HouseholdId,
        items: Vec<NewItem>,
    ) -> Result<ImportedItems, Error> {
        if items.is_empty() {
            return Ok(ImportedItems::default());
        }
        // The one text check of the domain, over every item whatever sheet it came from.
        for (n, item) in items.iter().enumerate() {
            item.check_texts().map_err(|e| Error::Invalid(format!("item {} of the sheet: {e}", n + 1)))?;
        }
        let rows = items.len() as u64;
        let exported: Vec<Option<ItemId>> =
            items.iter().map(|i| i.import_ref.as_deref().and_then(exported_id)).collect();
        let ids = self.items.import(household, items, self.clock.now()).await?;
        let distinct: BTreeSet<i64> = ids.iter().map(|i| i.0).collect();
        // The store answers one id per item given, in order.
        let by_exported_id = exported.into_iter().zip(&ids).filter_map(|(from, to)| Some((from?, *to))).collect();
        Ok(ImportedItems { done: Imported { rows, items: distinct.len() as u64, skipped: 0 }, by_exported_id })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `name` as a media file's name and compares with `expected` (item id, medium id).
    fn check(name: &str, expected: Option<(i64, i64)>) {
        assert_eq!(read_media_file_name(name), expected.map(|(i, m)| (ItemId(i), MediaId(m))), "{name}");
    }

    #[test]
    fn media_file_names_read_back_and_nothing_else_does() {
        check("12-5.jpg", Some((12, 5)));
        check("1-1.png", Some((1, 1)));
        check("40-7.webp", Some((40, 7)));
        check("3-900.pdf", Some((3, 900)));
        for other in [
            "export.csv",
            "media.json",
            "12-5.jpeg",
            "12-5.gif",
            "12-5",
            "12.jpg",
            "-5.jpg",
            "12-.jpg",
            "+12-5.jpg",
            "12-+5.jpg",
            "12-5-3.jpg",
            "a-5.jpg",
            "12 -5.jpg",
            "99999999999999999999-1.jpg",
        ] {
            check(other, None);
        }
        for media_type in MediaType::ALL {
            check(&media_file_name(ItemId(81), MediaId(3), media_type), Some((81, 3)));
        }
    }

    fn item(name: &str, import_ref: Option<&str>) -> NewItem {
        use trove_domain::item::{Condition, Intent, ItemName, ItemType};
        let mut item = NewItem::new(
            ItemName::new(name).unwrap(),
            ItemType::new("lamp").unwrap(),
            String::new(),
            Condition::Good,
            Intent::Keep,
        );
        item.import_ref = import_ref.map(str::to_owned);
        item
    }

    #[tokio::test]
    async fn an_import_answers_the_item_each_exported_id_became() {
        use crate::ports::clock::MockClock;
        use crate::ports::inventory::MockInventoryRepo;
        use crate::ports::sheet::MockItemSheet;
        let mut clock = MockClock::new();
        clock.expect_now().returning(chrono::Utc::now);
        let mut items = MockInventoryRepo::new();
        // The store answers one id per item given, in order; a reference repeated is the same item.
        items.expect_import().times(1).returning(|_, given, _| {
            assert_eq!(given.len(), 5);
            Ok([100, 101, 102, 103, 100].map(ItemId).to_vec())
        });
        let exchange = Exchange::new(Arc::new(items), Arc::new(MockItemSheet::new()), Arc::new(clock));
        let sheet = vec![
            item("Lamp", Some(&own_ref("10"))),
            item("Homebox lamp", Some("hb-asset:000-001")),
            item("Hand-written lamp", None),
            item("Desk lamp", Some(&own_ref("11"))),
            item("Lamp again", Some(&own_ref("10"))),
        ];
        let imported = exchange.import_items_mapped(HouseholdId(1), sheet).await.unwrap();
        assert_eq!(imported.done, Imported { rows: 5, items: 4, skipped: 0 });
        let mapped: Vec<(i64, i64)> = imported.by_exported_id.iter().map(|(from, to)| (from.0, to.0)).collect();
        assert_eq!(mapped, vec![(10, 100), (11, 103)], "only rows of our own export carry an exported id");
    }

    #[test]
    fn only_our_own_references_name_an_exported_id() {
        assert_eq!(exported_id(&own_ref("7")), Some(ItemId(7)));
        for other in ["hb-asset:000-001", "ref-1", "trove:", "trove:x", "TROVE:7"] {
            assert_eq!(exported_id(other), None, "{other}");
        }
    }
}
