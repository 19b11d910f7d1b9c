//! Trove's domain: what an owner has (items), what may be built (templates), what the model proposes and what
//! the rules make of it (projects), and the rules that decide.
//!
//! Everything here is pure: no I/O, no async, no clock (time is passed in) and nothing that can fail for a
//! reason outside its inputs. The model proposes; the functions in this crate decide.

pub mod allocation;
pub mod barcode;
pub mod bulk;
pub mod catalogue;
pub mod code;
pub mod demo;
pub mod history;
pub mod ids;
pub mod item;
pub mod label;
pub mod listing;
pub mod loan;
pub mod matching;
pub mod measure;
pub mod media;
pub mod money;
pub mod notify;
pub mod pack;
pub mod people;
pub mod place;
pub mod pricing;
pub mod project;
pub mod reading;
pub mod receipt;
pub mod report;
pub mod spend;
pub mod sso;
pub mod template;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod text;
pub mod throttle;
pub mod units;

pub use ids::{HouseholdId, ItemId, MediaId, PlaceId, ProjectId, TemplateId};

/// A point in time. The domain never reads the clock: callers pass it in.
pub type Timestamp = chrono::DateTime<chrono::Utc>;

/// A time as every store keeps it: to the microsecond (PostgreSQL's precision), so a time read back, or moved
/// from SQLite to PostgreSQL by a backup, is the time written. Clocks answer times through it.
///
/// ```
/// use chrono::{TimeZone, Timelike};
/// let t = chrono::Utc.timestamp_opt(1_700_000_000, 123_456_789).unwrap();
/// assert_eq!(trove_domain::kept_time(t).nanosecond(), 123_456_000);
/// ```
pub fn kept_time(t: Timestamp) -> Timestamp {
    use chrono::SubsecRound as _;
    t.trunc_subsecs(6)
}
