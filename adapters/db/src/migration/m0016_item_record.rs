//! What a household records of an item by hand (issue 26): `quantity` (like units, 1 for a single thing) and
//! `min_quantity` (low stock at or under it), `tags` (a JSON list of strings, so a tag is found by its quoted
//! JSON text), and `details` (a JSON document of `trove_domain::item::ItemDetails`: notes, serial, purchase,
//! warranty, a hand-set asking price). Existing items become one unit with nothing recorded.
//!
//! One column a statement: SQLite's `ALTER TABLE` adds one at a time.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            big_integer("quantity").default(1).take(),
            big_integer_null("min_quantity"),
            text("tags").default("[]").take(),
            text("details").default("{}").take(),
        ] {
            manager.alter_table(Table::alter().table("items").add_column(column).take()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in ["details", "tags", "min_quantity", "quantity"] {
            manager.alter_table(Table::alter().table("items").drop_column(column).take()).await?;
        }
        Ok(())
    }
}
