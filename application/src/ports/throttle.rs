//! The failed sign-ins the throttle counts, kept in the database: shared by every process on one database and
//! kept across restarts, so neither more processes nor a restart give an attacker more guesses.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::Timestamp;
use trove_domain::throttle::{ClientAddress, RecentFailures};

/// Failed sign-ins, by the name typed (its key, [`trove_domain::people::MemberName::key`] or the lower-cased
/// text when it is no valid name) and the client address.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait SignInFailures: Send + Sync {
    /// The failures after `since`, newest first, at most `most` of each kind: of `name` from `from`, from
    /// `from` under any name, and of `name` from anywhere.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn recent_failures(
        &self,
        name: &str,
        from: &ClientAddress,
        since: Timestamp,
        most: usize,
    ) -> Result<RecentFailures, RepoError>;

    /// Records a failed sign-in of `name` from `from` at `at`, and forgets failures before `forget_before`
    /// (they no longer count), so the table stays the size of one window.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn record_failure(
        &self,
        name: &str,
        from: &ClientAddress,
        at: Timestamp,
        forget_before: Timestamp,
    ) -> Result<(), RepoError>;

    /// Forgets the failures of `name` from `from` (the member signed in from there).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn forget_failures(&self, name: &str, from: &ClientAddress) -> Result<(), RepoError>;
}

/// Secrets of this installation kept in its database, made once and shared by every process on it.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait InstanceSecrets: Send + Sync {
    /// The secret called `name`; when there is none yet, `candidate` is stored and answered (when processes race,
    /// every one answers the secret that was stored first).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn instance_secret(&self, name: &str, candidate: String) -> Result<String, RepoError>;
}
