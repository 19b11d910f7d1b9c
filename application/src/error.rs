//! The errors ports and use cases report.

use trove_domain::ItemId;
use trove_domain::spend::BudgetReached;

use crate::metered::RunSpend;

/// What a repository port reports besides success.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The object does not exist in this household.
    #[error("not found")]
    NotFound,
    /// A conditional write found the row changed since it was read (another writer got there first).
    #[error("item {0} changed since it was read")]
    Stale(ItemId),
    /// A conditional write found the object in another state than the one required.
    #[error("{0}")]
    Conflict(String),
    /// Anything else: the database is unreachable, a row does not map to the domain, ...
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// What a use case reports besides success: the variants a caller (the HTTP adapter) branches on, and one
/// opaque `Unexpected` for everything else.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input is malformed or out of bounds; nothing was written.
    #[error("{0}")]
    Invalid(String),
    /// The object does not exist (or belongs to another household).
    #[error("{0}")]
    NotFound(String),
    /// The object is not in a state that allows this (reserved, accepted twice, wrong intent).
    #[error("{0}")]
    Conflict(String),
    /// A rule refused the request as a whole.
    #[error("{0}")]
    Rule(String),
    /// This month's model budget is spent; nothing was sent.
    #[error(transparent)]
    Budget(#[from] BudgetReached),
    /// The model backend cannot do this; `setting` enables it.
    #[error("{what} needs the Model API: set {setting}")]
    NotConfigured { what: String, setting: &'static str },
    /// The configured model backend does not offer `capability` (its provider profile lacks it); nothing was
    /// sent. The message names it and a provider that has it.
    #[error("{message}")]
    Unavailable { capability: &'static str, message: String },
    /// The model failed (after retries), answered something unusable, or the loop ran out of steps. Nothing was
    /// written but the spend of the calls that were made.
    #[error("{reason}")]
    ModelFailed { reason: String, spend: RunSpend },
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

impl From<RepoError> for Error {
    fn from(e: RepoError) -> Self {
        match e {
            RepoError::NotFound => Error::NotFound("not found".into()),
            RepoError::Stale(item) => Error::Conflict(format!("item {item} changed while this request ran; try again")),
            RepoError::Conflict(m) => Error::Conflict(m),
            RepoError::Unexpected(e) => Error::Unexpected(e),
        }
    }
}

/// Turns a repository `NotFound` into a use-case `NotFound` naming the thing.
pub(crate) fn named(what: impl Fn() -> String) -> impl Fn(RepoError) -> Error {
    move |e| match e {
        RepoError::NotFound => Error::NotFound(what()),
        other => other.into(),
    }
}
