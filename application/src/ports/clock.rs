//! Time, passed in so that use cases and tests agree on "now".

use trove_domain::Timestamp;

/// The source of "now".
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait Clock: Send + Sync {
    /// The current instant, UTC.
    fn now(&self) -> Timestamp;
}
