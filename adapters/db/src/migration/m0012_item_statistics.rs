//! PostgreSQL keeps no statistics of the item columns that no query filters, joins or groups on: the texts
//! shown or searched through the index (name, profile, the notes of a departure, the search texts), the JSON
//! records, the times and the version (compared only beside the primary key). `ANALYZE items`, which an import
//! runs before it answers (inside `InventoryRepo::import`, after the commit), spent about half its time sorting samples of
//! those texts; it now reads only the columns the planner uses (docs/perf/search-totals-import.md). The columns a query
//! filters on keep the default target: the household, type, condition, intent, availability, project, place,
//! departure, import reference and the search vector. SQLite's `ANALYZE` keeps statistics of indexes only: nothing
//! to do there.

use sea_orm::{ConnectionTrait, DbBackend};
use sea_orm_migration::prelude::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

/// The columns of `items` without statistics.
const UNFILTERED: [&str; 13] = [
    "name",
    "profile",
    "gone_note",
    "measurements",
    "faults",
    "tests_done",
    "accessories",
    "components",
    "search_place",
    "search_notes",
    "created_at",
    "updated_at",
    "version",
];

/// `ALTER TABLE items` setting the statistics target of every column in [`UNFILTERED`] to `target` (-1: the
/// server's default).
fn statistics(target: i32) -> String {
    let columns: Vec<String> = UNFILTERED.iter().map(|c| format!("ALTER COLUMN {c} SET STATISTICS {target}")).collect();
    format!("ALTER TABLE items {}", columns.join(", "))
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Postgres {
            db.execute_unprepared(&statistics(0)).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if db.get_database_backend() == DbBackend::Postgres {
            db.execute_unprepared(&statistics(-1)).await?;
        }
        Ok(())
    }
}
