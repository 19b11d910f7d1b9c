//! Import and export: the inventory as a sheet (CSV). An import is all or nothing: every row is read first, a
//! bad row refuses the whole file, and the items are written in one store call that updates the items already
//! holding an import reference.
//!
//! Media travel beside the sheet as files named by the exported ids (`ITEMID-MEDIAID.ext`,
//! [`media_file_name`]). A row of our own export carries its item's id, which the import keeps as the reference
//! `trove:<id>` ([`own_ref`]); [`Exchange::import_items_mapped`] answers which item each exported id became, so
//! each file goes back to the item its row became.
//!
//! An import is recorded like any other change, in the import's own transaction (the store appends the events
//! [`Exchange`] makes of what it wrote, `InventoryRepo::import`): a `create` of each place made for a `location`
//! text, and one `import` event per item: for a new item its name (as the `create` of a single item), for an
//! item that held the row's import reference the fields the update changed (told by the store, which reads each
//! such item in the import's transaction; no event when nothing changed). The items and their history commit
//! together or not at all.

use crate::Error;
use crate::ports::sheet::RowRead;
use crate::ports::{Clock, ImportWritten, InventoryRepo, ItemQuery, ItemSheet};
use crate::recorder::{Actor, Recorder};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use trove_domain::history::{Action, Event, Field, FieldChange, ObjectKind};
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

/// What an import would do with one row ([`Exchange::preview`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowAction {
    /// A new item.
    New,
    /// An update of the item that holds the row's reference (imported before, or an earlier row of the sheet).
    Update,
    /// A row of an item that was gone when exported: left out.
    Gone,
    /// A row that cannot be imported, and why: the import would be refused whole.
    Refused(String),
}

/// One row of a preview: its line (the header is line 1), the item's name when the row has one, what the
/// import would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowPreview {
    pub line: u64,
    pub name: Option<String>,
    pub action: RowAction,
}

/// What an import of a sheet would do, row by row; nothing written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportPreview {
    /// "trove" (our export) or "homebox".
    pub format: &'static str,
    pub rows: Vec<RowPreview>,
}

impl ImportPreview {
    /// How many rows would be new items, updates, left out as gone, and refused.
    pub fn counts(&self) -> (u64, u64, u64, u64) {
        let count = |f: fn(&RowAction) -> bool| self.rows.iter().filter(|r| f(&r.action)).count() as u64;
        (
            count(|a| *a == RowAction::New),
            count(|a| *a == RowAction::Update),
            count(|a| *a == RowAction::Gone),
            count(|a| matches!(a, RowAction::Refused(_))),
        )
    }
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

/// The reference of row `row` (from 0) of a sheet imported with the `Idempotency-Key` `key`: a digest of the key,
/// so the key itself is not kept.
///
/// ```
/// use trove_application::exchange::retry_ref;
/// assert_eq!(retry_ref("k-1", 0), retry_ref("k-1", 0));
/// assert_ne!(retry_ref("k-1", 0), retry_ref("k-1", 1));
/// assert_ne!(retry_ref("k-1", 0), retry_ref("k-2", 0));
/// assert!(retry_ref("k-1", 7).starts_with("retry:") && retry_ref("k-1", 7).ends_with(":7"));
/// ```
pub fn retry_ref(key: &str, row: usize) -> String {
    use sha2::{Digest, Sha256};
    let digest = hex::encode(&Sha256::digest(key.as_bytes())[..12]);
    format!("retry:{digest}:{row}")
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

/// The events of an import: the places made, then one `import` per new item (its name, from the last row
/// that became it) in the order the sheet first names it, then one per update that changed something.
fn import_events(recorder: &Recorder, actor: Actor, written: &ImportWritten, names: &[String]) -> Vec<Event> {
    let updated: HashSet<ItemId> = written.updated.iter().map(|u| u.id).collect();
    let mut last_row: HashMap<ItemId, usize> = HashMap::new();
    let mut order: Vec<ItemId> = Vec::new();
    for (n, id) in written.ids.iter().enumerate() {
        if updated.contains(id) {
            continue;
        }
        if last_row.insert(*id, n).is_none() {
            order.push(*id);
        }
    }
    let places = written.places.iter().map(|p| recorder.place_created(actor, p));
    let created = order.into_iter().map(|id| {
        let name = FieldChange::new(Field::Name, None, Some(names[last_row[&id]].clone()));
        recorder.event(actor, Action::Import, ObjectKind::Item, id.0, vec![name], Some(1))
    });
    let changed =
        written.updated.iter().filter(|u| !u.changes.is_empty()).map(|u| {
            recorder.event(actor, Action::Import, ObjectKind::Item, u.id.0, u.changes.clone(), Some(u.version))
        });
    places.chain(created).chain(changed).collect()
}

/// The import and export use cases.
#[derive(Clone)]
pub struct Exchange {
    items: Arc<dyn InventoryRepo>,
    sheet: Arc<dyn ItemSheet>,
    clock: Arc<dyn Clock>,
    /// Where every item an import writes, and every place it makes, is recorded with who imported.
    recorder: Recorder,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange").finish_non_exhaustive()
    }
}

impl Exchange {
    pub fn new(
        items: Arc<dyn InventoryRepo>,
        sheet: Arc<dyn ItemSheet>,
        clock: Arc<dyn Clock>,
        recorder: Recorder,
    ) -> Self {
        Self { items, sheet, clock, recorder }
    }

    /// Imports a sheet: our own export or a Homebox CSV export. Recorded as done by `actor` (see the module's
    /// documentation).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the line of the first bad row (nothing is written then); `Unexpected` when the
    /// store fails (nothing is written either).
    pub async fn import(&self, actor: Actor, bytes: &[u8]) -> Result<Imported, Error> {
        self.import_keyed(actor, bytes, None).await
    }

    /// As [`Exchange::import`], for a request with an `Idempotency-Key`: each row without a reference of its own
    /// gets one made of the key and its row ([`retry_ref`]), so that the same sheet sent again with the same key
    /// updates the items the first import wrote instead of adding them twice, even when the first import
    /// committed but its answer was lost before the key was marked done (a crash, a dropped connection).
    ///
    /// # Errors
    /// As [`Exchange::import`].
    pub async fn import_keyed(&self, actor: Actor, bytes: &[u8], key: Option<&str>) -> Result<Imported, Error> {
        let mut read = self.sheet.read(bytes, self.clock.now()).map_err(|e| Error::Invalid(e.to_string()))?;
        if let Some(key) = key {
            for (row, item) in read.items.iter_mut().enumerate() {
                if item.import_ref.is_none() {
                    item.import_ref = Some(retry_ref(key, row));
                }
            }
        }
        let mut done = self.import_items(actor, read.items).await?;
        done.skipped = read.skipped;
        Ok(done)
    }

    /// What an import of the sheet would do, row by row, without writing anything: each row new, an update of
    /// the item holding its reference, a gone row left out, or refused with its reason (the same rules as the
    /// import: the sheet's, then the domain's text check and bounds). An import writes all or nothing, so one
    /// refused row refuses it whole.
    ///
    /// # Errors
    /// [`Error::Invalid`] when no row can be read (a header of neither format, a file that is not CSV);
    /// `Unexpected` when the store fails.
    pub async fn preview(&self, household: HouseholdId, bytes: &[u8]) -> Result<ImportPreview, Error> {
        let now = self.clock.now();
        let read = self.sheet.preview(bytes, now).map_err(|e| Error::Invalid(e.to_string()))?;
        let mut refs: Vec<String> = read
            .rows
            .iter()
            .filter_map(|r| match &r.read {
                RowRead::Item(item) => item.import_ref.clone(),
                _ => None,
            })
            .collect();
        refs.sort_unstable();
        refs.dedup();
        let mut held: HashSet<String> = self.items.refs_held(household, &refs).await?.into_iter().collect();
        let rows = read
            .rows
            .into_iter()
            .map(|row| {
                let (name, action) = match row.read {
                    RowRead::Gone => (None, RowAction::Gone),
                    RowRead::Refused(reason) => (None, RowAction::Refused(reason)),
                    RowRead::Item(item) => {
                        let checked = item
                            .check_texts()
                            .map_err(|e| e.to_string())
                            .and_then(|()| item.check_bounds(now).map_err(|e| e.to_string()));
                        let action = match (checked, &item.import_ref) {
                            (Err(reason), _) => RowAction::Refused(reason),
                            // A reference held, or given by an earlier row of the sheet: that item is updated.
                            (Ok(()), Some(r)) if !held.insert(r.clone()) => RowAction::Update,
                            (Ok(()), _) => RowAction::New,
                        };
                        (Some(item.name.to_string()), action)
                    }
                };
                RowPreview { line: row.line, name, action }
            })
            .collect();
        Ok(ImportPreview { format: read.format, rows })
    }

    /// Writes items already read (by the command line, which shows its own progress), all or nothing.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an item with a control character in a text (`NewItem::check_texts`), or with what is
    /// recorded on it out of its bounds (`NewItem::check_bounds`: field keys, dates);
    /// `Unexpected` when the store fails; nothing is written then.
    pub async fn import_items(&self, actor: Actor, items: Vec<NewItem>) -> Result<Imported, Error> {
        Ok(self.import_items_mapped(actor, items).await?.done)
    }

    /// As [`Exchange::import_items`], also answering which item each row of our own export became (by the
    /// exported id its import reference carries), for bringing its media back.
    ///
    /// # Errors
    /// As [`Exchange::import_items`].
    pub async fn import_items_mapped(&self, actor: Actor, items: Vec<NewItem>) -> Result<ImportedItems, Error> {
        if items.is_empty() {
            return Ok(ImportedItems::default());
        }
        // The domain's text check and bounds, over every item whatever sheet it came from.
        let now = self.clock.now();
        for (n, item) in items.iter().enumerate() {
            item.check_texts().map_err(|e| Error::Invalid(format!("item {} of the sheet: {e}", n + 1)))?;
            item.check_bounds(now).map_err(|e| Error::Invalid(format!("item {} of the sheet: {e}", n + 1)))?;
        }
        let rows = items.len() as u64;
        let exported: Vec<Option<ItemId>> =
            items.iter().map(|i| i.import_ref.as_deref().and_then(exported_id)).collect();
        // The name each new item will have: that of the last row naming it (a repeated reference is one item).
        let names: Vec<String> = items.iter().map(|i| i.name.to_string()).collect();
        let recorder = self.recorder.clone();
        let history = move |written: &ImportWritten| import_events(&recorder, actor, written, &names);
        let written = self.items.import(actor.household, items, self.clock.now(), &history).await?;
        let ids = written.ids;
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
        items.expect_import().times(1).returning(|_, given, _, _| {
            assert_eq!(given.len(), 5);
            Ok(ImportWritten { ids: [100, 101, 102, 103, 100].map(ItemId).to_vec(), ..ImportWritten::default() })
        });
        let recorder = crate::recorder::capturing();
        let exchange = Exchange::new(Arc::new(items), Arc::new(MockItemSheet::new()), Arc::new(clock), recorder);
        let sheet = vec![
            item("Lamp", Some(&own_ref("10"))),
            item("Homebox lamp", Some("hb-asset:000-001")),
            item("Hand-written lamp", None),
            item("Desk lamp", Some(&own_ref("11"))),
            item("Lamp again", Some(&own_ref("10"))),
        ];
        let imported = exchange.import_items_mapped(Actor::command_line(HouseholdId(1)), sheet).await.unwrap();
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

    #[tokio::test]
    async fn an_import_records_its_places_its_new_items_and_what_it_changed_in_its_transaction() {
        use crate::ports::Reimported;
        use crate::ports::clock::MockClock;
        use crate::ports::inventory::MockInventoryRepo;
        use crate::ports::sheet::MockItemSheet;
        use trove_domain::PlaceId;
        use trove_domain::people::MemberId;
        use trove_domain::place::{Place, PlaceName};
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| chrono::DateTime::UNIX_EPOCH);
        let mut items = MockInventoryRepo::new();
        // The store makes the history of what it wrote inside its transaction; kept here to be compared.
        let events: Arc<std::sync::Mutex<Vec<Event>>> = Arc::default();
        let into = events.clone();
        items.expect_import().times(1).returning(move |_, _, _, history| {
            let shed = Place {
                id: PlaceId(3),
                name: PlaceName::new("Shed").unwrap(),
                parent_id: None,
                note: None,
                created_at: chrono::DateTime::UNIX_EPOCH,
            };
            let renamed = FieldChange::new(Field::Name, Some("Lamp".into()), Some("Old lamp".into()));
            let written = ImportWritten {
                // Row 1 updated item 50, rows 2 and 4 are one new item (a repeated reference), row 3 another,
                // row 5 updated item 51 and changed nothing.
                ids: [50, 100, 101, 100, 51].map(ItemId).to_vec(),
                updated: vec![
                    Reimported { id: ItemId(50), changes: vec![renamed], version: 4 },
                    Reimported { id: ItemId(51), changes: Vec::new(), version: 2 },
                ],
                places: vec![shed],
            };
            into.lock().unwrap().extend(history.events(&written));
            Ok(written)
        });
        let recorder = crate::recorder::capturing();
        let exchange = Exchange::new(Arc::new(items), Arc::new(MockItemSheet::new()), Arc::new(clock), recorder);
        let ada = Actor { household: HouseholdId(1), member: Some(MemberId(8)) };
        let sheet = vec![
            item("Old lamp", Some("hb-1")),
            item("Desk lamp", Some("hb-2")),
            item("Floor lamp", None),
            item("Desk lamp, green", Some("hb-2")),
            item("Spare lamp", Some("hb-3")),
        ];
        exchange.import_items(ada, sheet).await.unwrap();

        let events = events.lock().unwrap();
        type Shown<'a> = (ObjectKind, &'a str, i64, Option<i64>, Vec<(&'a str, Option<&'a str>, Option<&'a str>)>);
        let got: Vec<Shown<'_>> = events
            .iter()
            .map(|e| {
                assert_eq!(e.member, Some(MemberId(8)));
                let changes =
                    e.changes.iter().map(|c| (c.field.as_str(), c.before.as_deref(), c.after.as_deref())).collect();
                (e.kind, e.action.as_str(), e.object, e.version_after, changes)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (ObjectKind::Place, "create", 3, None, vec![("name", None, Some("Shed"))]),
                (ObjectKind::Item, "import", 100, Some(1), vec![("name", None, Some("Desk lamp, green"))]),
                (ObjectKind::Item, "import", 101, Some(1), vec![("name", None, Some("Floor lamp"))]),
                (ObjectKind::Item, "import", 50, Some(4), vec![("name", Some("Lamp"), Some("Old lamp"))]),
            ]
        );
    }
}
