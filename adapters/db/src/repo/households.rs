//! `HouseholdRepo`: households and the hashes of their members' tokens.

use crate::Store;
use crate::entity::{households, tokens};
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use trove_application::RepoError;
use trove_application::ports::HouseholdRepo;
use trove_domain::HouseholdId;

#[async_trait]
impl HouseholdRepo for Store {
    async fn ensure_household(&self, name: &str) -> Result<HouseholdId, RepoError> {
        // Insert-or-nothing, then read: two processes creating the same household both end up with one row.
        let row = households::ActiveModel {
            name: Set(name.to_owned()),
            created_at: Set(chrono::Utc::now()),
            ..Default::default()
        };
        households::Entity::insert(row)
            .on_conflict(OnConflict::column(households::Column::Name).do_nothing().to_owned())
            .exec_without_returning(&self.db)
            .await
            .with_context(|| format!("create household {name:?}"))?;
        let id: Option<i64> = households::Entity::find()
            .select_only()
            .column(households::Column::Id)
            .filter(households::Column::Name.eq(name))
            .into_tuple()
            .one(&self.db)
            .await
            .with_context(|| format!("read household {name:?}"))?;
        Ok(HouseholdId(id.ok_or_else(|| anyhow!("household {name:?} missing right after its creation"))?))
    }

    async fn add_token(&self, household: HouseholdId, token_hash: &str, member: &str) -> Result<(), RepoError> {
        let row = tokens::ActiveModel {
            hash: Set(token_hash.to_owned()),
            household_id: Set(household.0),
            member: Set(member.to_owned()),
            created_at: Set(chrono::Utc::now()),
            ..Default::default()
        };
        let written = tokens::Entity::insert(row)
            .on_conflict(OnConflict::column(tokens::Column::Hash).do_nothing().to_owned())
            .exec_without_returning(&self.db)
            .await
            .context("store token hash")?;
        if written == 0 {
            return Err(RepoError::Conflict("token is already stored".into()));
        }
        Ok(())
    }

    async fn household_for_token(&self, token_hash: &str) -> Result<Option<HouseholdId>, RepoError> {
        let id: Option<i64> = tokens::Entity::find()
            .select_only()
            .column(tokens::Column::HouseholdId)
            .filter(tokens::Column::Hash.eq(token_hash))
            .into_tuple()
            .one(&self.db)
            .await
            .context("look up token hash")?;
        Ok(id.map(HouseholdId))
    }
}
