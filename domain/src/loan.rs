//! Lending and maintenance: who has an item and until when, what is due to be done to it and when, and the one list
//! of what falls due soon (loans due back, maintenance due, warranties ending), soonest first.

use crate::ItemId;
use chrono::{Months, NaiveDate};

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
}

/// A loan as asked, checked against the units free to lend (the item's units neither held by projects nor out on
/// other loans).
///
/// ```
/// use chrono::NaiveDate;
/// use trove_domain::loan::{Borrower, check_loan};
/// let day = |d| NaiveDate::from_ymd_opt(2026, 12, d).unwrap();
/// let sam = Borrower::Named { name: "Sam next door".into(), contact: None };
/// assert!(check_loan(&sam, 1, 1, day(4), Some(day(11))).is_ok());
/// assert!(check_loan(&sam, 2, 1, day(4), None).is_err());
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
) -> Result<(), LoanRefused> {
    if let Borrower::Named { name, .. } = to
        && (name.trim().is_empty() || name.chars().count() > TEXT_MAX)
    {
        return Err(LoanRefused::BadName);
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

/// What falls due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DueKind {
    /// A loan due back.
    LoanBack,
    /// A maintenance task due.
    Maintenance,
    /// A warranty's last day.
    WarrantyEnds,
}

/// One thing that falls due on a day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    pub on: NaiveDate,
    pub kind: DueKind,
    pub item: ItemId,
    /// What it is ("Descale", "lent to Sam next door").
    pub what: String,
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
        assert_eq!(check_loan(&sam, 0, 3, day(12, 4), None), Err(LoanRefused::NoUnits));
        assert_eq!(check_loan(&sam, 4, 3, day(12, 4), None), Err(LoanRefused::TooMany { asked: 4, available: 3 }));
        assert_eq!(
            check_loan(&sam, 1, 3, day(12, 4), Some(day(12, 3))).unwrap_err().to_string(),
            "the loan is due back on 2026-12-03, before it starts on 2026-12-04"
        );
        let blank = Borrower::Named { name: "  ".into(), contact: None };
        assert_eq!(check_loan(&blank, 1, 1, day(12, 4), None), Err(LoanRefused::BadName));
        assert_eq!(check_loan(&Borrower::Member(2), 3, 3, day(12, 4), Some(day(12, 4))), Ok(()));
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
        let due = |on, kind, item: i64| Due { on, kind, item: ItemId(item), what: String::new() };
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
