//! Places: the table `places` (a tree per household: `parent_id` null at the top) and `items.place_id`. The
//! free-text `items.location` of earlier versions becomes places: each text is read as a path ("Garage /
//! Shelf B2", repaired where a part is not a place name, see `PlaceName::lenient`), its places are found or
//! created per household, and the item is put in the last one. The column is then dropped: an item's
//! `location` is its place's path from now on, so there is one truth.
//!
//! Sibling names are unique ignoring case through `name_key` (the domain's lower-cased name, the same on both
//! backends, where SQL's `lower` is not), and `COALESCE(parent_id, 0)` in the index makes two top-level
//! places of the same name collide too: both backends treat NULLs in a unique index as distinct.

use sea_orm::{ConnectionTrait, DbBackend, Statement, Value};
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;
use std::collections::HashMap;
use trove_domain::place::{self, PlaceName};

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

/// A statement written with `?` placeholders, numbered for PostgreSQL.
fn statement(backend: DbBackend, sql: &str, values: Vec<Value>) -> Statement {
    let sql = if backend == DbBackend::Postgres {
        let mut out = String::with_capacity(sql.len() + 8);
        let mut n = 0;
        for c in sql.chars() {
            if c == '?' {
                n += 1;
                out.push_str(&format!("${n}"));
            } else {
                out.push(c);
            }
        }
        out
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
                    .table("places")
                    .col(big_pk_auto("id"))
                    .col(big_integer("household_id"))
                    .col(text("name"))
                    .col(text("name_key"))
                    .col(big_integer_null("parent_id"))
                    .col(text_null("note"))
                    .col(timestamp_with_time_zone("created_at"))
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_places_household_id")
                            .from("places", "household_id")
                            .to("households", "id")
                            .on_delete(ForeignKeyAction::Restrict),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .name("fk_places_parent_id")
                            .from("places", "parent_id")
                            .to("places", "id")
                            .on_delete(ForeignKeyAction::Restrict),
                    )
                    .take(),
            )
            .await?;
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE UNIQUE INDEX idx_places_sibling_name ON places (household_id, COALESCE(parent_id, 0), name_key)",
        )
        .await?;
        manager.create_index(Index::create().name("idx_places_parent").table("places").col("parent_id").take()).await?;
        db.execute_unprepared("ALTER TABLE items ADD COLUMN place_id BIGINT NULL REFERENCES places (id)").await?;
        manager
            .create_index(
                Index::create().name("idx_items_place").table("items").col("household_id").col("place_id").take(),
            )
            .await?;

        migrate_locations(db).await?;

        db.execute_unprepared("ALTER TABLE items DROP COLUMN location").await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // The path of each item's place becomes its text again.
        let db = manager.get_connection();
        db.execute_unprepared("ALTER TABLE items ADD COLUMN location TEXT NULL").await?;
        let places = db
            .query_all_raw(Statement::from_string(db.get_database_backend(), "SELECT id, parent_id, name FROM places"))
            .await?;
        let mut tree: HashMap<i64, (Option<i64>, String)> = HashMap::new();
        for row in places {
            tree.insert(row.try_get("", "id")?, (row.try_get("", "parent_id")?, row.try_get("", "name")?));
        }
        for (&id, _) in tree.iter() {
            let mut names = Vec::new();
            let mut at = Some(id);
            while let Some(p) = at.and_then(|a| tree.get(&a)) {
                names.push(p.1.as_str());
                at = p.0;
                if names.len() > tree.len() {
                    break;
                }
            }
            names.reverse();
            db.execute_raw(statement(
                db.get_database_backend(),
                "UPDATE items SET location = ? WHERE place_id = ?",
                vec![names.join(place::SEPARATOR).into(), id.into()],
            ))
            .await?;
        }
        manager.drop_index(Index::drop().name("idx_items_place").table("items").to_owned()).await?;
        if db.get_database_backend() == DbBackend::Sqlite {
            // SQLite cannot drop a column that references another table: the column stays, unused, and the
            // places with it.
            db.execute_unprepared("UPDATE items SET place_id = NULL").await?;
            db.execute_unprepared("DELETE FROM places").await?;
        } else {
            db.execute_unprepared("ALTER TABLE items DROP COLUMN place_id").await?;
            manager.drop_table(Table::drop().table("places").take()).await?;
        }
        Ok(())
    }
}

/// Makes the places the `location` texts name and puts each item in its place. One place is created per
/// distinct path of a household; the items are updated through a mapping table in one statement.
async fn migrate_locations(db: &SchemaManagerConnection<'_>) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let rows = db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT DISTINCT household_id, location FROM items WHERE location IS NOT NULL",
        ))
        .await?;
    if rows.is_empty() {
        return Ok(());
    }
    let now = chrono::Utc::now();
    // (household, parent, name key) -> place id, for the places made so far.
    let mut made: HashMap<(i64, Option<i64>, String), i64> = HashMap::new();
    let mut mapping: Vec<(i64, String, i64)> = Vec::new();
    for row in rows {
        let household: i64 = row.try_get("", "household_id")?;
        let location: String = row.try_get("", "location")?;
        let names: Vec<PlaceName> = place::parse_location_lenient(&location);
        let mut parent: Option<i64> = None;
        for name in names {
            let key = (household, parent, name.key());
            let id = match made.get(&key) {
                Some(id) => *id,
                None => {
                    let inserted = db
                        .query_one_raw(statement(
                            backend,
                            "INSERT INTO places (household_id, name, name_key, parent_id, note, created_at) \
                             VALUES (?, ?, ?, ?, NULL, ?) RETURNING id",
                            vec![household.into(), name.as_str().into(), name.key().into(), parent.into(), now.into()],
                        ))
                        .await?
                        .ok_or_else(|| DbErr::Migration("inserting a place answered no id".into()))?;
                    let id: i64 = inserted.try_get("", "id")?;
                    made.insert(key, id);
                    id
                }
            };
            parent = Some(id);
        }
        if let Some(place) = parent {
            mapping.push((household, location, place));
        }
    }

    db.execute_unprepared(
        "CREATE TABLE place_migration (household_id BIGINT NOT NULL, location TEXT NOT NULL, place_id BIGINT NOT NULL, \
         PRIMARY KEY (household_id, location))",
    )
    .await?;
    for chunk in mapping.chunks(300) {
        let marks = vec!["(?, ?, ?)"; chunk.len()].join(", ");
        let values: Vec<Value> =
            chunk.iter().flat_map(|(h, l, p)| [Value::from(*h), Value::from(l.clone()), Value::from(*p)]).collect();
        db.execute_raw(statement(
            backend,
            &format!("INSERT INTO place_migration (household_id, location, place_id) VALUES {marks}"),
            values,
        ))
        .await?;
    }
    db.execute_unprepared(
        "UPDATE items SET place_id = (SELECT m.place_id FROM place_migration m \
         WHERE m.household_id = items.household_id AND m.location = items.location) \
         WHERE location IS NOT NULL",
    )
    .await?;
    db.execute_unprepared("DROP TABLE place_migration").await?;
    Ok(())
}
