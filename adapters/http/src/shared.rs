//! The DTO pieces several features answer or take: the item values (condition, intent, fault severity, where a
//! measurement came from), the body of a new item (`POST /api/items`, and each candidate an intake reading
//! answers), what a run of model calls cost, `201 Created`, and the JSON form of answers kept for an
//! `Idempotency-Key`. It imports no feature and not the error mapping (which renders [`RunSpendDto`]), so that
//! every feature may import it.

use chrono::{DateTime, Utc};
use poem_openapi::payload::Json;
use poem_openapi::types::{ParseFromJSON, ToJSON};
use poem_openapi::{ApiResponse, Object};
use std::collections::BTreeMap;
use trove_application::idempotency::Replayable;
use trove_application::metered::RunSpend;
use trove_domain::ItemId;
use trove_domain::item::{self as di, ItemError, ItemName, ItemType, Measurement, MeasurementSource, NewItem};
use trove_domain::place::PlacePath;

/// A DTO enum mirroring a domain enum variant for variant (`snake_case` on the wire), with both conversions.
macro_rules! mirror_enum {
    ($(#[$doc:meta])* $dto:ident <=> $domain:path { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, poem_openapi::Enum)]
        #[oai(rename_all = "snake_case")]
        pub enum $dto { $($variant),+ }

        impl From<$dto> for $domain {
            fn from(v: $dto) -> Self {
                match v { $($dto::$variant => <$domain>::$variant),+ }
            }
        }

        impl From<$domain> for $dto {
            fn from(v: $domain) -> Self {
                match v { $(<$domain>::$variant => $dto::$variant),+ }
            }
        }
    };
}
pub(crate) use mirror_enum;

mirror_enum!(
    /// What kind of code: a GS1 GTIN (EAN-8, UPC-A, EAN-13, GTIN-14), an ISBN (10 or 13), or any other code (a
    /// shop's own, a part number).
    CodeKind <=> trove_domain::code::CodeKind { Gtin, Isbn, Other }
);

/// A code given for an item.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewCode {
    /// Left out: read from the code's text (10 characters of digits, or 13 from 978/979: an ISBN; 8 to 14 digits:
    /// a GTIN; anything else: `other`).
    pub kind: Option<CodeKind>,
    /// The code as scanned or typed; hyphens and spaces between digits are dropped. A GTIN's or ISBN's check
    /// digit is verified.
    pub value: String,
}

/// An item's codes as given: the whole list, checked (a wrong check digit names the code and the digit it should
/// be), a code whose key is already in the list dropped.
///
/// # Errors
/// [`ItemError::Codes`] naming the code refused and its place in the list.
pub fn codes(given: &[NewCode]) -> Result<trove_domain::code::Codes, ItemError> {
    Ok(trove_domain::code::Codes::parse(given.iter().map(|c| (c.kind.map(Into::into), c.value.as_str())))?)
}

mirror_enum!(
    /// Condition, best first.
    Condition <=> di::Condition { New, LikeNew, Good, Fair, Poor, ForParts }
);
mirror_enum!(
    /// What the owner means to do with the item.
    Intent <=> di::Intent { Keep, Sell, Give }
);
mirror_enum!(
    /// How bad a fault is.
    Severity <=> di::Severity { Minor, Major, Blocking }
);
mirror_enum!(
    /// Where a measurement came from.
    Source <=> MeasurementSource { Label, Listing, Voice, Photo, Test, Manual }
);

/// A value with its unit.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct FieldValue {
    pub value: f64,
    pub unit: String,
}

/// A fault to record.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewFault {
    pub text: String,
    pub severity: Severity,
}

impl NewFault {
    /// # Errors
    /// When the text is empty or too long.
    pub fn try_into_domain(self) -> Result<di::Fault, ItemError> {
        di::Fault::new(&self.text, self.severity.into())
    }
}

/// One place of a path: its id and name.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "PlaceStep")]
pub struct PlaceStepDto {
    pub id: i64,
    pub name: String,
}

/// The steps of a path, root first, the place itself last.
pub fn steps(path: &PlacePath) -> Vec<PlaceStepDto> {
    path.steps().iter().map(|s| PlaceStepDto { id: s.id.0, name: s.name.to_string() }).collect()
}

/// How an item was bought.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Purchase")]
pub struct PurchaseDto {
    /// The day it was bought.
    pub date: Option<chrono::NaiveDate>,
    /// The price paid, in minor units (cents, pence) of `currency`: 4599 is 45.99.
    pub price: Option<i64>,
    /// A three-letter currency code ("EUR"); needed with a price.
    pub currency: Option<String>,
    /// Where it was bought (at most 200 characters).
    pub vendor: Option<String>,
}

impl PurchaseDto {
    pub fn new(p: &di::Purchase) -> Self {
        Self {
            date: p.date,
            price: p.price.map(|m| m.minor),
            currency: p.price.map(|m| m.currency.to_string()),
            vendor: p.vendor.clone(),
        }
    }

    /// # Errors
    /// What the domain refuses ([`di::Purchase::new`]).
    pub fn try_into_domain(self) -> Result<Option<di::Purchase>, ItemError> {
        di::Purchase::new(self.date, self.price, self.currency.as_deref(), self.vendor.as_deref())
    }
}

/// A price: an amount in minor units of a currency.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Price")]
pub struct PriceDto {
    /// Minor units (cents, pence): 1250 is 12.50.
    pub amount: i64,
    /// A three-letter currency code ("EUR").
    pub currency: String,
}

impl PriceDto {
    pub fn new(m: &trove_domain::money::Money) -> Self {
        Self { amount: m.minor, currency: m.currency.to_string() }
    }

    /// # Errors
    /// [`ItemError::BadPrice`] naming `what`.
    pub fn try_into_domain(self, what: &'static str) -> Result<trove_domain::money::Money, ItemError> {
        di::money(what, self.amount, Some(&self.currency))
    }
}

/// A new item.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct CreateItem {
    pub name: String,
    /// What kind of thing it is, in words: "Power bank", "power-bank" and `power_bank` are all kept as
    /// `power_bank` (`GET /api/item-types` lists the known ones).
    pub item_type: String,
    /// One line of identifying facts: brand, model, key specs, serial if known (may be empty, never left out).
    pub profile: String,
    pub condition: Condition,
    pub intent: Intent,
    /// The place to put it in (`GET /api/places`); instead of `location`.
    pub place_id: Option<i64>,
    /// A path of places as text ("Garage / Shelf B2"), found or created; instead of `place_id`.
    pub location: Option<String>,
    pub accessories: Option<Vec<String>>,
    /// Measured values by key, in any unit spelling ("Ah", "mah", "TB"); stored normalised.
    pub fields: Option<BTreeMap<String, FieldValue>>,
    pub components: Option<Vec<i64>>,
    pub faults: Option<Vec<NewFault>>,
    /// Where the fields came from (default `manual`).
    pub source: Option<Source>,
    /// Pending media to attach to the new item in the same transaction: the `photo_id` an intake answered
    /// (`POST /api/intake/label`, `POST /api/intake/photo` and its regions). One that is unknown, another
    /// household's or already on an item is 422 `rule`, and nothing is created.
    pub media_ids: Option<Vec<i64>>,
    /// How many like units it is (0 to 1,000,000; default 1): a drawer of 200 M3 screws is one item of 200.
    pub quantity: Option<i64>,
    /// Low on stock at or under this many units (`GET /api/items?low_stock=true`).
    pub min_quantity: Option<i64>,
    /// Up to 20 labels of at most 40 characters ("garage", "18 V"); repeats ignoring case are dropped.
    pub tags: Option<Vec<String>>,
    /// Up to 20 product codes (a GTIN, an ISBN, a shop's own). A code is unique in the household: one another
    /// item carries is 409 naming that item.
    pub codes: Option<Vec<NewCode>>,
    /// Free text, several lines, at most 4,000 characters.
    pub notes: Option<String>,
    /// Its serial number (at most 100 characters).
    pub serial: Option<String>,
    pub purchase: Option<PurchaseDto>,
    /// The last day the warranty covers.
    pub warranty_until: Option<chrono::NaiveDate>,
    /// An asking price set by hand: listing drafts use it before any estimate.
    pub asking_price: Option<PriceDto>,
}

/// Reads measured fields given by key into measurements at `at`.
///
/// # Errors
/// The first key, value or unit the domain refuses.
pub fn measurements(
    fields: BTreeMap<String, FieldValue>,
    at: DateTime<Utc>,
    source: MeasurementSource,
) -> Result<Vec<Measurement>, ItemError> {
    fields.into_iter().map(|(k, v)| Measurement::new(&k, v.value, &v.unit, at, source)).collect()
}

impl CreateItem {
    /// # Errors
    /// The first field the domain refuses.
    pub fn try_into_domain(self, at: DateTime<Utc>) -> Result<NewItem, ItemError> {
        let mut item = NewItem::new(
            ItemName::new(&self.name)?,
            ItemType::new(&self.item_type)?,
            di::profile(&self.profile)?,
            self.condition.into(),
            self.intent.into(),
        );
        item.place_id = self.place_id.map(trove_domain::PlaceId);
        item.location = di::location(self.location.as_deref())?;
        item.accessories = di::accessories(&self.accessories.unwrap_or_default())?;
        let source = self.source.map(Into::into).unwrap_or(MeasurementSource::Manual);
        item.measurements = measurements(self.fields.unwrap_or_default(), at, source)?;
        item.components = self.components.unwrap_or_default().into_iter().map(ItemId).collect();
        item.media_ids = self.media_ids.unwrap_or_default().into_iter().map(trove_domain::MediaId).collect();
        item.faults =
            self.faults.unwrap_or_default().into_iter().map(NewFault::try_into_domain).collect::<Result<_, _>>()?;
        item.quantity = self.quantity.map(|q| di::check_quantity("quantity", q)).transpose()?.unwrap_or(1);
        item.min_quantity = self.min_quantity.map(|q| di::check_quantity("min_quantity", q)).transpose()?;
        item.tags = di::Tags::new(&self.tags.unwrap_or_default())?;
        item.codes = codes(&self.codes.unwrap_or_default())?;
        item.details = di::ItemDetails {
            notes: di::notes(self.notes.as_deref().unwrap_or_default())?,
            serial: di::serial(self.serial.as_deref().unwrap_or_default())?,
            purchase: self.purchase.map(PurchaseDto::try_into_domain).transpose()?.flatten(),
            warranty_until: self.warranty_until.map(|d| di::check_day("warranty_until", d)).transpose()?,
            asking_price: self.asking_price.map(|p| p.try_into_domain("asking_price")).transpose()?,
        }
        .into();
        Ok(item)
    }
}

/// What a run of model calls cost.
#[derive(Debug, Clone, PartialEq, Object, serde::Serialize)]
pub struct RunSpendDto {
    pub calls: u32,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub searches: u32,
    pub cost_micro_usd: i64,
    /// The cost in dollars, as text ("0.0041").
    pub cost_usd: String,
}

impl From<&RunSpend> for RunSpendDto {
    fn from(s: &RunSpend) -> Self {
        Self {
            calls: s.calls,
            input_tokens: s.input_tokens,
            cached_tokens: s.cached_tokens,
            output_tokens: s.output_tokens,
            searches: s.searches,
            cost_micro_usd: s.cost.0,
            cost_usd: s.cost.to_usd_string(),
        }
    }
}

/// A `201 Created` answer.
#[derive(ApiResponse)]
pub enum Created<T: ToJSON + Send + Sync> {
    #[oai(status = 201)]
    Created(Json<T>),
}

/// An answer of a route taking an `Idempotency-Key` (`Idempotency::once`), kept for replays as its JSON and
/// read back into its DTO.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept<T>(pub T);

impl<T: ToJSON + ParseFromJSON> Replayable for Kept<T> {
    fn kept(&self) -> Option<String> {
        self.0.to_json().map(|v| v.to_string())
    }

    fn replayed(kept: &str) -> Result<Self, String> {
        let value: serde_json::Value = serde_json::from_str(kept).map_err(|e| format!("it is not JSON: {e}"))?;
        T::parse_from_json(Some(value)).map(Kept).map_err(|e| e.into_message())
    }
}

/// The body of a keyed request as its fingerprint reads it: its DTO as JSON, so that spacing and the order of
/// the members do not make a repeated request a different one.
pub fn request_json<T: ToJSON>(body: &T) -> Vec<u8> {
    body.to_json().map(|v| v.to_string().into_bytes()).unwrap_or_default()
}
