//! `BackupRepo`: the whole store as portable rows (each row its entity's model as JSON, the same on SQLite and
//! PostgreSQL), dumped from one read transaction and loaded back in one write transaction.
//!
//! The tables are kept in the order they load in (a table after those it refers to). Places refer to places: they
//! load once all are read, each after the place it is in. What the store derives from the rows (the
//! search index, the search words, the household's item revision) is made again by the same triggers that make it
//! on every write, so it is not in a backup. On PostgreSQL each table's id sequence is moved past the ids loaded.

use crate::Store;
use crate::entity::{
    events, households, instance_secrets, invitations, item_codes, items, loans, maintenance, media, members,
    notification_settings, oidc_identities, passkeys, places, price_reports, projects, reminders, schedules,
    spend_entries, templates, tokens,
};
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use futures_util::StreamExt as _;
use sea_orm::{
    AccessMode, ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseTransaction, DbBackend, EntityTrait,
    IntoActiveModel, IsolationLevel, Iterable, PaginatorTrait, PrimaryKeyToColumn, QueryFilter, QueryOrder, Statement,
    TransactionTrait,
};
use sea_orm_migration::MigratorTrait as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeSet;
use trove_application::RepoError;
use trove_application::ports::{BackupRepo, DumpSink, Dumped, LoadSource, Loaded};
use trove_domain::media::ContentHash;

/// The tables a backup keeps, in the order they load. The lookup cache (`lookup_cache`), derived data of the
/// instance, is not among them.
pub const KEPT: [&str; 21] = [
    "households",
    "instance_secrets",
    "members",
    "invitations",
    "tokens",
    "passkeys",
    "oidc_identities",
    "templates",
    "places",
    "projects",
    "items",
    "item_codes",
    "media",
    "events",
    "price_reports",
    "spend_entries",
    "loans",
    "schedules",
    "maintenance",
    "notification_settings",
    "reminders",
];

/// Most bound values one insert carries (SQLite allows 32,766, PostgreSQL 65,535).
const VALUES_PER_INSERT: usize = 30_000;

/// Writes every row of `E`, by primary key, to `sink` as one JSON object each; answers how many.
async fn dump_table<E>(
    txn: &DatabaseTransaction,
    sink: &mut dyn DumpSink,
    mut seen: impl FnMut(&E::Model),
) -> anyhow::Result<u64>
where
    E: EntityTrait,
    E::Model: Serialize + Sync,
{
    let mut query = E::find();
    for key in E::PrimaryKey::iter() {
        query = query.order_by_asc(key.into_column());
    }
    let mut rows = query.stream(txn).await.with_context(|| format!("read {}", E::default().table_name()))?;
    let mut n = 0;
    let mut line = Vec::with_capacity(1024);
    while let Some(row) = rows.next().await {
        let row = row.with_context(|| format!("read a row of {}", E::default().table_name()))?;
        seen(&row);
        line.clear();
        serde_json::to_writer(&mut line, &row)?;
        sink.row(&line)?;
        n += 1;
    }
    Ok(n)
}

/// Inserts `rows` (JSON models of `E`) as they are, ids included.
async fn insert_rows<E>(txn: &DatabaseTransaction, rows: &[Vec<u8>]) -> anyhow::Result<()>
where
    E: EntityTrait,
    E::Model: DeserializeOwned + IntoActiveModel<E::ActiveModel>,
    E::ActiveModel: ActiveModelTrait<Entity = E> + Send,
{
    if rows.is_empty() {
        return Ok(());
    }
    let table = E::default().table_name().to_owned();
    // Each insert carries at most VALUES_PER_INSERT bound values: the rows it takes follow from the columns.
    let per_insert = (VALUES_PER_INSERT / E::Column::iter().count().max(1)).max(1);
    for chunk in rows.chunks(per_insert) {
        insert_chunk::<E>(txn, &table, chunk).await?;
    }
    Ok(())
}

async fn insert_chunk<E>(txn: &DatabaseTransaction, table: &str, rows: &[Vec<u8>]) -> anyhow::Result<()>
where
    E: EntityTrait,
    E::Model: DeserializeOwned + IntoActiveModel<E::ActiveModel>,
    E::ActiveModel: ActiveModelTrait<Entity = E> + Send,
{
    let models = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let am = serde_json::from_slice::<E::Model>(r)
                .with_context(|| format!("row {} of {table} does not fit the table", i + 1))?
                .into_active_model();
            // Every column is written, the id included.
            Ok(am.reset_all())
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    E::insert_many(models).exec_without_returning(txn).await.with_context(|| format!("load {table}"))?;
    Ok(())
}

/// Loads every place, each after the place it is in (a place may be in one made after it, with a larger id, so
/// id order will not do; and two places of one name are told apart only by their parent, so they cannot all
/// load without one first).
async fn load_places(txn: &DatabaseTransaction, rows: &[Vec<u8>]) -> anyhow::Result<()> {
    let mut waiting: Vec<places::Model> =
        rows.iter().map(|r| serde_json::from_slice(r).context("a row of places")).collect::<anyhow::Result<_>>()?;
    let mut loaded: std::collections::HashSet<i64> = std::collections::HashSet::new();
    while !waiting.is_empty() {
        let (ready, rest): (Vec<places::Model>, Vec<places::Model>) =
            waiting.into_iter().partition(|p| p.parent_id.is_none_or(|parent| loaded.contains(&parent)));
        if ready.is_empty() {
            return Err(anyhow!("{} places are in places the backup does not hold, or in each other", rest.len()));
        }
        let rows = ready.iter().map(serde_json::to_vec).collect::<Result<Vec<_>, _>>()?;
        insert_rows::<places::Entity>(txn, &rows).await?;
        loaded.extend(ready.iter().map(|p| p.id));
        waiting = rest;
    }
    Ok(())
}

/// Rows read before they are loaded: a bound on what is held of a large table at once.
const ROWS_PER_LOAD: usize = 2_000;

/// Loads one batch of `table`'s rows; the places are only gathered in `places` (see [`load_places`]).
async fn load_batch(
    txn: &DatabaseTransaction,
    table: &str,
    rows: &mut Vec<Vec<u8>>,
    places: &mut Vec<Vec<u8>>,
) -> anyhow::Result<u64> {
    let n = rows.len() as u64;
    match table {
        "households" => insert_rows::<households::Entity>(txn, rows).await?,
        "instance_secrets" => insert_rows::<instance_secrets::Entity>(txn, rows).await?,
        "members" => insert_rows::<members::Entity>(txn, rows).await?,
        "invitations" => insert_rows::<invitations::Entity>(txn, rows).await?,
        "tokens" => insert_rows::<tokens::Entity>(txn, rows).await?,
        "passkeys" => insert_rows::<passkeys::Entity>(txn, rows).await?,
        "oidc_identities" => insert_rows::<oidc_identities::Entity>(txn, rows).await?,
        "templates" => insert_rows::<templates::Entity>(txn, rows).await?,
        "places" => {
            // Kept until the table ends: they load parents first ([`load_places`]).
            places.append(rows);
            return Ok(n);
        }
        "projects" => insert_rows::<projects::Entity>(txn, rows).await?,
        "items" => insert_rows::<items::Entity>(txn, rows).await?,
        "item_codes" => insert_rows::<item_codes::Entity>(txn, rows).await?,
        "media" => insert_rows::<media::Entity>(txn, rows).await?,
        "events" => insert_rows::<events::Entity>(txn, rows).await?,
        "price_reports" => insert_rows::<price_reports::Entity>(txn, rows).await?,
        "spend_entries" => insert_rows::<spend_entries::Entity>(txn, rows).await?,
        "loans" => insert_rows::<loans::Entity>(txn, rows).await?,
        "schedules" => insert_rows::<schedules::Entity>(txn, rows).await?,
        "maintenance" => insert_rows::<maintenance::Entity>(txn, rows).await?,
        "notification_settings" => insert_rows::<notification_settings::Entity>(txn, rows).await?,
        "reminders" => insert_rows::<reminders::Entity>(txn, rows).await?,
        other => return Err(anyhow!("a backup holds no table {other:?}")),
    }
    rows.clear();
    Ok(n)
}

#[async_trait]
impl BackupRepo for Store {
    async fn schema_version(&self) -> Result<String, RepoError> {
        let row = self
            .db
            .query_one_raw(Statement::from_string(
                self.db.get_database_backend(),
                "SELECT version FROM seaql_migrations ORDER BY version DESC LIMIT 1",
            ))
            .await
            .context("read the schema version")?
            .ok_or_else(|| anyhow!("the store has no migration applied"))?;
        Ok(row.try_get::<String>("", "version").context("read the schema version")?)
    }

    fn known_schemas(&self) -> Vec<String> {
        crate::migration::Migrator::migrations().iter().map(|m| m.name().to_owned()).collect()
    }

    async fn dump(&self, sink: &mut dyn DumpSink) -> Result<Dumped, RepoError> {
        let postgres = self.db.get_database_backend() == DbBackend::Postgres;
        // One snapshot: PostgreSQL's repeatable read; on SQLite (WAL) a read transaction sees the database as it
        // was at its first read, whatever is written meanwhile.
        let txn = if postgres {
            self.db.begin_with_config(Some(IsolationLevel::RepeatableRead), Some(AccessMode::ReadOnly)).await
        } else {
            self.db.begin().await
        }
        .context("begin the backup's snapshot")?;
        let mut tables = Vec::new();
        let mut blobs = BTreeSet::new();
        for table in KEPT {
            sink.table(table)?;
            let n = match table {
                "households" => dump_table::<households::Entity>(&txn, sink, |_| {}).await?,
                "instance_secrets" => dump_table::<instance_secrets::Entity>(&txn, sink, |_| {}).await?,
                "members" => dump_table::<members::Entity>(&txn, sink, |_| {}).await?,
                "invitations" => dump_table::<invitations::Entity>(&txn, sink, |_| {}).await?,
                "tokens" => dump_table::<tokens::Entity>(&txn, sink, |_| {}).await?,
                "passkeys" => dump_table::<passkeys::Entity>(&txn, sink, |_| {}).await?,
                "oidc_identities" => dump_table::<oidc_identities::Entity>(&txn, sink, |_| {}).await?,
                "templates" => dump_table::<templates::Entity>(&txn, sink, |_| {}).await?,
                "places" => dump_table::<places::Entity>(&txn, sink, |_| {}).await?,
                "projects" => dump_table::<projects::Entity>(&txn, sink, |_| {}).await?,
                "items" => dump_table::<items::Entity>(&txn, sink, |_| {}).await?,
                "item_codes" => dump_table::<item_codes::Entity>(&txn, sink, |_| {}).await?,
                "media" => {
                    dump_table::<media::Entity>(&txn, sink, |m| {
                        blobs.insert(m.sha256.clone());
                        if let Some(t) = &m.thumb_sha256 {
                            blobs.insert(t.clone());
                        }
                    })
                    .await?
                }
                "events" => dump_table::<events::Entity>(&txn, sink, |_| {}).await?,
                "price_reports" => dump_table::<price_reports::Entity>(&txn, sink, |_| {}).await?,
                "spend_entries" => dump_table::<spend_entries::Entity>(&txn, sink, |_| {}).await?,
                "loans" => dump_table::<loans::Entity>(&txn, sink, |_| {}).await?,
                "schedules" => dump_table::<schedules::Entity>(&txn, sink, |_| {}).await?,
                "maintenance" => dump_table::<maintenance::Entity>(&txn, sink, |_| {}).await?,
                "notification_settings" => dump_table::<notification_settings::Entity>(&txn, sink, |_| {}).await?,
                "reminders" => dump_table::<reminders::Entity>(&txn, sink, |_| {}).await?,
                other => unreachable!("every kept table is dumped: {other}"),
            };
            tables.push((table.to_owned(), n));
        }
        txn.commit().await.context("end the backup's snapshot")?;
        let blobs = blobs
            .into_iter()
            .map(|h| ContentHash::parse(&h).ok_or_else(|| anyhow!("a media row names {h:?}, which is no content hash")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Dumped { tables, blobs })
    }

    async fn households(&self) -> Result<u64, RepoError> {
        Ok(households::Entity::find().count(&self.db).await.context("count the households")?)
    }

    async fn is_empty(&self) -> Result<bool, RepoError> {
        let backend = self.db.get_database_backend();
        for table in KEPT {
            let sql = if table == "templates" {
                "SELECT 1 AS one FROM templates WHERE household_id IS NOT NULL LIMIT 1".to_owned()
            } else {
                format!("SELECT 1 AS one FROM {table} LIMIT 1")
            };
            let any = self
                .db
                .query_one_raw(Statement::from_string(backend, sql))
                .await
                .with_context(|| format!("read {table}"))?;
            if any.is_some() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    async fn load(&self, source: &mut dyn LoadSource) -> Result<Vec<(String, u64)>, RepoError> {
        let backend = self.db.get_database_backend();
        let txn = self.begin_write().await.context("begin the restore")?;
        // The built-in templates a server seeds are the backup's to give.
        templates::Entity::delete_many()
            .filter(templates::Column::HouseholdId.is_null())
            .exec(&txn)
            .await
            .context("clear the seeded templates")?;
        let mut loaded: Vec<(String, u64)> = Vec::new();
        let mut rows: Vec<Vec<u8>> = Vec::new();
        let mut places: Vec<Vec<u8>> = Vec::new();
        let mut expected = KEPT.iter();
        while let Some(next) = source.next()? {
            match next {
                Loaded::Table(name) => {
                    if let Some((table, n)) = loaded.last_mut() {
                        *n += load_batch(&txn, table, &mut rows, &mut places).await?;
                        if table == "places" {
                            load_places(&txn, &std::mem::take(&mut places)).await?;
                        }
                    }
                    if expected.next() != Some(&name.as_str()) {
                        return Err(anyhow!("the backup's table {name:?} is not the one expected next").into());
                    }
                    loaded.push((name, 0));
                }
                Loaded::Row(row) => {
                    let Some((table, n)) = loaded.last_mut() else {
                        return Err(anyhow!("a row before any table").into());
                    };
                    rows.push(row);
                    if rows.len() >= ROWS_PER_LOAD {
                        *n += load_batch(&txn, table, &mut rows, &mut places).await?;
                    }
                }
            }
        }
        if let Some((table, n)) = loaded.last_mut() {
            *n += load_batch(&txn, table, &mut rows, &mut places).await?;
        }
        if loaded.len() != KEPT.len() {
            return Err(anyhow!("the backup holds {} tables, not {}", loaded.len(), KEPT.len()).into());
        }
        if backend == DbBackend::Postgres {
            // Tables keyed by something else than a serial id have no sequence.
            for table in KEPT.iter().filter(|t| !matches!(**t, "instance_secrets" | "notification_settings")) {
                let sql = format!(
                    "SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
                );
                txn.execute_raw(Statement::from_string(backend, sql))
                    .await
                    .with_context(|| format!("move the id sequence of {table}"))?;
            }
        }
        txn.commit().await.context("commit the restore")?;
        Ok(loaded)
    }
}
