//! The sign-in throttle's failures and the installation's secrets, in the database so that every process on one
//! database shares them and a restart forgets none.
//!
//! `sign_in_failures`: one row per failed sign-in (`name_key`, the lower-cased name typed; `address`, the client
//! address or IPv6 /64 as `trove_domain::throttle::ClientAddress` writes it; `at`). Indexed both ways the rule
//! reads it; rows older than the throttle's window are deleted as new ones are written.
//!
//! `instance_secrets`: named secrets made once by whichever process needs one first (the key of the made-up
//! passkey credentials, so two processes or a restart answer the same ones).

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
                    .table("sign_in_failures")
                    .col(big_pk_auto("id"))
                    .col(string("name_key"))
                    .col(string("address"))
                    .col(timestamp_with_time_zone("at"))
                    .take(),
            )
            .await?;
        for (name, cols) in [
            ("idx_sign_in_failures_name", &["name_key", "at"][..]),
            ("idx_sign_in_failures_address", &["address", "at"][..]),
            ("idx_sign_in_failures_at", &["at"][..]),
        ] {
            let mut index = Index::create();
            index.name(name).table("sign_in_failures");
            for c in cols {
                index.col(*c);
            }
            manager.create_index(index.take()).await?;
        }
        manager
            .create_table(
                Table::create().table("instance_secrets").col(string("name").primary_key()).col(text("secret")).take(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in ["instance_secrets", "sign_in_failures"] {
            manager.drop_table(Table::drop().table(table).take()).await?;
        }
        Ok(())
    }
}
