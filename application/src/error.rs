//! The errors ports report.

use trove_domain::ItemId;

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
