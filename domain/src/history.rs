//! The history, all of it: events (who did what to which object, field by field, with the names ids had then),
//! what a change did to an item, a place, a medium, a project or a member, the recording a store writes a write's
//! events by, and the undo rule (which changes can be undone, and how). The values are the texts the API shows
//! (`"good"`, `"12"` for a place id, `"a, b"` for a list); `None` is absent.

use crate::code::Codes;
use crate::item::{Availability, Condition, Intent, Item, ItemChanges, ItemName, ItemType, Tags};
use crate::loan::{Done, Loan, Schedule};
use crate::media::Medium;
use crate::people::{EventId, MemberId};
use crate::place::Place;
use crate::project::Project;
use crate::{PlaceId, Timestamp};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A field of an object as the API names it, in an event's changes: an item's own fields and records, a place's,
/// a medium's, a project's, a member's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Name,
    ItemType,
    Profile,
    Condition,
    Intent,
    Availability,
    ProjectId,
    PlaceId,
    Accessories,
    Components,
    Gone,
    Quantity,
    MinQuantity,
    Tags,
    Codes,
    Notes,
    Serial,
    Purchase,
    WarrantyUntil,
    AskingPrice,
    Measurement,
    Fault,
    Test,
    ParentId,
    Note,
    ItemId,
    Kind,
    MediaType,
    Caption,
    Title,
    TemplateId,
    Status,
    Allocations,
    Missing,
    Role,
    Loan,
    Schedule,
    Maintenance,
}

impl Field {
    /// Every field, for tests and documents.
    pub const ALL: [Field; 38] = [
        Field::Name,
        Field::ItemType,
        Field::Profile,
        Field::Condition,
        Field::Intent,
        Field::Availability,
        Field::ProjectId,
        Field::PlaceId,
        Field::Accessories,
        Field::Components,
        Field::Gone,
        Field::Quantity,
        Field::MinQuantity,
        Field::Tags,
        Field::Codes,
        Field::Notes,
        Field::Serial,
        Field::Purchase,
        Field::WarrantyUntil,
        Field::AskingPrice,
        Field::Measurement,
        Field::Fault,
        Field::Test,
        Field::ParentId,
        Field::Note,
        Field::ItemId,
        Field::Kind,
        Field::MediaType,
        Field::Caption,
        Field::Title,
        Field::TemplateId,
        Field::Status,
        Field::Allocations,
        Field::Missing,
        Field::Role,
        Field::Loan,
        Field::Schedule,
        Field::Maintenance,
    ];

    /// The name the API gives it (`item_type`, `place_id`).
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Name => "name",
            Field::ItemType => "item_type",
            Field::Profile => "profile",
            Field::Condition => "condition",
            Field::Intent => "intent",
            Field::Availability => "availability",
            Field::ProjectId => "project_id",
            Field::PlaceId => "place_id",
            Field::Accessories => "accessories",
            Field::Components => "components",
            Field::Gone => "gone",
            Field::Quantity => "quantity",
            Field::MinQuantity => "min_quantity",
            Field::Tags => "tags",
            Field::Codes => "codes",
            Field::Notes => "notes",
            Field::Serial => "serial",
            Field::Purchase => "purchase",
            Field::WarrantyUntil => "warranty_until",
            Field::AskingPrice => "asking_price",
            Field::Measurement => "measurement",
            Field::Fault => "fault",
            Field::Test => "test",
            Field::ParentId => "parent_id",
            Field::Note => "note",
            Field::ItemId => "item_id",
            Field::Kind => "kind",
            Field::MediaType => "media_type",
            Field::Caption => "caption",
            Field::Title => "title",
            Field::TemplateId => "template_id",
            Field::Status => "status",
            Field::Allocations => "allocations",
            Field::Missing => "missing",
            Field::Role => "role",
            Field::Loan => "loan",
            Field::Schedule => "schedule",
            Field::Maintenance => "maintenance",
        }
    }

    /// The field of that name, if it is one.
    ///
    /// ```
    /// use trove_domain::history::Field;
    /// assert_eq!(Field::parse("place_id"), Some(Field::PlaceId));
    /// assert_eq!(Field::parse("type"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|f| f.as_str() == name)
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn change(out: &mut Vec<FieldChange>, field: Field, before: Option<String>, after: Option<String>) {
    if before != after {
        out.push(FieldChange::new(field, before, after));
    }
}

fn joined<T: ToString>(list: &[T]) -> Option<String> {
    (!list.is_empty()).then(|| list.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
}

/// An object's fields as the API shows them, in its order: a field and its value (`None`: absent).
pub type Fields = Vec<(Field, Option<String>)>;

/// The changes between two versions of an object's [`Fields`]: `None` before for a creation (every present field
/// from absent), `None` after for a deletion (every present field to absent). Both lists name the same fields
/// in the same order.
///
/// ```
/// # use trove_domain::history::{between, Field};
/// let a = vec![(Field::Name, Some("Shed".to_owned())), (Field::Note, None)];
/// let b = vec![(Field::Name, Some("Barn".to_owned())), (Field::Note, None)];
/// assert_eq!(between(Some(a.clone()), Some(b)).len(), 1);
/// assert_eq!(between(None, Some(a.clone()))[0].after.as_deref(), Some("Shed"));
/// assert_eq!(between(Some(a), None)[0].before.as_deref(), Some("Shed"));
/// ```
pub fn between(before: Option<Fields>, after: Option<Fields>) -> Vec<FieldChange> {
    let names: Vec<Field> =
        after.as_ref().or(before.as_ref()).map(|f| f.iter().map(|(n, _)| *n).collect()).unwrap_or_default();
    let value = |fields: &Option<Fields>, i: usize| fields.as_ref().and_then(|f| f.get(i)).and_then(|(_, v)| v.clone());
    let mut out = Vec::new();
    for (i, name) in names.into_iter().enumerate() {
        change(&mut out, name, value(&before, i), value(&after, i));
    }
    out
}

/// What lending `loan` (`lent`) or its return did to its item: its loan, and the item's availability when it was
/// lent whole.
pub fn loan_changes(loan: &Loan, lent: bool, whole: bool) -> Vec<FieldChange> {
    let described = Some(loan.described());
    let available = Some(Availability::Available.as_str().to_owned());
    let lent_word = Some(Availability::Lent.as_str().to_owned());
    let (loan, availability) = if lent {
        (FieldChange::new(Field::Loan, None, described), FieldChange::new(Field::Availability, available, lent_word))
    } else {
        (FieldChange::new(Field::Loan, described, None), FieldChange::new(Field::Availability, lent_word, available))
    };
    if whole { vec![loan, availability] } else { vec![loan] }
}

/// What setting `schedule` on its item did: a schedule where there was none.
pub fn schedule_changes(schedule: &Schedule) -> Vec<FieldChange> {
    vec![FieldChange::new(Field::Schedule, None, Some(schedule.described()))]
}

/// What logging maintenance `done` did to its item: the maintenance done, and its schedule moved from `before` to
/// `after`.
pub fn maintenance_changes(done: &Done, before: &Schedule, after: &Schedule) -> Vec<FieldChange> {
    let mut what = format!("{} on {}", done.title, done.at);
    if let Some(note) = &done.note {
        what.push_str(&format!(": {note}"));
    }
    vec![
        FieldChange::new(Field::Maintenance, None, Some(what)),
        FieldChange::new(Field::Schedule, Some(before.described()), Some(after.described())),
    ]
}

/// Who made a write, when, and as which action: what a store needs to write the events of a write in the write's
/// own transaction, from the rows as it wrote them (a created row's id, the items a project step changed), so
/// the history holds every write or none and lists them in the order they were made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    pub at: Timestamp,
    /// `None`: the command line.
    pub member: Option<MemberId>,
    pub action: Action,
}

impl Recording {
    pub fn new(at: Timestamp, member: Option<MemberId>, action: Action) -> Self {
        Self { at, member, action }
    }

    /// The same writer and time under another action (the `create` of a place made for an item's location).
    #[must_use]
    pub fn as_action(&self, action: Action) -> Self {
        Self { action, ..self.clone() }
    }

    /// The event of this write on one object.
    pub fn event(&self, kind: ObjectKind, object: i64, changes: Vec<FieldChange>, version_after: Option<i64>) -> Event {
        Event { at: self.at, member: self.member, action: self.action, kind, object, changes, version_after }
    }

    /// The event of a change of an object that is not an item (a place, a medium, a project, a member) by its
    /// fields before and after (`None` before: created; `None` after: deleted); `None` for a `patch` that changed
    /// no field.
    pub fn object(
        &self,
        kind: ObjectKind,
        object: i64,
        before: Option<Fields>,
        after: Option<Fields>,
    ) -> Option<Event> {
        let changes = between(before, after);
        if changes.is_empty() && self.action == Action::Patch {
            return None;
        }
        Some(self.event(kind, object, changes, None))
    }

    /// The event of a new item: its name.
    pub fn item_created(&self, item: &Item) -> Event {
        let changes = vec![FieldChange::new(Field::Name, None, Some(item.name.to_string()))];
        self.event(ObjectKind::Item, item.id.0, changes, Some(item.version))
    }

    /// The event of what this write did to an item, from `before` to `after`; `None` when it changed no field.
    pub fn item_changed(&self, before: &Item, after: &Item) -> Option<Event> {
        let changes = diff(before, after);
        (!changes.is_empty()).then(|| self.event(ObjectKind::Item, after.id.0, changes, Some(after.version)))
    }

    /// The `create` event of a place (made by hand, or for an item's location).
    pub fn place_created(&self, place: &Place) -> Event {
        let changes = between(None, Some(place_fields(place)));
        self.as_action(Action::Create).event(ObjectKind::Place, place.id.0, changes, None)
    }
}

/// A place's fields: name, parent_id, note.
pub fn place_fields(p: &Place) -> Fields {
    vec![
        (Field::Name, Some(p.name.to_string())),
        (Field::ParentId, p.parent_id.map(|i| i.to_string())),
        (Field::Note, p.note.clone()),
    ]
}

/// A medium's fields: item_id, kind, media_type, caption.
pub fn medium_fields(m: &Medium) -> Fields {
    vec![
        (Field::ItemId, m.item_id.map(|i| i.to_string())),
        (Field::Kind, Some(m.kind.to_string())),
        (Field::MediaType, Some(m.media_type.to_string())),
        (Field::Caption, m.caption.as_ref().map(ToString::to_string)),
    ]
}

/// A project's fields: title, template_id, status, allocations (`requirement: item id`), missing.
pub fn project_fields(p: &Project) -> Fields {
    let allocations: Vec<String> = p.allocations.iter().map(|a| format!("{}: {}", a.requirement, a.item_id)).collect();
    vec![
        (Field::Title, Some(p.title.clone())),
        (Field::TemplateId, Some(p.template_id.to_string())),
        (Field::Status, Some(p.status.to_string())),
        (Field::Allocations, joined(&allocations)),
        (Field::Missing, joined(&p.missing)),
    ]
}

/// The changes from `before` to `after`, in the order the API shows an item's fields; records added
/// (measurements, faults, tests) appear as one change each, with no `before`.
///
/// ```
/// # use trove_domain::history::diff;
/// # use trove_domain::item::{Condition, Intent, ItemName, ItemType, NewItem};
/// # let t = chrono::DateTime::UNIX_EPOCH;
/// let a = NewItem::new(ItemName::new("drill").unwrap(), ItemType::new("tool").unwrap(), String::new(),
///     Condition::Good, Intent::Keep).stored(trove_domain::ItemId(1), t);
/// let b = trove_domain::item::Item { name: ItemName::new("hammer drill").unwrap(), ..a.clone() };
/// let d = diff(&a, &b);
/// assert_eq!((d[0].field, d[0].before.as_deref(), d[0].after.as_deref()),
///     (trove_domain::history::Field::Name, Some("drill"), Some("hammer drill")));
/// ```
pub fn diff(before: &Item, after: &Item) -> Vec<FieldChange> {
    let mut out = Vec::new();
    let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    change(&mut out, Field::Name, Some(before.name.to_string()), Some(after.name.to_string()));
    change(&mut out, Field::ItemType, Some(before.item_type.to_string()), Some(after.item_type.to_string()));
    change(&mut out, Field::Profile, text(&before.profile), text(&after.profile));
    change(&mut out, Field::Condition, Some(before.condition.to_string()), Some(after.condition.to_string()));
    change(&mut out, Field::Intent, Some(before.intent.to_string()), Some(after.intent.to_string()));
    change(&mut out, Field::Availability, Some(before.availability.to_string()), Some(after.availability.to_string()));
    change(&mut out, Field::ProjectId, before.project.map(|p| p.to_string()), after.project.map(|p| p.to_string()));
    if before.place_id != after.place_id {
        // The places' paths as the items showed them then ("Garage / Box 1"), beside their ids.
        out.push(
            FieldChange::new(
                Field::PlaceId,
                before.place_id.map(|p| p.to_string()),
                after.place_id.map(|p| p.to_string()),
            )
            .named(before.place_id.and(before.location()), after.place_id.and(after.location())),
        );
    }
    change(&mut out, Field::Accessories, joined(&before.accessories), joined(&after.accessories));
    change(&mut out, Field::Components, joined(&before.components), joined(&after.components));
    change(
        &mut out,
        Field::Gone,
        before.gone.as_ref().map(|g| g.reason.to_string()),
        after.gone.as_ref().map(|g| g.reason.to_string()),
    );
    change(&mut out, Field::Quantity, Some(before.quantity.to_string()), Some(after.quantity.to_string()));
    change(
        &mut out,
        Field::MinQuantity,
        before.min_quantity.map(|q| q.to_string()),
        after.min_quantity.map(|q| q.to_string()),
    );
    change(&mut out, Field::Tags, joined(before.tags.as_slice()), joined(after.tags.as_slice()));
    change(&mut out, Field::Codes, codes_text(&before.codes), codes_text(&after.codes));
    let (b, a) = (&before.details, &after.details);
    change(&mut out, Field::Notes, text(&b.notes), text(&a.notes));
    change(&mut out, Field::Serial, b.serial.clone(), a.serial.clone());
    change(&mut out, Field::Purchase, b.purchase.as_ref().map(purchase_text), a.purchase.as_ref().map(purchase_text));
    change(
        &mut out,
        Field::WarrantyUntil,
        b.warranty_until.map(|d| d.to_string()),
        a.warranty_until.map(|d| d.to_string()),
    );
    change(&mut out, Field::AskingPrice, b.asking_price.map(|m| m.to_string()), a.asking_price.map(|m| m.to_string()));
    for m in after.measurements.iter().skip(before.measurements.len()) {
        change(&mut out, Field::Measurement, None, Some(format!("{} {} {}", m.key, m.value, m.unit)));
    }
    for f in after.faults.iter().skip(before.faults.len()) {
        change(&mut out, Field::Fault, None, Some(f.text.clone()));
    }
    for t in after.tests_done.iter().skip(before.tests_done.len()) {
        change(&mut out, Field::Test, None, Some(format!("{}: {}", t.name, t.result)));
    }
    out
}

/// An item's codes as history shows them: `gtin:4006381333931;isbn:9780306406157` ([`Codes::joined`]); `None`
/// for none.
fn codes_text(codes: &Codes) -> Option<String> {
    (!codes.is_empty()).then(|| codes.joined())
}

/// A purchase as history shows it: "2024-05-17, EUR 129.99, Hornbach" (what is known of it).
fn purchase_text(p: &crate::item::Purchase) -> String {
    let parts: Vec<String> = [p.date.map(|d| d.to_string()), p.price.map(|m| m.to_string()), p.vendor.clone()]
        .into_iter()
        .flatten()
        .collect();
    parts.join(", ")
}

/// **The** undo rule, by the kind of change: a change of an item's fields by hand (`patch`), whose every field
/// [`reverse`] can put back. An import, a bulk change, a project's step (which moves items with the project), a
/// record added (a measurement, a fault, a test), gone, or an undo are not undone field by field. The API says it
/// of every event (`undoable`), so no client keeps its own list.
pub fn undoable(event: &Event) -> bool {
    event.kind == ObjectKind::Item
        && event.action == Action::Patch
        && !event.changes.is_empty()
        && event.version_after.is_some()
        && reverse(&event.changes).is_ok()
}

/// Whether the event `id` may be undone now: an [`undoable`] change, while the item is still at the version the
/// change left it at; `later` is the newest event of the object, named when it is not this one.
///
/// # Errors
/// [`UndoRefused`] when the event is not an undoable change, or the object changed since.
pub fn check_undo(id: EventId, event: &Event, current_version: i64, later: Option<EventId>) -> Result<(), UndoRefused> {
    if !undoable(event) {
        return Err(UndoRefused::NotUndoable);
    }
    match event.version_after {
        Some(v) if v == current_version => Ok(()),
        _ => Err(UndoRefused::ChangedSince {
            kind: event.kind.as_str(),
            object: event.object,
            later: later.filter(|l| *l != id).unwrap_or(id),
        }),
    }
}

/// The change that puts back the `before` values of `changes`: the item's own fields (name, type, profile,
/// condition, intent, availability, place) and what is recorded by hand (quantity, minimum, tags, codes, notes, serial,
/// warranty) can be put back; a purchase or an asking price (shown in words), a measurement, a fault or a test
/// cannot.
///
/// # Errors
/// [`UndoRefused::NotUndoable`] when a change is of another field, or a value does not read back.
pub fn reverse(changes: &[FieldChange]) -> Result<ItemChanges, UndoRefused> {
    let mut back = ItemChanges::default();
    for c in changes {
        let before = c.before.as_deref();
        let required = || before.ok_or(UndoRefused::NotUndoable);
        match c.field {
            Field::Name => back.name = Some(ItemName::new(required()?).map_err(|_| UndoRefused::NotUndoable)?),
            Field::ItemType => back.item_type = Some(ItemType::new(required()?).map_err(|_| UndoRefused::NotUndoable)?),
            Field::Profile => back.profile = Some(before.unwrap_or_default().to_owned()),
            Field::Condition => back.condition = Some(Condition::parse(required()?).ok_or(UndoRefused::NotUndoable)?),
            Field::Intent => back.intent = Some(Intent::parse(required()?).ok_or(UndoRefused::NotUndoable)?),
            Field::Availability => {
                back.availability = Some(Availability::parse(required()?).ok_or(UndoRefused::NotUndoable)?);
            }
            Field::PlaceId => {
                back.place_id =
                    Some(before.map(|p| p.parse().map(PlaceId).map_err(|_| UndoRefused::NotUndoable)).transpose()?);
            }
            Field::Quantity => back.quantity = Some(required()?.parse().map_err(|_| UndoRefused::NotUndoable)?),
            Field::MinQuantity => {
                back.min_quantity = Some(before.map(str::parse).transpose().map_err(|_| UndoRefused::NotUndoable)?);
            }
            Field::Tags => {
                let tags: Vec<String> = before.map(|t| t.split(", ").map(str::to_owned).collect()).unwrap_or_default();
                back.tags = Some(Tags::new(&tags).map_err(|_| UndoRefused::NotUndoable)?);
            }
            Field::Codes => {
                back.codes =
                    Some(Codes::read_joined(before.unwrap_or_default()).map_err(|_| UndoRefused::NotUndoable)?);
            }
            Field::Notes => back.notes = Some(before.unwrap_or_default().to_owned()),
            Field::Serial => back.serial = Some(before.map(str::to_owned)),
            Field::WarrantyUntil => {
                back.warranty_until = Some(before.map(str::parse).transpose().map_err(|_| UndoRefused::NotUndoable)?);
            }
            _ => return Err(UndoRefused::NotUndoable),
        }
    }
    Ok(back)
}

/// The kind of an object: what an event is about (an item, a place, a medium, a project, a member) and what a
/// request may find missing (those, and a template, an invitation, a token, an event, a passkey). One enum for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    Item,
    Place,
    Media,
    Project,
    Member,
    Template,
    Invitation,
    Token,
    Event,
    Passkey,
    Loan,
    Schedule,
}

impl ObjectKind {
    pub const ALL: [ObjectKind; 12] = [
        ObjectKind::Item,
        ObjectKind::Place,
        ObjectKind::Media,
        ObjectKind::Project,
        ObjectKind::Member,
        ObjectKind::Template,
        ObjectKind::Invitation,
        ObjectKind::Token,
        ObjectKind::Event,
        ObjectKind::Passkey,
        ObjectKind::Loan,
        ObjectKind::Schedule,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Item => "item",
            ObjectKind::Place => "place",
            ObjectKind::Media => "media",
            ObjectKind::Project => "project",
            ObjectKind::Member => "member",
            ObjectKind::Template => "template",
            ObjectKind::Invitation => "invitation",
            ObjectKind::Token => "token",
            ObjectKind::Event => "event",
            ObjectKind::Passkey => "passkey",
            ObjectKind::Loan => "loan",
            ObjectKind::Schedule => "schedule",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One field's change: its value before and after, as the API shows them (`None`: absent), and, for a value that
/// is an id (a place, a project), the names it had when the change was made: history reads as it was, whatever is
/// renamed later. Events written before names were kept have none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StoredChange")]
pub struct FieldChange {
    pub field: Field,
    pub before: Option<String>,
    pub after: Option<String>,
    /// The names, kept out of line: most changes name nothing, and an import holds one change per item.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub names: Option<Box<ChangeNames>>,
}

/// A [`FieldChange`] as written: the names beside the values, absent when there are none.
#[derive(Deserialize)]
struct StoredChange {
    field: Field,
    before: Option<String>,
    after: Option<String>,
    #[serde(default)]
    before_name: Option<String>,
    #[serde(default)]
    after_name: Option<String>,
}

impl From<StoredChange> for FieldChange {
    fn from(c: StoredChange) -> Self {
        FieldChange::new(c.field, c.before, c.after).named(c.before_name, c.after_name)
    }
}

/// What the values of a change that are ids were called when it was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeNames {
    #[serde(rename = "before_name", default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    #[serde(rename = "after_name", default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl FieldChange {
    /// A change of a value that names nothing else.
    pub fn new(field: Field, before: Option<String>, after: Option<String>) -> Self {
        Self { field, before, after, names: None }
    }

    /// The change with the names its values had (none when both are `None`).
    #[must_use]
    pub fn named(self, before: Option<String>, after: Option<String>) -> Self {
        let names = (before.is_some() || after.is_some()).then(|| Box::new(ChangeNames { before, after }));
        Self { names, ..self }
    }

    pub fn before_name(&self) -> Option<&str> {
        self.names.as_ref().and_then(|n| n.before.as_deref())
    }

    pub fn after_name(&self) -> Option<&str> {
        self.names.as_ref().and_then(|n| n.after.as_deref())
    }
}

/// What a change did: the verb of an event, as the API and the history name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// An object made (an item, a place, a medium on an item, a project).
    Create,
    /// A change of an object's fields by hand.
    Patch,
    /// An object deleted (a place, a medium).
    Delete,
    /// One change of many items at once.
    Bulk,
    /// A measurement, a fault or a test recorded on an item.
    Measurement,
    Fault,
    Test,
    /// An item marked gone.
    Gone,
    /// A change of an item's fields undone.
    Undo,
    /// An item written by a CSV import.
    Import,
    /// A project's steps, on the project and on the items it holds.
    Accept,
    Build,
    Drop,
    /// A proposal made again by a later run.
    Refresh,
    /// A member joined, got another role, was removed.
    Join,
    Role,
    Remove,
    /// An item lent, and given back.
    Lend,
    Return,
    /// A maintenance schedule set on an item, and maintenance done.
    Schedule,
    Maintain,
}

impl Action {
    pub const ALL: [Action; 21] = [
        Action::Create,
        Action::Patch,
        Action::Delete,
        Action::Bulk,
        Action::Measurement,
        Action::Fault,
        Action::Test,
        Action::Gone,
        Action::Undo,
        Action::Import,
        Action::Accept,
        Action::Build,
        Action::Drop,
        Action::Refresh,
        Action::Join,
        Action::Role,
        Action::Remove,
        Action::Lend,
        Action::Return,
        Action::Schedule,
        Action::Maintain,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Patch => "patch",
            Action::Delete => "delete",
            Action::Bulk => "bulk",
            Action::Measurement => "measurement",
            Action::Fault => "fault",
            Action::Test => "test",
            Action::Gone => "gone",
            Action::Undo => "undo",
            Action::Import => "import",
            Action::Accept => "accept",
            Action::Build => "build",
            Action::Drop => "drop",
            Action::Refresh => "refresh",
            Action::Join => "join",
            Action::Role => "role",
            Action::Remove => "remove",
            Action::Lend => "lend",
            Action::Return => "return",
            Action::Schedule => "schedule",
            Action::Maintain => "maintain",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An event of the history: who (`None`: the command line) did what to which object, and what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub at: Timestamp,
    pub member: Option<MemberId>,
    pub action: Action,
    pub kind: ObjectKind,
    pub object: i64,
    pub changes: Vec<FieldChange>,
    /// The object's version after the change, for the undo rule (`None`: the object has no version).
    pub version_after: Option<i64>,
}

/// Why an event cannot be undone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UndoRefused {
    #[error("only a change of an item's fields can be undone")]
    NotUndoable,
    #[error("{kind} {object} changed since (event {later}); undo that first")]
    ChangedSince { kind: &'static str, object: i64, later: EventId },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lending_returning_and_maintenance_read_in_the_history_as_what_they_did() {
        use crate::ids::{LoanId, ScheduleId};
        use crate::loan::{Borrower, Every};
        use chrono::{Months, NaiveDate};
        let day = |m, d| NaiveDate::from_ymd_opt(2026, m, d).unwrap();
        let loan = Loan {
            id: LoanId(3),
            item: ItemId(7),
            item_name: "Drill".into(),
            units: 1,
            to: Borrower::Named { name: "Sam".into(), contact: None },
            to_name: "Sam".into(),
            since: day(12, 4),
            due: Some(day(12, 11)),
            note: None,
            returned_at: None,
            created_by: None,
        };
        let shown = |c: &FieldChange| (c.field, c.before.clone(), c.after.clone());
        let sam = Some("Sam, due back 2026-12-11".to_owned());
        let lent: Vec<_> = loan_changes(&loan, true, true).iter().map(shown).collect();
        assert_eq!(
            lent,
            vec![
                (Field::Loan, None, sam.clone()),
                (Field::Availability, Some("available".into()), Some("lent".into()))
            ]
        );
        let back: Vec<_> = loan_changes(&loan, false, false).iter().map(shown).collect();
        assert_eq!(back, vec![(Field::Loan, sam, None)], "a stock's units: no availability change");

        let before = Schedule {
            id: ScheduleId(1),
            item: ItemId(7),
            item_name: "Kettle".into(),
            title: "Descale".into(),
            every: Every::Months(3),
            next: day(12, 1),
        };
        let after = Schedule { next: day(12, 4).checked_add_months(Months::new(3)).unwrap(), ..before.clone() };
        let done = Done {
            item: ItemId(7),
            schedule: Some(ScheduleId(1)),
            title: "Descale".into(),
            at: day(12, 4),
            note: Some("citric acid".into()),
            cost: None,
            member: None,
        };
        let logged: Vec<_> = maintenance_changes(&done, &before, &after).iter().map(shown).collect();
        assert_eq!(
            logged,
            vec![
                (Field::Maintenance, None, Some("Descale on 2026-12-04: citric acid".into())),
                (
                    Field::Schedule,
                    Some("Descale every 3 months, next 2026-12-01".into()),
                    Some("Descale every 3 months, next 2027-03-04".into())
                ),
            ]
        );
    }

    #[test]
    fn object_kinds_read_back() {
        for action in Action::ALL {
            assert_eq!(Action::parse(action.as_str()), Some(action));
        }
        assert_eq!(Action::parse("Patch"), None);
        for kind in ObjectKind::ALL {
            assert_eq!(ObjectKind::parse(kind.as_str()), Some(kind));
        }
    }

    fn patch_event(version_after: Option<i64>) -> Event {
        Event {
            at: DateTime::UNIX_EPOCH,
            member: Some(MemberId(1)),
            action: Action::Patch,
            kind: ObjectKind::Item,
            object: 7,
            changes: vec![FieldChange::new(Field::Name, Some("a".into()), Some("b".into()))],
            version_after,
        }
    }

    #[test]
    fn a_change_is_undone_only_while_the_item_is_unchanged_since() {
        let e = patch_event(Some(3));
        assert!(undoable(&e));
        assert_eq!(check_undo(EventId(1), &e, 3, Some(EventId(1))), Ok(()));
        assert_eq!(
            check_undo(EventId(1), &e, 4, Some(EventId(2))),
            Err(UndoRefused::ChangedSince { kind: "item", object: 7, later: EventId(2) })
        );
        assert_eq!(check_undo(EventId(1), &patch_event(None), 3, None), Err(UndoRefused::NotUndoable));
        assert_eq!(
            UndoRefused::ChangedSince { kind: "item", object: 7, later: EventId(2) }.to_string(),
            "item 7 changed since (event 2); undo that first"
        );
    }

    /// The rule by kind of change, as the API says it of each event: only a hand change of fields an undo can put
    /// back.
    #[test]
    fn which_changes_are_undoable() {
        let with = |action: &str, kind: ObjectKind, field: &str| Event {
            // Every field a test names is one.
            changes: vec![FieldChange::new(Field::parse(field).unwrap(), Some("1".into()), Some("2".into()))],
            action: Action::parse(action).unwrap(),
            kind,
            ..patch_event(Some(2))
        };
        let cases = [
            ("patch", ObjectKind::Item, "quantity", true),
            ("patch", ObjectKind::Item, "tags", true),
            ("patch", ObjectKind::Item, "codes", true),
            ("patch", ObjectKind::Item, "place_id", true),
            ("patch", ObjectKind::Item, "purchase", false),
            ("patch", ObjectKind::Item, "asking_price", false),
            ("patch", ObjectKind::Place, "name", false),
            ("create", ObjectKind::Item, "name", false),
            ("bulk", ObjectKind::Item, "intent", false),
            ("accept", ObjectKind::Item, "availability", false),
            ("import", ObjectKind::Item, "name", false),
            ("undo", ObjectKind::Item, "name", false),
        ];
        for (action, kind, field, expected) in cases {
            assert_eq!(undoable(&with(action, kind, field)), expected, "{action} {kind:?} {field}");
        }
        assert!(!undoable(&Event { changes: Vec::new(), ..patch_event(Some(2)) }));
        let created = Event { action: Action::Create, ..patch_event(Some(1)) };
        assert_eq!(check_undo(EventId(1), &created, 1, None), Err(UndoRefused::NotUndoable));
    }
    use crate::ItemId;
    use crate::item::{Fault, Severity};
    use chrono::DateTime;

    fn item() -> Item {
        crate::testing::named(1, "drill", "tool", Condition::Good)
    }

    fn fc(field: Field, before: Option<&str>, after: Option<&str>) -> FieldChange {
        FieldChange::new(field, before.map(Into::into), after.map(Into::into))
    }

    fn check(change: impl Fn(&mut Item), expected: &[FieldChange]) {
        let before = item();
        let mut after = before.clone();
        change(&mut after);
        assert_eq!(diff(&before, &after), expected);
    }

    #[test]
    fn diff_names_each_changed_field_with_the_api_values() {
        check(|_| {}, &[]);
        check(|i| i.version += 1, &[]);
        check(|i| i.condition = Condition::Poor, &[fc(Field::Condition, Some("good"), Some("poor"))]);
        check(|i| i.profile = "Bosch".into(), &[fc(Field::Profile, None, Some("Bosch"))]);
        // Named as the API names the field, not as the code does.
        check(
            |i| i.item_type = ItemType::new("power_tool").unwrap(),
            &[fc(Field::ItemType, Some("tool"), Some("power_tool"))],
        );
        check(|i| i.place_id = Some(PlaceId(4)), &[fc(Field::PlaceId, None, Some("4"))]);
        check(
            |i| {
                i.name = ItemName::new("saw").unwrap();
                i.intent = Intent::Sell;
            },
            &[fc(Field::Name, Some("drill"), Some("saw")), fc(Field::Intent, Some("keep"), Some("sell"))],
        );
        check(|i| i.components = vec![ItemId(2), ItemId(3)], &[fc(Field::Components, None, Some("2, 3"))]);
        check(
            |i| i.faults.push(Fault::new("chuck wobbles", Severity::Minor).unwrap()),
            &[fc(Field::Fault, None, Some("chuck wobbles"))],
        );
    }

    #[test]
    fn places_and_projects_are_compared_field_by_field() {
        use crate::place::PlaceName;
        use crate::project::{Allocation, ProjectStatus};
        use crate::{ProjectId, TemplateId};
        let shed = Place {
            id: PlaceId(3),
            name: PlaceName::new("Shed").unwrap(),
            parent_id: None,
            note: None,
            created_at: DateTime::UNIX_EPOCH,
        };
        let moved = Place { parent_id: Some(PlaceId(1)), note: Some("by the gate".into()), ..shed.clone() };
        assert_eq!(
            between(Some(place_fields(&shed)), Some(place_fields(&moved))),
            [fc(Field::ParentId, None, Some("1")), fc(Field::Note, None, Some("by the gate"))]
        );
        assert_eq!(between(None, Some(place_fields(&shed))), [fc(Field::Name, None, Some("Shed"))]);
        assert_eq!(between(Some(place_fields(&moved)), None).len(), 3);
        assert!(between(Some(place_fields(&shed)), Some(place_fields(&shed))).is_empty());
        let proposed = Project {
            id: ProjectId(5),
            template_id: TemplateId(2),
            title: "Weather station".into(),
            reason: String::new(),
            status: ProjectStatus::Proposed,
            allocations: vec![Allocation { requirement: "mcu".into(), item_id: ItemId(7), units: 1 }],
            missing: vec!["sensor".into()],
            created_at: DateTime::UNIX_EPOCH,
            updated_at: DateTime::UNIX_EPOCH,
        };
        assert_eq!(
            between(None, Some(project_fields(&proposed))),
            [
                fc(Field::Title, None, Some("Weather station")),
                fc(Field::TemplateId, None, Some("2")),
                fc(Field::Status, None, Some("proposed")),
                fc(Field::Allocations, None, Some("mcu: 7")),
                fc(Field::Missing, None, Some("sensor")),
            ]
        );
        let accepted = Project { status: ProjectStatus::Accepted, ..proposed.clone() };
        assert_eq!(
            between(Some(project_fields(&proposed)), Some(project_fields(&accepted))),
            [fc(Field::Status, Some("proposed"), Some("accepted"))]
        );
    }

    #[test]
    fn reverse_puts_back_the_before_values_of_own_fields_only() {
        let back =
            reverse(&[fc(Field::Name, Some("drill"), Some("saw")), fc(Field::PlaceId, None, Some("4"))]).unwrap();
        assert_eq!(back.name, Some(ItemName::new("drill").unwrap()));
        assert_eq!(back.place_id, Some(None));
        let back = reverse(&[fc(Field::Condition, Some("good"), Some("poor"))]).unwrap();
        assert_eq!(back.condition, Some(Condition::Good));
        assert_eq!(reverse(&[fc(Field::Fault, None, Some("x"))]), Err(UndoRefused::NotUndoable));
        assert_eq!(reverse(&[fc(Field::Components, None, Some("2"))]), Err(UndoRefused::NotUndoable));
        assert_eq!(reverse(&[fc(Field::Condition, Some("splendid"), Some("good"))]), Err(UndoRefused::NotUndoable));
    }

    #[test]
    fn reversing_a_diff_restores_the_item() {
        let before = item();
        let mut after = before.clone();
        after.name = ItemName::new("saw").unwrap();
        after.condition = Condition::Poor;
        after.place_id = Some(PlaceId(9));
        let mut restored = after.clone();
        restored.apply(&reverse(&diff(&before, &after)).unwrap()).unwrap();
        assert!(diff(&before, &restored).is_empty());
    }

    #[test]
    fn what_is_recorded_by_hand_is_put_back() {
        let before = item();
        let mut after = before.clone();
        after.quantity = 7;
        after.min_quantity = Some(2);
        after.tags = Tags::new(&["garage".to_owned(), "power".to_owned()]).unwrap();
        after.codes = Codes::read_joined("gtin:036000291452;isbn:0-306-40615-2;other:Shelf: 4").unwrap();
        after.details.notes = "Keep dry".into();
        after.details.serial = Some("SN-1".into());
        after.details.warranty_until = chrono::NaiveDate::from_ymd_opt(2027, 5, 1);
        let forth = diff(&before, &after);
        let codes = forth.iter().find(|c| c.field == Field::Codes).unwrap();
        assert_eq!(codes.after.as_deref(), Some("gtin:036000291452;isbn:9780306406157;other:Shelf: 4"));
        let mut undone = after.clone();
        undone.apply(&reverse(&forth).unwrap()).unwrap();
        assert_eq!(undone, before);
        // And back again: from nothing to something.
        let mut redone = before.clone();
        redone.apply(&reverse(&diff(&after, &before)).unwrap()).unwrap();
        assert_eq!(redone, after);
        // A purchase is shown in words: not put back.
        let mut bought = before.clone();
        bought.details.purchase = crate::item::Purchase::new(None, None, None, Some("Hornbach")).unwrap();
        assert_eq!(reverse(&diff(&before, &bought)), Err(UndoRefused::NotUndoable));
    }
}
