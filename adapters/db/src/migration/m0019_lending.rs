//! Lending, maintenance and reminders (issue 29).
//!
//! `items` gains `units_lent` (units of a stock out on loan, kept by lending and returning like `units_held` by
//! projects) and `loan` (JSON of the open loan the item shows, the one due back first; none when nothing is out).
//!
//! `loans`: one row per loan (`member_id`, a borrower of the household, or `borrower_name` and `contact`; `since`,
//! `due`, `returned_at`). `schedules`: maintenance that comes round (`every_days` or `every_months`, `next`).
//! `maintenance`: the log of maintenance done. `notification_settings`: a member's channels, lead time and the key
//! of their calendar feed. `reminders`: one row per reminder and channel, unique on (member, key, channel), so two
//! processes that both see a thing due write one row; a process claims a row (`claimed_until`) before it delivers,
//! and marks it sent or failed (with its next try) after, so it is also the delivery log. `households` gains
//! `notify_secret`, the key webhook bodies are signed with.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

fn fk(table: &str, col: &str, to: &str) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .name(format!("fk_{table}_{col}"))
        .from(Alias::new(table), Alias::new(col))
        .to(Alias::new(to), Alias::new("id"))
        .on_delete(ForeignKeyAction::Cascade)
        .take()
}

async fn index(manager: &SchemaManager<'_>, table: &str, cols: &[&str], unique: bool) -> Result<(), DbErr> {
    let mut index = Index::create();
    index.name(format!("idx_{table}_{}", cols.join("_"))).table(Alias::new(table));
    for c in cols {
        index.col(Alias::new(*c));
    }
    if unique {
        index.unique();
    }
    manager.create_index(index.take()).await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table("items").add_column(big_integer("units_lent").default(0).take()).take())
            .await?;
        manager.alter_table(Table::alter().table("items").add_column(text_null("loan").take()).take()).await?;
        manager
            .alter_table(Table::alter().table("households").add_column(text_null("notify_secret").take()).take())
            .await?;
        manager
            .create_table(
                Table::create()
                    .table("loans")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(big_integer("item_id"))
                    .col(big_integer("units"))
                    .col(big_integer_null("member_id"))
                    .col(text("borrower_name"))
                    .col(text_null("contact"))
                    .col(date("since"))
                    .col(date_null("due"))
                    .col(text_null("note"))
                    .col(timestamp_with_time_zone_null("returned_at"))
                    .col(big_integer_null("created_by"))
                    .col(timestamp_with_time_zone("created_at"))
                    .foreign_key(&mut fk("loans", "household_id", "households"))
                    .foreign_key(&mut fk("loans", "item_id", "items"))
                    .take(),
            )
            .await?;
        index(manager, "loans", &["household_id", "returned_at", "due"], false).await?;
        index(manager, "loans", &["item_id"], false).await?;
        manager
            .create_table(
                Table::create()
                    .table("schedules")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(big_integer("item_id"))
                    .col(text("title"))
                    .col(big_integer_null("every_days"))
                    .col(big_integer_null("every_months"))
                    .col(date("next"))
                    .col(timestamp_with_time_zone("created_at"))
                    .foreign_key(&mut fk("schedules", "household_id", "households"))
                    .foreign_key(&mut fk("schedules", "item_id", "items"))
                    .take(),
            )
            .await?;
        index(manager, "schedules", &["household_id", "next"], false).await?;
        index(manager, "schedules", &["item_id"], false).await?;
        manager
            .create_table(
                Table::create()
                    .table("maintenance")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(big_integer("item_id"))
                    .col(big_integer_null("schedule_id"))
                    .col(text("title"))
                    .col(date("at"))
                    .col(text_null("note"))
                    .col(big_integer_null("cost_minor"))
                    .col(string_null("cost_currency"))
                    .col(big_integer_null("member_id"))
                    .col(timestamp_with_time_zone("recorded_at"))
                    .foreign_key(&mut fk("maintenance", "household_id", "households"))
                    .foreign_key(&mut fk("maintenance", "item_id", "items"))
                    .take(),
            )
            .await?;
        index(manager, "maintenance", &["item_id", "at"], false).await?;
        manager
            .create_table(
                Table::create()
                    .table("notification_settings")
                    .col(big_integer("member_id").primary_key())
                    .col(big_integer("household_id"))
                    .col(text_null("email"))
                    .col(text("urls"))
                    .col(big_integer("lead_days"))
                    .col(string_null("calendar_key"))
                    .foreign_key(&mut fk("notification_settings", "member_id", "members"))
                    .foreign_key(&mut fk("notification_settings", "household_id", "households"))
                    .take(),
            )
            .await?;
        index(manager, "notification_settings", &["calendar_key"], true).await?;
        manager
            .create_table(
                Table::create()
                    .table("reminders")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(big_integer("member_id"))
                    .col(string("key"))
                    .col(text("channel"))
                    .col(big_integer("item_id"))
                    .col(text("subject"))
                    .col(text("body"))
                    .col(string("status"))
                    .col(big_integer("attempts"))
                    .col(text_null("last_error"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(timestamp_with_time_zone("next_try_at"))
                    .col(timestamp_with_time_zone_null("claimed_until"))
                    .col(timestamp_with_time_zone_null("sent_at"))
                    .foreign_key(&mut fk("reminders", "household_id", "households"))
                    .foreign_key(&mut fk("reminders", "member_id", "members"))
                    .take(),
            )
            .await?;
        index(manager, "reminders", &["member_id", "key", "channel"], true).await?;
        index(manager, "reminders", &["status", "next_try_at"], false).await?;
        index(manager, "reminders", &["household_id", "created_at"], false).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in ["reminders", "notification_settings", "maintenance", "schedules", "loans"] {
            manager.drop_table(Table::drop().table(table).take()).await?;
        }
        manager.alter_table(Table::alter().table("households").drop_column("notify_secret").take()).await?;
        manager.alter_table(Table::alter().table("items").drop_column("loan").take()).await?;
        manager.alter_table(Table::alter().table("items").drop_column("units_lent").take()).await
    }
}
