//! Each spend entry says how its call ended: `outcome` is `ok` or `failed`, so the report counts failed calls
//! apart (a failed call that cost nothing is an entry all the same). Rows written before read `ok`: the ledger
//! never told them apart.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("spend_entries").add_column(string("outcome").default("ok")).take())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("spend_entries").drop_column("outcome").take()).await
    }
}
