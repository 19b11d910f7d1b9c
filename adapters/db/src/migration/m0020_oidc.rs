//! Single sign-on (OpenID Connect): `oidc_identities`, the provider accounts members sign in with (by issuer and
//! subject, unique across the instance: never by e-mail; `by_group` when a mapped group brought the account in,
//! not an invitation), and `oidc_sign_ins`, each sign-in sent to the provider
//! and not yet back, by the hash of its `state`, with its nonce and PKCE verifier (kept on the server, never in
//! the browser) until it comes back or expires. In the database, so several processes finish each other's.

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
                    .table("oidc_identities")
                    .col(big_pk_auto("id"))
                    .col(big_integer("member_id"))
                    .col(string("issuer"))
                    .col(string("subject"))
                    .col(boolean("by_group"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(timestamp_with_time_zone_null("last_used_at"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_oidc_identities_member_id")
                            .from("oidc_identities", "member_id")
                            .to("members", "id")
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .take(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("idx_oidc_identities_subject")
                    .table("oidc_identities")
                    .col("issuer")
                    .col("subject")
                    .unique()
                    .take(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("idx_oidc_identities_member").table("oidc_identities").col("member_id").take(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table("oidc_sign_ins")
                    .col(big_pk_auto("id"))
                    .col(string_uniq("state_hash"))
                    .col(text("nonce"))
                    .col(text("verifier"))
                    .col(string_null("invitation_hash"))
                    .col(timestamp_with_time_zone("expires_at"))
                    .take(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("idx_oidc_sign_ins_expires").table("oidc_sign_ins").col("expires_at").take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in ["oidc_sign_ins", "oidc_identities"] {
            manager.drop_table(Table::drop().table(table).take()).await?;
        }
        Ok(())
    }
}
