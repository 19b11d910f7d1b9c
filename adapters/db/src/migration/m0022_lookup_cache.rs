//! The cache of product lookups (issue 46): what the providers answered for a code's key, until it expires (hits
//! 90 days, misses 7). It is derived data of the instance, not of a household: a backup leaves it out (it is not
//! in `backup::KEPT`), and losing it costs only lookups asked again.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("lookup_cache")
                    .col(string("key").primary_key())
                    .col(text("answer"))
                    .col(timestamp_with_time_zone("fetched_at"))
                    .col(timestamp_with_time_zone("expires_at"))
                    .take(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("idx_lookup_cache_expires_at").table("lookup_cache").col("expires_at").take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table("lookup_cache").take()).await
    }
}
