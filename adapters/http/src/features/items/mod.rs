//! What the household owns: list, add, read and change items; record measurements, faults and tests; mark an
//! item gone.

mod json;

use crate::answers::Answers;
use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::json_bytes::JsonBytes;
use crate::services::Services;
use crate::shared::{
    CodeKind, Condition, CreateItem, Created, FieldValue, Intent, NewCode, NewFault, PlaceStepDto, PriceDto,
    PurchaseDto, Severity, Source, mirror_enum, steps,
};
use chrono::{DateTime, Utc};
use json::{ItemJson, ItemListJson};
use poem_openapi::param::{Header, Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::{MaybeUndefined, Type};
use poem_openapi::{ApiResponse, Object, OpenApi, Tags};
use std::collections::BTreeMap;
use std::sync::Arc;
use trove_application::items::Cursor;
use trove_application::ports::{ItemQuery, ItemSort, PlaceFilter};
use trove_domain::bulk::BulkSet;
use trove_domain::item::{self as di, Item, ItemName, ItemType, Measurement, MeasurementSource};
use trove_domain::{ItemId, PlaceId, units};

#[derive(Tags)]
enum Tag {
    /// What the household owns.
    Items,
}

mirror_enum!(
    /// Whether the item is free to use.
    Availability <=> di::Availability { Available, Reserved, InUse, Lent }
);
mirror_enum!(
    /// Why an item left.
    GoneReason <=> di::GoneReason { Sold, Given, Recycled, Lost, Other }
);
mirror_enum!(
    /// A test's outcome.
    TestResult <=> di::TestResult { Pass, Fail }
);

/// An item gone from the inventory.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct GoneDto {
    pub reason: GoneReason,
    pub at: DateTime<Utc>,
    pub note: Option<String>,
}

/// A fault.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Fault")]
pub struct FaultDto {
    pub text: String,
    pub severity: Severity,
}

/// A test that was run.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Test")]
pub struct TestDto {
    pub name: String,
    pub result: TestResult,
    pub value: Option<FieldValue>,
    pub at: DateTime<Utc>,
    pub note: Option<String>,
}

/// One reading of a field.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Measurement")]
pub struct MeasurementDto {
    pub key: String,
    pub value: f64,
    pub unit: String,
    pub at: DateTime<Utc>,
    pub source: Source,
}

/// A code an item carries.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "ItemCode")]
pub struct ItemCodeDto {
    pub kind: CodeKind,
    /// As a person reads it: a GTIN as scanned (8, 12, 13 or 14 digits), an ISBN as its ISBN-13, another code as
    /// typed.
    pub value: String,
    /// What codes are unique by in the household and found by: a GTIN's or ISBN's GTIN-14 (a UPC-A and its EAN-13
    /// are one code), `other:` and the text in lower case for another code.
    pub key: String,
}

/// The place an item is in.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ItemPlace {
    pub id: i64,
    pub name: String,
    /// The way to it: root first, the place itself last.
    pub path: Vec<PlaceStepDto>,
}

/// An item.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Item")]
pub struct ItemDto {
    pub id: i64,
    pub name: String,
    pub item_type: String,
    pub profile: String,
    pub condition: Condition,
    pub intent: Intent,
    pub availability: Availability,
    /// The project holding the item while reserved or in use.
    pub project_id: Option<i64>,
    /// The place it is in; `null`: nowhere in particular.
    pub place_id: Option<i64>,
    /// The place it is in, with the way to it; `null` when it is in none.
    pub place: Option<ItemPlace>,
    /// Read-only: the path of its place as text, joined with " / " ("Garage / Shelf B2"). Giving a `location`
    /// on create or change finds or creates that path.
    pub location: Option<String>,
    pub gone: Option<GoneDto>,
    /// The current fields: the latest measurement per key.
    pub fields: BTreeMap<String, FieldValue>,
    /// Every measurement, oldest first.
    pub measurements: Vec<MeasurementDto>,
    pub faults: Vec<FaultDto>,
    pub tests_done: Vec<TestDto>,
    pub accessories: Vec<String>,
    pub components: Vec<i64>,
    /// The id of the item's first photo (`GET /api/media/{id}/thumb` shows it small), or null.
    pub cover: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// How many like units it is (1 for a single thing).
    pub quantity: u32,
    /// Low on stock at or under this many units; null: no minimum.
    pub min_quantity: Option<u32>,
    /// Units held by projects: the whole item while a project holds a single thing (`reserved`, `in_use`), else
    /// the units of a stock that accepted projects hold.
    pub units_held: u32,
    /// Units a new project (or loan) may take: 0 unless buildable (intent `keep`, `available`, not gone), else
    /// the quantity less the units held and lent.
    pub units_available: u32,
    /// Units out on loan: the whole item while it is lent whole, else the units of a stock lent.
    pub units_lent: u32,
    /// Its open loan (of a stock lent several times, the one due back first); `null` when nothing is out.
    pub loan: Option<ItemLoanDto>,
    /// Whether a minimum is set and the quantity is at or under it.
    pub low_stock: bool,
    pub tags: Vec<String>,
    /// Its product codes, in the order given.
    pub codes: Vec<ItemCodeDto>,
    pub notes: String,
    pub serial: Option<String>,
    pub purchase: Option<PurchaseDto>,
    /// The last day the warranty covers.
    pub warranty_until: Option<chrono::NaiveDate>,
    /// The asking price set by hand (listing drafts use it before any estimate).
    pub asking_price: Option<PriceDto>,
}

/// An item's open loan.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "ItemLoan")]
pub struct ItemLoanDto {
    /// The loan (`POST /api/loans/{id}/return` ends it).
    pub id: i64,
    /// Who has it.
    pub to: String,
    pub since: chrono::NaiveDate,
    /// The day it is due back; `null`: no date.
    pub due: Option<chrono::NaiveDate>,
}

impl ItemDto {
    /// The item as answered, with the path of its place read with it.
    pub fn new(i: &Item) -> Self {
        let path = i.place_path.as_ref();
        Self {
            id: i.id.0,
            name: i.name.to_string(),
            item_type: i.item_type.to_string(),
            profile: i.profile.clone(),
            condition: i.condition.into(),
            intent: i.intent.into(),
            availability: i.availability.into(),
            project_id: i.project.map(|p| p.0),
            place_id: i.place_id.map(|p| p.0),
            place: path.map(|p| ItemPlace { id: p.id().0, name: p.place().name.to_string(), path: steps(p) }),
            location: i.location(),
            gone: i.gone.as_ref().map(|g| GoneDto { reason: g.reason.into(), at: g.at, note: g.note.clone() }),
            fields: i
                .current_fields()
                .into_iter()
                .map(|(k, m)| (k.to_string(), FieldValue { value: m.value, unit: m.unit.symbol().into() }))
                .collect(),
            measurements: i
                .measurements
                .iter()
                .map(|m| MeasurementDto {
                    key: m.key.to_string(),
                    value: m.value,
                    unit: m.unit.symbol().into(),
                    at: m.at,
                    source: m.source.into(),
                })
                .collect(),
            faults: i.faults.iter().map(|f| FaultDto { text: f.text.clone(), severity: f.severity.into() }).collect(),
            tests_done: i
                .tests_done
                .iter()
                .map(|t| TestDto {
                    name: t.name.clone(),
                    result: t.result.into(),
                    value: t.value.map(|q| FieldValue { value: q.value, unit: q.unit.symbol().into() }),
                    at: t.at,
                    note: t.note.clone(),
                })
                .collect(),
            accessories: i.accessories.clone(),
            components: i.components.iter().map(|c| c.0).collect(),
            cover: i.cover.map(|c| c.0),
            created_at: i.created_at,
            updated_at: i.updated_at,
            quantity: i.quantity,
            min_quantity: i.min_quantity,
            units_held: i.units().held,
            units_available: i.units().available,
            units_lent: i.units().lent,
            loan: i.loan.as_ref().map(|l| ItemLoanDto { id: l.id.0, to: l.to.clone(), since: l.since, due: l.due }),
            low_stock: di::low_stock(i.quantity, i.min_quantity),
            tags: i.tags.as_slice().to_vec(),
            codes: i
                .codes
                .as_slice()
                .iter()
                .map(|c| ItemCodeDto { kind: c.kind().into(), value: c.shown().to_owned(), key: c.key().to_owned() })
                .collect(),
            notes: i.details.notes.clone(),
            serial: i.details.serial.clone(),
            purchase: i.details.purchase.as_ref().map(PurchaseDto::new),
            warranty_until: i.details.warranty_until,
            asking_price: i.details.asking_price.as_ref().map(PriceDto::new),
        }
    }
}

/// The fields of an item to change; those left out stay as they are.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct PatchItem {
    pub name: Option<String>,
    pub item_type: Option<String>,
    pub profile: Option<String>,
    pub condition: Option<Condition>,
    pub intent: Option<Intent>,
    /// Only `available` or `lent`: reserving and building go through projects.
    pub availability: Option<Availability>,
    /// Moves it to this place; `null` takes it out of any place. Instead of `location`.
    pub place_id: MaybeUndefined<i64>,
    /// A path of places as text ("Garage / Shelf B2"), found or created; `null` takes it out of any place.
    /// Instead of `place_id`.
    pub location: MaybeUndefined<String>,
    pub accessories: Option<Vec<String>>,
    pub components: Option<Vec<i64>>,
    /// 0 to 1,000,000 like units.
    pub quantity: Option<i64>,
    /// Low on stock at or under this many units; `null` removes the minimum.
    pub min_quantity: MaybeUndefined<i64>,
    /// The whole list of tags (up to 20); `[]` removes them all.
    pub tags: Option<Vec<String>>,
    /// The whole list of codes (up to 20); `[]` removes them all. A code another item carries is 409 naming it.
    pub codes: Option<Vec<NewCode>>,
    pub notes: Option<String>,
    /// `null` or `""` removes it.
    pub serial: MaybeUndefined<String>,
    /// `null` removes it.
    pub purchase: MaybeUndefined<PurchaseDto>,
    /// `null` removes it.
    pub warranty_until: MaybeUndefined<chrono::NaiveDate>,
    /// An asking price set by hand; `null` removes it (listing drafts use the latest estimate again).
    pub asking_price: MaybeUndefined<PriceDto>,
}

/// A `MaybeUndefined` member as a change: left out is no change, `null` clears, a value is read by `read`.
fn change<T, U, E>(
    member: MaybeUndefined<T>,
    read: impl FnOnce(T) -> Result<Option<U>, E>,
) -> Result<Option<Option<U>>, E> {
    match member {
        MaybeUndefined::Undefined => Ok(None),
        MaybeUndefined::Null => Ok(Some(None)),
        MaybeUndefined::Value(v) => read(v).map(Some),
    }
}

impl PatchItem {
    pub fn try_into_domain(self) -> Result<trove_application::items::ItemPatch, ApiError> {
        Ok(trove_application::items::ItemPatch {
            name: self.name.as_deref().map(ItemName::new).transpose()?,
            item_type: self.item_type.as_deref().map(ItemType::new).transpose()?,
            profile: self.profile.as_deref().map(di::profile).transpose()?,
            condition: self.condition.map(Into::into),
            intent: self.intent.map(Into::into),
            availability: self.availability.map(Into::into),
            place_id: match self.place_id {
                MaybeUndefined::Undefined => None,
                MaybeUndefined::Null => Some(None),
                MaybeUndefined::Value(p) => Some(Some(PlaceId(p))),
            },
            location: match self.location {
                MaybeUndefined::Undefined => None,
                MaybeUndefined::Null => Some(None),
                MaybeUndefined::Value(v) => Some(di::location(Some(&v))?),
            },
            accessories: self.accessories.as_deref().map(di::accessories).transpose()?,
            components: self.components.map(|c| c.into_iter().map(ItemId).collect()),
            quantity: self.quantity.map(|q| di::check_quantity("quantity", q)).transpose()?,
            min_quantity: change(self.min_quantity, |q| di::check_quantity("min_quantity", q).map(Some))?,
            tags: self.tags.as_deref().map(di::Tags::new).transpose()?,
            codes: self.codes.as_deref().map(crate::shared::codes).transpose()?,
            notes: self.notes.as_deref().map(di::notes).transpose()?,
            serial: change(self.serial, |v| di::serial(&v))?,
            purchase: change(self.purchase, PurchaseDto::try_into_domain)?,
            warranty_until: change(self.warranty_until, |d| di::check_day("warranty_until", d).map(Some))?,
            asking_price: change(self.asking_price, |p| p.try_into_domain("asking_price").map(Some))?,
        })
    }
}

/// A measurement to record.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewMeasurement {
    pub key: String,
    pub value: f64,
    /// Any unit spelling ("3.4 Ah" is `value: 3.4, unit: "Ah"`); stored normalised.
    pub unit: String,
    /// Default `manual`.
    pub source: Option<Source>,
    /// Default now.
    pub at: Option<DateTime<Utc>>,
}

/// A test to record.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewTest {
    pub name: String,
    pub result: TestResult,
    /// The reading the test gave, with `unit`.
    pub value: Option<f64>,
    pub unit: Option<String>,
    pub note: Option<String>,
    pub at: Option<DateTime<Utc>>,
}

impl NewTest {
    pub fn try_into_domain(self, now: DateTime<Utc>) -> Result<di::TestDone, ApiError> {
        let value = match (self.value, self.unit.as_deref()) {
            (Some(v), Some(u)) => Some(units::normalise(v, u).map_err(|e| ApiError::bad_request(e.to_string()))?),
            (Some(v), None) => Some(units::normalise(v, "").map_err(|e| ApiError::bad_request(e.to_string()))?),
            (None, Some(_)) => return Err(ApiError::bad_request("unit given without a value")),
            (None, None) => None,
        };
        Ok(di::TestDone::new(&self.name, self.result.into(), value, self.at.unwrap_or(now), self.note.as_deref())?)
    }
}

/// Marking an item gone.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct MarkGone {
    pub reason: GoneReason,
    pub note: Option<String>,
}

/// What a bulk change sets on every item; members left out stay as they are.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct BulkSetDto {
    /// Moves the items to this place; `null` takes them out of any place.
    pub place_id: MaybeUndefined<i64>,
    pub intent: Option<Intent>,
    pub condition: Option<Condition>,
}

/// One change applied to many items: all or nothing.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct BulkChange {
    /// 1 to 1,000 item ids.
    pub ids: Vec<i64>,
    pub set: BulkSetDto,
}

/// What a bulk change did.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct BulkDone {
    /// Items changed: every item named.
    pub updated: u64,
}

/// A page of items.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ItemList {
    pub items: Vec<ItemDto>,
    pub total: u64,
    pub limit: u32,
    pub offset: u64,
    /// Pass as `after` for the next page; `null` on the last one.
    pub next: Option<String>,
}

/// An item's version as its entity tag: `"3"` (a strong tag; an item's answer changes only with its version).
fn etag(item: &Item) -> String {
    format!("\"{}\"", item.version)
}

/// The versions an `If-Match` header (RFC 9110, 13.1.1) asks a change to be made at: `None` without the header
/// or for `*` (any version of the item, which exists or the change is 404); else the versions its strong tags
/// name. A weak tag (`W/"3"`) never matches (the strong comparison), nor does a tag this API never gave
/// (`"abc"`): a list with only such tags is a precondition that fails (412), not a malformed one.
///
/// # Errors
/// 400 for a header that is not `*` or a comma-separated list of entity tags.
fn if_match(header: Option<&str>) -> Result<Option<Vec<i64>>, ApiError> {
    let Some(text) = header.map(str::trim) else { return Ok(None) };
    if text == "*" {
        return Ok(None);
    }
    let malformed = || {
        ApiError::bad_request(
            "If-Match must be * or a list of entity tags, such as the ETag an item answer gave (\"3\")",
        )
    };
    let mut versions = Vec::new();
    let mut tags = 0;
    // Empty list elements are allowed and ignored (RFC 9110, 5.6.1).
    for tag in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (weak, quoted) = match tag.strip_prefix("W/") {
            Some(rest) => (true, rest),
            None => (false, tag),
        };
        let opaque = quoted.strip_prefix('"').and_then(|t| t.strip_suffix('"')).ok_or_else(malformed)?;
        // etagc: %x21 / %x23-7E / obs-text.
        if !opaque.bytes().all(|b| b == 0x21 || (0x23..=0x7e).contains(&b) || b >= 0x80) {
            return Err(malformed());
        }
        tags += 1;
        let version = (!weak && !opaque.is_empty() && opaque.bytes().all(|b| b.is_ascii_digit()))
            .then(|| opaque.parse::<i64>().ok())
            .flatten();
        versions.extend(version);
    }
    if tags == 0 {
        return Err(malformed());
    }
    Ok(Some(versions))
}

/// One item, with its version as the `ETag`.
#[derive(ApiResponse)]
pub enum OneItem {
    /// The item. `ETag` is its version (`"3"`): send it back as `If-Match` on a change to make the change only
    /// while the item is still at that version.
    #[oai(status = 200)]
    Item(JsonBytes<ItemDto>, #[oai(header = "ETag")] String),
}

/// An item as a change left it, with its version as the `ETag`.
#[derive(ApiResponse)]
pub enum ChangedItem {
    /// The item as changed (or as it was, for a change that changed nothing). `ETag` is its version.
    #[oai(status = 200)]
    Item(Json<ItemDto>, #[oai(header = "ETag")] String),
}

/// The item routes.
/// The routes, and the listing answers kept while the household's item revision is unchanged.
pub struct ItemsApi(pub Services, pub Arc<Answers>);

impl ItemsApi {}

#[OpenApi(tag = "Tag::Items")]
impl ItemsApi {
    /// List items, with filters and paging. `place=ID`: the items in that place and every place below it
    /// (`within=false`: directly in it); 404 when it is not a place of the household.
    #[oai(path = "/items", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn list(
        &self,
        request: &poem::Request,
        Member(h): Member,
        intent: Query<Option<Intent>>,
        availability: Query<Option<Availability>>,
        item_type: Query<Option<String>>,
        /// Words that must all match the start of a word of the name, type, profile, place or notes (one typo
        /// forgiven when nothing matches); results best first. At most 32 words, 500 characters. A `q` that is a
        /// code (a GTIN, an ISBN, a shop's own) lists the items carrying it first, in whatever form it was typed
        /// (a UPC-A for its EAN-13, an ISBN-10 for its ISBN-13).
        q: Query<Option<String>>,
        /// Only the items in this place and, unless `within=false`, in the places below it.
        place: Query<Option<i64>>,
        /// With `place`: `true` (default) counts the places below it too, `false` only the place itself.
        within: Query<Option<bool>>,
        #[oai(default)] include_gone: Query<bool>,
        /// Only the items with this tag (ignoring case).
        tag: Query<Option<String>>,
        /// Only the items low on stock: a `min_quantity` set and the `quantity` at or under it.
        #[oai(default)]
        low_stock: Query<bool>,
        /// The order: `name`, `updated`, `place` (the place's path; items in no place last) or `value` (the asking
        /// price set by hand, else the purchase price; items with neither last), `-` before it for descending;
        /// ties by id. Default: by id, or best first with `q`. Sorted pages continue with `next` as any other.
        sort: Query<Option<String>>,
        /// 1 to 500, default 50.
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
        /// The `next` of the previous page; instead of `offset`.
        after: Query<Option<String>>,
    ) -> ApiResult<JsonBytes<ItemList>> {
        let limit = limit.0.unwrap_or(50);
        if !(1..=i64::from(trove_application::items::LIMIT_MAX)).contains(&limit) {
            let max = trove_application::items::LIMIT_MAX;
            return Err(ApiError::bad_request(format!("limit must be between 1 and {max}")).into());
        }
        let offset = offset.0.unwrap_or(0);
        if offset < 0 {
            return Err(ApiError::bad_request("offset must not be negative").into());
        }
        if place.0.is_none() && within.0.is_some() {
            return Err(ApiError::bad_request("within needs place").into());
        }
        let mut query = ItemQuery {
            intent: intent.0.map(Into::into),
            availability: availability.0.map(Into::into),
            item_type: item_type
                .0
                .as_deref()
                .filter(|t| !t.is_empty())
                .map(ItemType::new)
                .transpose()
                .map_err(ApiError::from)?,
            q: q.0.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()),
            // The use case reads the code `q` may be.
            code: None,
            place: place.0.map(|p| PlaceFilter { place: PlaceId(p), within: within.0.unwrap_or(true) }),
            include_gone: include_gone.0,
            tag: tag.0.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()),
            low_stock: low_stock.0,
            sort: match sort.0.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
                None => None,
                Some(text) => Some(ItemSort::parse(text).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "sort must be name, updated, place or value, with - before it for descending; not {text:?}"
                    ))
                })?),
            },
            limit: limit as u32,
            offset: offset as u64,
            after: None,
        };
        if let Some(after) = after.0.as_deref() {
            if offset != 0 {
                return Err(ApiError::bad_request("give either after or offset, not both").into());
            }
            Cursor::decode(after).map_err(ApiError::from)?.apply(&mut query);
        }
        // The answer is a function of the household, the query's text and the household's revision: one kept at
        // the revision read now is current (`answers`); otherwise the page read after it is kept under it.
        let text = request.uri().query().unwrap_or_default();
        let revision = self.0.inventory.revision(h).await.map_err(ApiError::from)?;
        if let Some(kept) = self.1.get(h, text, revision) {
            return Ok(JsonBytes::kept(kept));
        }
        let page = self.0.inventory.list(h, &query).await.map_err(ApiError::from)?;
        let next = Cursor::next(&query, &page).map(Cursor::encode);
        let answer = JsonBytes::new(&ItemListJson { page: &page, limit: query.limit, offset: query.offset, next })?;
        self.1.put(h, text, revision, answer.shared());
        Ok(answer)
    }

    /// Add an item, in a place given by `place_id` or by a `location` text ("Garage / Shelf B2", found or
    /// created).
    #[oai(path = "/items", method = "post")]
    async fn create(&self, Person(c): Person, body: Json<CreateItem>) -> ApiResult<Created<ItemDto>> {
        let new = body.0.try_into_domain(self.0.clock.now()).map_err(ApiError::from)?;
        let item = self.0.inventory.create((&c).into(), new).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json(ItemDto::new(&item))))
    }

    /// Change many items at once: move them to a place (`place_id`, `null` for none), set their intent or
    /// condition. All or nothing: each item is checked by the rules of a single change, and one refused (gone,
    /// held by a project) refuses the whole change with its id and the reason (422, or 404 for an item not in
    /// the household); nothing is changed then. At most 1,000 ids.
    #[oai(path = "/items/bulk", method = "post")]
    async fn bulk(&self, Person(c): Person, body: Json<BulkChange>) -> ApiResult<Json<BulkDone>> {
        let BulkChange { ids, set } = body.0;
        let ids: Vec<ItemId> = ids.into_iter().map(ItemId).collect();
        let set = BulkSet {
            place_id: match set.place_id {
                MaybeUndefined::Undefined => None,
                MaybeUndefined::Null => Some(None),
                MaybeUndefined::Value(p) => Some(Some(PlaceId(p))),
            },
            intent: set.intent.map(Into::into),
            condition: set.condition.map(Into::into),
        };
        let updated = self.0.inventory.bulk_update((&c).into(), &ids, set).await.map_err(ApiError::from)?;
        Ok(Json(BulkDone { updated }))
    }

    /// One item in full; its `ETag` is its version.
    #[oai(path = "/items/:id", method = "get")]
    async fn get(&self, Member(h): Member, id: Path<i64>) -> ApiResult<OneItem> {
        let item = self.0.inventory.get(h, ItemId(id.0)).await.map_err(ApiError::from)?;
        Ok(OneItem::Item(JsonBytes::new(&ItemJson { item: &item })?, etag(&item)))
    }

    /// Change the fields given. `place_id` or a `location` text ("Garage / Shelf B2", found or created) moves
    /// it. A change that changes nothing writes nothing: no history event, the same version. With `If-Match`
    /// (the `ETag` of an answer), the change is made only while the item is at that version: 412 otherwise,
    /// and nothing is written.
    #[oai(path = "/items/:id", method = "patch")]
    async fn patch(
        &self,
        Person(c): Person,
        id: Path<i64>,
        /// The item's `ETag` as read (`"3"`), a list of tags, or `*`: change it only while it is at a version
        /// named (412 if not; a weak tag never matches); 400 when this is not a list of entity tags.
        #[oai(name = "If-Match")]
        expected: Header<Option<String>>,
        body: Json<PatchItem>,
    ) -> ApiResult<ChangedItem> {
        let expected = if_match(expected.0.as_deref())?;
        let patch = body.0.try_into_domain()?;
        let item = self
            .0
            .inventory
            .patch((&c).into(), ItemId(id.0), patch, expected.as_deref())
            .await
            .map_err(ApiError::from)?;
        let tag = etag(&item);
        Ok(ChangedItem::Item(Json(ItemDto::new(&item)), tag))
    }

    /// Record a measurement (normalised to the canonical unit).
    #[oai(path = "/items/:id/measurements", method = "post")]
    async fn measure(
        &self,
        Person(c): Person,
        id: Path<i64>,
        body: Json<NewMeasurement>,
    ) -> ApiResult<Created<ItemDto>> {
        let b = body.0;
        let source = b.source.map(Into::into).unwrap_or(MeasurementSource::Manual);
        let m = Measurement::new(&b.key, b.value, &b.unit, b.at.unwrap_or_else(|| self.0.clock.now()), source)
            .map_err(ApiError::from)?;
        let item = self.0.inventory.add_measurement((&c).into(), ItemId(id.0), m).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json(ItemDto::new(&item))))
    }

    /// Record a fault.
    #[oai(path = "/items/:id/faults", method = "post")]
    async fn fault(&self, Person(c): Person, id: Path<i64>, body: Json<NewFault>) -> ApiResult<Created<ItemDto>> {
        let fault = body.0.try_into_domain().map_err(ApiError::from)?;
        let item = self.0.inventory.add_fault((&c).into(), ItemId(id.0), fault).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json(ItemDto::new(&item))))
    }

    /// Record a test.
    #[oai(path = "/items/:id/tests", method = "post")]
    async fn test(&self, Person(c): Person, id: Path<i64>, body: Json<NewTest>) -> ApiResult<Created<ItemDto>> {
        let test = body.0.try_into_domain(self.0.clock.now())?;
        let item = self.0.inventory.add_test((&c).into(), ItemId(id.0), test).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json(ItemDto::new(&item))))
    }

    /// Mark an item gone (409 while reserved by a project).
    #[oai(path = "/items/:id/gone", method = "post")]
    async fn gone(&self, Person(c): Person, id: Path<i64>, body: Json<MarkGone>) -> ApiResult<Json<ItemDto>> {
        let note = di::optional_note(body.0.note.as_deref(), "note").map_err(ApiError::from)?;
        let item = self
            .0
            .inventory
            .mark_gone((&c).into(), ItemId(id.0), body.0.reason.into(), note)
            .await
            .map_err(ApiError::from)?;
        Ok(Json(ItemDto::new(&item)))
    }
}
