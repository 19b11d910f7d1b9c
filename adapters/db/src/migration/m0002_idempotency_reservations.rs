//! `Idempotency-Key`s become reservations: the table `idempotency_keys` replaces `idempotency`, with the
//! request's fingerprint, a state (`pending` while the request runs, `completed` once answered), a nullable
//! answer, when the key was reserved and when it was answered, and an attempt counter that tells a reservation
//! from the one that took it over.
//!
//! A new table rather than altered columns, because SQLite cannot make a column nullable in place. The answers
//! kept before are copied as completed, without a fingerprint (they replay as before until they expire).

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
                    .table("idempotency_keys")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(string("scope"))
                    .col(string("key"))
                    .col(string_null("fingerprint"))
                    .col(string("state"))
                    .col(big_integer("attempt"))
                    .col(timestamp_with_time_zone("reserved_at"))
                    .col(integer_null("status"))
                    .col(text_null("body"))
                    .col(timestamp_with_time_zone_null("completed_at"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_idempotency_keys_household_id")
                            .from("idempotency_keys", "household_id")
                            .to("households", "id")
                            .on_delete(ForeignKeyAction::Restrict),
                    )
                    .take(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_idempotency_keys_key")
                    .table("idempotency_keys")
                    .col("household_id")
                    .col("scope")
                    .col("key")
                    .unique()
                    .take(),
            )
            .await?;
        manager
            .get_connection()
            .execute_unprepared(
                "INSERT INTO idempotency_keys \
                 (household_id, scope, \"key\", fingerprint, state, attempt, reserved_at, status, body, completed_at) \
                 SELECT household_id, scope, \"key\", NULL, 'completed', 1, at, status, body, at FROM idempotency",
            )
            .await?;
        manager.drop_table(Table::drop().table("idempotency").take()).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("idempotency")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(string("scope"))
                    .col(string("key"))
                    .col(integer("status"))
                    .col(text("body"))
                    .col(timestamp_with_time_zone("at"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_idempotency_household_id")
                            .from("idempotency", "household_id")
                            .to("households", "id")
                            .on_delete(ForeignKeyAction::Restrict),
                    )
                    .take(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_idempotency_key")
                    .table("idempotency")
                    .col("household_id")
                    .col("scope")
                    .col("key")
                    .unique()
                    .take(),
            )
            .await?;
        // Only answers survive the way back; pending reservations belong to requests of the newer schema.
        manager
            .get_connection()
            .execute_unprepared(
                "INSERT INTO idempotency (household_id, scope, \"key\", status, body, at) \
                 SELECT household_id, scope, \"key\", status, body, completed_at FROM idempotency_keys \
                 WHERE state = 'completed'",
            )
            .await?;
        manager.drop_table(Table::drop().table("idempotency_keys").take()).await?;
        Ok(())
    }
}
