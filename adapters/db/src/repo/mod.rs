//! The repository ports, implemented on [`crate::Store`]: one module per port.

pub(crate) mod history;
mod households;
mod idempotency;
pub(crate) mod inventory;
mod lending;
mod lookup;
pub(crate) mod media;
mod passkeys;
pub(crate) mod people;
pub(crate) mod places;
mod prices;
mod projects;
mod spend;
mod sso;
mod templates;
mod throttle;

/// Rows per multi-row statement: well under SQLite's and PostgreSQL's limits on bound parameters (about 22
/// columns times this), and large enough that a 100,000-item import takes a few hundred statements.
pub(crate) const CHUNK: usize = 500;

/// Readiness: the database answers a query.
#[async_trait::async_trait]
impl trove_application::ports::ready::Ping for crate::Store {
    async fn ping(&self) -> Result<(), trove_application::RepoError> {
        use anyhow::Context as _;
        use sea_orm::ConnectionTrait as _;
        self.db.execute_unprepared("SELECT 1").await.context("query the database")?;
        Ok(())
    }

    fn pool(&self) -> trove_application::ports::ready::PoolUse {
        let use_of = |open: u32, idle: usize, max: u32| trove_application::ports::ready::PoolUse {
            open,
            idle: u32::try_from(idle).unwrap_or(u32::MAX),
            max,
        };
        match self.db.get_database_backend() {
            sea_orm::DbBackend::Postgres => {
                let pool = self.db.get_postgres_connection_pool();
                use_of(pool.size(), pool.num_idle(), pool.options().get_max_connections())
            }
            _ => {
                let pool = self.db.get_sqlite_connection_pool();
                use_of(pool.size(), pool.num_idle(), pool.options().get_max_connections())
            }
        }
    }
}
