//! Bulk writes on PostgreSQL: a transaction on one connection of the store's pool that the repositories'
//! sea-orm code runs on (it implements [`ConnectionTrait`]) and that also takes rows by `COPY ... FROM STDIN`,
//! which sea-orm's own transaction does not expose. An import writes its new items this way: one stream of
//! rows inside the import's transaction instead of hundreds of multi-row INSERTs.

use anyhow::Context as _;
use sea_orm::sqlx::postgres::Postgres;
use sea_orm::sqlx::{self, AssertSqlSafe, Executor as _};
use sea_orm::{ConnectionTrait, DbBackend, DbErr, ExecResult, QueryResult, RuntimeErr, Statement};
use sea_query_sqlx::SqlxValues;
use tokio::sync::Mutex;
use trove_domain::HouseholdId;

/// How many bytes of `COPY` text are gathered before they are sent: large enough that the messages cost
/// nothing, small enough that the import never holds more than this of its rows as text.
pub(crate) const COPY_BUFFER: usize = 1 << 20;

/// A PostgreSQL transaction for bulk writes. Dropped without [`PgBulk::commit`], it rolls back.
pub(crate) struct PgBulk {
    /// The transaction; a lock because sea-orm's methods take the connection by shared reference.
    txn: Mutex<sqlx::Transaction<'static, Postgres>>,
}

fn exec_err(e: sqlx::Error) -> DbErr {
    DbErr::Exec(RuntimeErr::SqlxError(e.into()))
}

fn query_err(e: sqlx::Error) -> DbErr {
    DbErr::Query(RuntimeErr::SqlxError(e.into()))
}

/// A sea-orm statement as an sqlx query with its values bound.
fn query(stmt: Statement) -> sqlx::query::Query<'static, Postgres, SqlxValues> {
    let values = stmt.values.unwrap_or(sea_orm::sea_query::Values(Vec::new()));
    sqlx::query_with(AssertSqlSafe(stmt.sql), SqlxValues(values))
}

impl PgBulk {
    /// Begins a transaction on a connection of `pool`.
    pub(crate) async fn begin(pool: &sqlx::PgPool) -> anyhow::Result<PgBulk> {
        let txn = pool.begin().await.context("begin a bulk transaction")?;
        Ok(PgBulk { txn: Mutex::new(txn) })
    }

    pub(crate) async fn commit(self) -> anyhow::Result<()> {
        self.txn.into_inner().commit().await.context("commit a bulk transaction")
    }

    /// Streams rows into `statement` (a `COPY ... FROM STDIN` in text format): `fill` writes rows into the
    /// buffer it is given and answers `false` once it has written the last; each buffer is sent when it holds
    /// [`COPY_BUFFER`] bytes. Answers the rows copied.
    ///
    /// # Errors
    /// When `fill` fails (the copy is aborted, so the transaction fails too) or the database refuses a row.
    pub(crate) async fn copy_in(
        &self,
        statement: &str,
        mut fill: impl FnMut(&mut Vec<u8>) -> anyhow::Result<bool>,
    ) -> anyhow::Result<u64> {
        let mut txn = self.txn.lock().await;
        let mut copy = txn.copy_in_raw(statement).await.context("start a COPY")?;
        let mut buffer = Vec::with_capacity(COPY_BUFFER + COPY_BUFFER / 4);
        loop {
            buffer.clear();
            let more = loop {
                match fill(&mut buffer) {
                    Ok(true) if buffer.len() < COPY_BUFFER => continue,
                    Ok(more) => break more,
                    Err(e) => {
                        // The copy must end before the connection can be used again.
                        let _ = copy.abort(format!("{e:#}")).await;
                        return Err(e);
                    }
                }
            };
            if !buffer.is_empty() {
                copy.send(buffer.as_slice()).await.context("send rows to COPY")?;
            }
            if !more {
                break;
            }
        }
        copy.finish().await.context("finish a COPY")
    }

    /// Adds `words` to the household's search vocabulary (`search_words`), and the words of the items `ids`
    /// as their index holds them (the rows whose index the trigger made).
    pub(crate) async fn add_words(&self, household: HouseholdId, words: &[String], ids: &[i64]) -> anyhow::Result<()> {
        let mut txn = self.txn.lock().await;
        sqlx::query(
            "INSERT INTO search_words (household_id, word) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING",
        )
        .bind(household.0)
        .bind(words)
        .execute(&mut **txn)
        .await
        .context("add the import's words to the vocabulary")?;
        if !ids.is_empty() {
            sqlx::query(
                "INSERT INTO search_words (household_id, word) \
                 SELECT DISTINCT household_id, unnest(tsvector_to_array(search)) FROM items WHERE id = ANY($1) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(ids)
            .execute(&mut **txn)
            .await
            .context("add the words of imported items to the vocabulary")?;
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl ConnectionTrait for PgBulk {
    fn get_database_backend(&self) -> DbBackend {
        DbBackend::Postgres
    }

    async fn execute_raw(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        let mut txn = self.txn.lock().await;
        query(stmt).execute(&mut **txn).await.map(Into::into).map_err(exec_err)
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        let mut txn = self.txn.lock().await;
        let sql = AssertSqlSafe(sql.to_owned());
        (&mut **txn).execute(sql).await.map(Into::into).map_err(exec_err)
    }

    async fn query_one_raw(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        let mut txn = self.txn.lock().await;
        query(stmt).fetch_optional(&mut **txn).await.map(|r| r.map(Into::into)).map_err(query_err)
    }

    async fn query_all_raw(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        let mut txn = self.txn.lock().await;
        query(stmt)
            .fetch_all(&mut **txn)
            .await
            .map(|rows| rows.into_iter().map(Into::into).collect())
            .map_err(query_err)
    }
}

/// Writes `text` as a field of `COPY`'s text format: backslash, tab, newline and carriage return escaped.
pub(crate) fn copy_text(out: &mut Vec<u8>, text: &str) {
    for &b in text.as_bytes() {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
}

/// Writes an optional text as a field of `COPY`'s text format (`\N` for none).
pub(crate) fn copy_opt(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(t) => copy_text(out, t),
        None => out.extend_from_slice(b"\\N"),
    }
}

/// The secondary indexes of a table, its foreign keys and its statement triggers that keep a transition table
/// of inserted rows, set aside for a bulk load into it and made again from their own definitions
/// (`pg_get_indexdef`, `pg_get_constraintdef`, `pg_get_triggerdef`) inside the same transaction. An index is
/// built once, sorted, instead of taking every row one by one (a unique one checks every key as it is built); a
/// foreign key checks every row by one join instead of one query per row; a transition table copies every
/// loaded row once more before its trigger reads it; each of the two steps, measured with `psql` on a
/// 100,000-row import's rows, took a large share off the `COPY` (docs/perf/search-totals-import.md). The primary key and the indexes behind constraints stay.
///
/// Only for a load into a table that holds no more rows than it loads: building again an index or checking a
/// key over a large table would cost more than it saves. The table is locked against every other reader and
/// writer until the transaction ends. The caller does the triggers' work itself.
pub(crate) struct SetAside {
    /// The statements that make them again: the indexes, then the foreign keys, then the triggers.
    remakes: Vec<String>,
}

/// Loads of at least this many rows into a table holding no more rows than they load set its checks aside.
pub(crate) const SET_ASIDE_FROM_ROWS: usize = 2_000;

impl SetAside {
    /// The checks of `table` set aside for a load of `rows` rows, when the load is large
    /// ([`SET_ASIDE_FROM_ROWS`]) and the table holds no more rows than it (by `pg_class.reltuples`); `None`
    /// otherwise, with nothing changed.
    pub(crate) async fn for_load(txn: &PgBulk, table: &'static str, rows: usize) -> anyhow::Result<Option<SetAside>> {
        if rows < SET_ASIDE_FROM_ROWS {
            return Ok(None);
        }
        let held = txn
            .query_one_raw(Statement::from_string(
                DbBackend::Postgres,
                format!("SELECT GREATEST(reltuples, 0)::float8 AS rows FROM pg_class WHERE oid = '{table}'::regclass"),
            ))
            .await
            .and_then(|row| row.map(|r| r.try_get::<f64>("", "rows")).transpose())
            .with_context(|| format!("read the size of {table}"))?;
        if held.unwrap_or(0.0) > rows as f64 {
            return Ok(None);
        }
        Ok(Some(SetAside::take(txn, table).await?))
    }

    /// Drops the secondary indexes, foreign keys and transition-table insert triggers of `table`, inside `txn`.
    async fn take(txn: &PgBulk, table: &'static str) -> anyhow::Result<SetAside> {
        // Each with the statement that drops it and the one that makes it again, from its own definition.
        // tgtype bit 2 (4): an INSERT trigger.
        let sql = format!(
            "SELECT 1 AS kind, c.relname::text AS name, format('DROP INDEX %I', c.relname) AS drop_sql, \
               pg_get_indexdef(i.indexrelid) AS remake FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
             WHERE i.indrelid = '{table}'::regclass AND NOT i.indisprimary \
               AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid) \
             UNION ALL SELECT 2, conname::text, format('ALTER TABLE %I DROP CONSTRAINT %I', '{table}', conname), \
               format('ALTER TABLE %I ADD CONSTRAINT %I %s', '{table}', conname, pg_get_constraintdef(oid)) \
             FROM pg_constraint WHERE conrelid = '{table}'::regclass AND contype = 'f' \
             UNION ALL SELECT 3, tgname::text, format('DROP TRIGGER %I ON %I', tgname, '{table}'), \
               pg_get_triggerdef(oid) FROM pg_trigger \
             WHERE tgrelid = '{table}'::regclass AND NOT tgisinternal AND tgnewtable IS NOT NULL \
               AND (tgtype & 4) <> 0 \
             ORDER BY 1, 2"
        );
        let rows = txn
            .query_all_raw(Statement::from_string(DbBackend::Postgres, sql))
            .await
            .with_context(|| format!("read the indexes, foreign keys and triggers of {table}"))?;
        let guards = rows
            .iter()
            .map(|r| Ok((r.try_get::<String>("", "drop_sql")?, r.try_get::<String>("", "remake")?)))
            .collect::<Result<Vec<(String, String)>, DbErr>>()
            .with_context(|| format!("read the indexes, foreign keys and triggers of {table}"))?;
        txn.execute_unprepared(&format!("LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
            .await
            .with_context(|| format!("lock {table}"))?;
        for (drop, _) in &guards {
            txn.execute_unprepared(drop).await.with_context(|| format!("set aside for the load: {drop}"))?;
        }
        Ok(SetAside { remakes: guards.into_iter().map(|(_, remake)| remake).collect() })
    }

    /// Builds the indexes, makes the foreign keys (each checking every row of the table at once) and the
    /// triggers again.
    pub(crate) async fn restore(self, txn: &PgBulk) -> anyhow::Result<()> {
        // Room to sort an index's keys in memory (the full-text index's most of all), for this transaction.
        txn.execute_unprepared("SET LOCAL maintenance_work_mem = '128MB'").await.context("size the index builds")?;
        for remake in &self.remakes {
            txn.execute_unprepared(remake).await.with_context(|| format!("make again after the load: {remake}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_fields_escape_what_the_text_format_reads_as_syntax() {
        let mut out = Vec::new();
        copy_text(&mut out, "a\tb\\c\nd\re ü");
        out.push(b'\t');
        copy_opt(&mut out, None);
        assert_eq!(String::from_utf8(out).unwrap(), "a\\tb\\\\c\\nd\\re ü\t\\N");
    }
}
