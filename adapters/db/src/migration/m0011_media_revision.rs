//! The household's item revision (`households.item_revision`, `m0008_search`) also moves on with every write of
//! a medium on an item: an item's `cover` is its first photo, so an answer built from the listing at one revision
//! (the HTTP adapter keeps such answers) must not outlive a photo added, moved to another item or removed.
//! Pending media (on no item) change no listing and leave the revision alone; so does a caption or a thumbnail
//! made later.

use sea_orm::{ConnectionTrait, DbBackend};
use sea_orm_migration::prelude::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

const SQLITE: &[&str] = &[
    "CREATE TRIGGER media_revision_insert AFTER INSERT ON media WHEN new.item_id IS NOT NULL BEGIN \
       UPDATE households SET item_revision = item_revision + 1 WHERE id = new.household_id; \
     END",
    "CREATE TRIGGER media_revision_update AFTER UPDATE ON media \
     WHEN new.item_id IS NOT old.item_id OR new.kind IS NOT old.kind BEGIN \
       UPDATE households SET item_revision = item_revision + 1 WHERE id IN (old.household_id, new.household_id); \
     END",
    "CREATE TRIGGER media_revision_delete AFTER DELETE ON media WHEN old.item_id IS NOT NULL BEGIN \
       UPDATE households SET item_revision = item_revision + 1 WHERE id = old.household_id; \
     END",
];

const POSTGRES: &[&str] = &[
    "CREATE FUNCTION trove_next_item_revision_media() RETURNS trigger LANGUAGE plpgsql AS $$ \
     BEGIN \
       UPDATE households SET item_revision = item_revision + 1 \
       WHERE id IN (SELECT household_id FROM changed_rows WHERE item_id IS NOT NULL); \
       RETURN NULL; \
     END $$",
    "CREATE FUNCTION trove_next_item_revision_media_row() RETURNS trigger LANGUAGE plpgsql AS $$ \
     BEGIN \
       UPDATE households SET item_revision = item_revision + 1 WHERE id IN (OLD.household_id, NEW.household_id); \
       RETURN NULL; \
     END $$",
    "CREATE TRIGGER media_revision_insert AFTER INSERT ON media REFERENCING NEW TABLE AS changed_rows \
     FOR EACH STATEMENT EXECUTE FUNCTION trove_next_item_revision_media()",
    "CREATE TRIGGER media_revision_delete AFTER DELETE ON media REFERENCING OLD TABLE AS changed_rows \
     FOR EACH STATEMENT EXECUTE FUNCTION trove_next_item_revision_media()",
    "CREATE TRIGGER media_revision_update AFTER UPDATE OF item_id, kind ON media FOR EACH ROW \
     WHEN (OLD.item_id IS DISTINCT FROM NEW.item_id OR OLD.kind IS DISTINCT FROM NEW.kind) \
     EXECUTE FUNCTION trove_next_item_revision_media_row()",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let statements = if db.get_database_backend() == DbBackend::Postgres { POSTGRES } else { SQLITE };
        for statement in statements {
            db.execute_unprepared(statement).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for trigger in ["media_revision_insert", "media_revision_update", "media_revision_delete"] {
            let drop = if db.get_database_backend() == DbBackend::Postgres {
                format!("DROP TRIGGER IF EXISTS {trigger} ON media")
            } else {
                format!("DROP TRIGGER IF EXISTS {trigger}")
            };
            db.execute_unprepared(&drop).await?;
        }
        if db.get_database_backend() == DbBackend::Postgres {
            db.execute_unprepared("DROP FUNCTION IF EXISTS trove_next_item_revision_media()").await?;
            db.execute_unprepared("DROP FUNCTION IF EXISTS trove_next_item_revision_media_row()").await?;
        }
        Ok(())
    }
}
