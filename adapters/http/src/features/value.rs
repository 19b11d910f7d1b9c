//! The value report: what the household owns and what it is worth, as JSON, CSV or the PDF an insurer is sent.

use crate::auth::Member;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use chrono::{DateTime, NaiveDate, Utc};
use poem_openapi::param::Query;
use poem_openapi::payload::{Binary, Json};
use poem_openapi::{ApiResponse, Enum, Object, OpenApi, Tags};
use std::collections::BTreeMap;
use trove_application::ports::ValueDocument;
use trove_domain::PlaceId;
use trove_domain::money::{Currency, Money};
use trove_domain::report::{Sums, ValueSource};

#[derive(Tags)]
enum Tag {
    /// The value report.
    Value,
}

/// An amount of one currency.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct AmountDto {
    /// Minor units (cents, pence).
    pub amount: i64,
    pub currency: String,
    /// The amount in major units as text ("120.50").
    pub text: String,
}

fn amount(m: Money) -> AmountDto {
    AmountDto { amount: m.minor, currency: m.currency.to_string(), text: m.amount() }
}

fn amounts(sums: &BTreeMap<Currency, i64>) -> Vec<AmountDto> {
    sums.iter().map(|(c, minor)| amount(Money { minor: *minor, currency: *c })).collect()
}

/// Where a current value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum ValueSourceKind {
    /// The typical price of an estimate from grounded web comparables.
    Estimate,
    /// A value set by hand (`PUT /api/items/{id}/value`).
    Hand,
}

/// A current value's source and when it was set.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ValueSourceDto {
    pub kind: ValueSourceKind,
    pub at: DateTime<Utc>,
}

/// One item of the report.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ValueLineDto {
    pub item_id: i64,
    pub name: String,
    /// Its place's path; `null` for an item in no place.
    pub place: Option<String>,
    /// The outermost place of its path, which the totals `by_room` are by.
    pub room: Option<String>,
    pub item_type: String,
    /// Units counted (a stock used up is 0).
    pub quantity: u32,
    pub serial: Option<String>,
    pub purchase_date: Option<NaiveDate>,
    pub vendor: Option<String>,
    /// The purchase price as recorded.
    pub paid: Option<AmountDto>,
    /// What one unit is worth now; `null` when never priced or the latest search found too little evidence.
    pub value_each: Option<AmountDto>,
    /// `value_each` times the quantity.
    pub value_total: Option<AmountDto>,
    pub value_source: Option<ValueSourceDto>,
    /// Its first photo (`GET /api/media/{id}/thumb`).
    pub photo_id: Option<i64>,
    /// Its receipts (`GET /api/media/{id}`).
    pub receipt_ids: Vec<i64>,
}

/// Totals of a group of items, per currency (never converted).
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ValueTotalsDto {
    /// The room or the type; `null` for the items in no place.
    pub name: Option<String>,
    pub items: u64,
    /// Items without a current value.
    pub unvalued: u64,
    pub current: Vec<AmountDto>,
    pub paid: Vec<AmountDto>,
}

fn totals(name: Option<String>, s: &Sums) -> ValueTotalsDto {
    ValueTotalsDto { name, items: s.items, unvalued: s.unvalued, current: amounts(&s.current), paid: amounts(&s.paid) }
}

/// The value report.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ValueReportDto {
    pub household: String,
    pub at: DateTime<Utc>,
    /// The path of the place the report is limited to (`place=`), or `null` for the whole household.
    pub within: Option<String>,
    /// By place (items in no place last), then by name.
    pub items: Vec<ValueLineDto>,
    /// Per room (the outermost place), by name; the items in no place last (`name: null`).
    pub by_room: Vec<ValueTotalsDto>,
    /// Per type, by type.
    pub by_type: Vec<ValueTotalsDto>,
    /// Everything (`name: null`).
    pub total: ValueTotalsDto,
}

impl From<&ValueDocument> for ValueReportDto {
    fn from(doc: &ValueDocument) -> Self {
        let r = &doc.report;
        let mut by_room: Vec<ValueTotalsDto> =
            r.by_room.iter().filter(|(k, _)| k.is_some()).map(|(k, s)| totals(k.clone(), s)).collect();
        if let Some(s) = r.by_room.get(&None) {
            by_room.push(totals(None, s));
        }
        Self {
            household: doc.household.clone(),
            at: doc.at,
            within: doc.within.clone(),
            items: r
                .lines
                .iter()
                .map(|l| {
                    let i = doc.item(l.item);
                    ValueLineDto {
                        item_id: l.item.0,
                        name: i.name.clone(),
                        place: i.place.clone(),
                        room: l.room.clone(),
                        item_type: l.item_type.clone(),
                        quantity: l.quantity,
                        serial: i.serial.clone(),
                        purchase_date: i.purchased,
                        vendor: i.vendor.clone(),
                        paid: l.paid.map(amount),
                        value_each: l.current.map(|c| amount(c.each)),
                        value_total: l.current_total.map(amount),
                        value_source: l.current.map(|c| ValueSourceDto {
                            kind: match c.source {
                                ValueSource::Estimate { .. } => ValueSourceKind::Estimate,
                                ValueSource::Hand { .. } => ValueSourceKind::Hand,
                            },
                            at: c.source.at(),
                        }),
                        photo_id: i.photo.map(|m| m.0),
                        receipt_ids: i.receipts.iter().map(|m| m.id.0).collect(),
                    }
                })
                .collect(),
            by_room,
            by_type: r.by_type.iter().map(|(k, s)| totals(Some(k.clone()), s)).collect(),
            total: totals(None, &r.total),
        }
    }
}

/// The format of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum ValueFormat {
    Json,
    Csv,
    Pdf,
}

/// The report in the format asked.
#[derive(ApiResponse)]
pub enum ValueAnswer {
    /// The report as JSON (`format=json`, the default).
    #[oai(status = 200)]
    Json(Json<ValueReportDto>),
    /// A row per item (`format=csv`): amounts in major units beside their currency.
    #[oai(status = 200, content_type = "text/csv; charset=utf-8")]
    Csv(Binary<Vec<u8>>, #[oai(header = "Content-Disposition")] String),
    /// The PDF an insurer is sent (`format=pdf`): a cover with the totals, a section per place with each item's
    /// thumbnail and figures, an annex of receipts.
    #[oai(status = 200, content_type = "application/pdf")]
    Pdf(Binary<Vec<u8>>, #[oai(header = "Content-Disposition")] String),
}

/// The value report route.
pub struct ValueApi(pub Services);

#[OpenApi(tag = "Tag::Value")]
impl ValueApi {
    /// What the household owns and what it is worth: per item (quantity included) its purchase price and date,
    /// its current value (the latest price report's estimate, or a value set by hand) with where that comes from
    /// and when, its serial, photo and receipts; totals per room (the outermost place), per type, and in all,
    /// each per currency (never converted). `place=ID` limits it to that place and the places below it (404 for
    /// another household's). Items that are gone are left out.
    #[oai(path = "/report/value", method = "get")]
    async fn value(
        &self,
        Member(h): Member,
        /// Only the items in this place and the places below it.
        place: Query<Option<i64>>,
        /// `json` (default), `csv` or `pdf`.
        format: Query<Option<ValueFormat>>,
    ) -> ApiResult<ValueAnswer> {
        let place = place.0.map(PlaceId);
        let day = self.0.clock.now().date_naive();
        let v = &self.0.value;
        Ok(match format.0.unwrap_or(ValueFormat::Json) {
            ValueFormat::Json => ValueAnswer::Json(Json((&v.report(h, place).await.map_err(ApiError::from)?).into())),
            ValueFormat::Csv => ValueAnswer::Csv(
                Binary(v.csv(h, place).await.map_err(ApiError::from)?),
                format!("attachment; filename=\"trove-value-{day}.csv\""),
            ),
            ValueFormat::Pdf => ValueAnswer::Pdf(
                Binary(v.pdf(h, place).await.map_err(ApiError::from)?),
                format!("attachment; filename=\"trove-value-{day}.pdf\""),
            ),
        })
    }
}
