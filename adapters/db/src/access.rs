//! `AccessChanges` on PostgreSQL's `NOTIFY`/`LISTEN`: a revoked token, or a removed or demoted member, is told on
//! the channel [`CHANNEL`] once committed, and every process on the database hears it on a connection of its own
//! and forgets its cached checks at once. SQLite has no such channel: changes are not pushed, and each process's
//! checks expire after a short time instead (`trove_application::auth::TOKEN_CACHE_TTL`).

use crate::Store;
use anyhow::Context as _;
use async_trait::async_trait;
use sea_orm::sqlx::postgres::PgListener;
use sea_orm::{ConnectionTrait, DbBackend, Statement};
use trove_application::RepoError;
use trove_application::ports::{AccessChange, AccessChanges};

/// The channel access changes travel on.
const CHANNEL: &str = "trove_access";

/// What the hearing of access changes tells its listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// One change.
    Change(AccessChange),
    /// Changes may have been missed (the hearing connection was down): forget every check.
    Everything,
}

#[async_trait]
impl AccessChanges for Store {
    fn pushed(&self) -> bool {
        self.db.get_database_backend() == DbBackend::Postgres
    }

    async fn announce(&self, change: AccessChange) -> Result<(), RepoError> {
        if !self.pushed() {
            return Ok(());
        }
        let stmt = Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT pg_notify($1, $2)",
            [CHANNEL.into(), change.to_text().into()],
        );
        self.db.execute_raw(stmt).await.context("announce an access change")?;
        Ok(())
    }
}

impl Store {
    /// Hears the access changes of every process on this PostgreSQL database and tells `heard` of each, until
    /// the task is dropped; answers at once on SQLite. [`Heard::Everything`] comes first, once listening (so
    /// nothing said before is missed), and again whenever the connection came back after a loss.
    pub async fn hear_access_changes(&self, heard: impl Fn(Heard) + Send + Sync) {
        if !self.pushed() {
            return;
        }
        let pool = self.db.get_postgres_connection_pool();
        loop {
            let mut listener = match PgListener::connect_with(pool).await {
                Ok(l) => l,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot hear access changes; trying again in 1 s");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                    continue;
                }
            };
            if let Err(e) = listener.listen(CHANNEL).await {
                tracing::warn!(error = %e, "cannot listen for access changes; trying again in 1 s");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                continue;
            }
            heard(Heard::Everything);
            loop {
                match listener.try_recv().await {
                    Ok(Some(n)) => match AccessChange::from_text(n.payload()) {
                        Some(change) => heard(Heard::Change(change)),
                        None => tracing::warn!(payload = n.payload(), "an access change that names nothing"),
                    },
                    // The connection was lost: listen again on a new one, then forget everything.
                    Ok(None) => {
                        tracing::warn!("lost the connection that hears access changes; listening again");
                        break;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "lost the access changes; listening again");
                        break;
                    }
                }
            }
        }
    }
}
