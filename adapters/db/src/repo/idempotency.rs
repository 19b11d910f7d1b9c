//! `IdempotencyStore`: one reservation per household, scope and key, pending while its request runs and then
//! completed with the answer.
//!
//! Reserving is one write transaction: insert a pending row unless the key has one (the unique index decides
//! between concurrent inserts), then read the row, locked on PostgreSQL (SQLite's write lock is already held),
//! and renew it in place when it expired or went stale. Renewing in place rather than deleting and inserting
//! keeps the row a concurrent reserver waits on, so that it reads the renewal instead of nothing.

use crate::Store;
use crate::entity::idempotency::{self, COMPLETED, PENDING};
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use trove_application::ports::IdempotencyStore;
use trove_application::ports::idempotency::{
    ANSWER_KEPT_FOR, Fingerprint, PENDING_HELD_FOR, Reservation, Reserve, StoredAnswer,
};
use trove_application::{Conflict, RepoError};
use trove_domain::{HouseholdId, Timestamp};

/// How many times a reservation is tried again when the row it found vanished under it (released by its
/// request between the insert and the read). Each try happens only after another request released the key.
const RESERVE_TRIES: usize = 3;

/// What reserving found on an existing row.
enum Found {
    /// The row expired or went stale: renew it for this request.
    Renew,
    /// Answer this without writing.
    Answer(Reserve),
}

/// The rule of [`IdempotencyStore::reserve`] for a key that already has a row.
fn classify(row: &idempotency::Model, fingerprint: &Fingerprint, now: Timestamp) -> Result<Found, RepoError> {
    match row.state.as_str() {
        PENDING if row.reserved_at >= now - PENDING_HELD_FOR => Ok(Found::Answer(Reserve::Running)),
        PENDING => Ok(Found::Renew),
        COMPLETED => {
            let at = row.completed_at.ok_or_else(|| anyhow!("completed key {} has no completion time", row.id))?;
            if at < now - ANSWER_KEPT_FOR {
                return Ok(Found::Renew);
            }
            if row.fingerprint.as_deref().is_some_and(|f| f != fingerprint.as_str()) {
                return Ok(Found::Answer(Reserve::OtherRequest));
            }
            let status = row.status.ok_or_else(|| anyhow!("completed key {} has no status", row.id))?;
            let status = u16::try_from(status).map_err(|_| anyhow!("bad status {status} in stored answer"))?;
            let body = row.body.clone().ok_or_else(|| anyhow!("completed key {} has no body", row.id))?;
            Ok(Found::Answer(Reserve::Replay(StoredAnswer { status, body, at })))
        }
        other => Err(anyhow!("unknown state {other:?} of idempotency key {}", row.id).into()),
    }
}

/// The condition that a reservation still holds its row.
fn held(household: HouseholdId, reservation: Reservation) -> sea_orm::Condition {
    sea_orm::Condition::all()
        .add(idempotency::Column::Id.eq(reservation.row))
        .add(idempotency::Column::HouseholdId.eq(household.0))
        .add(idempotency::Column::Attempt.eq(reservation.attempt))
        .add(idempotency::Column::State.eq(PENDING))
}

fn no_longer_held() -> RepoError {
    RepoError::Conflict(Conflict::KeyNotHeld)
}

impl Store {
    /// One try of [`IdempotencyStore::reserve`]; `None` when the row vanished between the insert and the read.
    async fn try_reserve(
        &self,
        household: HouseholdId,
        scope: &str,
        key: &str,
        fingerprint: &Fingerprint,
        now: Timestamp,
    ) -> Result<Option<Reserve>, RepoError> {
        let txn = self.begin_write().await.context("begin the key reservation")?;
        let fresh = idempotency::ActiveModel {
            household_id: Set(household.0),
            scope: Set(scope.to_owned()),
            key: Set(key.to_owned()),
            fingerprint: Set(Some(fingerprint.as_str().to_owned())),
            state: Set(PENDING.to_owned()),
            attempt: Set(1),
            reserved_at: Set(now),
            status: Set(None),
            body: Set(None),
            completed_at: Set(None),
            ..Default::default()
        };
        let inserted = idempotency::Entity::insert(fresh)
            .on_conflict(
                OnConflict::columns([
                    idempotency::Column::HouseholdId,
                    idempotency::Column::Scope,
                    idempotency::Column::Key,
                ])
                .do_nothing()
                .to_owned(),
            )
            .exec_without_returning(&txn)
            .await
            .context("insert the key reservation")?;
        let row = idempotency::Entity::find()
            .filter(idempotency::Column::HouseholdId.eq(household.0))
            .filter(idempotency::Column::Scope.eq(scope))
            .filter(idempotency::Column::Key.eq(key))
            .lock_exclusive()
            .one(&txn)
            .await
            .context("read the key reservation")?;
        let Some(row) = row else {
            txn.rollback().await.context("roll back the key reservation")?;
            return Ok(None);
        };
        let reserved = Reserve::Reserved(Reservation { row: row.id, attempt: row.attempt });
        if inserted == 1 {
            txn.commit().await.context("commit the key reservation")?;
            return Ok(Some(reserved));
        }
        match classify(&row, fingerprint, now)? {
            Found::Answer(found) => {
                txn.rollback().await.context("end the key lookup")?;
                Ok(Some(found))
            }
            Found::Renew => {
                idempotency::Entity::update_many()
                    .col_expr(idempotency::Column::Fingerprint, Expr::val(fingerprint.as_str()))
                    .col_expr(idempotency::Column::State, Expr::val(PENDING))
                    .col_expr(idempotency::Column::Attempt, Expr::val(row.attempt + 1))
                    .col_expr(idempotency::Column::ReservedAt, Expr::val(now))
                    .col_expr(idempotency::Column::Status, Expr::val(None::<i32>))
                    .col_expr(idempotency::Column::Body, Expr::val(None::<String>))
                    .col_expr(idempotency::Column::CompletedAt, Expr::val(None::<Timestamp>))
                    .filter(idempotency::Column::Id.eq(row.id))
                    .exec(&txn)
                    .await
                    .context("renew the key reservation")?;
                txn.commit().await.context("commit the key renewal")?;
                Ok(Some(Reserve::Reserved(Reservation { row: row.id, attempt: row.attempt + 1 })))
            }
        }
    }
}

#[async_trait]
impl IdempotencyStore for Store {
    async fn reserve(
        &self,
        household: HouseholdId,
        scope: &str,
        key: &str,
        fingerprint: &Fingerprint,
        now: Timestamp,
    ) -> Result<Reserve, RepoError> {
        for _ in 0..RESERVE_TRIES {
            if let Some(found) = self.try_reserve(household, scope, key, fingerprint, now).await? {
                return Ok(found);
            }
        }
        Err(anyhow!("the reservation of key {key:?} in {scope} vanished {RESERVE_TRIES} times").into())
    }

    async fn complete(
        &self,
        household: HouseholdId,
        reservation: Reservation,
        answer: &StoredAnswer,
    ) -> Result<(), RepoError> {
        let written = idempotency::Entity::update_many()
            .col_expr(idempotency::Column::State, Expr::val(COMPLETED))
            .col_expr(idempotency::Column::Status, Expr::val(i32::from(answer.status)))
            .col_expr(idempotency::Column::Body, Expr::val(answer.body.as_str()))
            .col_expr(idempotency::Column::CompletedAt, Expr::val(answer.at))
            .filter(held(household, reservation))
            .exec(&self.db)
            .await
            .context("complete the key reservation")?;
        if written.rows_affected == 0 {
            return Err(no_longer_held());
        }
        Ok(())
    }

    async fn release(&self, household: HouseholdId, reservation: Reservation) -> Result<(), RepoError> {
        let deleted = idempotency::Entity::delete_many()
            .filter(held(household, reservation))
            .exec(&self.db)
            .await
            .context("release the key reservation")?;
        if deleted.rows_affected == 0 {
            return Err(no_longer_held());
        }
        Ok(())
    }
}
