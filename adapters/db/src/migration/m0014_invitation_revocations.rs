//! Invitations may be revoked: `revoked_at`, null while the invitation is not, and an index of a household's
//! invitations for the owners' list. Who made each one is `created_by` already (`m0006_people`); the member's
//! current row is read when an invitation is judged, so it needs no column of its own.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter().table("invitations").add_column(timestamp_with_time_zone_null("revoked_at")).take(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("idx_invitations_household").table("invitations").col("household_id").take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name("idx_invitations_household").table("invitations").to_owned()).await?;
        manager.alter_table(Table::alter().table("invitations").drop_column("revoked_at").take()).await
    }
}
