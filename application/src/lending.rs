//! Lending and maintenance: lend an item (or units of a stock) and take it back, the loans open and overdue,
//! maintenance schedules and their log, and the one list of what falls due.
//!
//! The rules are the domain's (`trove_domain::loan`): a loan is checked against the units free to lend
//! (`Item::lendable`, the units rule with loans counted), a schedule's next date follows from its period. The
//! store takes a loan's units in one conditional write, so two loans never lend more than there is.

use crate::error::{Refusal, named};
use crate::ports::{Clock, InventoryRepo, LendingRepo, LoanFilter, Logged, MemberRepo, NewLoan};
use crate::recorder::{Actor, Recorder};
use crate::{Error, RepoError};
use chrono::NaiveDate;
use std::collections::HashMap;
use std::sync::Arc;
use trove_domain::history::{Action, ObjectKind};
use trove_domain::ids::{LoanId, ScheduleId};
use trove_domain::item::Item;
use trove_domain::loan::{
    self, Borrower, Done, Due, Every, Loan, Schedule, TEXT_MAX, check_done, check_loan, check_schedule, due_within,
};
use trove_domain::money::Money;
use trove_domain::people::MemberId;
use trove_domain::text::Lines;
use trove_domain::{HouseholdId, ItemId};

/// Longest window of `GET /api/due`, in days.
pub const WITHIN_DAYS_MAX: u32 = 3_660;

/// A loan as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoanRequest {
    pub to: Borrower,
    /// Units of a stock (1 when not given).
    pub units: Option<u32>,
    /// The day it was lent (today when not given; a loan recorded late names an earlier day).
    pub since: Option<NaiveDate>,
    pub due: Option<NaiveDate>,
    pub note: Option<String>,
}

/// Maintenance done, as asked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DoneRequest {
    pub at: Option<NaiveDate>,
    pub note: Option<String>,
    pub cost: Option<Money>,
}

/// A thing that falls due, with where its item is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueView {
    pub due: Due,
    pub overdue: bool,
    /// The item's place's path.
    pub place: Option<String>,
}

/// The lending and maintenance use cases.
#[derive(Clone)]
pub struct Lending {
    items: Arc<dyn InventoryRepo>,
    repo: Arc<dyn LendingRepo>,
    members: Arc<dyn MemberRepo>,
    recorder: Recorder,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Lending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lending").finish_non_exhaustive()
    }
}

fn text(value: Option<String>, what: &str, lines: Lines) -> Result<Option<String>, Error> {
    let value = value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    if let Some(v) = &value {
        if v.chars().count() > TEXT_MAX {
            return Err(Error::Invalid(format!("{what}: at most {TEXT_MAX} characters")));
        }
        // The text rule is the domain's, as everywhere.
        trove_domain::text::check(what, v, lines).map_err(|e| Error::Invalid(e.to_string()))?;
    }
    Ok(value)
}

impl Lending {
    pub fn new(
        items: Arc<dyn InventoryRepo>,
        repo: Arc<dyn LendingRepo>,
        members: Arc<dyn MemberRepo>,
        recorder: Recorder,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { items, repo, members, recorder, clock }
    }

    fn today(&self) -> NaiveDate {
        self.clock.now().date_naive()
    }

    /// Lends `item` (or units of it) as asked: checked against the units free to lend and its dates, written with
    /// a `lend` event on the item. Answers the loan and the item as it is now.
    ///
    /// # Errors
    /// `NotFound` for an item or member not the household's; `Invalid` for a note or contact too long;
    /// [`Refusal::Loan`] when the rules refuse it; [`Refusal::Stale`] when it changed under two attempts.
    pub async fn lend(&self, actor: Actor, item: ItemId, req: LoanRequest) -> Result<(Loan, Item), Error> {
        let h = actor.household;
        let note = text(req.note, "note", Lines::Many)?;
        let to = match req.to {
            Borrower::Named { name, contact } => {
                Borrower::Named { name: name.trim().to_owned(), contact: text(contact, "contact", Lines::One)? }
            }
            member => member,
        };
        let to_name = match &to {
            Borrower::Member(m) => {
                self.members.member(h, MemberId(*m)).await.map_err(named(ObjectKind::Member, *m))?.name.to_string()
            }
            Borrower::Named { name, .. } => name.clone(),
        };
        let units = req.units.unwrap_or(1);
        let today = self.today();
        let since = req.since.unwrap_or(today);
        let mut tries = 0;
        loop {
            let found = self.items.get(h, item).await.map_err(named(ObjectKind::Item, item.0))?;
            found.check_changeable().map_err(Refusal::Change)?;
            check_loan(&to, units, found.lendable(), since, req.due, today).map_err(Refusal::Loan)?;
            let new = NewLoan {
                item,
                version: found.version,
                whole: found.quantity == 1,
                units,
                to: to.clone(),
                to_name: to_name.clone(),
                since,
                due: req.due,
                note: note.clone(),
            };
            match self.repo.lend(h, &new, &self.recorder.recording(actor, Action::Lend)).await {
                Err(RepoError::Stale(_)) if tries == 0 => tries += 1,
                Err(RepoError::Stale(i)) => return Err(Refusal::Stale(i).into()),
                other => return other.map_err(named(ObjectKind::Item, item.0)),
            }
        }
    }

    /// Marks a loan returned: its units are free again, and the item's history says so.
    ///
    /// # Errors
    /// `NotFound`; [`Refusal::AlreadyReturned`].
    pub async fn give_back(&self, actor: Actor, id: LoanId) -> Result<Loan, Error> {
        let rec = self.recorder.recording(actor, Action::Return);
        self.repo
            .give_back(actor.household, id, &rec)
            .await
            .map_err(named(ObjectKind::Loan, id.0))?
            .ok_or_else(|| Refusal::AlreadyReturned(id).into())
    }

    /// Loans as filtered; `overdue` keeps the open ones due back before today.
    ///
    /// # Errors
    /// Storage only.
    pub async fn loans(&self, household: HouseholdId, filter: LoanFilter, overdue: bool) -> Result<Vec<Loan>, Error> {
        let filter = LoanFilter { open: filter.open || overdue, ..filter };
        let mut all = self.repo.loans(household, filter).await?;
        if overdue {
            let today = self.today();
            all.retain(|l| loan::overdue(l.due, l.returned_at.is_some(), today));
        }
        Ok(all)
    }

    /// Sets a maintenance schedule on an item; its first date is `next` or one period from today.
    ///
    /// # Errors
    /// `NotFound`; [`Refusal::Schedule`].
    pub async fn add_schedule(
        &self,
        actor: Actor,
        item: ItemId,
        title: &str,
        every: Every,
        next: Option<NaiveDate>,
    ) -> Result<Schedule, Error> {
        let (title, next) = check_schedule(title, every, next, self.today()).map_err(Refusal::Schedule)?;
        let found = self.items.get(actor.household, item).await.map_err(named(ObjectKind::Item, item.0))?;
        found.check_changeable().map_err(Refusal::Change)?;
        let rec = self.recorder.recording(actor, Action::Schedule);
        self.repo
            .add_schedule(actor.household, item, &title, every, next, &rec)
            .await
            .map_err(named(ObjectKind::Item, item.0))
    }

    /// The household's schedules, or one item's.
    ///
    /// # Errors
    /// Storage only.
    pub async fn schedules(&self, household: HouseholdId, item: Option<ItemId>) -> Result<Vec<Schedule>, Error> {
        Ok(self.repo.schedules(household, item).await?)
    }

    /// Logs maintenance done on a schedule and moves its next date one period on from the day it was done.
    ///
    /// # Errors
    /// `NotFound`; `Invalid` for a long note; [`Refusal::Schedule`]; [`Refusal::Stale`] when someone else logged
    /// it at the same moment.
    pub async fn done(&self, actor: Actor, id: ScheduleId, req: DoneRequest) -> Result<Schedule, Error> {
        let h = actor.household;
        let note = text(req.note, "note", Lines::Many)?;
        let schedule = self.repo.schedule(h, id).await.map_err(named(ObjectKind::Schedule, id.0))?;
        let (at, next) =
            check_done(&schedule, req.at, note.as_deref(), req.cost, self.today()).map_err(Refusal::Schedule)?;
        let done = Done {
            item: schedule.item,
            schedule: Some(id),
            title: schedule.title.clone(),
            at,
            note,
            cost: req.cost,
            member: actor.member,
        };
        let rec = self.recorder.recording(actor, Action::Maintain);
        self.repo
            .done(h, &done, schedule.next, next, &rec)
            .await
            .map_err(named(ObjectKind::Schedule, id.0))?
            .ok_or_else(|| Refusal::Stale(schedule.item).into())
    }

    /// An item's maintenance log, newest first.
    ///
    /// # Errors
    /// `NotFound` for an item not the household's.
    pub async fn maintenance(&self, household: HouseholdId, item: ItemId) -> Result<Vec<Logged>, Error> {
        self.items.get(household, item).await.map_err(named(ObjectKind::Item, item.0))?;
        Ok(self.repo.maintenance(household, item).await?)
    }

    /// What falls due from today to `within_days` on (overdue loans and maintenance first), soonest first, with
    /// each item's place.
    ///
    /// # Errors
    /// `Invalid` for a window over [`WITHIN_DAYS_MAX`].
    pub async fn due(&self, household: HouseholdId, within_days: u32) -> Result<Vec<DueView>, Error> {
        if within_days > WITHIN_DAYS_MAX {
            return Err(Error::Invalid(format!("within_days: at most {WITHIN_DAYS_MAX}")));
        }
        let today = self.today();
        self.due_from(household, today, within_days).await
    }

    /// [`Lending::due`] as on `today`.
    pub(crate) async fn due_from(
        &self,
        household: HouseholdId,
        today: NaiveDate,
        within_days: u32,
    ) -> Result<Vec<DueView>, Error> {
        let until = today.checked_add_days(chrono::Days::new(u64::from(within_days))).unwrap_or(NaiveDate::MAX);
        let all = due_within(self.repo.due(household, today, until).await?, today, within_days);
        let mut ids: Vec<ItemId> = all.iter().map(|d| d.item).collect();
        ids.sort_unstable();
        ids.dedup();
        let places: HashMap<ItemId, Option<String>> =
            self.items.get_many(household, &ids).await?.into_iter().map(|i| (i.id, i.location())).collect();
        Ok(all
            .into_iter()
            .map(|due| DueView { overdue: due.overdue(today), place: places.get(&due.item).cloned().flatten(), due })
            .collect())
    }
}
