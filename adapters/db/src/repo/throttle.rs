//! `SignInFailures` and `InstanceSecrets`: the sign-in throttle's failures and the installation's secrets, in the
//! database so that every process on it shares them and a restart forgets none.

use crate::Store;
use crate::entity::{instance_secrets, sign_in_failures};
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use trove_application::RepoError;
use trove_application::ports::{InstanceSecrets, SignInFailures};
use trove_domain::Timestamp;
use trove_domain::throttle::{ClientAddress, RecentFailures};

/// The times of the failures matching `filter` after `since`, newest first, at most `most`.
async fn times(
    db: &impl ConnectionTrait,
    filter: sea_orm::Condition,
    since: Timestamp,
    most: usize,
) -> Result<Vec<Timestamp>, RepoError> {
    let rows: Vec<Timestamp> = sign_in_failures::Entity::find()
        .select_only()
        .column(sign_in_failures::Column::At)
        .filter(filter)
        .filter(sign_in_failures::Column::At.gt(since))
        .order_by_desc(sign_in_failures::Column::At)
        .limit(u64::try_from(most).unwrap_or(u64::MAX))
        .into_tuple()
        .all(db)
        .await
        .context("read failed sign-ins")?;
    Ok(rows)
}

#[async_trait]
impl SignInFailures for Store {
    async fn recent_failures(
        &self,
        name: &str,
        from: &ClientAddress,
        since: Timestamp,
        most: usize,
    ) -> Result<RecentFailures, RepoError> {
        use sea_orm::Condition;
        use sign_in_failures::Column;
        let name_here = Condition::all().add(Column::NameKey.eq(name)).add(Column::Address.eq(from.as_str()));
        let here = Condition::all().add(Column::Address.eq(from.as_str()));
        let anywhere = Condition::all().add(Column::NameKey.eq(name));
        let (name_here, here, name) = tokio::try_join!(
            times(&self.db, name_here, since, most),
            times(&self.db, here, since, most),
            times(&self.db, anywhere, since, most),
        )?;
        Ok(RecentFailures { name_here, here, name })
    }

    async fn record_failure(
        &self,
        name: &str,
        from: &ClientAddress,
        at: Timestamp,
        forget_before: Timestamp,
    ) -> Result<(), RepoError> {
        let row = sign_in_failures::ActiveModel {
            name_key: Set(name.to_owned()),
            address: Set(from.as_str().to_owned()),
            at: Set(at),
            ..Default::default()
        };
        sign_in_failures::Entity::insert(row)
            .exec_without_returning(&self.db)
            .await
            .context("record a failed sign-in")?;
        sign_in_failures::Entity::delete_many()
            .filter(sign_in_failures::Column::At.lt(forget_before))
            .exec(&self.db)
            .await
            .context("forget old failed sign-ins")?;
        Ok(())
    }

    async fn forget_failures(&self, name: &str, from: &ClientAddress) -> Result<(), RepoError> {
        sign_in_failures::Entity::delete_many()
            .filter(sign_in_failures::Column::NameKey.eq(name))
            .filter(sign_in_failures::Column::Address.eq(from.as_str()))
            .exec(&self.db)
            .await
            .context("forget failed sign-ins")?;
        Ok(())
    }
}

#[async_trait]
impl InstanceSecrets for Store {
    async fn instance_secret(&self, name: &str, candidate: String) -> Result<String, RepoError> {
        let row = instance_secrets::ActiveModel { name: Set(name.to_owned()), secret: Set(candidate) };
        instance_secrets::Entity::insert(row)
            .on_conflict(OnConflict::column(instance_secrets::Column::Name).do_nothing().to_owned())
            .exec_without_returning(&self.db)
            .await
            .context("store an instance secret")?;
        let kept = instance_secrets::Entity::find_by_id(name.to_owned())
            .one(&self.db)
            .await
            .context("read an instance secret")?
            .ok_or_else(|| anyhow!("the instance secret {name:?} is missing right after it was stored"))?;
        Ok(kept.secret)
    }
}
