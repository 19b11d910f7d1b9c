//! Each spend entry names the member who asked for the call: `member_id`, null for the command line and for the
//! entries written before members existed. No foreign key: an entry outlives a member who is removed (the report
//! names them "former member").

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("spend_entries").add_column(big_integer_null("member_id")).take())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("spend_entries").drop_column("member_id").take()).await
    }
}
