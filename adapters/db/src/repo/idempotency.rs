//! `IdempotencyStore`: answers kept per household, scope and key.

use crate::Store;
use crate::entity::idempotency;
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use trove_application::RepoError;
use trove_application::ports::IdempotencyStore;
use trove_application::ports::idempotency::StoredAnswer;
use trove_domain::{HouseholdId, Timestamp};

#[async_trait]
impl IdempotencyStore for Store {
    async fn find(
        &self,
        household: HouseholdId,
        scope: &str,
        key: &str,
        since: Timestamp,
    ) -> Result<Option<StoredAnswer>, RepoError> {
        let row = idempotency::Entity::find()
            .filter(idempotency::Column::HouseholdId.eq(household.0))
            .filter(idempotency::Column::Scope.eq(scope))
            .filter(idempotency::Column::Key.eq(key))
            .filter(idempotency::Column::At.gte(since))
            .one(&self.db)
            .await
            .context("read stored answer")?;
        let Some(row) = row else { return Ok(None) };
        let status = u16::try_from(row.status).map_err(|_| anyhow!("bad status {} in stored answer", row.status))?;
        Ok(Some(StoredAnswer { status, body: row.body, at: row.at }))
    }

    async fn keep(
        &self,
        household: HouseholdId,
        scope: &str,
        key: &str,
        answer: &StoredAnswer,
    ) -> Result<(), RepoError> {
        let row = idempotency::ActiveModel {
            household_id: Set(household.0),
            scope: Set(scope.to_owned()),
            key: Set(key.to_owned()),
            status: Set(i32::from(answer.status)),
            body: Set(answer.body.clone()),
            at: Set(answer.at),
            ..Default::default()
        };
        idempotency::Entity::insert(row)
            .on_conflict(
                OnConflict::columns([
                    idempotency::Column::HouseholdId,
                    idempotency::Column::Scope,
                    idempotency::Column::Key,
                ])
                .update_columns([idempotency::Column::Status, idempotency::Column::Body, idempotency::Column::At])
                .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await
            .context("keep answer")?;
        Ok(())
    }
}
