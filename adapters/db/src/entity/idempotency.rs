//! `idempotency_keys`: one reservation per household, scope and `Idempotency-Key`, pending while its request
//! runs and completed with the answer once it has run.

use sea_orm::entity::prelude::*;

/// `state` while the request that reserved the key runs.
pub(crate) const PENDING: &str = "pending";
/// `state` once the request was answered; `status`, `body` and `completed_at` are set.
pub(crate) const COMPLETED: &str = "completed";

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "idempotency_keys")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub scope: String,
    pub key: String,
    /// The SHA-256 hex of the request; `None` for answers kept before fingerprints (migration m0002).
    pub fingerprint: Option<String>,
    /// [`PENDING`] or [`COMPLETED`].
    pub state: String,
    /// Counts the reservations of this row, so a request whose reservation was taken over cannot settle the
    /// new one.
    pub attempt: i64,
    pub reserved_at: DateTimeUtc,
    pub status: Option<i32>,
    pub body: Option<String>,
    pub completed_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
