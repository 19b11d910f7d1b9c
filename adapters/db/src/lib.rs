//! Trove's database adapter: sea-orm entities and migrations, and [`Store`], which implements every repository
//! port of `trove_application` on SQLite (the embedded default) and on PostgreSQL.
//!
//! The entities are this crate's own and map to and from the domain types here only. Lifecycle writes are
//! conditional updates inside one transaction each, never read-then-write in two statements, so concurrent
//! writers (also in other processes sharing one PostgreSQL) never both win.

mod access;
mod backup;
mod bulk;
mod counts;
mod entity;
mod faults;
mod mapping;
mod migration;
mod repo;
mod revisions;
mod search;
#[cfg(feature = "testing")]
pub mod testing;

pub use access::Heard;

use anyhow::Context as _;
use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction, DbBackend,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
};
use sea_orm_migration::MigratorTrait;
use std::path::Path;
use std::time::Duration;

/// How long a SQLite writer waits for another writer's lock before failing.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(15);
/// Connections kept per process. SQLite in WAL mode reads concurrently; its writers queue on the file lock.
const SQLITE_POOL: u32 = 4;
const POSTGRES_POOL: u32 = 10;
/// An arbitrary key for the PostgreSQL advisory lock that serialises migrations of several processes.
const MIGRATION_LOCK_KEY: i64 = 0x0074_726f_7665;

/// The database: a pooled connection to SQLite or PostgreSQL. Cheap to clone; implements every repository
/// port (`InventoryRepo`, `TemplateRepo`, `ProjectRepo`, `SpendLedger`, `HouseholdRepo`, `IdempotencyStore`,
/// `PriceRepo`).
#[derive(Debug, Clone)]
pub struct Store {
    /// The pool every repository method draws from.
    db: DatabaseConnection,
    /// The totals of listings while the household's inventory is unchanged, so paging does not count every
    /// matching item again for every page.
    counts: std::sync::Arc<counts::CountCache>,
    /// Reads of a household's item revision, shared by the requests that arrive while one runs.
    revisions: std::sync::Arc<revisions::SharedReads>,
}

/// The URL of the embedded default database: the file `trove.sqlite3` under `data_dir`, created if missing.
///
/// ```
/// let url = trove_db::sqlite_url(std::path::Path::new("./trove-data"));
/// assert_eq!(url, "sqlite://./trove-data/trove.sqlite3?mode=rwc");
/// ```
pub fn sqlite_url(data_dir: &Path) -> String {
    format!("sqlite://{}?mode=rwc", data_dir.join("trove.sqlite3").display())
}

impl Store {
    /// Opens the database at `url` (`sqlite://...` or `postgres://...`).
    ///
    /// SQLite: the file's directory is created, the file too, readable by the owner only (0700 and 0600, see
    /// [`create_owner_only`]), with WAL journaling, foreign keys
    /// on and a busy timeout, so concurrent writers wait for each other instead of failing. PostgreSQL: a
    /// normal connection pool.
    ///
    /// # Errors
    /// When the directory cannot be created or the database cannot be reached.
    pub async fn connect(url: &str) -> anyhow::Result<Store> {
        Self::open(url, None).await
    }

    /// As [`Store::connect`], for tests: a SQLite database that may not grow past `pages` pages
    /// (`PRAGMA max_page_count`), so a test fills it as a full disk would.
    ///
    /// # Errors
    /// As [`Store::connect`].
    #[cfg(feature = "testing")]
    pub async fn connect_with_page_limit(url: &str, pages: u64) -> anyhow::Result<Store> {
        Self::open(url, Some(pages)).await
    }

    async fn open(url: &str, sqlite_max_pages: Option<u64>) -> anyhow::Result<Store> {
        let mut options = ConnectOptions::new(url.to_owned());
        options.sqlx_logging(false).acquire_timeout(Duration::from_secs(30));
        if url.starts_with("sqlite:") {
            if let Some(file) = sqlite_file(url) {
                create_owner_only(file)?;
            }
            options.max_connections(SQLITE_POOL).map_sqlx_sqlite_opts(move |o| {
                let o = o
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Normal)
                    .foreign_keys(true)
                    .busy_timeout(SQLITE_BUSY_TIMEOUT);
                match sqlite_max_pages {
                    Some(pages) => o.pragma("max_page_count", pages.to_string()),
                    None => o,
                }
            });
        } else {
            options.max_connections(POSTGRES_POOL);
        }
        let db =
            Database::connect(options).await.with_context(|| format!("connect to the database {}", redact(url)))?;
        trove_application::error::recognise_faults(faults::recognise);
        Ok(Store { db, counts: std::sync::Arc::default(), revisions: std::sync::Arc::default() })
    }

    /// The migrations that [`Store::migrate`] would run, oldest first (none when the schema is up to date);
    /// nothing is written.
    ///
    /// # Errors
    /// When the database was migrated by a newer Trove (it holds a migration this build does not know), naming
    /// it; or cannot be read.
    pub async fn pending_migrations(&self) -> anyhow::Result<Vec<String>> {
        let backend = self.db.get_database_backend();
        let exists = match backend {
            DbBackend::Postgres => "SELECT 1 AS found WHERE to_regclass('seaql_migrations') IS NOT NULL",
            _ => "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'seaql_migrations'",
        };
        let installed = self
            .db
            .query_one_raw(sea_orm::Statement::from_string(backend, exists))
            .await
            .context("read the schema's migrations")?
            .is_some();
        let applied: Vec<String> = if installed {
            let rows = self
                .db
                .query_all_raw(sea_orm::Statement::from_string(backend, "SELECT version FROM seaql_migrations"))
                .await
                .context("read the schema's migrations")?;
            rows.iter().map(|r| r.try_get::<String>("", "version")).collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let known: Vec<String> = migration::Migrator::migrations().iter().map(|m| m.name().to_owned()).collect();
        if let Some(newer) = applied.iter().filter(|a| !known.contains(a)).max() {
            anyhow::bail!(
                "the database was migrated by a newer Trove (it has migration {newer}, and this version knows up to {}): \
                 run that version or a later one; nothing was changed",
                known.last().map_or("none", String::as_str)
            );
        }
        Ok(known.into_iter().filter(|k| !applied.contains(k)).collect())
    }

    /// Brings the schema up to date. Safe to run from several processes at once: on PostgreSQL they take
    /// turns on an advisory lock, on SQLite on the write lock.
    ///
    /// # Errors
    /// A database migrated by a newer Trove is refused before anything runs ([`Store::pending_migrations`]);
    /// when a migration fails, nothing of it is applied.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        self.pending_migrations().await?;
        let txn = self.begin_write().await.context("begin the migration transaction")?;
        if txn.get_database_backend() == DbBackend::Postgres {
            txn.execute_unprepared(&format!("SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})"))
                .await
                .context("take the migration lock")?;
        }
        migration::Migrator::up(&txn, None).await.context("run the migrations")?;
        txn.commit().await.context("commit the migrations")?;
        if self.db.get_database_backend() == DbBackend::Sqlite {
            // A store filled before SQLite kept statistics (or by small writes only) gets them once it is large
            // enough to need them; an import keeps them fresh after that.
            // The items are counted only when there are no statistics, and only up to the size that needs them:
            // a `CASE` is evaluated lazily, so a store that has them reads one row of `sqlite_schema`.
            let enough = repo::inventory::ANALYZE_FROM_ROWS;
            let row = self
                .db
                .query_one_raw(sea_orm::Statement::from_string(
                    DbBackend::Sqlite,
                    format!(
                        "SELECT CASE WHEN EXISTS (SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1') THEN 0 \
                         ELSE (SELECT COUNT(*) FROM (SELECT 1 FROM items LIMIT {enough})) END AS unanalyzed"
                    ),
                ))
                .await
                .context("look for the statistics")?;
            let unanalyzed = match row {
                Some(row) => row.try_get::<i64>("", "unanalyzed")?,
                None => 0,
            };
            if unanalyzed >= enough as i64 {
                self.analyze_sqlite().await?;
            }
        }
        Ok(())
    }

    /// `"sqlite"` or `"postgres"`, for start-up messages.
    pub fn backend_name(&self) -> &'static str {
        match self.db.get_database_backend() {
            DbBackend::Sqlite => "sqlite",
            DbBackend::Postgres => "postgres",
            _ => "other",
        }
    }

    /// Begins a transaction that will write. On SQLite it takes the write lock at once (`BEGIN IMMEDIATE`), so
    /// that two writers queue on the busy timeout instead of one failing when it upgrades a read lock.
    ///
    /// Every write whose statement has `RETURNING` (sea-orm's `insert`/`update` of a model on both backends) runs
    /// in one of these, committed explicitly: on SQLite a write that fails as it commits (a full disk) is reported
    /// at the end of an autocommitted statement, which a read of its first returned row never reaches, so the
    /// write would be lost while the caller is told it succeeded. An explicit `COMMIT` reports it.
    async fn begin_write(&self) -> Result<DatabaseTransaction, sea_orm::DbErr> {
        let mode = (self.db.get_database_backend() == DbBackend::Sqlite).then_some(SqliteTransactionMode::Immediate);
        self.db.begin_with_options(TransactionOptions { sqlite_transaction_mode: mode, ..Default::default() }).await
    }
}

/// Creates the SQLite file's missing directories (mode 0700) and the file itself when missing (mode 0600), so
/// that only the owner reads the inventory; SQLite gives its `-wal` and `-shm` files the mode of the database
/// file. What exists already is left as it is (the directory may be one the owner shares on purpose, such as
/// `/tmp`). Elsewhere than on Unix, the platform's defaults.
fn create_owner_only(file: &Path) -> anyhow::Result<()> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty());
    let mut dirs = std::fs::DirBuilder::new();
    dirs.recursive(true);
    let mut create = std::fs::OpenOptions::new();
    create.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        dirs.mode(0o700);
        create.mode(0o600);
    }
    if let Some(dir) = dir {
        dirs.create(dir).with_context(|| format!("create the database directory {}", dir.display()))?;
    }
    match create.open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e).with_context(|| format!("create the database file {}", file.display())),
    }
}

/// The file path of a `sqlite://` URL, without its query.
fn sqlite_file(url: &str) -> Option<&Path> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or(rest);
    (!path.is_empty() && path != ":memory:").then(|| Path::new(path))
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_paths_and_redaction() {
        assert_eq!(sqlite_file("sqlite://./d/trove.sqlite3?mode=rwc"), Some(Path::new("./d/trove.sqlite3")));
        assert_eq!(sqlite_file("sqlite:/tmp/x.db"), Some(Path::new("/tmp/x.db")));
        assert_eq!(sqlite_file("sqlite::memory:"), None);
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    }
}
