//! The iCalendar feed (RFC 5545) through the `icalendar` crate: one all-day event per thing that falls due.

use chrono::{NaiveDate, TimeZone as _, Utc};
use icalendar::{Calendar, Component as _, Event, EventLike as _};
use trove_application::ports::CalendarWriter;
use trove_domain::loan::Due;

/// Writes the feed.
#[derive(Debug, Clone, Copy, Default)]
pub struct IcsCalendar;

impl CalendarWriter for IcsCalendar {
    fn feed(&self, name: &str, all: &[Due], today: NaiveDate) -> String {
        let mut calendar = Calendar::new();
        calendar.name(name).ttl(&chrono::Duration::hours(1));
        let stamp = Utc.from_utc_datetime(&today.and_hms_opt(0, 0, 0).unwrap_or_default());
        for due in all {
            let next = due.on.succ_opt().unwrap_or(due.on);
            let event = Event::new()
                .uid(&format!("{}@trove", due.key()))
                .timestamp(stamp)
                .summary(&format!("{}: {}", due.item_name, due.what))
                .description(&due.line(today))
                .starts(due.on)
                .ends(next)
                .done();
            calendar.push(event);
        }
        calendar.done().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trove_domain::ItemId;
    use trove_domain::loan::DueKind;

    #[test]
    fn each_thing_due_is_an_all_day_event_with_a_stable_uid() {
        let day = |d| NaiveDate::from_ymd_opt(2026, 12, d).unwrap();
        let due = Due {
            on: day(11),
            kind: DueKind::LoanBack,
            item: ItemId(4),
            item_name: "Cordless drill, 18 V".into(),
            what: "lent to Sam; next door".into(),
            source: 9,
        };
        let a = IcsCalendar.feed("Trove: Home", std::slice::from_ref(&due), day(4));
        assert_eq!(a, IcsCalendar.feed("Trove: Home", &[due], day(4)), "the same feed twice");
        assert!(a.starts_with("BEGIN:VCALENDAR\r\n"), "{a}");
        assert!(a.contains("UID:loan_back-9-20261211@trove\r\n"), "{a}");
        assert!(a.contains("DTSTART;VALUE=DATE:20261211\r\n") && a.contains("DTEND;VALUE=DATE:20261212\r\n"), "{a}");
        assert!(a.contains("SUMMARY:Cordless drill\\, 18 V: lent to Sam\\; next door"), "text escaped: {a}");
        assert!(a.lines().all(|l| l.len() <= 75), "lines folded at 75 octets: {a}");
    }
}
