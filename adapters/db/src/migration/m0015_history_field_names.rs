//! The history names an item's fields as the API does: the type of an item is `item_type` in its events'
//! changes, as in every item answer, where events written before named it `type`. The stored JSON is written by
//! `serde_json` without spaces, and a quote inside a value is escaped, so `"field":"type"` is only ever the name
//! of a change's field.

use sea_orm::ConnectionTrait;
use sea_orm_migration::prelude::*;

#[derive(Debug, DeriveMigrationName)]
pub(crate) struct Migration;

/// Renames the field `from` to `to` in the changes of every item event.
fn rename(from: &str, to: &str) -> String {
    format!(
        "UPDATE events SET changes = replace(changes, '\"field\":\"{from}\"', '\"field\":\"{to}\"') \
         WHERE object_kind = 'item' AND changes LIKE '%\"field\":\"{from}\"%'"
    )
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.get_connection().execute_unprepared(&rename("type", "item_type")).await.map(|_| ())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.get_connection().execute_unprepared(&rename("item_type", "type")).await.map(|_| ())
    }
}
