//! Rows to domain values and back. A stored row that no longer maps to the domain (an unknown word, JSON that
//! does not parse) is an unexpected error naming the row, never silently skipped.

use crate::entity::{items, places, projects, templates};
use anyhow::{Context as _, anyhow};
use sea_orm::FromQueryResult;
use serde::Serialize;
use serde::de::DeserializeOwned;
use trove_domain::code::Codes;
use trove_domain::item::{
    Availability, Condition, Details, Gone, GoneReason, Intent, Item, ItemLine, ItemName, ItemType, Tags,
};
use trove_domain::place::{Place, PlaceName};
use trove_domain::project::{Project, ProjectStatus};
use trove_domain::template::Template;
use trove_domain::{ItemId, MediaId, PlaceId, ProjectId, TemplateId, Timestamp};

/// A domain document as JSON text for a text column.
pub(crate) fn to_json<T: Serialize + ?Sized>(value: &T, what: &str) -> anyhow::Result<String> {
    serde_json::to_string(value).with_context(|| format!("encode {what} as json"))
}

fn from_json<T: DeserializeOwned>(text: &str, what: &str, row: i64) -> anyhow::Result<T> {
    serde_json::from_str(text).with_context(|| format!("decode {what} of row {row}"))
}

fn word<T>(parse: fn(&str) -> Option<T>, raw: &str, what: &str, row: i64) -> anyhow::Result<T> {
    parse(raw).ok_or_else(|| anyhow!("unknown {what} {raw:?} in row {row}"))
}

/// The columns of an item that the domain's item is read from: every column of `items` but the household, the
/// import reference and the search texts, with the item's first photo (`cover`) read in the same statement. A
/// listing reads these rather than whole rows: fewer values to copy out of the database and to drop.
macro_rules! item_row_columns {
    ($($field:ident: $owned:ty => $column:ident;)+) => {
        #[derive(Debug, FromQueryResult)]
        pub(crate) struct ItemRow {
            $(pub $field: $owned,)+
            /// The item's first photo (`MIN(media.id)` of its photos), or none.
            pub cover: Option<i64>,
        }

        /// The columns of `items` that [`ItemRow`] reads, in its order (`cover` is an expression the query adds).
        pub(crate) const ITEM_ROW_COLUMNS: &[items::Column] = &[$(items::Column::$column),+];

        impl From<items::Model> for ItemRow {
            fn from(m: items::Model) -> Self {
                Self { $($field: m.$field,)+ cover: None }
            }
        }

        /// The values of an [`ItemRow`], its texts borrowed from wherever they were read.
        struct ItemCols<'a> {
            $($field: <$owned as Lend<'a>>::Out,)+
            cover: Option<i64>,
        }

        impl ItemRow {
            fn lent(&self) -> ItemCols<'_> {
                ItemCols { $($field: self.$field.lend(),)+ cover: self.cover }
            }
        }

        /// The values of a SQLite row holding the columns of [`ItemRow`] in its order from `first` on, read by
        /// position.
        fn read_by_position(
            row: &sea_orm::sqlx::sqlite::SqliteRow,
            first: usize,
        ) -> Result<ItemCols<'_>, sea_orm::sqlx::Error> {
            use sea_orm::sqlx::Row as _;
            let mut at = first;
            $(
                let $field = row.try_get_unchecked(at)?;
                at += 1;
            )+
            Ok(ItemCols { $($field,)+ cover: row.try_get_unchecked(at)? })
        }
    };
}

/// A column's value as an [`ItemCols`] holds it: a text borrowed, anything else copied.
trait Lend<'a> {
    type Out;
    fn lend(&'a self) -> Self::Out;
}

impl<'a> Lend<'a> for String {
    type Out = &'a str;
    fn lend(&'a self) -> &'a str {
        self
    }
}

impl<'a> Lend<'a> for Option<String> {
    type Out = Option<&'a str>;
    fn lend(&'a self) -> Option<&'a str> {
        self.as_deref()
    }
}

macro_rules! lend_copy {
    ($($t:ty),+) => {
        $(impl Lend<'_> for $t {
            type Out = $t;
            fn lend(&self) -> $t {
                *self
            }
        })+
    };
}
lend_copy!(i64, Option<i64>, Timestamp, Option<Timestamp>);

// Every column of an item row, written once: its field, its type and its column, in the order read.
item_row_columns! {
    id: i64 => Id;
    name: String => Name;
    item_type: String => ItemType;
    profile: String => Profile;
    condition: String => Condition;
    intent: String => Intent;
    availability: String => Availability;
    project_id: Option<i64> => ProjectId;
    gone_reason: Option<String> => GoneReason;
    gone_at: Option<Timestamp> => GoneAt;
    gone_note: Option<String> => GoneNote;
    measurements: String => Measurements;
    faults: String => Faults;
    tests_done: String => TestsDone;
    accessories: String => Accessories;
    components: String => Components;
    place_id: Option<i64> => PlaceId;
    created_at: Timestamp => CreatedAt;
    updated_at: Timestamp => UpdatedAt;
    version: i64 => Version;
    quantity: i64 => Quantity;
    min_quantity: Option<i64> => MinQuantity;
    tags: String => Tags;
    details: String => Details;
    units_held: i64 => UnitsHeld;
    units_lent: i64 => UnitsLent;
    loan: Option<String> => Loan;
    codes: String => Codes;
}

/// An item row as the domain's item (its cover unknown: none).
pub(crate) fn item(m: items::Model) -> anyhow::Result<Item> {
    item_row(m.into())
}

/// An item's columns as the domain's item; its `place_path` is left for the repository to fill from the paths of
/// places, which it reads for many items at once.
pub(crate) fn item_row(m: ItemRow) -> anyhow::Result<Item> {
    item_cols(m.lent())
}

/// A stored count of units (checked when written) as the domain's.
fn units(raw: i64, what: &str, row: i64) -> anyhow::Result<u32> {
    u32::try_from(raw).map_err(|_| anyhow!("{what} of item {row} is {raw}"))
}

fn item_cols(m: ItemCols<'_>) -> anyhow::Result<Item> {
    let id = m.id;
    let gone = match (m.gone_reason, m.gone_at) {
        (Some(reason), Some(at)) => Some(Gone {
            reason: word(GoneReason::parse, reason, "gone reason", id)?,
            at,
            note: m.gone_note.map(str::to_owned),
        }),
        (None, None) => None,
        _ => return Err(anyhow!("item {id} has half of a gone record")),
    };
    Ok(Item {
        id: ItemId(id),
        name: ItemName::stored(m.name).with_context(|| format!("name of item {id}"))?,
        item_type: ItemType::new(m.item_type).with_context(|| format!("item_type of item {id}"))?,
        profile: m.profile.to_owned(),
        condition: word(Condition::parse, m.condition, "condition", id)?,
        intent: word(Intent::parse, m.intent, "intent", id)?,
        availability: word(Availability::parse, m.availability, "availability", id)?,
        project: m.project_id.map(ProjectId),
        gone,
        measurements: from_json_list(m.measurements, "measurements", id)?,
        faults: from_json_list(m.faults, "faults", id)?,
        tests_done: from_json_list(m.tests_done, "tests_done", id)?,
        accessories: from_json_list(m.accessories, "accessories", id)?,
        components: from_json_list(m.components, "components", id)?,
        quantity: units(m.quantity, "quantity", id)?,
        min_quantity: m.min_quantity.map(|q| units(q, "min_quantity", id)).transpose()?,
        units_held: units(m.units_held, "units_held", id)?,
        units_lent: units(m.units_lent, "units_lent", id)?,
        loan: m.loan.map(|l| from_json(l, "loan", id)).transpose()?,
        tags: if m.tags == "[]" { Tags::default() } else { from_json(m.tags, "tags", id)? },
        codes: if m.codes == "[]" { Codes::default() } else { from_json(m.codes, "codes", id)? },
        details: if m.details == "{}" { Details::default() } else { from_json(m.details, "details", id)? },
        place_id: m.place_id.map(PlaceId),
        // Filled from the place's path by the repository, which reads the paths of many items at once.
        place_path: None,
        cover: m.cover.map(MediaId),
        created_at: m.created_at,
        updated_at: m.updated_at,
        version: m.version,
    })
}

/// An item read from a result row holding the columns of [`ItemRow`] in its order, from the one named `id` on.
/// On SQLite the values are read by position and the texts borrowed, without the look-up of each column by its
/// name, the check of each value's type against the field's and a copy of every text that sea-orm's
/// `FromQueryResult` makes: those were most of the time a listing spent outside SQLite (docs/perf/places-and-labels.md). A value of another type than the column's still fails to decode, naming the item.
pub(crate) fn item_result(row: &sea_orm::QueryResult) -> anyhow::Result<Item> {
    let Some(row) = row.try_as_sqlite_row() else {
        return item_row(ItemRow::from_query_result(row, "").context("read an item row")?);
    };
    use sea_orm::sqlx::{Column as _, Row as _};
    let first = row.try_column("id").context("read an item row")?.ordinal();
    let id: i64 = row.try_get_unchecked(first).context("read an item's id")?;
    item_cols(read_by_position(row, first).with_context(|| format!("read item {id}"))?)
}

/// A JSON list column; the empty list (most items' faults, tests, accessories and components) without the
/// parser.
fn from_json_list<T: DeserializeOwned>(text: &str, what: &str, row: i64) -> anyhow::Result<Vec<T>> {
    if text == "[]" {
        return Ok(Vec::new());
    }
    from_json(text, what, row)
}

/// The columns of an item's line, in the order [`item_line`] reads them: id, name, item_type, profile,
/// condition, intent, availability, measurements, quantity, units_held, units_lent.
pub(crate) type LineRow = (i64, String, String, String, String, String, String, String, i64, i64, i64);

/// The line of a present item (the query reads only present ones).
pub(crate) fn item_line(row: LineRow) -> anyhow::Result<ItemLine> {
    let (id, name, item_type, profile, condition, intent, availability, measurements, quantity, units_held, units_lent) =
        row;
    Ok(ItemLine {
        id: ItemId(id),
        name: ItemName::stored(&name).with_context(|| format!("name of item {id}"))?,
        item_type: ItemType::new(&item_type).with_context(|| format!("item_type of item {id}"))?,
        profile,
        condition: word(Condition::parse, &condition, "condition", id)?,
        intent: word(Intent::parse, &intent, "intent", id)?,
        availability: word(Availability::parse, &availability, "availability", id)?,
        gone: false,
        measurements: from_json(&measurements, "measurements", id)?,
        quantity: units(quantity, "quantity", id)?,
        units_held: units(units_held, "units_held", id)?,
        units_lent: units(units_lent, "units_lent", id)?,
    })
}

/// Many item rows, failing on the first that does not map.
pub(crate) fn item_list(rows: Vec<items::Model>) -> anyhow::Result<Vec<Item>> {
    rows.into_iter().map(item).collect()
}

/// Many items' columns, failing on the first that does not map.
pub(crate) fn item_results(rows: &[sea_orm::QueryResult]) -> anyhow::Result<Vec<Item>> {
    rows.iter().map(item_result).collect()
}

/// A template row as the domain's template.
pub(crate) fn template(m: templates::Model) -> anyhow::Result<Template> {
    let id = m.id;
    Ok(Template {
        id: TemplateId(id),
        label: m.label,
        goal: m.goal,
        effort: m.effort,
        steps: from_json(&m.steps, "steps", id)?,
        requirements: from_json(&m.requirements, "requirements", id)?,
    })
}

/// A project row as the domain's project.
pub(crate) fn project(m: projects::Model) -> anyhow::Result<Project> {
    let id = m.id;
    Ok(Project {
        id: ProjectId(id),
        template_id: TemplateId(m.template_id),
        title: m.title,
        reason: m.reason,
        status: word(ProjectStatus::parse, &m.status, "project status", id)?,
        allocations: from_json(&m.allocations, "allocations", id)?,
        missing: from_json(&m.missing, "missing", id)?,
        created_at: m.created_at,
        updated_at: m.updated_at,
    })
}

/// A place row as the domain's place.
pub(crate) fn place(m: places::Model) -> anyhow::Result<Place> {
    let id = m.id;
    Ok(Place {
        id: PlaceId(id),
        name: PlaceName::new(&m.name).with_context(|| format!("name of place {id}"))?,
        parent_id: m.parent_id.map(PlaceId),
        note: m.note,
        created_at: m.created_at,
    })
}
