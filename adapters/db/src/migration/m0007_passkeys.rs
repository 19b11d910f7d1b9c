//! Passkeys: `passkeys`, the WebAuthn credentials members sign in with (by credential id, unique across the
//! instance; the key serialised by the WebAuthn adapter), and `passkey_ceremonies`, the server's half of each
//! ceremony in progress, by the hash of its id, until it is finished or expires. Ceremonies live in the
//! database, not in memory, so several processes behind one PostgreSQL finish each other's ceremonies.
//!
//! Independent of `m0008_search`, which may have run first on a database made before this migration existed:
//! the migrator applies whatever migration is missing, in any order.

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
                    .table("passkeys")
                    .col(big_pk_auto("id"))
                    .col(big_integer("member_id"))
                    .col(text("name"))
                    .col(string_uniq("credential_id"))
                    .col(string("user_handle"))
                    .col(text("passkey"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(timestamp_with_time_zone_null("last_used_at"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_passkeys_member_id")
                            .from("passkeys", "member_id")
                            .to("members", "id")
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .take(),
            )
            .await?;
        manager
            .create_index(Index::create().name("idx_passkeys_member").table("passkeys").col("member_id").take())
            .await?;

        manager
            .create_table(
                Table::create()
                    .table("passkey_ceremonies")
                    .col(big_pk_auto("id"))
                    .col(string_uniq("id_hash"))
                    .col(string("purpose"))
                    .col(big_integer_null("member_id"))
                    .col(string_null("invitation_hash"))
                    .col(text_null("name"))
                    .col(string_null("user_handle"))
                    .col(text("state"))
                    .col(timestamp_with_time_zone("expires_at"))
                    .take(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_passkey_ceremonies_expires")
                    .table("passkey_ceremonies")
                    .col("expires_at")
                    .take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in ["passkey_ceremonies", "passkeys"] {
            manager.drop_table(Table::drop().table(table).take()).await?;
        }
        Ok(())
    }
}
