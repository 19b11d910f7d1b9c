//! The first schema: households and tokens, items, templates, projects, the spend ledger, price history and
//! idempotent answers.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

/// A foreign key from `table.column` to `target.id`.
fn references(table: &'static str, column: &'static str, target: &'static str) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .name(format!("fk_{table}_{column}"))
        .from(table, column)
        .to(target, "id")
        .on_delete(ForeignKeyAction::Restrict)
        .take()
}

fn index(name: &'static str, table: &'static str, columns: &[&'static str]) -> IndexCreateStatement {
    let mut stmt = Index::create();
    stmt.name(name).table(table);
    for c in columns {
        stmt.col(*c);
    }
    stmt.take()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("households")
                    .col(big_pk_auto("id"))
                    .col(string_uniq("name"))
                    .col(timestamp_with_time_zone("created_at"))
                    .take(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table("tokens")
                    .col(big_pk_auto("id"))
                    .col(string_uniq("hash"))
                    .col(big_integer("household_id"))
                    .col(string("member"))
                    .col(timestamp_with_time_zone("created_at"))
                    .foreign_key(&mut references("tokens", "household_id", "households"))
                    .take(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table("templates")
                    .col(big_pk_auto("id"))
                    .col(big_integer_null("household_id"))
                    .col(text("label"))
                    .col(text("goal"))
                    .col(text("effort"))
                    .col(text("steps"))
                    .col(text("requirements"))
                    .foreign_key(&mut references("templates", "household_id", "households"))
                    .take(),
            )
            .await?;
        manager.create_index(index("idx_templates_household", "templates", &["household_id"])).await?;

        manager
            .create_table(
                Table::create()
                    .table("projects")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(big_integer("template_id"))
                    .col(text("title"))
                    .col(text("reason"))
                    .col(string("status"))
                    .col(text("allocations"))
                    .col(text("missing"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(timestamp_with_time_zone("updated_at"))
                    .foreign_key(&mut references("projects", "household_id", "households"))
                    .foreign_key(&mut references("projects", "template_id", "templates"))
                    .take(),
            )
            .await?;
        manager.create_index(index("idx_projects_household", "projects", &["household_id", "created_at"])).await?;

        manager
            .create_table(
                Table::create()
                    .table("items")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(text("name"))
                    .col(string("item_type"))
                    .col(text("profile"))
                    .col(string("condition"))
                    .col(string("intent"))
                    .col(string("availability"))
                    .col(big_integer_null("project_id"))
                    .col(string_null("gone_reason"))
                    .col(timestamp_with_time_zone_null("gone_at"))
                    .col(text_null("gone_note"))
                    .col(text("measurements"))
                    .col(text("faults"))
                    .col(text("tests_done"))
                    .col(text("accessories"))
                    .col(text("components"))
                    .col(text_null("location"))
                    .col(text_null("import_ref"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(timestamp_with_time_zone("updated_at"))
                    .col(big_integer("version"))
                    .foreign_key(&mut references("items", "household_id", "households"))
                    .foreign_key(&mut references("items", "project_id", "projects"))
                    .take(),
            )
            .await?;
        manager.create_index(index("idx_items_household", "items", &["household_id", "id"])).await?;
        manager.create_index(index("idx_items_project", "items", &["project_id"])).await?;
        manager
            .create_index(index("idx_items_import_ref", "items", &["household_id", "import_ref"]).unique().take())
            .await?;

        manager
            .create_table(
                Table::create()
                    .table("spend_entries")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(timestamp_with_time_zone("at"))
                    .col(string("kind"))
                    .col(string("model"))
                    .col(big_integer("input_tokens"))
                    .col(big_integer("cached_tokens"))
                    .col(big_integer("output_tokens"))
                    .col(big_integer("searches"))
                    .col(big_integer("cost_micro_usd"))
                    .foreign_key(&mut references("spend_entries", "household_id", "households"))
                    .take(),
            )
            .await?;
        manager.create_index(index("idx_spend_household_at", "spend_entries", &["household_id", "at"])).await?;

        manager
            .create_table(
                Table::create()
                    .table("price_reports")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(big_integer("item_id"))
                    .col(timestamp_with_time_zone("at"))
                    .col(text("report"))
                    .foreign_key(&mut references("price_reports", "household_id", "households"))
                    .foreign_key(&mut references("price_reports", "item_id", "items"))
                    .take(),
            )
            .await?;
        manager
            .create_index(index("idx_price_reports_item", "price_reports", &["household_id", "item_id", "at"]))
            .await?;

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
                    .foreign_key(&mut references("idempotency", "household_id", "households"))
                    .take(),
            )
            .await?;
        manager
            .create_index(
                index("idx_idempotency_key", "idempotency", &["household_id", "scope", "key"]).unique().take(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in
            ["idempotency", "price_reports", "spend_entries", "items", "projects", "templates", "tokens", "households"]
        {
            manager.drop_table(Table::drop().table(table).take()).await?;
        }
        Ok(())
    }
}
