//! The value report: what the household owns and what it is worth, as JSON, CSV or the PDF an insurer is sent.

use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use chrono::{DateTime, NaiveDate, Utc};
use poem_openapi::param::Query;
use poem_openapi::payload::{Binary, Json};
use poem_openapi::{ApiResponse, Enum, Object, OpenApi, Tags};
use std::collections::BTreeMap;
use trove_application::ports::ValueDocument;
use trove_application::recorder::Actor;
use trove_application::refresh::{RefreshPlan, RefreshRun, RefreshState};
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

/// What "Refresh values" would do: how many items it would price and what that is expected to cost.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct RefreshPlanDto {
    /// Items without an estimate, or with one older than `older_than_days` (values set by hand are kept).
    pub items: u64,
    /// What one price call is expected to cost: the mean of the last price calls, or a typical call at the
    /// configured rates when none was made yet (`each_from_calls: 0`).
    pub each_micro_usd: i64,
    pub each_from_calls: u64,
    /// `items` times `each_micro_usd`.
    pub expected_micro_usd: i64,
    pub monthly_limit_micro_usd: Option<i64>,
    pub spent_this_month_micro_usd: i64,
    /// How many of `items` fit in what is left of the month's budget (all of them without one).
    pub affordable: u64,
}

impl From<&RefreshPlan> for RefreshPlanDto {
    fn from(p: &RefreshPlan) -> Self {
        Self {
            items: p.items,
            each_micro_usd: p.each.each.0,
            each_from_calls: p.each.from_calls as u64,
            expected_micro_usd: p.expected.0,
            monthly_limit_micro_usd: p.monthly_limit.map(|m| m.0),
            spent_this_month_micro_usd: p.spent_this_month.0,
            affordable: p.affordable,
        }
    }
}

/// Where a refresh run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum RefreshStateDto {
    Running,
    /// Asked to stop: it stops after the item being priced.
    Stopping,
    Finished,
    Stopped,
    /// It stopped by itself: the month's budget is reached.
    BudgetReached,
    /// It stopped by itself: the model backend could not price any more (`reason`).
    Failed,
}

/// A refresh run's progress.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct RefreshRunDto {
    pub state: RefreshStateDto,
    pub total: u64,
    /// Items it is through with (priced, failed or no longer there).
    pub done: u64,
    /// Priced with an estimate.
    pub valued: u64,
    /// Priced, but the search found too little evidence for an estimate.
    pub no_estimate: u64,
    /// Whose price call failed (in the spend ledger with what it cost).
    pub failed: u64,
    pub spent_micro_usd: i64,
    /// The item being priced.
    pub current_item_id: Option<i64>,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// Why it stopped before the end, or the last failure.
    pub reason: Option<String>,
}

impl From<&RefreshRun> for RefreshRunDto {
    fn from(r: &RefreshRun) -> Self {
        Self {
            state: match r.state {
                RefreshState::Running => RefreshStateDto::Running,
                RefreshState::Stopping => RefreshStateDto::Stopping,
                RefreshState::Finished => RefreshStateDto::Finished,
                RefreshState::Stopped => RefreshStateDto::Stopped,
                RefreshState::BudgetReached => RefreshStateDto::BudgetReached,
                RefreshState::Failed => RefreshStateDto::Failed,
            },
            total: r.total,
            done: r.done,
            valued: r.valued,
            no_estimate: r.no_estimate,
            failed: r.failed,
            spent_micro_usd: r.spent.0,
            current_item_id: r.current.map(|i| i.0),
            started_at: r.started_at,
            finished_at: r.finished_at,
            reason: r.reason.clone(),
        }
    }
}

/// The household's refresh run.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct RefreshRunAnswer {
    /// `null` when none ran since the server started.
    pub run: Option<RefreshRunDto>,
}

/// What to refresh.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct RefreshValues {
    /// Price again the estimates older than this many days (default 30); items never valued are always priced.
    #[oai(validator(maximum(value = "3650")))]
    pub older_than_days: Option<u32>,
    /// At most this many items in this run (1 to 100,000).
    #[oai(validator(minimum(value = "1"), maximum(value = "100000")))]
    pub limit: Option<u64>,
}

/// The refresh run's answers.
#[derive(ApiResponse)]
pub enum RefreshStarted {
    /// The run started (or there was nothing to price: `finished` at once); follow it with
    /// `GET /api/report/value/refresh/run`.
    #[oai(status = 202)]
    Started(Json<RefreshRunDto>),
}

/// The default age of an estimate refreshed.
const OLDER_THAN_DAYS: u32 = 30;

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

    /// What "Refresh values" would do, before anything is sent: how many items it would price (those never
    /// valued, then those whose estimate is older than `older_than_days`, default 30; values set by hand are
    /// kept), what one price call is expected to cost and what all of them would, and how many fit in what is
    /// left of the month's budget. 409/503 when the model backend cannot search the web.
    #[oai(path = "/report/value/refresh", method = "get")]
    async fn refresh_plan(
        &self,
        Member(h): Member,
        #[oai(validator(maximum(value = "3650")))] older_than_days: Query<Option<u32>>,
        #[oai(validator(minimum(value = "1"), maximum(value = "100000")))] limit: Query<Option<u64>>,
    ) -> ApiResult<Json<RefreshPlanDto>> {
        let days = older_than_days.0.unwrap_or(OLDER_THAN_DAYS);
        Ok(Json((&self.0.refresh.plan(h, days, limit.0).await.map_err(ApiError::from)?).into()))
    }

    /// Start "Refresh values" in the background: the items of the plan are priced one by one (each a metered,
    /// grounded price call kept in its price history, spent by whoever started it), until done, stopped, or the
    /// month's budget is reached. One run per household at a time (409 while one runs); 402 when the budget is
    /// already spent.
    #[oai(path = "/report/value/refresh", method = "post")]
    async fn refresh_start(&self, Person(c): Person, body: Json<RefreshValues>) -> ApiResult<RefreshStarted> {
        let days = body.0.older_than_days.unwrap_or(OLDER_THAN_DAYS);
        let run = self.0.refresh.start(Actor::from(&c), days, body.0.limit).await.map_err(ApiError::from)?;
        Ok(RefreshStarted::Started(Json((&run).into())))
    }

    /// The household's refresh run, going or last; `run: null` when none ran since the server started.
    #[oai(path = "/report/value/refresh/run", method = "get")]
    async fn refresh_run(&self, Member(h): Member) -> Json<RefreshRunAnswer> {
        Json(RefreshRunAnswer { run: self.0.refresh.status(h).as_ref().map(Into::into) })
    }

    /// Stop the household's refresh run after the item being priced (a run that is over is answered as it is;
    /// 404 when none ran).
    #[oai(path = "/report/value/refresh/stop", method = "post")]
    async fn refresh_stop(&self, Member(h): Member) -> ApiResult<Json<RefreshRunDto>> {
        let run = self.0.refresh.stop(h).ok_or_else(|| {
            ApiError::new(poem::http::StatusCode::NOT_FOUND, "not_found", "no refresh of values has run")
        })?;
        Ok(Json((&run).into()))
    }
}
