//! One freshness token (issue 25): the caches built from a whole inventory are kept by the household's item
//! revision, one key lookup, so `idx_items_stamp` (household, version), which answered the old stamp (a count and a
//! sum of versions) from the index alone, serves no query and only costs every write of an item. Dropped; `down`
//! makes it again.

use sea_orm_migration::prelude::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.get_connection().execute_unprepared("DROP INDEX IF EXISTS idx_items_stamp").await.map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("CREATE INDEX idx_items_stamp ON items (household_id, version)")
            .await
            .map(|_| ())
    }
}
