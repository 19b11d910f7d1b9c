//! Which of the database's errors are the storage's for now (a full disk, a read-only database, a server that
//! cannot be reached or does not answer) rather than a bug: registered with the use cases
//! ([`trove_application::error::recognise_faults`]) when a store opens, so they are answered 503 with a time to
//! come back, and a full disk never looks like an internal error.

use sea_orm::sqlx;
use sea_orm::{ConnAcquireErr, DbErr, RuntimeErr};
use trove_application::StorageFault;

/// The fault `e` stands for, when it is a database error that is the storage's.
pub(crate) fn recognise(e: &(dyn std::error::Error + 'static)) -> Option<StorageFault> {
    if let Some(db) = e.downcast_ref::<DbErr>() {
        return match db {
            DbErr::ConnectionAcquire(ConnAcquireErr::Timeout) => Some(StorageFault::TimedOut),
            DbErr::ConnectionAcquire(ConnAcquireErr::ConnectionClosed) => Some(StorageFault::Unreachable),
            DbErr::Conn(RuntimeErr::SqlxError(e))
            | DbErr::Exec(RuntimeErr::SqlxError(e))
            | DbErr::Query(RuntimeErr::SqlxError(e)) => of_sqlx(e),
            _ => None,
        };
    }
    e.downcast_ref::<sqlx::Error>().and_then(of_sqlx)
}

fn of_sqlx(e: &sqlx::Error) -> Option<StorageFault> {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => Some(StorageFault::Unreachable),
        sqlx::Error::PoolTimedOut => Some(StorageFault::TimedOut),
        sqlx::Error::Database(db) => {
            let code = db.code()?;
            if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
                code.parse().ok().and_then(sqlite_fault)
            } else {
                postgres_fault(&code)
            }
        }
        _ => None,
    }
}

/// SQLite's (extended) result code: its primary code is the low byte.
fn sqlite_fault(code: i32) -> Option<StorageFault> {
    match code & 0xff {
        // SQLITE_FULL
        13 => Some(StorageFault::Full),
        // SQLITE_READONLY
        8 => Some(StorageFault::NotWritable),
        // SQLITE_IOERR, SQLITE_CANTOPEN
        10 | 14 => Some(StorageFault::Failed),
        _ => None,
    }
}

/// PostgreSQL's SQLSTATE.
fn postgres_fault(code: &str) -> Option<StorageFault> {
    match code {
        // disk_full
        "53100" => Some(StorageFault::Full),
        // read_only_sql_transaction (a standby, or default_transaction_read_only)
        "25006" => Some(StorageFault::NotWritable),
        // admin_shutdown, crash_shutdown, cannot_connect_now
        "57P01" | "57P02" | "57P03" => Some(StorageFault::Unreachable),
        // too_many_connections, out_of_memory, insufficient_resources
        "53300" | "53200" | "53000" => Some(StorageFault::Failed),
        // connection exceptions
        c if c.starts_with("08") => Some(StorageFault::Unreachable),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_codes_of_the_storage_are_faults_and_the_rest_are_not() {
        assert_eq!(sqlite_fault(13), Some(StorageFault::Full));
        assert_eq!(sqlite_fault(8 | (1 << 8)), Some(StorageFault::NotWritable), "SQLITE_READONLY_RECOVERY");
        assert_eq!(sqlite_fault(10 | (3 << 8)), Some(StorageFault::Failed), "SQLITE_IOERR_WRITE");
        assert_eq!(sqlite_fault(2067), None, "SQLITE_CONSTRAINT_UNIQUE is the caller's");
        assert_eq!(postgres_fault("53100"), Some(StorageFault::Full));
        assert_eq!(postgres_fault("08006"), Some(StorageFault::Unreachable));
        assert_eq!(postgres_fault("23505"), None, "unique_violation is the caller's");
        let timeout = anyhow::Error::new(DbErr::ConnectionAcquire(ConnAcquireErr::Timeout)).context("read items");
        assert_eq!(timeout.chain().find_map(recognise), Some(StorageFault::TimedOut));
        assert_eq!(recognise(&DbErr::RecordNotFound("x".into())), None);
    }
}
