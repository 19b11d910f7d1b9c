//! The whole store as portable rows, read from one consistent snapshot and loaded back all or nothing: what a
//! backup archive holds besides the media files.

use crate::RepoError;
use async_trait::async_trait;
use std::path::Path;
use trove_domain::Timestamp;
use trove_domain::media::ContentHash;

/// Receives a snapshot's tables, one after another, each row as one JSON object (no newline in it).
pub trait DumpSink: Send {
    /// The next table starts.
    ///
    /// # Errors
    /// When the sink cannot write.
    fn table(&mut self, name: &str) -> anyhow::Result<()>;

    /// A row of the current table.
    ///
    /// # Errors
    /// When the sink cannot write.
    fn row(&mut self, json: &[u8]) -> anyhow::Result<()>;
}

/// What a backup gives back next: a table starts, or a row of the current one (one JSON object).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loaded {
    Table(String),
    Row(Vec<u8>),
}

/// Gives a backup's tables back, row by row, in the order they were dumped, so a large store is never held whole.
pub trait LoadSource: Send {
    /// The next table or row; `None` after the last.
    ///
    /// # Errors
    /// When the archive cannot be read.
    fn next(&mut self) -> anyhow::Result<Option<Loaded>>;
}

/// What a snapshot held: its tables' row counts, in order, and the media blobs its rows name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dumped {
    pub tables: Vec<(String, u64)>,
    /// Every blob a media row names (its file and its thumbnail), each once.
    pub blobs: Vec<ContentHash>,
}

/// The store as a whole, for backups. No mock: its methods take the sink and the source as `&mut dyn`, which
/// mockall cannot mock, and its one user (`trove backup`/`restore`) is tested against both real databases.
#[async_trait]
pub trait BackupRepo: Send + Sync {
    /// The store's schema version: the name of the last migration applied.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn schema_version(&self) -> Result<String, RepoError>;

    /// Every schema version this build knows, oldest first.
    fn known_schemas(&self) -> Vec<String>;

    /// Writes every table a backup keeps to `sink` from one consistent snapshot (a read transaction: SQLite's
    /// WAL snapshot, PostgreSQL's repeatable read), in the order [`BackupRepo::load`] loads them. Sessions,
    /// sign-in failures, idempotency keys and passkey ceremonies are not kept: a restore ends every session.
    ///
    /// # Errors
    /// `Unexpected` (the sink's errors among them).
    async fn dump(&self, sink: &mut dyn DumpSink) -> Result<Dumped, RepoError>;

    /// How many households the store holds (a backup holds every one of them).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn households(&self) -> Result<u64, RepoError>;

    /// Whether the store holds nothing a backup keeps (the built-in templates a server seeds aside).
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn is_empty(&self) -> Result<bool, RepoError>;

    /// Loads a backup's tables, with their ids, in one transaction: all of them or, on any error, none. The
    /// built-in templates a server seeded are replaced by the backup's.
    ///
    /// # Errors
    /// `Unexpected` for a row that does not fit its table, an unknown table, or a failed write.
    async fn load(&self, source: &mut dyn LoadSource) -> Result<Vec<(String, u64)>, RepoError>;
}

/// A backup archive lying in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupFile {
    /// Its file name (`trove-backup-20261204T101500Z.tar`).
    pub name: String,
    /// When it was made.
    pub at: Timestamp,
    pub bytes: u64,
}

/// Backup archives in a directory: written whole (never a file that only looks whole), listed, removed.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait BackupArchives: Send + Sync {
    /// Writes an archive of the whole store and its media into `dir` (created if missing), named by `at`.
    ///
    /// # Errors
    /// When the store cannot be read or the file cannot be written; nothing named as an archive is left then.
    async fn write_into(&self, dir: &Path, at: Timestamp) -> anyhow::Result<BackupFile>;

    /// The archives in `dir`, newest first (none when it does not exist); other files are not archives.
    ///
    /// # Errors
    /// When the directory cannot be read.
    fn list(&self, dir: &Path) -> anyhow::Result<Vec<BackupFile>>;

    /// Removes the archive `name` from `dir`.
    ///
    /// # Errors
    /// When it cannot be removed.
    fn remove(&self, dir: &Path, name: &str) -> anyhow::Result<()>;
}
