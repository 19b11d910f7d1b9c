//! The search index for bulk loads and typos on PostgreSQL (see `crate::search`).
//!
//! `items.search` stops being a generated column: a row trigger fills it with the same expression when a
//! writer gives none (every write but an import), and an import gives it already made in Rust
//! (`search::pg_tsvector`), so a bulk load does not run five `regexp_replace` and `to_tsvector` per row. An
//! update of an indexed text computes it again.
//!
//! `search_words` is every word the index of a household's items has held (the lexemes of `items.search`): the
//! vocabulary a typo is resolved against with one lookup of its key instead of one probe of the index per
//! word near the typo. A statement trigger adds the words of inserted and updated rows; an import adds its own
//! words and says so (`trove.words_written`), so the trigger does not gather them again. Words are never taken
//! out: a word whose items changed or went is a candidate that finds nothing, the same answer as no candidate.
//!
//! SQLite keeps its vocabulary in the FTS5 index itself (`items_search_vocab`, `m0008_search`).
//!
//! On both backends, `idx_items_stamp` (household, version) answers the inventory's stamp (a count and a sum
//! of versions, then `InventoryRepo::stamp`; dropped by `m0018_no_stamp_index`, the revision having replaced the
//! stamp) from the index alone, without reading every row of the household: the
//! proposal's caches read it at every step.

use sea_orm::{ConnectionTrait, DbBackend};
use sea_orm_migration::prelude::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

/// The words of an indexed text, as `m0008_search` wrote them for the generated column.
fn words(column: &str) -> String {
    format!("to_tsvector('simple', regexp_replace(NEW.{column}, '[^[:alnum:]]+', ' ', 'g'))")
}

fn postgres() -> Vec<String> {
    vec![
        "ALTER TABLE items ALTER COLUMN search DROP EXPRESSION".to_owned(),
        format!(
            "CREATE FUNCTION trove_item_search() RETURNS trigger LANGUAGE plpgsql AS $$ \
             BEGIN \
               NEW.search := setweight({}, 'A') || setweight({}, 'B') || setweight({}, 'C') || \
                 setweight({}, 'C') || setweight({}, 'D'); \
               RETURN NEW; \
             END $$",
            words("name"),
            words("item_type"),
            words("profile"),
            words("search_place"),
            words("search_notes"),
        ),
        "CREATE TRIGGER items_search_insert BEFORE INSERT ON items FOR EACH ROW WHEN (NEW.search IS NULL) \
         EXECUTE FUNCTION trove_item_search()"
            .to_owned(),
        "CREATE TRIGGER items_search_update BEFORE UPDATE OF name, item_type, profile, search_place, search_notes \
         ON items FOR EACH ROW EXECUTE FUNCTION trove_item_search()"
            .to_owned(),
        "CREATE TABLE search_words (household_id BIGINT NOT NULL, word TEXT NOT NULL, \
         PRIMARY KEY (household_id, word))"
            .to_owned(),
        "INSERT INTO search_words (household_id, word) \
         SELECT DISTINCT household_id, unnest(tsvector_to_array(search)) FROM items"
            .to_owned(),
        "CREATE FUNCTION trove_item_words() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN \
           IF current_setting('trove.words_written', true) = 'on' THEN RETURN NULL; END IF; \
           INSERT INTO search_words (household_id, word) \
             SELECT DISTINCT household_id, unnest(tsvector_to_array(search)) FROM changed_rows \
             ON CONFLICT DO NOTHING; \
           RETURN NULL; \
         END $$"
            .to_owned(),
        "CREATE TRIGGER items_words_insert AFTER INSERT ON items REFERENCING NEW TABLE AS changed_rows \
         FOR EACH STATEMENT EXECUTE FUNCTION trove_item_words()"
            .to_owned(),
        "CREATE TRIGGER items_words_update AFTER UPDATE ON items REFERENCING NEW TABLE AS changed_rows \
         FOR EACH STATEMENT EXECUTE FUNCTION trove_item_words()"
            .to_owned(),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Postgres {
            for sql in postgres() {
                db.execute_unprepared(&sql).await?;
            }
        }
        db.execute_unprepared("CREATE INDEX idx_items_stamp ON items (household_id, version)").await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX idx_items_stamp").await?;
        if db.get_database_backend() == DbBackend::Postgres {
            for sql in [
                "DROP TRIGGER items_words_insert ON items",
                "DROP TRIGGER items_words_update ON items",
                "DROP FUNCTION trove_item_words()",
                "DROP TABLE search_words",
                "DROP TRIGGER items_search_insert ON items",
                "DROP TRIGGER items_search_update ON items",
                "DROP FUNCTION trove_item_search()",
                // Back to the generated column of `m0008_search`, with its index.
                "ALTER TABLE items DROP COLUMN search",
            ] {
                db.execute_unprepared(sql).await?;
            }
            let column = |c: &str| format!("to_tsvector('simple', regexp_replace({c}, '[^[:alnum:]]+', ' ', 'g'))");
            db.execute_unprepared(&format!(
                "ALTER TABLE items ADD COLUMN search tsvector GENERATED ALWAYS AS (\
                   setweight({}, 'A') || setweight({}, 'B') || setweight({}, 'C') || setweight({}, 'C') || \
                   setweight({}, 'D')) STORED",
                column("name"),
                column("item_type"),
                column("profile"),
                column("search_place"),
                column("search_notes"),
            ))
            .await?;
            db.execute_unprepared("CREATE INDEX idx_items_search ON items USING gin (search)").await?;
        }
        Ok(())
    }
}
