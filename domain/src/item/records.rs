//! What is recorded on an item over time: measurements, faults, tests done, and its leaving.

use super::values::{
    FieldKey, GoneReason, ItemError, MeasurementSource, Severity, TestResult, optional_note, short_text,
};
use crate::Timestamp;
use crate::units::{self, Quantity, Unit};
use chrono::TimeDelta;
use serde::{Deserialize, Serialize};

/// How far past the present a recorded date may lie: a clock a little ahead, a date written in a time zone east
/// of the server's.
pub const RECORDED_AHEAD_MAX: TimeDelta = TimeDelta::days(1);

/// **The** window of a date recorded on an item (a measurement's or a test's `at`): not before 1970 (the
/// Unix epoch; an earlier one is a mistake, a zero value or a two-digit year read wrong), and not more than
/// [`RECORDED_AHEAD_MAX`] after `now`. `field` names the date in the refusal, as the client wrote it.
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use trove_domain::item::check_recorded_at;
/// let now = Utc.with_ymd_and_hms(2026, 5, 1, 12, 0, 0).unwrap();
/// assert!(check_recorded_at("at", now + TimeDelta::hours(23), now).is_ok());
/// let err = check_recorded_at("at", Utc.with_ymd_and_hms(1969, 12, 31, 0, 0, 0).unwrap(), now).unwrap_err();
/// assert_eq!(err.to_string(), "at must be from 1970-01-01 to a day from now, not 1969-12-31T00:00:00+00:00");
/// ```
///
/// # Errors
/// [`ItemError::DateOutOfRange`] naming `field`.
pub fn check_recorded_at(field: &str, at: Timestamp, now: Timestamp) -> Result<(), ItemError> {
    if at < Timestamp::UNIX_EPOCH || at > now + RECORDED_AHEAD_MAX {
        return Err(ItemError::DateOutOfRange { field: field.to_owned(), at });
    }
    Ok(())
}

/// An item that left the inventory: history, never used again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gone {
    pub reason: GoneReason,
    pub at: Timestamp,
    pub note: Option<String>,
}

/// One reading of a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub key: FieldKey,
    pub value: f64,
    pub unit: Unit,
    pub at: Timestamp,
    pub source: MeasurementSource,
}

impl Measurement {
    /// Builds a measurement from a value in any unit spelling; the value is normalised to the canonical unit.
    ///
    /// # Errors
    /// [`ItemError::BadFieldKey`] for a bad key, [`ItemError::BadMeasurement`] for an unknown unit or a value that
    /// is not finite.
    pub fn new(key: &str, value: f64, unit: &str, at: Timestamp, source: MeasurementSource) -> Result<Self, ItemError> {
        let key = FieldKey::new(key)?;
        let q = units::normalise(value, unit)
            .map_err(|e| ItemError::BadMeasurement { key: key.to_string(), reason: e.to_string() })?;
        Ok(Self { key, value: q.value, unit: q.unit, at, source })
    }

    pub fn quantity(&self) -> Quantity {
        Quantity { value: self.value, unit: self.unit }
    }
}

/// Something wrong with an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub text: String,
    pub severity: Severity,
}

impl Fault {
    /// # Errors
    /// [`ItemError::EmptyText`] or [`ItemError::TextTooLong`] for the fault's text.
    pub fn new(text: &str, severity: Severity) -> Result<Self, ItemError> {
        Ok(Self { text: short_text(text, "fault text")?, severity })
    }
}

/// A test that was run on an item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestDone {
    pub name: String,
    pub result: TestResult,
    /// The reading the test gave, if it gives one ("3350 mAh").
    pub value: Option<Quantity>,
    pub at: Timestamp,
    pub note: Option<String>,
}

impl TestDone {
    /// # Errors
    /// [`ItemError::EmptyText`], [`ItemError::TextTooLong`] or [`ItemError::ControlCharacter`] for the name or
    /// the note (which may hold several lines).
    pub fn new(
        name: &str,
        result: TestResult,
        value: Option<Quantity>,
        at: Timestamp,
        note: Option<&str>,
    ) -> Result<Self, ItemError> {
        Ok(Self { name: short_text(name, "test name")?, result, value, at, note: optional_note(note, "test note")? })
    }
}
