//! Delivering reminders (e-mail by SMTP, pushes to notification URLs) and writing a calendar feed.

use async_trait::async_trait;
use chrono::NaiveDate;
use trove_domain::loan::Due;

/// A reminder as it goes out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub subject: String,
    pub body: String,
    /// What a webhook's JSON carries beside the text: the thing's key and item, and the household.
    pub key: String,
    pub item: i64,
    pub household: String,
}

/// Why a delivery failed, for the delivery log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DeliveryFailed(pub String);

/// Sends reminders.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait Notifier: Send + Sync {
    /// Sends `note` by `channel`: `email:<address>`, or a notification URL (`trove_domain::notify::push`); a
    /// webhook's body is signed with `secret`.
    ///
    /// # Errors
    /// [`DeliveryFailed`] saying why (not configured, refused, unreachable, answered an error).
    async fn deliver(&self, channel: &str, note: &Note, secret: &str) -> Result<(), DeliveryFailed>;
}

/// An iCalendar feed's writer.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait CalendarWriter: Send + Sync {
    /// The feed named `name` holding each of `all` as an all-day event on its day, its UID made from the
    /// thing's key (stable from one fetch to the next), stamped `today`.
    fn feed(&self, name: &str, all: &[Due], today: NaiveDate) -> String;
}
