//! Stock counts (issue 26): `units_held`, the units of a stock that accepted projects hold. Accepting a project
//! adds to it only while `quantity - units_held` covers what the project takes (one conditional update, so two
//! accepts can never hold more units than exist); building takes the units out of the quantity too; dropping
//! gives them back. A single thing is held whole, as before (`availability` and `project_id`). Existing items
//! hold no units.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("items").add_column(big_integer("units_held").default(0).take()).take())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table("items").drop_column("units_held").take()).await
    }
}
