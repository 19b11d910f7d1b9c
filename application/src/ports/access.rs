//! Changes that end someone's access, told to every process on the database: each keeps recent token checks
//! ([`crate::auth::TokenChecks`]) and forgets the ones a change ends as soon as it hears of it.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::people::{MemberId, TokenId};

/// What ended: one token (revoked), or every token of a member (removed, or given another role).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessChange {
    Token(TokenId),
    Member(MemberId),
}

impl AccessChange {
    /// The change as a short text (`token:5`, `member:7`), as it travels between processes.
    pub fn to_text(self) -> String {
        match self {
            Self::Token(id) => format!("token:{}", id.0),
            Self::Member(id) => format!("member:{}", id.0),
        }
    }

    /// The change a text of [`AccessChange::to_text`] names; `None` for any other text.
    ///
    /// ```
    /// use trove_application::ports::access::AccessChange;
    /// use trove_domain::people::{MemberId, TokenId};
    /// for c in [AccessChange::Token(TokenId(5)), AccessChange::Member(MemberId(7))] {
    ///     assert_eq!(AccessChange::from_text(&c.to_text()), Some(c));
    /// }
    /// assert_eq!(AccessChange::from_text("member:x"), None);
    /// ```
    pub fn from_text(text: &str) -> Option<Self> {
        let (kind, id) = text.split_once(':')?;
        let id: i64 = id.parse().ok()?;
        match kind {
            "token" => Some(Self::Token(TokenId(id))),
            "member" => Some(Self::Member(MemberId(id))),
            _ => None,
        }
    }
}

/// Tells the other processes on this database of a change that ended access.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait AccessChanges: Send + Sync {
    /// Whether changes reach the other processes as they happen (PostgreSQL's `NOTIFY`). When not, each
    /// process's token checks expire after a short time instead.
    fn pushed(&self) -> bool;

    /// Tells every other process of `change` (after the change is committed).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn announce(&self, change: AccessChange) -> Result<(), RepoError>;
}
