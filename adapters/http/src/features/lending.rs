//! Lending and maintenance: lend an item and take it back, the loans open and overdue, maintenance schedules and
//! their log, and what falls due.

use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::features::items::ItemDto;
use crate::services::Services;
use chrono::{DateTime, NaiveDate, Utc};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Enum, Object, OpenApi, Tags};
use trove_application::lending::{DoneRequest, DueView, LoanRequest};
use trove_application::ports::{LoanFilter, Logged};
use trove_application::recorder::Actor;
use trove_domain::ItemId;
use trove_domain::ids::{LoanId, ScheduleId};
use trove_domain::loan::{Borrower, DueKind, Every, Loan, Schedule};
use trove_domain::money::{Currency, Money};
use trove_domain::people::MemberId;

#[derive(Tags)]
enum Tag {
    /// Loans, maintenance schedules and what falls due.
    Lending,
}

/// Who an item is lent to: a member of the household, or someone named.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct BorrowerDto {
    /// A member of the household (`name` and `contact` are then left out).
    pub member_id: Option<i64>,
    /// Someone outside the household ("Sam next door"), 1 to 200 characters.
    pub name: Option<String>,
    /// How to reach them (a phone number, an address), at most 200 characters.
    pub contact: Option<String>,
}

/// A loan to make.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct LendBody {
    pub to: BorrowerDto,
    /// Units of a stock to lend (1 when left out); at most the units neither held by projects nor lent.
    #[oai(validator(minimum(value = "1"), maximum(value = "1000000000")))]
    pub units: Option<u32>,
    /// The day it was lent: today when left out (a loan recorded late names an earlier day; never a later one).
    pub since: Option<NaiveDate>,
    /// The day it is due back; none: no date.
    pub due: Option<NaiveDate>,
    /// At most 200 characters.
    pub note: Option<String>,
}

/// A loan.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Loan")]
pub struct LoanDto {
    pub id: i64,
    pub item_id: i64,
    pub item_name: String,
    pub units: u32,
    /// Who has it, as a name.
    pub to: String,
    /// The member who has it, when it is one.
    pub member_id: Option<i64>,
    pub contact: Option<String>,
    pub since: NaiveDate,
    pub due: Option<NaiveDate>,
    pub note: Option<String>,
    /// When it came back; `null` while it is out.
    pub returned_at: Option<DateTime<Utc>>,
    /// Still out the day after it was due.
    pub overdue: bool,
}

fn loan_dto(l: &Loan, today: NaiveDate) -> LoanDto {
    let (member_id, contact) = match &l.to {
        Borrower::Member(m) => (Some(*m), None),
        Borrower::Named { contact, .. } => (None, contact.clone()),
    };
    LoanDto {
        id: l.id.0,
        item_id: l.item.0,
        item_name: l.item_name.clone(),
        units: l.units,
        to: l.to_name.clone(),
        member_id,
        contact,
        since: l.since,
        due: l.due,
        note: l.note.clone(),
        returned_at: l.returned_at,
        overdue: trove_domain::loan::overdue(l.due, l.returned_at.is_some(), today),
    }
}

/// A loan made, with the item as it is now.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct LoanMadeDto {
    pub loan: LoanDto,
    pub item: ItemDto,
}

/// Loans.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct LoanList {
    /// Open ones due back first (overdue first), then those without a date, then the returned, last first.
    pub loans: Vec<LoanDto>,
}

/// A loan made.
#[derive(ApiResponse)]
pub enum LoanMade {
    /// Lent: the item's units are taken (an item lent whole is `lent`) and its history says so.
    #[oai(status = 201)]
    Created(Json<LoanMadeDto>),
}

/// How often maintenance comes round: `{"days": N}` or `{"months": N}`.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct EveryDto {
    /// 1 to 3,660.
    pub days: Option<u32>,
    /// 1 to 120; a month on from the 31st is the month's last day.
    pub months: Option<u32>,
}

impl EveryDto {
    fn of(e: Every) -> Self {
        match e {
            Every::Days(d) => Self { days: Some(d), months: None },
            Every::Months(m) => Self { days: None, months: Some(m) },
        }
    }
}

/// A schedule to set.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct ScheduleBody {
    /// What is done ("Descale"), 1 to 120 characters.
    pub title: String,
    pub every: EveryDto,
    /// The first time it is due; one period from today when left out.
    pub next: Option<NaiveDate>,
}

/// A maintenance schedule.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Schedule")]
pub struct ScheduleDto {
    pub id: i64,
    pub item_id: i64,
    pub item_name: String,
    pub title: String,
    pub every: EveryDto,
    pub next: NaiveDate,
}

impl From<&Schedule> for ScheduleDto {
    fn from(s: &Schedule) -> Self {
        Self {
            id: s.id.0,
            item_id: s.item.0,
            item_name: s.item_name.clone(),
            title: s.title.clone(),
            every: EveryDto::of(s.every),
            next: s.next,
        }
    }
}

/// Schedules.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ScheduleList {
    /// Soonest first.
    pub schedules: Vec<ScheduleDto>,
}

/// A schedule set.
#[derive(ApiResponse)]
pub enum ScheduleMade {
    #[oai(status = 201)]
    Created(Json<ScheduleDto>),
}

/// An amount.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct CostDto {
    /// Minor units (cents, pence), 0 or more.
    pub amount: i64,
    /// ISO 4217 (`EUR`).
    pub currency: String,
}

/// Maintenance done.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct DoneBody {
    /// The day it was done (today when left out; never in the future).
    pub at: Option<NaiveDate>,
    /// At most 200 characters.
    pub note: Option<String>,
    pub cost: Option<CostDto>,
}

/// Maintenance done, as the log keeps it.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct MaintenanceDto {
    pub id: i64,
    pub schedule_id: Option<i64>,
    pub title: String,
    pub at: NaiveDate,
    pub note: Option<String>,
    pub cost: Option<CostDto>,
    pub member_id: Option<i64>,
    pub recorded_at: DateTime<Utc>,
}

impl From<&Logged> for MaintenanceDto {
    fn from(l: &Logged) -> Self {
        Self {
            id: l.id,
            schedule_id: l.done.schedule.map(|s| s.0),
            title: l.done.title.clone(),
            at: l.done.at,
            note: l.done.note.clone(),
            cost: l.done.cost.map(|c| CostDto { amount: c.minor, currency: c.currency.to_string() }),
            member_id: l.done.member.map(|m| m.0),
            recorded_at: l.recorded_at,
        }
    }
}

/// An item's maintenance log.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct MaintenanceLog {
    /// Newest first.
    pub done: Vec<MaintenanceDto>,
}

/// What falls due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum DueKindDto {
    /// A loan due back.
    LoanBack,
    /// Maintenance due.
    Maintenance,
    /// A warranty's last day.
    WarrantyEnds,
}

/// One thing that falls due.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Due")]
pub struct DueDto {
    pub on: NaiveDate,
    pub kind: DueKindDto,
    pub overdue: bool,
    pub item_id: i64,
    pub item_name: String,
    /// Its item's place's path.
    pub place: Option<String>,
    /// What it is ("lent to Sam next door", "Descale", "warranty").
    pub what: String,
    /// The loan (`loan_back`), schedule (`maintenance`) or item (`warranty_ends`) it comes from.
    pub source_id: i64,
}

impl From<&DueView> for DueDto {
    fn from(d: &DueView) -> Self {
        Self {
            on: d.due.on,
            kind: match d.due.kind {
                DueKind::LoanBack => DueKindDto::LoanBack,
                DueKind::Maintenance => DueKindDto::Maintenance,
                DueKind::WarrantyEnds => DueKindDto::WarrantyEnds,
            },
            overdue: d.overdue,
            item_id: d.due.item.0,
            item_name: d.due.item_name.clone(),
            place: d.place.clone(),
            what: d.due.what.clone(),
            source_id: d.due.source,
        }
    }
}

/// What falls due in the window.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct DueList {
    /// Overdue first, then soonest first.
    pub due: Vec<DueDto>,
    /// How many are overdue.
    pub overdue: u64,
}

/// The default window of `GET /api/due`, in days.
const WITHIN_DAYS: u32 = 30;

/// The lending routes.
pub struct LendingApi(pub Services);

impl LendingApi {
    fn today(&self) -> NaiveDate {
        self.0.clock.now().date_naive()
    }
}

#[OpenApi(tag = "Tag::Lending")]
impl LendingApi {
    /// Lend an item, or units of a stock, to a member (`{"member_id"}`) or someone named (`{"name", "contact"?}`),
    /// due back on `due` (or no date). Checked against the units free to lend (neither held by projects nor out
    /// already; 409 when they do not cover it) and its dates (422). An item lent whole is `lent`, so no project
    /// takes it while it is out; the item's history says who has it.
    #[oai(path = "/items/:id/loans", method = "post")]
    async fn lend(&self, Person(c): Person, id: Path<i64>, body: Json<LendBody>) -> ApiResult<LoanMade> {
        let b = body.0;
        let to = match (b.to.member_id, b.to.name) {
            (Some(m), None) if b.to.contact.is_none() => Borrower::Member(m),
            (None, Some(name)) => Borrower::Named { name, contact: b.to.contact },
            _ => {
                return Err(
                    ApiError::bad_request("to: give either member_id, or name (with contact if you like)").into()
                );
            }
        };
        let req = LoanRequest { to, units: b.units, since: b.since, due: b.due, note: b.note };
        let (loan, item) = self.0.lending.lend(Actor::from(&c), ItemId(id.0), req).await.map_err(ApiError::from)?;
        Ok(LoanMade::Created(Json(LoanMadeDto { loan: loan_dto(&loan, self.today()), item: ItemDto::new(&item) })))
    }

    /// Mark a loan returned: its units are free again (an item lent whole is `available`), and the item's
    /// history says so. 409 when it was returned already.
    #[oai(path = "/loans/:id/return", method = "post")]
    async fn give_back(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Json<LoanDto>> {
        let loan = self.0.lending.give_back(Actor::from(&c), LoanId(id.0)).await.map_err(ApiError::from)?;
        Ok(Json(loan_dto(&loan, self.today())))
    }

    /// The household's loans: `open=true` those still out, `overdue=true` those still out after their day,
    /// `member_id=` those to one member, `item_id=` those of one item.
    #[oai(path = "/loans", method = "get")]
    async fn loans(
        &self,
        Member(h): Member,
        open: Query<Option<bool>>,
        overdue: Query<Option<bool>>,
        member_id: Query<Option<i64>>,
        item_id: Query<Option<i64>>,
    ) -> ApiResult<Json<LoanList>> {
        let filter = LoanFilter {
            open: open.0.unwrap_or(false),
            item: item_id.0.map(ItemId),
            member: member_id.0.map(MemberId),
        };
        let all = self.0.lending.loans(h, filter, overdue.0.unwrap_or(false)).await.map_err(ApiError::from)?;
        let today = self.today();
        Ok(Json(LoanList { loans: all.iter().map(|l| loan_dto(l, today)).collect() }))
    }

    /// Set a maintenance schedule on an item: `every` `{"days": N}` or `{"months": N}`, first due on `next` (or
    /// one period from today). The item's history says so.
    #[oai(path = "/items/:id/schedules", method = "post")]
    async fn add_schedule(
        &self,
        Person(c): Person,
        id: Path<i64>,
        body: Json<ScheduleBody>,
    ) -> ApiResult<ScheduleMade> {
        let b = body.0;
        let every = match (b.every.days, b.every.months) {
            (Some(d), None) => Every::Days(d),
            (None, Some(m)) => Every::Months(m),
            _ => return Err(ApiError::bad_request("every: give either days or months").into()),
        };
        let s = self
            .0
            .lending
            .add_schedule(Actor::from(&c), ItemId(id.0), &b.title, every, b.next)
            .await
            .map_err(ApiError::from)?;
        Ok(ScheduleMade::Created(Json((&s).into())))
    }

    /// An item's maintenance schedules, soonest first.
    #[oai(path = "/items/:id/schedules", method = "get")]
    async fn item_schedules(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<ScheduleList>> {
        let all = self.0.lending.schedules(h, Some(ItemId(id.0))).await.map_err(ApiError::from)?;
        Ok(Json(ScheduleList { schedules: all.iter().map(Into::into).collect() }))
    }

    /// Every maintenance schedule of the household, soonest first.
    #[oai(path = "/schedules", method = "get")]
    async fn schedules(&self, Member(h): Member) -> ApiResult<Json<ScheduleList>> {
        let all = self.0.lending.schedules(h, None).await.map_err(ApiError::from)?;
        Ok(Json(ScheduleList { schedules: all.iter().map(Into::into).collect() }))
    }

    /// Log maintenance done on a schedule (`at`, today when left out; a note; a cost) and move its next date one
    /// period on from the day it was done. The item's history and its maintenance log keep it.
    #[oai(path = "/schedules/:id/done", method = "post")]
    async fn done(&self, Person(c): Person, id: Path<i64>, body: Json<DoneBody>) -> ApiResult<Json<ScheduleDto>> {
        let b = body.0;
        let cost = match b.cost {
            Some(c) => Some(Money {
                minor: c.amount,
                currency: Currency::new(&c.currency)
                    .map_err(|e| poem::Error::from(ApiError::bad_request(format!("cost.currency: {e}"))))?,
            }),
            None => None,
        };
        let req = DoneRequest { at: b.at, note: b.note, cost };
        let s = self.0.lending.done(Actor::from(&c), ScheduleId(id.0), req).await.map_err(ApiError::from)?;
        Ok(Json((&s).into()))
    }

    /// An item's maintenance log, newest first.
    #[oai(path = "/items/:id/maintenance", method = "get")]
    async fn maintenance(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<MaintenanceLog>> {
        let all = self.0.lending.maintenance(h, ItemId(id.0)).await.map_err(ApiError::from)?;
        Ok(Json(MaintenanceLog { done: all.iter().map(Into::into).collect() }))
    }

    /// Everything due from today to `within_days` on (default 30, at most 3,660): loans due back, maintenance
    /// due and warranties ending, each with its item and place; what is overdue first, then soonest first.
    #[oai(path = "/due", method = "get")]
    async fn due(
        &self,
        Member(h): Member,
        #[oai(validator(maximum(value = "3660")))] within_days: Query<Option<u32>>,
    ) -> ApiResult<Json<DueList>> {
        let all = self.0.lending.due(h, within_days.0.unwrap_or(WITHIN_DAYS)).await.map_err(ApiError::from)?;
        let overdue = all.iter().filter(|d| d.overdue).count() as u64;
        Ok(Json(DueList { due: all.iter().map(Into::into).collect(), overdue }))
    }
}
