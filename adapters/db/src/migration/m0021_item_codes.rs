//! Codes on items (issue 46): GTINs, ISBNs and a shop's own codes (`trove_domain::code`).
//!
//! `items` gains `codes`, a JSON list of `{kind, value}` (the value as shown), read with the item as its tags
//! are. `item_codes` is their index by key (`Code::key`: a GTIN-14, or `other:` and the text in lower case),
//! one row per code of a present item, unique on (household, key): the database, not a read before the write,
//! keeps a code on one item of a household, so two writers racing for one code never both win. A search by
//! code reads it. Both are written in the item's transaction; a gone item's codes leave the index (it is
//! history, and a code of a thing sold may come back on the next one bought), and stay in its `codes`.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("items").add_column(text("codes").default("[]").take()).take())
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("item_codes")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(big_integer("item_id"))
                    .col(string("kind"))
                    .col(string("key"))
                    .col(string("value"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_item_codes_household_id")
                            .from("item_codes", "household_id")
                            .to("households", "id")
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_item_codes_item_id")
                            .from("item_codes", "item_id")
                            .to("items", "id")
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .take(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_item_codes_household_key")
                    .table("item_codes")
                    .col("household_id")
                    .col("key")
                    .unique()
                    .take(),
            )
            .await?;
        manager
            .create_index(Index::create().name("idx_item_codes_item").table("item_codes").col("item_id").take())
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table("item_codes").take()).await?;
        manager.alter_table(Table::alter().table("items").drop_column("codes").take()).await
    }
}
