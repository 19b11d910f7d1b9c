//! Test support: a fresh, empty database per test, so tests never share state and runs never collide.
//! Behind the `testing` feature; used by this crate's tests and by the integration tests.

use anyhow::Context as _;
use sea_orm::{ConnectOptions, ConnectionTrait, Database};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Where the test PostgreSQL is when `TROVE_TEST_PG_URL` is unset.
pub const DEFAULT_PG_URL: &str = "postgres://postgres@127.0.0.1:5432";
/// Test databases older than this are dropped by later runs, so they do not pile up.
const STALE_AFTER_SECS: u64 = 6 * 60 * 60;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name no other test of any run uses: seconds since the epoch, process id, a counter and the clock's
/// nanoseconds.
fn unique_suffix() -> (u64, String) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    (now.as_secs(), format!("{}_{}_{n}_{}", now.as_secs(), std::process::id(), now.subsec_nanos()))
}

/// The URL of a new SQLite file in a new directory under the system's temporary directory. The directory and
/// the file are created by [`crate::Store::connect`].
///
/// Directories left by tests more than a few hours old are removed on the way, best effort.
pub fn fresh_sqlite_url() -> String {
    let (now, suffix) = unique_suffix();
    let tmp = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&tmp) {
        for entry in entries.flatten() {
            let name = entry.file_name();
            if created_at(&name.to_string_lossy()).is_some_and(|c| c + STALE_AFTER_SECS < now) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    crate::sqlite_url(&tmp.join(format!("trove_t_{suffix}")))
}

/// When a `trove_t_<secs>_...` test database or directory was made, from its name.
fn created_at(name: &str) -> Option<u64> {
    name.strip_prefix("trove_t_")?.split('_').next()?.parse().ok()
}

/// The server part of `TROVE_TEST_PG_URL` (default [`DEFAULT_PG_URL`]), without a database path.
fn pg_base() -> String {
    let url = std::env::var("TROVE_TEST_PG_URL").unwrap_or_else(|_| DEFAULT_PG_URL.to_owned());
    let url = url.trim().trim_end_matches('/');
    match url.find("://").map(|i| i + 3) {
        Some(start) => match url[start..].find('/') {
            Some(slash) => url[..start + slash].to_owned(),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// Creates a new, empty PostgreSQL database `trove_t_...` on the test server (`TROVE_TEST_PG_URL`, default
/// [`DEFAULT_PG_URL`]) and answers its URL. Databases left by runs more than a few hours old are dropped on
/// the way, best effort.
///
/// # Errors
/// When the server is unreachable or refuses to create the database: a test that needs PostgreSQL fails
/// then, it is never skipped.
pub async fn fresh_postgres_url() -> anyhow::Result<String> {
    let base = pg_base();
    let mut options = ConnectOptions::new(format!("{base}/postgres"));
    options.max_connections(1).sqlx_logging(false);
    let admin = Database::connect(options)
        .await
        .with_context(|| format!("connect to the test postgresql at {base} (set TROVE_TEST_PG_URL)"))?;
    let (now, suffix) = unique_suffix();
    let name = format!("trove_t_{suffix}");
    admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.with_context(|| format!("create {name}"))?;
    drop_stale(&admin, now).await;
    admin.close().await.context("close the admin connection")?;
    Ok(format!("{base}/{name}"))
}

/// Drops test databases whose name says they are older than [`STALE_AFTER_SECS`]. Errors are ignored: another
/// run may be dropping the same database.
async fn drop_stale(admin: &sea_orm::DatabaseConnection, now: u64) {
    let stmt = sea_orm::Statement::from_string(
        admin.get_database_backend(),
        "SELECT datname FROM pg_database WHERE datname LIKE 'trove\\_t\\_%'",
    );
    let Ok(rows) = admin.query_all_raw(stmt).await else { return };
    for row in rows {
        let Ok(name) = row.try_get::<String>("", "datname") else { continue };
        if created_at(&name).is_some_and(|c| c + STALE_AFTER_SECS < now) {
            let _ = admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
        }
    }
}

/// Drops a test database made by [`fresh_postgres_url`], ending its open connections; a SQLite URL's
/// directory made by [`fresh_sqlite_url`] is removed instead. Anything else is left alone.
///
/// # Errors
/// When the PostgreSQL server refuses.
pub async fn discard(url: &str) -> anyhow::Result<()> {
    if let Some(path) = url.strip_prefix("sqlite://").and_then(|p| p.split('?').next()) {
        if let Some(dir) = std::path::Path::new(path).parent()
            && dir.file_name().and_then(|n| created_at(&n.to_string_lossy())).is_some()
        {
            let _ = std::fs::remove_dir_all(dir);
        }
        return Ok(());
    }
    let Some((base, name)) = url.rsplit_once('/') else { return Ok(()) };
    if created_at(name).is_none() || name.contains(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        return Ok(());
    }
    let mut options = ConnectOptions::new(format!("{base}/postgres"));
    options.max_connections(1).sqlx_logging(false);
    let admin = Database::connect(options).await.with_context(|| format!("connect to {base}"))?;
    admin
        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .with_context(|| format!("drop {name}"))?;
    admin.close().await.context("close the admin connection")?;
    Ok(())
}

/// Runs only the first `steps` migrations, so a test can fill an older schema and then upgrade it.
///
/// # Errors
/// When a migration fails.
pub async fn migrate_first(store: &crate::Store, steps: u32) -> anyhow::Result<()> {
    use sea_orm_migration::MigratorTrait as _;
    crate::migration::Migrator::up(&store.db, Some(steps)).await.context("run the first migrations")
}

/// A migrated store on a fresh database, and that database's URL (for the few cases that reach under the
/// adapter). The database goes with it: a SQLite directory, or a PostgreSQL database dropped from a helper thread,
/// since `drop` cannot await.
pub struct TestDb {
    pub store: crate::Store,
    pub url: String,
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let url = self.url.clone();
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(discard(&url))
        })
        .join();
        if let Ok(Err(e)) = dropped {
            eprintln!("could not discard the test database: {e:#}");
        }
    }
}

/// A store on the database at `url`, migrated twice (a no-op the second time: `trove migrate` and every start run
/// it).
///
/// # Panics
/// When the database cannot be reached or migrated.
pub async fn open(url: String) -> TestDb {
    let store = crate::Store::connect(&url).await.expect("connect");
    store.migrate().await.expect("migrate");
    store.migrate().await.expect("migrate again");
    TestDb { store, url }
}

/// A migrated store on a fresh SQLite file.
///
/// # Panics
/// When it cannot be made.
pub async fn sqlite() -> TestDb {
    let db = open(fresh_sqlite_url()).await;
    assert_eq!(db.store.backend_name(), "sqlite");
    db
}

/// A migrated store on a fresh database of the test PostgreSQL. The cases fail when it is unreachable; they are
/// never skipped.
///
/// # Panics
/// When the test PostgreSQL cannot be reached.
pub async fn postgres() -> TestDb {
    let url = fresh_postgres_url().await.expect("the test postgresql must be reachable");
    let db = open(url).await;
    assert_eq!(db.store.backend_name(), "postgres");
    db
}

/// Runs each case, an `async fn(TestDb)` of the calling module, once per backend: `sqlite::case` and
/// `postgres::case`.
#[macro_export]
macro_rules! on_both_backends {
    ($($case:ident),+ $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case($crate::testing::sqlite().await).await;
                }
            )+
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case($crate::testing::postgres().await).await;
                }
            )+
        }
    };
}

/// Appends an event to the household's history apart from any write (the store's own writes record theirs in
/// their transactions), for tests of reading the history; answers its id.
///
/// # Errors
/// When the store fails.
pub async fn append(
    store: &crate::Store,
    household: trove_domain::HouseholdId,
    e: &trove_domain::history::Event,
) -> Result<trove_domain::people::EventId, trove_application::RepoError> {
    let txn = store.begin_write().await.context("begin an event")?;
    let id = crate::repo::history::insert_event(&txn, household, e).await?;
    txn.commit().await.context("commit an event")?;
    Ok(id)
}

/// Appends many events at once, all or nothing (by `COPY` on PostgreSQL, as an import's history), for tests.
///
/// # Errors
/// When the store fails; nothing is written then.
pub async fn append_all(
    store: &crate::Store,
    household: trove_domain::HouseholdId,
    all: &[trove_domain::history::Event],
) -> Result<(), trove_application::RepoError> {
    use sea_orm::DbBackend;
    if all.is_empty() {
        return Ok(());
    }
    if store.db.get_database_backend() == DbBackend::Postgres {
        let bulk = crate::bulk::PgBulk::begin(store.db.get_postgres_connection_pool()).await?;
        crate::repo::history::copy_events(&bulk, household, all).await?;
        return Ok(bulk.commit().await.context("commit the events")?);
    }
    let txn = store.begin_write().await.context("begin appending events")?;
    crate::repo::history::insert_events(&txn, household, all).await?;
    txn.commit().await.context("commit the events")?;
    Ok(())
}
