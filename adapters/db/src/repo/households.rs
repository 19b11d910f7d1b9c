//! `HouseholdRepo`: households.

use crate::Store;
use crate::entity::households;
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
            created_at: Set(trove_domain::kept_time(chrono::Utc::now())),
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
}
