//! People: `members` (a name unique across the instance through `name_key`, the domain's lower-cased name),
//! `invitations` and `sessions` (by the hash of their secret), and `events` (the history). `tokens` become
//! personal API tokens: `member` is renamed `name`, and `member_id`, `scope`, `expires_at` and `last_used_at`
//! are added. Tokens issued before stay valid: each household that has tokens gets a first owner (called
//! "HOUSEHOLD owner", a number after it if that name is taken; no password), whose write tokens they become.

use sea_orm::{ConnectionTrait, DbBackend, Statement, Value};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;
use std::collections::HashSet;
use trove_domain::people::{MemberName, NAME_MAX};

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

/// A statement written with `?` placeholders, numbered for PostgreSQL.
fn statement(backend: DbBackend, sql: &str, values: Vec<Value>) -> Statement {
    let mut n = 0;
    let sql = if backend == DbBackend::Postgres {
        sql.chars()
            .map(|c| {
                if c == '?' {
                    n += 1;
                    format!("${n}")
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        sql.to_owned()
    };
    Statement::from_sql_and_values(backend, sql, values)
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table("members")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(text("name"))
                    .col(string_uniq("name_key"))
                    .col(string("role"))
                    .col(text_null("password_hash"))
                    .col(timestamp_with_time_zone("created_at"))
                    .foreign_key(&mut references("members", "household_id", "households"))
                    .take(),
            )
            .await?;
        manager.create_index(index("idx_members_household", "members", &["household_id"])).await?;

        manager
            .create_table(
                Table::create()
                    .table("invitations")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(string_uniq("code_hash"))
                    .col(string("role"))
                    .col(big_integer_null("created_by"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(timestamp_with_time_zone_null("used_at"))
                    .col(big_integer_null("used_by"))
                    .foreign_key(&mut references("invitations", "household_id", "households"))
                    .take(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table("sessions")
                    .col(big_pk_auto("id"))
                    .col(big_integer("member_id"))
                    .col(string_uniq("hash"))
                    .col(timestamp_with_time_zone("created_at"))
                    .col(timestamp_with_time_zone("last_seen_at"))
                    .foreign_key(&mut references("sessions", "member_id", "members"))
                    .take(),
            )
            .await?;
        manager.create_index(index("idx_sessions_member", "sessions", &["member_id"])).await?;

        manager
            .create_table(
                Table::create()
                    .table("events")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(timestamp_with_time_zone("at"))
                    .col(big_integer_null("member_id"))
                    .col(string("action"))
                    .col(string("object_kind"))
                    .col(big_integer("object_id"))
                    .col(text("changes"))
                    .col(big_integer_null("version_after"))
                    .foreign_key(&mut references("events", "household_id", "households"))
                    .take(),
            )
            .await?;
        manager
            .create_index(index("idx_events_object", "events", &["household_id", "object_kind", "object_id"]))
            .await?;

        let db = manager.get_connection();
        db.execute_unprepared("ALTER TABLE tokens RENAME COLUMN member TO name").await?;
        db.execute_unprepared("ALTER TABLE tokens ADD COLUMN member_id BIGINT NULL REFERENCES members (id)").await?;
        manager.alter_table(Table::alter().table("tokens").add_column(string("scope").default("write")).take()).await?;
        manager
            .alter_table(Table::alter().table("tokens").add_column(timestamp_with_time_zone_null("expires_at")).take())
            .await?;
        manager
            .alter_table(
                Table::alter().table("tokens").add_column(timestamp_with_time_zone_null("last_used_at")).take(),
            )
            .await?;
        manager.create_index(index("idx_tokens_member", "tokens", &["member_id"])).await?;

        owners_for_old_tokens(db).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        manager.drop_index(Index::drop().name("idx_tokens_member").table("tokens").to_owned()).await?;
        if db.get_database_backend() == DbBackend::Sqlite {
            // SQLite cannot drop a column that references another table: it stays, unused.
            db.execute_unprepared("UPDATE tokens SET member_id = NULL").await?;
        } else {
            db.execute_unprepared("ALTER TABLE tokens DROP COLUMN member_id").await?;
        }
        for column in ["scope", "expires_at", "last_used_at"] {
            db.execute_unprepared(&format!("ALTER TABLE tokens DROP COLUMN {column}")).await?;
        }
        db.execute_unprepared("ALTER TABLE tokens RENAME COLUMN name TO member").await?;
        for table in ["events", "sessions", "invitations", "members"] {
            manager.drop_table(Table::drop().table(table).take()).await?;
        }
        Ok(())
    }
}

/// Gives each household that has tokens a first owner and makes its tokens theirs.
async fn owners_for_old_tokens(db: &SchemaManagerConnection<'_>) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let rows = db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT id, name FROM households WHERE id IN (SELECT household_id FROM tokens) ORDER BY id",
        ))
        .await?;
    let now = chrono::Utc::now();
    let mut taken: HashSet<String> = HashSet::new();
    for row in rows {
        let household: i64 = row.try_get("", "id")?;
        let household_name: String = row.try_get("", "name")?;
        let base: String = household_name.trim().chars().take(NAME_MAX - 10).collect();
        let name = (1..)
            .map(|n| if n == 1 { format!("{base} owner") } else { format!("{base} owner {n}") })
            .filter_map(|raw| MemberName::new(&raw).ok())
            .find(|name| !taken.contains(&name.key()))
            .ok_or_else(|| DbErr::Migration(format!("no owner name for household {household}")))?;
        taken.insert(name.key());
        let inserted = db
            .query_one_raw(statement(
                backend,
                "INSERT INTO members (household_id, name, name_key, role, password_hash, created_at) \
                 VALUES (?, ?, ?, 'owner', NULL, ?) RETURNING id",
                vec![household.into(), name.as_str().into(), name.key().into(), now.into()],
            ))
            .await?
            .ok_or_else(|| DbErr::Migration("inserting a member answered no id".into()))?;
        let member: i64 = inserted.try_get("", "id")?;
        db.execute_raw(statement(
            backend,
            "UPDATE tokens SET member_id = ?, scope = 'write' WHERE household_id = ?",
            vec![member.into(), household.into()],
        ))
        .await?;
    }
    Ok(())
}
