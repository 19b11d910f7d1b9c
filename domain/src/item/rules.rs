//! The item itself, a new item, a listing's line of one, and the rules over them: buildable, current fields,
//! gone, changes.

use super::details::{Details, Purchase, Tags};
use super::records::{Fault, Gone, Measurement, TestDone, check_recorded_at};
use super::values::{
    Availability, Condition, FIELD_KEYS_MAX, FieldKey, Intent, ItemError, ItemName, ItemType, Severity,
};
use crate::Timestamp;
use crate::code::Codes;
use crate::ids::{ItemId, MediaId, PlaceId, ProjectId};
use crate::money::Money;
use crate::place::PlacePath;
use crate::text::{self, ControlCharacter, Lines};
use crate::units::Quantity;
use chrono::NaiveDate;
use std::collections::BTreeMap;
use std::fmt;

/// An item of the inventory, as the store holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: ItemId,
    pub name: ItemName,
    pub item_type: ItemType,
    /// One line of identifying facts: brand, model, key specs, serial if known.
    pub profile: String,
    pub condition: Condition,
    pub intent: Intent,
    pub availability: Availability,
    /// The project that holds the item while it is `reserved` or `in_use`.
    pub project: Option<ProjectId>,
    pub gone: Option<Gone>,
    /// Every measurement ever taken, oldest first; the current fields derive from it.
    pub measurements: Vec<Measurement>,
    pub faults: Vec<Fault>,
    pub tests_done: Vec<TestDone>,
    pub accessories: Vec<String>,
    pub components: Vec<ItemId>,
    /// How many like units the item is (a drawer of 200 M3 screws: 200); 1 for a single thing.
    pub quantity: u32,
    /// At or under this many units the item is low on stock ([`super::low_stock`]).
    pub min_quantity: Option<u32>,
    /// Units of a stock held by accepted projects ([`Hold::Units`]). Read-only: the store keeps it as projects
    /// are accepted, built and dropped; [`Item::units`] is what to read.
    pub units_held: u32,
    /// Units of a stock out on loan ([`crate::loan`]). Read-only like `units_held`: the store keeps it as loans
    /// are made and returned.
    pub units_lent: u32,
    /// The open loan of the item (of a stock lent several times, the one due back first). Read-only: the store
    /// keeps it with the loans.
    pub loan: Option<crate::loan::OnLoan>,
    pub tags: Tags,
    /// The product codes it carries (GTINs, ISBNs, a shop's own), unique by key within the household.
    pub codes: Codes,
    /// Notes, serial, purchase, warranty and a hand-set asking price.
    pub details: Details,
    /// The place the item is in (`trove_domain::place`); `None` when it is nowhere in particular.
    pub place_id: Option<PlaceId>,
    /// The way to its place (root first), read with the item: the one form of where an item is, beside the
    /// `place_id` it writes. Read-only: the store fills it from `place_id` whenever it reads or writes the item;
    /// `None` when the item is in no place (or was just moved, until it is read again).
    pub place_path: Option<PlacePath>,
    /// The item's first photo (`trove_domain::media`), to show it by. Read-only like `location`: the store
    /// fills it whenever it reads the item.
    pub cover: Option<MediaId>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Bumped by every write; writes are conditional on it, so two writers never silently overwrite each other.
    pub version: i64,
}

/// The buildable rule over the state it reads (see [`Item::buildable`]).
fn buildable(
    gone: bool,
    intent: Intent,
    availability: Availability,
    project: Option<ProjectId>,
) -> Result<(), NotBuildable> {
    if gone {
        return Err(NotBuildable::Gone);
    }
    if intent != Intent::Keep {
        return Err(NotBuildable::Intent(intent));
    }
    match availability {
        Availability::Available => Ok(()),
        Availability::Reserved => Err(NotBuildable::ReservedBy(project)),
        Availability::InUse => Err(NotBuildable::InUse(project)),
        Availability::Lent => Err(NotBuildable::Lent),
    }
}

/// An item's units as projects see them ([`Item::units`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Units {
    /// Held by projects: every unit of an item a project holds whole (`reserved` or `in_use`), else the units
    /// of a stock that accepted projects hold.
    pub held: u32,
    /// Units out on loan: every unit of an item lent whole (`lent`), else the units of a stock lent.
    pub lent: u32,
    /// What a new project (or a new loan) may take: none of an item that is not buildable, else the quantity less
    /// what is held and what is lent.
    pub available: u32,
}

/// **The** units rule over the state it reads (see [`Item::units`]).
fn units(quantity: u32, units_held: u32, units_lent: u32, buildable: bool, availability: Availability) -> Units {
    let held = match availability {
        Availability::Reserved | Availability::InUse => quantity,
        Availability::Available | Availability::Lent => units_held.min(quantity),
    };
    let lent = match availability {
        Availability::Lent => quantity - held,
        _ => units_lent.min(quantity - held),
    };
    Units { held, lent, available: if buildable { quantity - held - lent } else { 0 } }
}

/// How a project holds an item it was accepted with: a single thing whole (it becomes `reserved`, then `in_use`
/// when built, as it always has), or units of a stock (the stock stays `available` for the units left; building
/// consumes the units held, so its quantity goes down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The item, taken only if its stored version is still this one.
    Whole { item: ItemId, version: i64 },
    /// Units of a stock, taken only if that many are still available.
    Units { item: ItemId, units: u32 },
}

impl Hold {
    pub fn item(&self) -> ItemId {
        match *self {
            Hold::Whole { item, .. } | Hold::Units { item, .. } => item,
        }
    }

    /// The hold a project takes of `units` of `item`: whole for an item of quantity 1, units of a stock else.
    pub fn of(item: &Item, units: u32) -> Self {
        if item.quantity == 1 && units == 1 {
            Hold::Whole { item: item.id, version: item.version }
        } else {
            Hold::Units { item: item.id, units }
        }
    }
}

/// The current-field rule over a list of measurements (see [`Item::current_measurements`]).
fn current_of(measurements: &[Measurement]) -> Vec<&Measurement> {
    let mut out: Vec<&Measurement> = Vec::with_capacity(measurements.len());
    for m in measurements {
        match out.iter_mut().find(|slot| slot.key == m.key) {
            Some(slot) if slot.at > m.at => {}
            Some(slot) => *slot = m,
            None => out.push(m),
        }
    }
    out
}

/// The current value of `key` among `measurements` (see [`Item::field`]).
fn field_of(measurements: &[Measurement], key: &str) -> Option<Quantity> {
    measurements
        .iter()
        .filter(|m| m.key.as_str() == key)
        .reduce(|current, m| if current.at > m.at { current } else { m })
        .map(Measurement::quantity)
}

/// What a listing of the inventory shows of an item (`list_inventory`): read without its faults, tests,
/// accessories and components, so a store can read thousands at a time cheaply. The buildable and current-field
/// rules are [`Item`]'s own.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemLine {
    pub id: ItemId,
    pub name: ItemName,
    pub item_type: ItemType,
    pub profile: String,
    pub condition: Condition,
    pub intent: Intent,
    pub availability: Availability,
    pub gone: bool,
    /// Every measurement, as on the item.
    pub measurements: Vec<Measurement>,
    /// How many like units the item is.
    pub quantity: u32,
    /// As on the item.
    pub units_held: u32,
    /// As on the item.
    pub units_lent: u32,
}

impl ItemLine {
    /// [`Item::buildable`]'s answer for this item.
    pub fn is_buildable(&self) -> bool {
        buildable(self.gone, self.intent, self.availability, None).is_ok()
    }

    /// [`Item::units`] of this item.
    pub fn units(&self) -> Units {
        units(self.quantity, self.units_held, self.units_lent, self.is_buildable(), self.availability)
    }

    /// [`Item::current_measurements`] of this item.
    pub fn current_measurements(&self) -> Vec<&Measurement> {
        current_of(&self.measurements)
    }

    /// [`Item::field`] of this item.
    pub fn field(&self, key: &str) -> Option<Quantity> {
        field_of(&self.measurements, key)
    }
}

impl From<&Item> for ItemLine {
    fn from(item: &Item) -> Self {
        ItemLine {
            id: item.id,
            name: item.name.clone(),
            item_type: item.item_type.clone(),
            profile: item.profile.clone(),
            condition: item.condition,
            intent: item.intent,
            availability: item.availability,
            gone: item.gone.is_some(),
            measurements: item.measurements.clone(),
            quantity: item.quantity,
            units_held: item.units_held,
            units_lent: item.units_lent,
        }
    }
}

/// Why an item may not be used in a build. Its `Display` is the reason reported for a dropped allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotBuildable {
    Gone,
    Intent(Intent),
    ReservedBy(Option<ProjectId>),
    InUse(Option<ProjectId>),
    Lent,
}

impl fmt::Display for NotBuildable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotBuildable::Gone => f.write_str("not buildable: gone"),
            NotBuildable::Intent(i) => write!(f, "not buildable: intent {i}"),
            NotBuildable::ReservedBy(Some(p)) => write!(f, "reserved by project {p}"),
            NotBuildable::ReservedBy(None) => f.write_str("not buildable: reserved"),
            NotBuildable::InUse(Some(p)) => write!(f, "in use in project {p}"),
            NotBuildable::InUse(None) => f.write_str("not buildable: in use"),
            NotBuildable::Lent => f.write_str("not buildable: lent"),
        }
    }
}

impl Item {
    /// Where the item is, as text: its place's path joined with " / " ("Garage / Shelf B2"), as the API and the
    /// sheets show it.
    pub fn location(&self) -> Option<String> {
        self.place_path.as_ref().map(PlacePath::joined)
    }

    /// **The** buildable rule, used by everything that needs it: not gone, intent `keep`, availability
    /// `available`. `Err` says why not.
    pub fn buildable(&self) -> Result<(), NotBuildable> {
        buildable(self.gone.is_some(), self.intent, self.availability, self.project)
    }

    pub fn is_buildable(&self) -> bool {
        self.buildable().is_ok()
    }

    /// **The** units rule, over every kind of hold: units held by projects (a whole item `reserved` or `in_use`,
    /// or units of a stock held by accepted projects) and units a new project may take (none unless buildable;
    /// else the quantity less what is held). An item of quantity 1 has 1 available exactly when it is buildable.
    pub fn units(&self) -> Units {
        units(self.quantity, self.units_held, self.units_lent, self.is_buildable(), self.availability)
    }

    /// The units free to lend: of an item present and `available` (whatever its intent: a thing kept for sale
    /// may still be lent), the quantity less what projects hold and what is out on loan already.
    pub fn lendable(&self) -> u32 {
        if self.gone.is_some() || self.availability != Availability::Available {
            return 0;
        }
        let u = units(self.quantity, self.units_held, self.units_lent, true, self.availability);
        u.available
    }

    /// **The** current-field rule: the latest measurement per key (by time; on a tie, the later recorded), in
    /// the order the keys were first measured. A small vector, since an item has a handful of fields and listings
    /// call this for thousands of items.
    pub fn current_measurements(&self) -> Vec<&Measurement> {
        current_of(&self.measurements)
    }

    /// The current fields by key ([`Item::current_measurements`], ordered by key).
    pub fn current_fields(&self) -> BTreeMap<&FieldKey, &Measurement> {
        self.current_measurements().into_iter().map(|m| (&m.key, m)).collect()
    }

    /// The current value of one field: [`Item::current_measurements`]'s rule for one key (the latest by time; on
    /// a tie, the later recorded), without collecting the others, since the machine check asks this of every
    /// candidate item.
    pub fn field(&self, key: &str) -> Option<Quantity> {
        field_of(&self.measurements, key)
    }

    /// The current fields as `key: value unit`, comma-separated ("capacity: 3400 mAh, voltage: 3.7 V").
    pub fn fields_line(&self) -> String {
        self.current_fields().iter().map(|(k, m)| format!("{k}: {}", m.quantity())).collect::<Vec<_>>().join(", ")
    }

    /// The worst fault, if any.
    pub fn worst_fault(&self) -> Option<Severity> {
        self.faults.iter().map(|f| f.severity).max_by_key(|s| *s as u8)
    }
}

/// A new item before the store gives it an id.
#[derive(Debug, Clone, PartialEq)]
pub struct NewItem {
    pub name: ItemName,
    pub item_type: ItemType,
    pub profile: String,
    pub condition: Condition,
    pub intent: Intent,
    pub availability: Availability,
    pub measurements: Vec<Measurement>,
    pub faults: Vec<Fault>,
    pub tests_done: Vec<TestDone>,
    pub accessories: Vec<String>,
    pub components: Vec<ItemId>,
    pub quantity: u32,
    pub min_quantity: Option<u32>,
    pub tags: Tags,
    pub codes: Codes,
    pub details: Details,
    /// The place to put the item in.
    pub place_id: Option<PlaceId>,
    /// Without a `place_id`: a path of places as text ("Garage / Shelf B2"), found or created when the item
    /// is stored, so old clients and CSV files keep working.
    pub location: Option<String>,
    /// A stable reference from an import (a Homebox `HB.import_ref`), so a re-import updates instead of
    /// duplicating.
    pub import_ref: Option<String>,
    /// Pending media (kept at intake, on no item yet) to attach to the item when it is stored, in the same
    /// transaction.
    pub media_ids: Vec<MediaId>,
}

impl NewItem {
    /// A new item with nothing but the required facts; availability `available`.
    pub fn new(name: ItemName, item_type: ItemType, profile: String, condition: Condition, intent: Intent) -> Self {
        Self {
            name,
            item_type,
            profile,
            condition,
            intent,
            availability: Availability::Available,
            measurements: Vec::new(),
            faults: Vec::new(),
            tests_done: Vec::new(),
            accessories: Vec::new(),
            components: Vec::new(),
            quantity: 1,
            min_quantity: None,
            tags: Tags::default(),
            codes: Codes::default(),
            details: Details::default(),
            place_id: None,
            location: None,
            import_ref: None,
            media_ids: Vec::new(),
        }
    }
    /// The item a store holds right after taking this one in as `id` at `at`: not gone, held by no project,
    /// version 1 (the import reference stays with the store). Its `location` is the text given: a store puts
    /// an item without a place in the place of that text, whose path reads the same.
    pub fn stored(self, id: ItemId, at: Timestamp) -> Item {
        Item {
            id,
            name: self.name,
            item_type: self.item_type,
            profile: self.profile,
            condition: self.condition,
            intent: self.intent,
            availability: self.availability,
            project: None,
            gone: None,
            measurements: self.measurements,
            faults: self.faults,
            tests_done: self.tests_done,
            accessories: self.accessories,
            components: self.components,
            quantity: self.quantity,
            min_quantity: self.min_quantity,
            units_held: 0,
            units_lent: 0,
            loan: None,
            tags: self.tags,
            codes: self.codes,
            details: self.details,
            place_id: self.place_id,
            place_path: None,
            cover: None,
            created_at: at,
            updated_at: at,
            version: 1,
        }
    }
}

/// Checks the `n`th text of a list, naming it `list[n]` (and `.member`) when it is refused.
fn check_entry(list: &str, n: usize, member: &str, raw: &str, lines: Lines) -> Result<(), ControlCharacter> {
    text::check("", raw, lines).map_err(|e| ControlCharacter { field: format!("{list}[{n}]{member}"), ..e })
}

/// The text check ([`text::check`]) over the texts every item has.
fn check_item_texts(
    name: &ItemName,
    profile: &str,
    location: Option<&str>,
    accessories: &[String],
    faults: &[Fault],
    tests_done: &[TestDone],
) -> Result<(), ControlCharacter> {
    text::check("name", name.as_str(), Lines::One)?;
    text::check("profile", profile, Lines::Many)?;
    text::check("location", location.unwrap_or_default(), Lines::One)?;
    for (n, a) in accessories.iter().enumerate() {
        check_entry("accessories", n, "", a, Lines::One)?;
    }
    for (n, f) in faults.iter().enumerate() {
        check_entry("faults", n, ".text", &f.text, Lines::One)?;
    }
    for (n, t) in tests_done.iter().enumerate() {
        check_entry("tests", n, ".name", &t.name, Lines::One)?;
        check_entry("tests", n, ".note", t.note.as_deref().unwrap_or_default(), Lines::Many)?;
    }
    Ok(())
}

impl NewItem {
    /// The text check over every text of the item, whatever built it: the use cases that write a new item
    /// (create, import) call it, so no path stores a control character, even one that filled the public fields
    /// without their constructors.
    ///
    /// ```
    /// use trove_domain::item::{Condition, Intent, ItemName, ItemType, NewItem};
    /// let mut item = NewItem::new(
    ///     ItemName::new("Pi").unwrap(), ItemType::new("sbc").unwrap(), String::new(), Condition::Good, Intent::Keep,
    /// );
    /// assert!(item.check_texts().is_ok());
    /// item.accessories.push("case\u{0}".into());
    /// assert_eq!(item.check_texts().unwrap_err().field, "accessories[0]");
    /// ```
    ///
    /// # Errors
    /// The first [`ControlCharacter`], naming its field.
    pub fn check_texts(&self) -> Result<(), ControlCharacter> {
        check_item_texts(
            &self.name,
            &self.profile,
            self.location.as_deref(),
            &self.accessories,
            &self.faults,
            &self.tests_done,
        )?;
        text::check("import_ref", self.import_ref.as_deref().unwrap_or_default(), Lines::One)
    }
}

/// **The** bound on an item's field keys: at most [`FIELD_KEYS_MAX`] keys among `measurements`.
fn check_field_keys<'a>(measurements: impl IntoIterator<Item = &'a Measurement>) -> Result<(), ItemError> {
    let count = measurements.into_iter().map(|m| &m.key).collect::<std::collections::BTreeSet<_>>().len();
    if count > FIELD_KEYS_MAX {
        return Err(ItemError::TooManyFieldKeys { count });
    }
    Ok(())
}

impl NewItem {
    /// The bounds of what is recorded on a new item at `now`: at most [`FIELD_KEYS_MAX`] field keys, and every
    /// measurement's and test's date within [`check_recorded_at`]'s window (named `measurements[n].at`,
    /// `tests[n].at`). The use cases that write a new item (create, import) call it.
    ///
    /// ```
    /// use trove_domain::item::{Condition, Intent, ItemName, ItemType, Measurement, MeasurementSource, NewItem};
    /// let now = chrono::Utc::now();
    /// let mut item = NewItem::new(
    ///     ItemName::new("Pi").unwrap(), ItemType::new("sbc").unwrap(), String::new(), Condition::Good, Intent::Keep,
    /// );
    /// item.measurements.push(Measurement::new("ram", 4.0, "GB", now, MeasurementSource::Label).unwrap());
    /// assert!(item.check_bounds(now).is_ok());
    /// ```
    ///
    /// # Errors
    /// [`ItemError::TooManyFieldKeys`], or the first [`ItemError::DateOutOfRange`].
    pub fn check_bounds(&self, now: Timestamp) -> Result<(), ItemError> {
        check_field_keys(&self.measurements)?;
        for (n, m) in self.measurements.iter().enumerate() {
            check_recorded_at(&format!("measurements[{n}].at"), m.at, now)?;
        }
        for (n, t) in self.tests_done.iter().enumerate() {
            check_recorded_at(&format!("tests[{n}].at"), t.at, now)?;
        }
        Ok(())
    }
}

impl Item {
    /// Whether `m` may be recorded on this item at `now`: its date (`at`) within [`check_recorded_at`]'s
    /// window, and its key one the item has or a new one within [`FIELD_KEYS_MAX`].
    ///
    /// # Errors
    /// [`ItemError::DateOutOfRange`] naming `at`, [`ItemError::TooManyFieldKeys`].
    pub fn check_measurement(&self, m: &Measurement, now: Timestamp) -> Result<(), ItemError> {
        check_recorded_at("at", m.at, now)?;
        check_field_keys(self.measurements.iter().chain([m]))
    }
}

impl ItemChanges {
    /// The text check over the texts of a change.
    ///
    /// # Errors
    /// The first [`ControlCharacter`], naming its field.
    pub fn check_texts(&self) -> Result<(), ControlCharacter> {
        if let Some(name) = &self.name {
            text::check("name", name.as_str(), Lines::One)?;
        }
        text::check("profile", self.profile.as_deref().unwrap_or_default(), Lines::Many)?;
        text::check("location", self.location.as_ref().and_then(Option::as_deref).unwrap_or_default(), Lines::One)?;
        for (n, a) in self.accessories.iter().flatten().enumerate() {
            check_entry("accessories", n, "", a, Lines::One)?;
        }
        Ok(())
    }
}

/// Why an item may not be marked gone. The item is named as its owner calls it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoneRefused {
    #[error("{name:?} is reserved by {project}; drop or build that project first")]
    Reserved { item: ItemId, name: String, project: HeldBy },
    #[error("item {0} is already gone")]
    AlreadyGone(ItemId),
    #[error("{name:?} has {held} units held by projects; drop or build those projects first")]
    UnitsHeld { item: ItemId, name: String, held: u32 },
}

/// The project holding an item, as a message names it: by its title when the use case looked it up
/// ([`HeldBy::titled`]), else by its id. The id stays in `project` either way, for a caller that needs it.
///
/// ```
/// use trove_domain::item::HeldBy;
/// use trove_domain::ProjectId;
/// assert_eq!(HeldBy::id(Some(ProjectId(7))).to_string(), "project 7");
/// assert_eq!(HeldBy::id(Some(ProjectId(7))).titled("Weather station").to_string(), "project \"Weather station\"");
/// assert_eq!(HeldBy::id(None).to_string(), "a project");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldBy {
    pub project: Option<ProjectId>,
    pub title: Option<String>,
}

impl HeldBy {
    pub fn id(project: Option<ProjectId>) -> Self {
        Self { project, title: None }
    }

    /// The same project, named by its title.
    #[must_use]
    pub fn titled(self, title: &str) -> Self {
        Self { title: Some(title.to_owned()), ..self }
    }
}

impl fmt::Display for HeldBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.title, self.project) {
            (Some(t), _) => write!(f, "project {t:?}"),
            (None, Some(p)) => write!(f, "project {p}"),
            (None, None) => f.write_str("a project"),
        }
    }
}

impl GoneRefused {
    /// The project the refusal names, to look its title up.
    pub fn held_by(&mut self) -> Option<&mut HeldBy> {
        match self {
            GoneRefused::Reserved { project, .. } => Some(project),
            _ => None,
        }
    }
}

impl ChangeRefused {
    /// The project the refusal names, to look its title up.
    pub fn held_by(&mut self) -> Option<&mut HeldBy> {
        match self {
            ChangeRefused::Held { project, .. } => Some(project),
            _ => None,
        }
    }
}

impl Item {
    /// Marks the item gone. Releases nothing silently: refused while it is reserved by a project.
    ///
    /// # Errors
    /// [`GoneRefused::Reserved`] while reserved, [`GoneRefused::AlreadyGone`] when it already is.
    pub fn mark_gone(&mut self, gone: Gone) -> Result<(), GoneRefused> {
        if self.gone.is_some() {
            return Err(GoneRefused::AlreadyGone(self.id));
        }
        if self.units_held > 0 {
            return Err(GoneRefused::UnitsHeld { item: self.id, name: self.name.to_string(), held: self.units_held });
        }
        if self.availability == Availability::Reserved {
            return Err(GoneRefused::Reserved {
                item: self.id,
                name: self.name.to_string(),
                project: HeldBy::id(self.project),
            });
        }
        self.gone = Some(gone);
        Ok(())
    }
}

/// The changes an owner may make to an item at once; `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ItemChanges {
    pub name: Option<ItemName>,
    pub item_type: Option<ItemType>,
    pub profile: Option<String>,
    pub condition: Option<Condition>,
    pub intent: Option<Intent>,
    /// Only `available` and `lent`: reserving and building go through projects.
    pub availability: Option<Availability>,
    /// `Some(None)` takes the item out of any place.
    pub place_id: Option<Option<PlaceId>>,
    /// A `location` text (a path of places, "Garage / Shelf B2"), found or created and turned into `place_id`
    /// by the use case before the change is applied; [`Item::apply`] reads `place_id` only.
    pub location: Option<Option<String>>,
    pub accessories: Option<Vec<String>>,
    pub components: Option<Vec<ItemId>>,
    pub quantity: Option<u32>,
    /// `Some(None)` clears the minimum.
    pub min_quantity: Option<Option<u32>>,
    pub tags: Option<Tags>,
    /// The whole list of codes; `Some` of an empty list removes them all.
    pub codes: Option<Codes>,
    pub notes: Option<String>,
    pub serial: Option<Option<String>>,
    pub purchase: Option<Option<Purchase>>,
    pub warranty_until: Option<Option<NaiveDate>>,
    /// `Some(None)` clears the hand-set asking price.
    pub asking_price: Option<Option<Money>>,
}

/// Why a change to an item was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChangeRefused {
    /// `reserved` and `in_use` are set by accepting and building projects, never by hand.
    #[error("availability {0} is set by accepting or building a project")]
    SetByProject(Availability),
    /// A gone item is history.
    #[error("item {0} is gone; it is history and cannot change")]
    Gone(ItemId),
    /// A reserved or in-use item cannot leave its project by a change of intent or availability.
    #[error("{name:?} is {} by {project}; drop that project first", held_word(*.availability))]
    Held { item: ItemId, name: String, project: HeldBy, availability: Availability },
    #[error("item {0} cannot be a component of itself")]
    SelfComponent(ItemId),
    /// A stock whose units projects hold keeps at least those units, and stays for the projects.
    #[error("{name:?} has {held} units held by projects; {what}")]
    UnitsHeld { item: ItemId, name: String, held: u32, what: &'static str },
    /// An item out on loan keeps its loan's units and availability until it is returned.
    #[error("item {item} is lent to {to}; {what}")]
    OnLoan { item: ItemId, to: String, what: &'static str },
}

fn held_word(a: Availability) -> &'static str {
    if a == Availability::Reserved { "reserved" } else { "in use" }
}

/// The rule for an availability given by hand (on create or change): only `available` and `lent`.
///
/// # Errors
/// [`ChangeRefused::SetByProject`] for `reserved` and `in_use`.
pub fn check_manual_availability(a: Availability) -> Result<(), ChangeRefused> {
    match a {
        Availability::Available | Availability::Lent => Ok(()),
        other => Err(ChangeRefused::SetByProject(other)),
    }
}

impl Item {
    /// The rule for recording anything on an item (a measurement, a fault, a test, a change): a gone item is
    /// history.
    ///
    /// # Errors
    /// [`ChangeRefused::Gone`].
    pub fn check_changeable(&self) -> Result<(), ChangeRefused> {
        match self.gone {
            Some(_) => Err(ChangeRefused::Gone(self.id)),
            None => Ok(()),
        }
    }

    /// Applies an owner's changes. Refused, leaving the item as it was, when the item is gone, when an
    /// availability other than `available`/`lent` is asked for, when a reserved or in-use item would leave its
    /// project (a new availability, or an intent other than `keep`), or when the item would be its own component.
    /// Components are kept sorted and without duplicates.
    ///
    /// # Errors
    /// The [`ChangeRefused`] that applies first.
    pub fn apply(&mut self, changes: &ItemChanges) -> Result<(), ChangeRefused> {
        if let Some(a) = changes.availability {
            check_manual_availability(a)?;
        }
        self.check_changeable()?;
        let held = matches!(self.availability, Availability::Reserved | Availability::InUse);
        if held && (changes.availability.is_some() || changes.intent.is_some_and(|i| i != Intent::Keep)) {
            return Err(ChangeRefused::Held {
                item: self.id,
                name: self.name.to_string(),
                project: HeldBy::id(self.project),
                availability: self.availability,
            });
        }
        if self.units_held > 0 {
            let refuse = |what| ChangeRefused::UnitsHeld {
                item: self.id,
                name: self.name.to_string(),
                held: self.units_held,
                what,
            };
            if changes.quantity.is_some_and(|q| q < self.units_held) {
                return Err(refuse("its quantity cannot go under that"));
            }
            if changes.availability == Some(Availability::Lent) || changes.intent.is_some_and(|i| i != Intent::Keep) {
                return Err(refuse("drop or build those projects first"));
            }
        }
        if let Some(loan) = &self.loan {
            let lent = self.units().lent;
            if changes.availability.is_some_and(|a| a != self.availability) {
                return Err(ChangeRefused::OnLoan {
                    item: self.id,
                    to: loan.to.clone(),
                    what: "mark it returned first",
                });
            }
            if changes.quantity.is_some_and(|q| q < self.units_held + lent) {
                return Err(ChangeRefused::OnLoan {
                    item: self.id,
                    to: loan.to.clone(),
                    what: "its quantity cannot go under the units held and lent",
                });
            }
        }
        if changes.components.as_ref().is_some_and(|c| c.contains(&self.id)) {
            return Err(ChangeRefused::SelfComponent(self.id));
        }
        if let Some(v) = &changes.name {
            self.name = v.clone();
        }
        if let Some(v) = &changes.item_type {
            self.item_type = v.clone();
        }
        if let Some(v) = &changes.profile {
            self.profile = v.clone();
        }
        if let Some(v) = changes.condition {
            self.condition = v;
        }
        if let Some(v) = changes.intent {
            self.intent = v;
        }
        if let Some(v) = changes.availability {
            self.availability = v;
        }
        if let Some(v) = changes.place_id
            && v != self.place_id
        {
            self.place_id = v;
            // The path of the new place is read back by the store with the item.
            self.place_path = None;
        }
        if let Some(v) = &changes.accessories {
            self.accessories = v.clone();
        }
        if let Some(v) = &changes.components {
            let mut v = v.clone();
            v.sort_unstable();
            v.dedup();
            self.components = v;
        }
        if let Some(v) = changes.quantity {
            self.quantity = v;
        }
        if let Some(v) = changes.min_quantity {
            self.min_quantity = v;
        }
        if let Some(v) = &changes.tags {
            self.tags = v.clone();
        }
        if let Some(v) = &changes.codes {
            self.codes = v.clone();
        }
        if let Some(v) = &changes.notes {
            self.details.notes.clone_from(v);
        }
        if let Some(v) = &changes.serial {
            self.details.serial.clone_from(v);
        }
        if let Some(v) = &changes.purchase {
            self.details.purchase.clone_from(v);
        }
        if let Some(v) = changes.warranty_until {
            self.details.warranty_until = v;
        }
        if let Some(v) = changes.asking_price {
            self.details.asking_price = v;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::values::GoneReason;
    use super::*;
    use crate::testing::*;

    #[test]
    fn buildable_rule() {
        let base = item(1, "laptop", Condition::Good);
        let check = |f: &dyn Fn(&mut Item), want: Result<(), &str>| {
            let mut i = base.clone();
            f(&mut i);
            assert_eq!(i.buildable().map_err(|e| e.to_string()), want.map_err(str::to_owned));
        };
        check(&|_| {}, Ok(()));
        check(&|i| i.intent = Intent::Sell, Err("not buildable: intent sell"));
        check(&|i| i.intent = Intent::Give, Err("not buildable: intent give"));
        check(
            &|i| {
                i.availability = Availability::Reserved;
                i.project = Some(ProjectId(7));
            },
            Err("reserved by project 7"),
        );
        check(&|i| i.availability = Availability::InUse, Err("not buildable: in use"));
        check(&|i| i.availability = Availability::Lent, Err("not buildable: lent"));
        check(&|i| i.gone = Some(Gone { reason: GoneReason::Sold, at: at(2), note: None }), Err("not buildable: gone"));
    }

    #[test]
    fn current_fields_take_the_latest_per_key() {
        let mut i = item(1, "lithium_cell", Condition::Good);
        measure(&mut i, "capacity", 3.4, "Ah", 2);
        measure(&mut i, "capacity", 3100.0, "mAh", 5);
        measure(&mut i, "capacity", 2900.0, "mAh", 3);
        measure(&mut i, "voltage", 3.7, "V", 1);
        assert_eq!(i.fields_line(), "capacity: 3100 mAh, voltage: 3.7 V");
        assert_eq!(i.field("capacity").map(|q| q.value), Some(3100.0));
        assert_eq!(i.field("weight"), None);
    }

    #[test]
    fn gone_is_refused_while_reserved() {
        let mut i = item(3, "laptop", Condition::Good);
        i.availability = Availability::Reserved;
        i.project = Some(ProjectId(9));
        let gone = Gone { reason: GoneReason::Sold, at: at(3), note: None };
        let err = i.mark_gone(gone.clone()).unwrap_err();
        assert_eq!(err.to_string(), "\"item 3\" is reserved by project 9; drop or build that project first");
        i.availability = Availability::Available;
        i.mark_gone(gone.clone()).unwrap();
        assert_eq!(i.mark_gone(gone), Err(GoneRefused::AlreadyGone(ItemId(3))));
    }

    #[test]
    fn changes_follow_the_rules() {
        let base = item(3, "laptop", Condition::Good);
        let check = |setup: &dyn Fn(&mut Item), changes: ItemChanges, want: Result<(), &str>| {
            let mut i = base.clone();
            setup(&mut i);
            let before = i.clone();
            let got = i.apply(&changes).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_owned));
            if got.is_err() {
                assert_eq!(i, before, "a refused change leaves the item as it was");
            }
        };
        let reserve = |i: &mut Item| {
            i.availability = Availability::Reserved;
            i.project = Some(ProjectId(8));
        };
        let sell = ItemChanges { intent: Some(Intent::Sell), ..ItemChanges::default() };
        check(&|_| {}, sell.clone(), Ok(()));
        check(&reserve, sell, Err("\"item 3\" is reserved by project 8; drop that project first"));
        check(&reserve, ItemChanges { intent: Some(Intent::Keep), ..ItemChanges::default() }, Ok(()));
        check(
            &|i| i.availability = Availability::InUse,
            ItemChanges { availability: Some(Availability::Lent), ..ItemChanges::default() },
            Err("\"item 3\" is in use by a project; drop that project first"),
        );
        check(
            &|_| {},
            ItemChanges { availability: Some(Availability::Reserved), ..ItemChanges::default() },
            Err("availability reserved is set by accepting or building a project"),
        );
        check(
            &|i| i.gone = Some(Gone { reason: GoneReason::Lost, at: at(2), note: None }),
            ItemChanges { profile: Some("x".into()), ..ItemChanges::default() },
            Err("item 3 is gone; it is history and cannot change"),
        );
        check(
            &|_| {},
            ItemChanges { components: Some(vec![ItemId(3)]), ..ItemChanges::default() },
            Err("item 3 cannot be a component of itself"),
        );
        let mut i = base.clone();
        i.apply(&ItemChanges {
            components: Some(vec![ItemId(9), ItemId(4), ItemId(9)]),
            place_id: Some(Some(PlaceId(6))),
            availability: Some(Availability::Lent),
            ..ItemChanges::default()
        })
        .unwrap();
        assert_eq!(
            (i.components, i.place_id, i.availability),
            (vec![ItemId(4), ItemId(9)], Some(PlaceId(6)), Availability::Lent)
        );
        // Moving a gone item is a change like any other: refused.
        check(
            &|i| i.gone = Some(Gone { reason: GoneReason::Lost, at: at(2), note: None }),
            ItemChanges { place_id: Some(None), ..ItemChanges::default() },
            Err("item 3 is gone; it is history and cannot change"),
        );
    }

    #[test]
    fn a_line_answers_as_its_item() {
        for gone in [false, true] {
            for intent in [Intent::Keep, Intent::Sell, Intent::Give] {
                for availability in
                    [Availability::Available, Availability::Reserved, Availability::InUse, Availability::Lent]
                {
                    let mut i = item(3, "laptop", Condition::Good);
                    i.intent = intent;
                    i.availability = availability;
                    i.gone = gone.then(|| Gone { reason: GoneReason::Sold, at: at(5), note: None });
                    measure(&mut i, "ram", 4.0, "GB", 1);
                    measure(&mut i, "ram", 8.0, "GB", 2);
                    measure(&mut i, "storage", 128.0, "GB", 1);
                    let line = ItemLine::from(&i);
                    assert_eq!(line.is_buildable(), i.is_buildable(), "{gone} {intent:?} {availability:?}");
                    assert_eq!(line.current_measurements(), i.current_measurements());
                }
            }
        }
    }

    /// A new item has at most 200 field keys, and its measurements and tests are dated from 1970 to a day from
    /// now, both ends included.
    #[test]
    fn recorded_dates_and_field_keys_are_bounded() {
        use chrono::{TimeDelta, TimeZone, Utc};
        let now = at(10);
        let epoch = Utc.with_ymd_and_hms(1970, 1, 1, 0, 0, 0).unwrap();
        let check = |keys: usize, measured_at: Timestamp, tested_at: Timestamp, want: Result<(), &str>| {
            let mut new = NewItem::new(
                ItemName::new("Pi").unwrap(),
                ItemType::new("sbc").unwrap(),
                String::new(),
                Condition::Good,
                Intent::Keep,
            );
            new.measurements = (0..keys)
                .map(|k| {
                    Measurement::new(&format!("k{k}"), 1.0, "V", measured_at, super::super::MeasurementSource::Manual)
                        .unwrap()
                })
                .collect();
            new.tests_done =
                vec![TestDone::new("boots", super::super::TestResult::Pass, None, tested_at, None).unwrap()];
            assert_eq!(new.check_bounds(now).map_err(|e| e.to_string()), want.map_err(str::to_owned), "{keys}");
        };
        check(3, now, now, Ok(()));
        check(FIELD_KEYS_MAX, epoch, now + TimeDelta::days(1), Ok(()));
        check(FIELD_KEYS_MAX + 1, now, now, Err("fields: an item has at most 200 field keys; this one would have 201"));
        check(
            1,
            epoch - TimeDelta::seconds(1),
            now,
            Err("measurements[0].at must be from 1970-01-01 to a day from now, not 1969-12-31T23:59:59+00:00"),
        );
        check(
            1,
            now,
            now + TimeDelta::days(1) + TimeDelta::seconds(1),
            Err("tests[0].at must be from 1970-01-01 to a day from now, not 2026-01-11T12:00:01+00:00"),
        );
        check(
            1,
            Utc.with_ymd_and_hms(9999, 1, 1, 0, 0, 0).unwrap(),
            now,
            Err("measurements[0].at must be from 1970-01-01 to a day from now, not 9999-01-01T00:00:00+00:00"),
        );
    }

    #[test]
    fn a_new_measurement_keeps_the_item_within_its_bounds() {
        use chrono::TimeDelta;
        let now = at(10);
        let mut full = item(1, "lithium_cell", Condition::Good);
        for k in 0..FIELD_KEYS_MAX {
            measure(&mut full, &format!("k{k}"), 1.0, "V", 2);
        }
        let reading = |key: &str, at: Timestamp| {
            Measurement::new(key, 2.0, "V", at, super::super::MeasurementSource::Manual).unwrap()
        };
        let check = |m: Measurement, want: Result<(), &str>| {
            assert_eq!(full.check_measurement(&m, now).map_err(|e| e.to_string()), want.map_err(str::to_owned));
        };
        // A key the item has is a new reading, not a new key.
        check(reading("k7", now), Ok(()));
        check(reading("k200", now), Err("fields: an item has at most 200 field keys; this one would have 201"));
        check(
            reading("k7", now + TimeDelta::days(2)),
            Err("at must be from 1970-01-01 to a day from now, not 2026-01-12T12:00:00+00:00"),
        );
    }

    #[test]
    fn units_are_one_rule_over_every_kind_of_hold() {
        let mut stock = item(4, "aa_cell", Condition::Good);
        assert_eq!(stock.units(), Units { held: 0, lent: 0, available: 1 });
        stock.availability = Availability::Reserved;
        assert_eq!(stock.units(), Units { held: 1, lent: 0, available: 0 }, "a single thing held whole");
        stock.availability = Availability::Lent;
        assert_eq!(stock.units(), Units { held: 0, lent: 1, available: 0 }, "a single thing lent whole");
        assert_eq!(stock.lendable(), 0);
        stock.availability = Availability::Available;
        stock.quantity = 10;
        stock.units_held = 4;
        assert_eq!(stock.units(), Units { held: 4, lent: 0, available: 6 });
        stock.units_lent = 2;
        assert_eq!(stock.units(), Units { held: 4, lent: 2, available: 4 }, "loans count like holds");
        stock.intent = Intent::Sell;
        assert_eq!(stock.lendable(), 4, "a stock kept for sale may still be lent");
        stock.intent = Intent::Keep;
        stock.units_lent = 0;
        assert_eq!(Hold::of(&stock, 1), Hold::Units { item: ItemId(4), units: 1 });
        stock.intent = Intent::Sell;
        assert_eq!(stock.units(), Units { held: 4, lent: 0, available: 0 }, "not buildable: nothing to take");
        stock.intent = Intent::Keep;
        // What projects hold stays theirs: the quantity keeps them, the stock keeps its intent and stays here.
        let err = |changes: ItemChanges| stock.clone().apply(&changes).unwrap_err().to_string();
        assert_eq!(
            err(ItemChanges { quantity: Some(3), ..ItemChanges::default() }),
            "\"item 4\" has 4 units held by projects; its quantity cannot go under that"
        );
        assert_eq!(
            err(ItemChanges { intent: Some(Intent::Sell), ..ItemChanges::default() }),
            "\"item 4\" has 4 units held by projects; drop or build those projects first"
        );
        assert!(stock.clone().apply(&ItemChanges { quantity: Some(4), ..ItemChanges::default() }).is_ok());
        let gone = Gone { reason: GoneReason::Sold, at: at(2), note: None };
        assert!(matches!(stock.mark_gone(gone), Err(GoneRefused::UnitsHeld { held: 4, .. })));
    }
}
