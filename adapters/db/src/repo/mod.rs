//! The repository ports, implemented on [`crate::Store`]: one module per port.

pub(crate) mod history;
mod households;
mod idempotency;
pub(crate) mod inventory;
mod lending;
pub(crate) mod media;
mod passkeys;
pub(crate) mod people;
pub(crate) mod places;
mod prices;
mod projects;
mod spend;
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
}
