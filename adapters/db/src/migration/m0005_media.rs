//! Media: the table `media`, one row per photo, receipt, manual or other file kept on an item (or pending, on no
//! item, from intake). The bytes are not here: `sha256` names the blob in the media store (the filesystem or
//! S3-compatible storage), `thumb_sha256` the thumbnail's once it is made. A row goes with its item
//! (`ON DELETE CASCADE`); the blobs it named are then removed by the sweep.

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
                    .table("media")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(big_integer_null("item_id"))
                    .col(text("kind"))
                    .col(text("media_type"))
                    .col(big_integer("bytes"))
                    .col(integer_null("width"))
                    .col(integer_null("height"))
                    .col(text("sha256"))
                    .col(text_null("thumb_sha256"))
                    .col(text_null("caption"))
                    .col(timestamp_with_time_zone("created_at"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_media_household_id")
                            .from("media", "household_id")
                            .to("households", "id")
                            .on_delete(ForeignKeyAction::Restrict),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_media_item_id")
                            .from("media", "item_id")
                            .to("items", "id")
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .take(),
            )
            .await?;
        for (name, cols) in [
            ("idx_media_item", &["household_id", "item_id"][..]),
            ("idx_media_sha256", &["sha256"][..]),
            ("idx_media_thumb_sha256", &["thumb_sha256"][..]),
            ("idx_media_pending", &["item_id", "created_at"][..]),
        ] {
            let mut index = Index::create();
            index.name(name).table("media");
            for col in cols {
                index.col(*col);
            }
            manager.create_index(index.take()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table("media").take()).await
    }
}
