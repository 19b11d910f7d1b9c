//! Loans, maintenance schedules and their log, what falls due, and reminders with their delivery.

use crate::RepoError;
use async_trait::async_trait;
use chrono::NaiveDate;
use trove_domain::history::Recording;
use trove_domain::ids::{LoanId, ScheduleId};
use trove_domain::item::Item;
use trove_domain::loan::{Borrower, Done, Due, Every, Loan, Schedule};
use trove_domain::people::MemberId;
use trove_domain::{HouseholdId, ItemId, Timestamp};

/// A loan to write: `units` of `item`, taken only while the item is still as it was read (`version`, for an
/// item lent whole) or its free units still cover them (a stock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLoan {
    pub item: ItemId,
    /// The item's version as read: an item lent whole is taken only at that version.
    pub version: i64,
    /// Whether the item is lent whole (it becomes `lent`) or as units of a stock.
    pub whole: bool,
    pub units: u32,
    pub to: Borrower,
    /// The borrower's name as shown (a member's name now).
    pub to_name: String,
    pub since: NaiveDate,
    pub due: Option<NaiveDate>,
    pub note: Option<String>,
}

/// Which loans to list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoanFilter {
    /// Only loans not returned yet.
    pub open: bool,
    pub item: Option<ItemId>,
    /// Only loans to this member.
    pub member: Option<MemberId>,
}

/// Maintenance done, as the log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub id: i64,
    pub done: Done,
    pub recorded_at: Timestamp,
}

/// Loans, schedules and the maintenance log. Every write records its history in its own transaction.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait LendingRepo: Send + Sync {
    /// Writes a loan and takes its units from the item (a whole item becomes `lent`, a stock's `units_lent`
    /// grows), keeps the item's shown loan, and records a `lend` event on the item. Answers the loan and the item
    /// as it is now.
    ///
    /// # Errors
    /// `NotFound` when the item is not the household's; `Stale(item)` when it changed since it was read or its
    /// free units no longer cover the loan.
    async fn lend(&self, household: HouseholdId, loan: &NewLoan, rec: &Recording) -> Result<(Loan, Item), RepoError>;

    /// Marks an open loan returned and gives its units back, recording a `return` event on the item. `None` when
    /// the loan was returned already.
    ///
    /// # Errors
    /// `NotFound` when the loan is not the household's.
    async fn give_back(&self, household: HouseholdId, loan: LoanId, rec: &Recording)
    -> Result<Option<Loan>, RepoError>;

    /// One loan.
    ///
    /// # Errors
    /// `NotFound`.
    async fn loan(&self, household: HouseholdId, id: LoanId) -> Result<Loan, RepoError>;

    /// Loans as filtered, open ones due back first (then without a date, then the returned, newest first).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn loans(&self, household: HouseholdId, filter: LoanFilter) -> Result<Vec<Loan>, RepoError>;

    /// Writes a schedule of an item and records a `schedule` event on the item.
    ///
    /// # Errors
    /// `NotFound` when the item is not the household's.
    async fn add_schedule(
        &self,
        household: HouseholdId,
        item: ItemId,
        title: &str,
        every: Every,
        next: NaiveDate,
        rec: &Recording,
    ) -> Result<Schedule, RepoError>;

    /// One schedule.
    ///
    /// # Errors
    /// `NotFound`.
    async fn schedule(&self, household: HouseholdId, id: ScheduleId) -> Result<Schedule, RepoError>;

    /// The household's schedules, or one item's, soonest first.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn schedules(&self, household: HouseholdId, item: Option<ItemId>) -> Result<Vec<Schedule>, RepoError>;

    /// Logs maintenance done on a schedule and moves it to `next`, only if it is still at `was` (two people
    /// ticking the same task off log it once); records a `maintain` event on the item. `None` when it moved.
    ///
    /// # Errors
    /// `NotFound` when the schedule is not the household's.
    async fn done(
        &self,
        household: HouseholdId,
        done: &Done,
        was: NaiveDate,
        next: NaiveDate,
        rec: &Recording,
    ) -> Result<Option<Schedule>, RepoError>;

    /// The maintenance log of an item, newest first.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn maintenance(&self, household: HouseholdId, item: ItemId) -> Result<Vec<Logged>, RepoError>;

    /// Everything of the household that falls due on or before `until` and is still open: loans due back (not
    /// returned), schedules' next dates, and warranties of present items that end from `today` to `until`. In
    /// no particular order (`trove_domain::loan::due_within` orders them).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn due(&self, household: HouseholdId, today: NaiveDate, until: NaiveDate) -> Result<Vec<Due>, RepoError>;
}

/// A member's reminder channels.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Channels {
    pub email: Option<String>,
    pub urls: Vec<String>,
    pub lead_days: u32,
}

/// A member who asked for reminders, with their channels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscriber {
    pub household: HouseholdId,
    pub member: MemberId,
    pub channels: Channels,
}

/// A reminder to write: to a member, of a thing (its key and the lead time), by one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReminder {
    pub member: MemberId,
    pub key: String,
    pub channel: String,
    pub item: ItemId,
    pub subject: String,
    pub body: String,
}

/// A reminder as kept: what was (or is to be) sent, and how its delivery went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reminder {
    pub id: i64,
    pub household: HouseholdId,
    pub member: MemberId,
    pub key: String,
    pub channel: String,
    pub item: ItemId,
    pub subject: String,
    pub body: String,
    /// `pending`, `sent` or `failed` (given up).
    pub status: String,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub created_at: Timestamp,
    pub next_try_at: Timestamp,
    pub sent_at: Option<Timestamp>,
}

/// Settings, calendar keys and reminders.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait ReminderRepo: Send + Sync {
    /// A member's channels (none set: no e-mail, no URLs, the default lead time).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn channels(&self, member: MemberId) -> Result<Option<Channels>, RepoError>;

    /// Sets a member's channels.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn set_channels(&self, household: HouseholdId, member: MemberId, c: &Channels) -> Result<(), RepoError>;

    /// Every member of every household who has a channel.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn subscribers(&self) -> Result<Vec<Subscriber>, RepoError>;

    /// Sets a member's calendar key (the old one stops working).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn set_calendar_key(&self, household: HouseholdId, member: MemberId, key: &str) -> Result<(), RepoError>;

    /// A member's calendar key, if they have one.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn calendar_key(&self, member: MemberId) -> Result<Option<String>, RepoError>;

    /// The member (and household) whose calendar key is `key`.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn calendar_owner(&self, key: &str) -> Result<Option<(HouseholdId, MemberId)>, RepoError>;

    /// The household's key for signing webhook bodies, made from `fresh` the first time (by whichever process
    /// asks first: every process answers the same one).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn notify_secret(&self, household: HouseholdId, fresh: &str) -> Result<String, RepoError>;

    /// Writes reminders that are not written yet (one per member, key and channel: a second writer's are
    /// ignored); answers how many were new.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn add_reminders(&self, household: HouseholdId, all: &[NewReminder], at: Timestamp)
    -> Result<u64, RepoError>;

    /// Claims up to `limit` pending reminders due to be tried at `now` that no other process holds, holding them
    /// until `until` (on PostgreSQL `FOR UPDATE SKIP LOCKED`, on SQLite under the write lock), so that each is
    /// delivered by one process; a process that dies holding one lets it go at `until`.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn claim(&self, now: Timestamp, until: Timestamp, limit: u64) -> Result<Vec<Reminder>, RepoError>;

    /// Marks a claimed reminder sent.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn sent(&self, id: i64, at: Timestamp) -> Result<(), RepoError>;

    /// Marks a claimed reminder failed: tried again at `retry` or, with none, given up.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn failed(&self, id: i64, error: &str, retry: Option<Timestamp>) -> Result<(), RepoError>;

    /// The household's reminders, newest first: the delivery log.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn log(&self, household: HouseholdId, limit: u64) -> Result<Vec<Reminder>, RepoError>;
}
