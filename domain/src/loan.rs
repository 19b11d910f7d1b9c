//! Lending and maintenance: who has an item and until when, what is due to be done to it and when, and the one list
//! of what falls due soon (loans due back, maintenance due, warranties ending), soonest first.

use crate::ids::{LoanId, ScheduleId};
use crate::money::Money;
use crate::people::MemberId;
use crate::{ItemId, Timestamp};
use chrono::{Months, NaiveDate};
use serde::{Deserialize, Serialize};

/// Longest borrower name or contact, and loan note, in characters.
pub const TEXT_MAX: usize = 200;

/// Who has a lent item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Borrower {
    /// A member of the household.
    Member(i64),
    /// Someone outside it ("Sam next door"), with a way to reach them.
    Named { name: String, contact: Option<String> },
}

impl Borrower {
    /// The borrower as a name: a member's name is looked up by whoever shows it (`member_name`).
    pub fn shown(&self, member_name: impl FnOnce(i64) -> Option<String>) -> String {
        match self {
            Borrower::Member(id) => member_name(*id).unwrap_or_else(|| format!("member {id}")),
            Borrower::Named { name, .. } => name.trim().to_owned(),
        }
    }
}

/// An item's open loan as the item shows it (`"loan": {"to", "since", "due"}`), kept with the item by the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OnLoan {
    pub id: LoanId,
    /// Who has it, as a name.
    pub to: String,
    pub since: NaiveDate,
    pub due: Option<NaiveDate>,
}

/// A loan as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loan {
    pub id: LoanId,
    pub item: ItemId,
    pub item_name: String,
    pub units: u32,
    pub to: Borrower,
    /// The borrower as a name (a member's name read with the loan).
    pub to_name: String,
    pub since: NaiveDate,
    pub due: Option<NaiveDate>,
    pub note: Option<String>,
    pub returned_at: Option<Timestamp>,
    pub created_by: Option<MemberId>,
}

impl Loan {
    /// The item's open loan as it shows it.
    pub fn on_loan(&self) -> OnLoan {
        OnLoan { id: self.id, to: self.to_name.clone(), since: self.since, due: self.due }
    }

    /// Of an item's open loans, the one it shows: the one due back first (a loan without a date last), then the
    /// oldest.
    pub fn shown_of<'a>(open: impl IntoIterator<Item = &'a Loan>) -> Option<&'a Loan> {
        open.into_iter().filter(|l| l.returned_at.is_none()).min_by_key(|l| (l.due.is_none(), l.due, l.since, l.id))
    }

    /// What the history says of it ("Sam next door, 2 units, due back 2026-12-11").
    pub fn described(&self) -> String {
        let mut s = self.to_name.clone();
        if self.units != 1 {
            s.push_str(&format!(", {} units", self.units));
        }
        if let Some(due) = self.due {
            s.push_str(&format!(", due back {due}"));
        }
        s
    }
}

/// Why a loan is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoanRefused {
    #[error("lend at least one unit")]
    NoUnits,
    #[error("only {available} units are free to lend, not {asked}")]
    TooMany { asked: u32, available: u32 },
    #[error("the loan is due back on {due}, before it starts on {since}")]
    DueBeforeStart { since: NaiveDate, due: NaiveDate },
    #[error("the borrower needs a name of 1 to {TEXT_MAX} characters")]
    BadName,
    #[error("a loan cannot start in the future ({since})")]
    StartsInFuture { since: NaiveDate },
    /// A control character in the borrower's name or contact (one line each).
    #[error("{0}")]
    Control(crate::text::ControlCharacter),
}

/// A loan as asked, checked against the units free to lend (the item's units neither held by projects nor out on
/// other loans) and its dates: it starts today or earlier (a loan recorded late), and is due back no earlier.
///
/// ```
/// use chrono::NaiveDate;
/// use trove_domain::loan::{Borrower, check_loan};
/// let day = |d| NaiveDate::from_ymd_opt(2026, 12, d).unwrap();
/// let sam = Borrower::Named { name: "Sam next door".into(), contact: None };
/// assert!(check_loan(&sam, 1, 1, day(4), Some(day(11)), day(4)).is_ok());
/// assert!(check_loan(&sam, 2, 1, day(4), None, day(4)).is_err());
/// ```
///
/// # Errors
/// [`LoanRefused`] naming the first rule broken.
pub fn check_loan(
    to: &Borrower,
    units: u32,
    available: u32,
    since: NaiveDate,
    due: Option<NaiveDate>,
    today: NaiveDate,
) -> Result<(), LoanRefused> {
    if since > today {
        return Err(LoanRefused::StartsInFuture { since });
    }
    if let Borrower::Named { name, contact } = to {
        if name.trim().is_empty() || name.chars().count() > TEXT_MAX {
            return Err(LoanRefused::BadName);
        }
        crate::text::check("to.name", name, crate::text::Lines::One).map_err(LoanRefused::Control)?;
        if let Some(contact) = contact {
            crate::text::check("to.contact", contact, crate::text::Lines::One).map_err(LoanRefused::Control)?;
        }
    }
    if units == 0 {
        return Err(LoanRefused::NoUnits);
    }
    if units > available {
        return Err(LoanRefused::TooMany { asked: units, available });
    }
    if let Some(due) = due
        && due < since
    {
        return Err(LoanRefused::DueBeforeStart { since, due });
    }
    Ok(())
}

/// Whether a loan due back on `due` (and not returned) is overdue on `today`: the day after it is due.
pub fn overdue(due: Option<NaiveDate>, returned: bool, today: NaiveDate) -> bool {
    !returned && due.is_some_and(|d| today > d)
}

/// How often a maintenance task comes round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Every {
    Days(u32),
    Months(u32),
}

impl Every {
    /// The next time the task is due after it was done on `done`; a month later from the 31st is the month's last
    /// day.
    ///
    /// ```
    /// use chrono::NaiveDate;
    /// use trove_domain::loan::Every;
    /// let jan31 = NaiveDate::from_ymd_opt(2027, 1, 31).unwrap();
    /// assert_eq!(Every::Months(1).after(jan31), NaiveDate::from_ymd_opt(2027, 2, 28));
    /// assert_eq!(Every::Days(10).after(jan31), NaiveDate::from_ymd_opt(2027, 2, 10));
    /// ```
    pub fn after(self, done: NaiveDate) -> Option<NaiveDate> {
        match self {
            Every::Days(n) if n > 0 => done.checked_add_days(chrono::Days::new(u64::from(n))),
            Every::Months(n) if n > 0 => done.checked_add_months(Months::new(n)),
            _ => None,
        }
    }
}

/// Longest schedule title in characters.
pub const TITLE_MAX: usize = 120;
/// Longest period of a schedule: ten years.
pub const EVERY_DAYS_MAX: u32 = 3_660;
pub const EVERY_MONTHS_MAX: u32 = 120;

/// Why a schedule or a done maintenance is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleRefused {
    #[error("a schedule needs a title of 1 to {TITLE_MAX} characters")]
    BadTitle,
    #[error("a schedule comes round every 1 to {EVERY_DAYS_MAX} days or 1 to {EVERY_MONTHS_MAX} months")]
    BadEvery,
    #[error("maintenance cannot be done in the future ({at})")]
    DoneInFuture { at: NaiveDate },
    #[error("a note is at most {TEXT_MAX} characters")]
    LongNote,
    #[error("a cost cannot be negative")]
    NegativeCost,
}

/// A maintenance task of an item, coming round every so often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub id: ScheduleId,
    pub item: ItemId,
    pub item_name: String,
    pub title: String,
    pub every: Every,
    pub next: NaiveDate,
}

impl Schedule {
    /// What the history says of it ("Descale every 3 months, next 2027-03-01").
    pub fn described(&self) -> String {
        format!("{} every {}, next {}", self.title, self.every, self.next)
    }
}

/// A schedule as asked, checked: its title and period; its first date is `next` or one period from `today`.
///
/// # Errors
/// [`ScheduleRefused`].
pub fn check_schedule(
    title: &str,
    every: Every,
    next: Option<NaiveDate>,
    today: NaiveDate,
) -> Result<(String, NaiveDate), ScheduleRefused> {
    let title = title.trim();
    if title.is_empty() || title.chars().count() > TITLE_MAX || title.chars().any(char::is_control) {
        return Err(ScheduleRefused::BadTitle);
    }
    let ok = match every {
        Every::Days(n) => (1..=EVERY_DAYS_MAX).contains(&n),
        Every::Months(n) => (1..=EVERY_MONTHS_MAX).contains(&n),
    };
    if !ok {
        return Err(ScheduleRefused::BadEvery);
    }
    let next = match next {
        Some(n) => n,
        None => every.after(today).ok_or(ScheduleRefused::BadEvery)?,
    };
    Ok((title.to_owned(), next))
}

/// Maintenance done, as the log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub item: ItemId,
    pub schedule: Option<ScheduleId>,
    pub title: String,
    pub at: NaiveDate,
    pub note: Option<String>,
    pub cost: Option<Money>,
    pub member: Option<MemberId>,
}

/// Maintenance done on `at` (today when not given), checked; answers the day and the schedule's next date
/// (one period after the day it was done).
///
/// # Errors
/// [`ScheduleRefused`].
pub fn check_done(
    schedule: &Schedule,
    at: Option<NaiveDate>,
    note: Option<&str>,
    cost: Option<Money>,
    today: NaiveDate,
) -> Result<(NaiveDate, NaiveDate), ScheduleRefused> {
    let at = at.unwrap_or(today);
    if at > today {
        return Err(ScheduleRefused::DoneInFuture { at });
    }
    if note.is_some_and(|n| n.chars().count() > TEXT_MAX) {
        return Err(ScheduleRefused::LongNote);
    }
    if cost.is_some_and(|c| c.minor < 0) {
        return Err(ScheduleRefused::NegativeCost);
    }
    let next = schedule.every.after(at).ok_or(ScheduleRefused::BadEvery)?;
    Ok((at, next))
}

impl std::fmt::Display for Every {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Every::Days(1) => f.write_str("day"),
            Every::Days(n) => write!(f, "{n} days"),
            Every::Months(1) => f.write_str("month"),
            Every::Months(n) => write!(f, "{n} months"),
        }
    }
}

/// What falls due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DueKind {
    /// A loan due back.
    LoanBack,
    /// A maintenance task due.
    Maintenance,
    /// A warranty's last day.
    WarrantyEnds,
}

impl DueKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DueKind::LoanBack => "loan_back",
            DueKind::Maintenance => "maintenance",
            DueKind::WarrantyEnds => "warranty_ends",
        }
    }
}

/// One thing that falls due on a day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    pub on: NaiveDate,
    pub kind: DueKind,
    pub item: ItemId,
    pub item_name: String,
    /// What it is ("Descale", "lent to Sam next door").
    pub what: String,
    /// The loan or schedule it comes from (the item itself for a warranty): with the kind, what a reminder and a
    /// calendar event are keyed by.
    pub source: i64,
}

impl Due {
    /// What a loan due back is called: "lent to Sam next door", with its units when more than one.
    ///
    /// ```
    /// assert_eq!(trove_domain::loan::Due::loan_what("Sam", 1), "lent to Sam");
    /// assert_eq!(trove_domain::loan::Due::loan_what("Sam", 3), "lent to Sam (3 units)");
    /// ```
    pub fn loan_what(borrower: &str, units: u32) -> String {
        if units == 1 { format!("lent to {borrower}") } else { format!("lent to {borrower} ({units} units)") }
    }

    /// What a warranty's last day is called.
    pub const WARRANTY_WHAT: &'static str = "warranty";

    /// The one key of this thing on this day: a reminder is sent once per key (and lead time), so a thing that
    /// changes date is reminded of again, and a calendar event's UID is made from it.
    pub fn key(&self) -> String {
        format!("{}-{}-{}", self.kind.as_str(), self.source, self.on.format("%Y%m%d"))
    }

    /// Whether it is overdue on `today` (a warranty's end is never overdue: it has simply ended).
    pub fn overdue(&self, today: NaiveDate) -> bool {
        self.kind != DueKind::WarrantyEnds && self.on < today
    }

    /// One line of it for a person: "Cordless drill: lent to Sam next door, due back 2026-12-03 (overdue)".
    pub fn line(&self, today: NaiveDate) -> String {
        let when = match self.kind {
            DueKind::LoanBack => format!("due back {}", self.on),
            DueKind::Maintenance => format!("due {}", self.on),
            DueKind::WarrantyEnds => format!("warranty ends {}", self.on),
        };
        let late = if self.overdue(today) { " (overdue)" } else { "" };
        format!("{}: {}, {when}{late}", self.item_name, self.what)
    }
}

/// Whether a reminder of `due` is to go out on `today` to someone who asked for `lead_days` of notice.
pub fn remind_now(due: &Due, today: NaiveDate, lead_days: u32) -> bool {
    let from = due.on.checked_sub_days(chrono::Days::new(u64::from(lead_days))).unwrap_or(NaiveDate::MIN);
    today >= from && (due.kind != DueKind::WarrantyEnds || due.on >= today)
}

/// Longest lead time of reminders, in days.
pub const LEAD_DAYS_MAX: u32 = 365;

/// Attempts at a delivery before it is given up.
pub const DELIVERY_ATTEMPTS: u32 = 8;

/// When a failed delivery is tried again: `base` (the scheduler's period) doubled at each failure, at most a day.
/// `None` once [`DELIVERY_ATTEMPTS`] have failed.
///
/// ```
/// use std::time::Duration;
/// use trove_domain::loan::retry_after;
/// let base = Duration::from_secs(900);
/// assert_eq!(retry_after(base, 1), Some(Duration::from_secs(1800)));
/// assert_eq!(retry_after(base, 7), Some(Duration::from_secs(86_400)));
/// assert_eq!(retry_after(base, 8), None);
/// ```
pub fn retry_after(base: std::time::Duration, failed: u32) -> Option<std::time::Duration> {
    if failed >= DELIVERY_ATTEMPTS {
        return None;
    }
    let wait = base.saturating_mul(1 << failed.min(20));
    Some(wait.min(std::time::Duration::from_secs(86_400)))
}

/// What of `all` falls due from `today` to `within_days` after it, soonest first (then by kind and item); what is
/// overdue (a day before today) comes first. A warranty that already ended is not due any more.
pub fn due_within(mut all: Vec<Due>, today: NaiveDate, within_days: u32) -> Vec<Due> {
    let last = today.checked_add_days(chrono::Days::new(u64::from(within_days))).unwrap_or(NaiveDate::MAX);
    all.retain(|d| d.on <= last && (d.kind != DueKind::WarrantyEnds || d.on >= today));
    all.sort_by_key(|d| (d.on, d.kind, d.item));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, m, d).unwrap()
    }

    #[test]
    fn a_loan_is_checked_against_the_free_units_and_its_dates() {
        let sam = Borrower::Named { name: "Sam".into(), contact: Some("07700 900123".into()) };
        assert_eq!(check_loan(&sam, 0, 3, day(12, 4), None, day(12, 4)), Err(LoanRefused::NoUnits));
        assert_eq!(
            check_loan(&sam, 4, 3, day(12, 4), None, day(12, 4)),
            Err(LoanRefused::TooMany { asked: 4, available: 3 })
        );
        assert_eq!(
            check_loan(&sam, 1, 3, day(12, 4), Some(day(12, 3)), day(12, 4)).unwrap_err().to_string(),
            "the loan is due back on 2026-12-03, before it starts on 2026-12-04"
        );
        let blank = Borrower::Named { name: "  ".into(), contact: None };
        assert_eq!(check_loan(&blank, 1, 1, day(12, 4), None, day(12, 4)), Err(LoanRefused::BadName));
        for (name, contact, field) in [("Sam\u{7}", None, "to.name"), ("Sam", Some("0770\n0900"), "to.contact")] {
            let odd = Borrower::Named { name: name.into(), contact: contact.map(str::to_owned) };
            match check_loan(&odd, 1, 1, day(12, 4), None, day(12, 4)) {
                Err(LoanRefused::Control(c)) => assert_eq!(c.field, field),
                other => panic!("{name:?} {contact:?}: {other:?}"),
            }
        }
        assert_eq!(check_loan(&Borrower::Member(2), 3, 3, day(12, 4), Some(day(12, 4)), day(12, 4)), Ok(()));
        assert_eq!(
            check_loan(&Borrower::Member(2), 1, 1, day(12, 5), None, day(12, 4)),
            Err(LoanRefused::StartsInFuture { since: day(12, 5) })
        );
        assert!(check_loan(&Borrower::Member(2), 1, 1, day(11, 20), Some(day(11, 27)), day(12, 4)).is_ok(), "late");
        assert!(!overdue(Some(day(12, 4)), false, day(12, 4)), "due today is not overdue yet");
        assert!(overdue(Some(day(12, 4)), false, day(12, 5)));
        assert!(!overdue(Some(day(12, 4)), true, day(12, 5)), "returned");
        assert!(!overdue(None, false, day(12, 5)), "no due date");
    }

    #[test]
    fn a_schedule_moves_on_by_its_period() {
        assert_eq!(Every::Months(3).after(day(11, 30)), Some(NaiveDate::from_ymd_opt(2027, 2, 28).unwrap()));
        assert_eq!(Every::Days(0).after(day(11, 30)), None);
        assert_eq!(Every::Months(0).after(day(11, 30)), None);
    }

    #[test]
    fn what_falls_due_comes_soonest_first_with_the_overdue_before() {
        let due = |on, kind, item: i64| Due {
            on,
            kind,
            item: ItemId(item),
            item_name: String::new(),
            what: String::new(),
            source: item,
        };
        let all = vec![
            due(day(12, 20), DueKind::WarrantyEnds, 1),
            due(day(12, 10), DueKind::Maintenance, 2),
            due(day(12, 1), DueKind::LoanBack, 3),
            due(day(11, 30), DueKind::WarrantyEnds, 4),
            due(day(12, 10), DueKind::LoanBack, 5),
            due(NaiveDate::from_ymd_opt(2027, 2, 1).unwrap(), DueKind::Maintenance, 6),
            due(day(6, 1), DueKind::Maintenance, 7),
        ];
        let soon = due_within(all, day(12, 4), 30);
        let order: Vec<i64> = soon.iter().map(|d| d.item.0).collect();
        assert_eq!(order, vec![7, 3, 5, 2, 1], "overdue first; the ended warranty and the far task left out");
    }
}
