//! The full-text index of items (see `crate::search`; the place texts by `crate::repo::places::refresh_places`) and the household's item revision.
//!
//! `items` gets the two texts the store keeps for the index beside the item's own columns: `search_place` (the
//! names of its place's path) and `search_notes` (gone note, faults, tests), filled here for the items already
//! stored. SQLite indexes name, type, profile, place and notes in the FTS5 table `items_search` (external
//! content: the texts stay in `items`), kept in step by triggers on every insert, delete and update of those
//! columns. PostgreSQL keeps a generated `tsvector` column `items.search` (weights A to D) under a GIN index;
//! its text is cut into words the way `crate::search::tokens` cuts a search (letters and digits).
//!
//! `households.item_revision` moves on with every write of an item or a place of the household (triggers: per
//! row on SQLite, per statement on PostgreSQL), so a count of a listing kept by the store is known current by
//! reading one row.

use crate::repo::places::refresh_places;
use sea_orm::{ConnectionTrait, DbBackend};
use sea_orm_migration::prelude::*;
use trove_domain::{HouseholdId, PlaceId};

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

/// The words of an indexed text on PostgreSQL: every run of characters that are not letters or digits is a
/// space, so `to_tsvector('simple', ...)` sees plain words only.
fn words(column: &str) -> String {
    format!("to_tsvector('simple', regexp_replace({column}, '[^[:alnum:]]+', ' ', 'g'))")
}

const SQLITE: &[&str] = &[
    "CREATE VIRTUAL TABLE items_search USING fts5(name, item_type, profile, search_place, search_notes, \
       content='items', content_rowid='id', tokenize='unicode61 remove_diacritics 0', prefix='2 3')",
    "INSERT INTO items_search(items_search) VALUES ('rebuild')",
    // The index's words, read to tell which words near a typo exist (`search::indexed`).
    "CREATE VIRTUAL TABLE items_search_vocab USING fts5vocab(items_search, 'row')",
    "CREATE TRIGGER items_search_insert AFTER INSERT ON items BEGIN \
       INSERT INTO items_search(rowid, name, item_type, profile, search_place, search_notes) \
       VALUES (new.id, new.name, new.item_type, new.profile, new.search_place, new.search_notes); \
       UPDATE households SET item_revision = item_revision + 1 WHERE id = new.household_id; \
     END",
    "CREATE TRIGGER items_search_delete AFTER DELETE ON items BEGIN \
       INSERT INTO items_search(items_search, rowid, name, item_type, profile, search_place, search_notes) \
       VALUES ('delete', old.id, old.name, old.item_type, old.profile, old.search_place, old.search_notes); \
       UPDATE households SET item_revision = item_revision + 1 WHERE id = old.household_id; \
     END",
    "CREATE TRIGGER items_search_update AFTER UPDATE OF name, item_type, profile, search_place, search_notes \
     ON items BEGIN \
       INSERT INTO items_search(items_search, rowid, name, item_type, profile, search_place, search_notes) \
       VALUES ('delete', old.id, old.name, old.item_type, old.profile, old.search_place, old.search_notes); \
       INSERT INTO items_search(rowid, name, item_type, profile, search_place, search_notes) \
       VALUES (new.id, new.name, new.item_type, new.profile, new.search_place, new.search_notes); \
     END",
    "CREATE TRIGGER items_revision_update AFTER UPDATE ON items BEGIN \
       UPDATE households SET item_revision = item_revision + 1 WHERE id IN (old.household_id, new.household_id); \
     END",
    "CREATE TRIGGER places_revision_insert AFTER INSERT ON places BEGIN \
       UPDATE households SET item_revision = item_revision + 1 WHERE id = new.household_id; \
     END",
    "CREATE TRIGGER places_revision_update AFTER UPDATE ON places BEGIN \
       UPDATE households SET item_revision = item_revision + 1 WHERE id IN (old.household_id, new.household_id); \
     END",
    "CREATE TRIGGER places_revision_delete AFTER DELETE ON places BEGIN \
       UPDATE households SET item_revision = item_revision + 1 WHERE id = old.household_id; \
     END",
];

const POSTGRES_REVISION: &[&str] = &[
    "CREATE FUNCTION trove_next_item_revision() RETURNS trigger LANGUAGE plpgsql AS $$ \
     BEGIN \
       UPDATE households SET item_revision = item_revision + 1 \
       WHERE id IN (SELECT household_id FROM changed_rows); \
       RETURN NULL; \
     END $$",
    "CREATE TRIGGER items_revision_insert AFTER INSERT ON items REFERENCING NEW TABLE AS changed_rows \
     FOR EACH STATEMENT EXECUTE FUNCTION trove_next_item_revision()",
    "CREATE TRIGGER items_revision_update AFTER UPDATE ON items REFERENCING NEW TABLE AS changed_rows \
     FOR EACH STATEMENT EXECUTE FUNCTION trove_next_item_revision()",
    "CREATE TRIGGER items_revision_delete AFTER DELETE ON items REFERENCING OLD TABLE AS changed_rows \
     FOR EACH STATEMENT EXECUTE FUNCTION trove_next_item_revision()",
    "CREATE TRIGGER places_revision_insert AFTER INSERT ON places REFERENCING NEW TABLE AS changed_rows \
     FOR EACH STATEMENT EXECUTE FUNCTION trove_next_item_revision()",
    "CREATE TRIGGER places_revision_update AFTER UPDATE ON places REFERENCING NEW TABLE AS changed_rows \
     FOR EACH STATEMENT EXECUTE FUNCTION trove_next_item_revision()",
    "CREATE TRIGGER places_revision_delete AFTER DELETE ON places REFERENCING OLD TABLE AS changed_rows \
     FOR EACH STATEMENT EXECUTE FUNCTION trove_next_item_revision()",
];

fn custom(e: anyhow::Error) -> DbErr {
    DbErr::Custom(format!("{e:#}"))
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = db.get_database_backend();
        db.execute_unprepared("ALTER TABLE items ADD COLUMN search_place TEXT NOT NULL DEFAULT ''").await?;
        db.execute_unprepared("ALTER TABLE items ADD COLUMN search_notes TEXT NOT NULL DEFAULT ''").await?;
        db.execute_unprepared("ALTER TABLE households ADD COLUMN item_revision BIGINT NOT NULL DEFAULT 0").await?;

        // The notes of the items stored so far, from their JSON lists, as `search::notes_text` writes them.
        db.execute_unprepared(if backend == DbBackend::Postgres {
            "UPDATE items SET search_notes = trim(concat_ws(E'\\n', gone_note, \
               (SELECT string_agg(f->>'text', E'\\n') FROM jsonb_array_elements(faults::jsonb) f), \
               (SELECT string_agg(concat_ws(E'\\n', t->>'name', t->>'note'), E'\\n') \
                FROM jsonb_array_elements(tests_done::jsonb) t)))"
        } else {
            "UPDATE items SET search_notes = trim(COALESCE(gone_note, '') || char(10) || \
               COALESCE((SELECT group_concat(json_extract(f.value, '$.text'), char(10)) FROM json_each(items.faults) f), '') \
               || char(10) || \
               COALESCE((SELECT group_concat(COALESCE(json_extract(t.value, '$.name'), '') || char(10) || \
                 COALESCE(json_extract(t.value, '$.note'), ''), char(10)) FROM json_each(items.tests_done) t), ''), \
               char(10))"
        })
        .await?;

        // The place texts of the items stored so far: the paths of every place that holds an item.
        let rows = db
            .query_all_raw(sea_orm::Statement::from_string(
                backend,
                "SELECT DISTINCT household_id, place_id FROM items WHERE place_id IS NOT NULL",
            ))
            .await?;
        let mut by_household: std::collections::BTreeMap<i64, Vec<PlaceId>> = Default::default();
        for row in rows {
            let h: i64 = row.try_get("", "household_id")?;
            let p: i64 = row.try_get("", "place_id")?;
            by_household.entry(h).or_default().push(PlaceId(p));
        }
        for (h, places) in by_household {
            refresh_places(db, HouseholdId(h), &places).await.map_err(custom)?;
        }

        if backend == DbBackend::Postgres {
            let search = format!(
                "ALTER TABLE items ADD COLUMN search tsvector GENERATED ALWAYS AS (\
                   setweight({}, 'A') || setweight({}, 'B') || setweight({}, 'C') || setweight({}, 'C') || \
                   setweight({}, 'D')) STORED",
                words("name"),
                words("item_type"),
                words("profile"),
                words("search_place"),
                words("search_notes"),
            );
            db.execute_unprepared(&search).await?;
            db.execute_unprepared("CREATE INDEX idx_items_search ON items USING gin (search)").await?;
            for sql in POSTGRES_REVISION {
                db.execute_unprepared(sql).await?;
            }
        } else {
            for sql in SQLITE {
                db.execute_unprepared(sql).await?;
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Postgres {
            for t in ["items_revision_insert", "items_revision_update", "items_revision_delete"] {
                db.execute_unprepared(&format!("DROP TRIGGER {t} ON items")).await?;
            }
            for t in ["places_revision_insert", "places_revision_update", "places_revision_delete"] {
                db.execute_unprepared(&format!("DROP TRIGGER {t} ON places")).await?;
            }
            db.execute_unprepared("DROP FUNCTION trove_next_item_revision()").await?;
            db.execute_unprepared("ALTER TABLE items DROP COLUMN search").await?;
        } else {
            for t in [
                "items_search_insert",
                "items_search_delete",
                "items_search_update",
                "items_revision_update",
                "places_revision_insert",
                "places_revision_update",
                "places_revision_delete",
            ] {
                db.execute_unprepared(&format!("DROP TRIGGER {t}")).await?;
            }
            db.execute_unprepared("DROP TABLE items_search_vocab").await?;
            db.execute_unprepared("DROP TABLE items_search").await?;
        }
        db.execute_unprepared("ALTER TABLE items DROP COLUMN search_place").await?;
        db.execute_unprepared("ALTER TABLE items DROP COLUMN search_notes").await?;
        db.execute_unprepared("ALTER TABLE households DROP COLUMN item_revision").await?;
        Ok(())
    }
}
