//! Backups the server keeps: written into a directory on a schedule (`TROVE_BACKUP_EVERY`), the oldest removed
//! beyond `TROVE_BACKUP_KEEP`, and, for an owner, the last one's time and size and a fresh one to download. The
//! archive itself is the `BackupArchives` port's (`trove-backup`).

use crate::Error;
use crate::auth::Caller;
use crate::error::Forbidden;
use crate::ports::{BackupArchives, BackupFile, BackupRepo, Clock};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use trove_domain::people::Permission;

/// Where and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupSettings {
    /// `TROVE_BACKUP_DIR` (default: `backups` in the data directory).
    pub dir: PathBuf,
    /// `TROVE_BACKUP_EVERY`; `None`: no scheduled backups.
    pub every: Option<Duration>,
    /// `TROVE_BACKUP_KEEP`: the newest this many are kept (at least 1).
    pub keep: usize,
}

/// What an owner sees of the backups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupStatus {
    pub every: Option<Duration>,
    pub keep: usize,
    /// The newest archive in the directory.
    pub last: Option<BackupFile>,
    /// Archives in the directory.
    pub count: usize,
}

/// The backups use cases.
#[derive(Clone)]
pub struct Backups {
    archives: Arc<dyn BackupArchives>,
    store: Arc<dyn BackupRepo>,
    clock: Arc<dyn Clock>,
    settings: BackupSettings,
}

impl std::fmt::Debug for Backups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backups").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Backups {
    pub fn new(
        archives: Arc<dyn BackupArchives>,
        store: Arc<dyn BackupRepo>,
        clock: Arc<dyn Clock>,
        settings: BackupSettings,
    ) -> Self {
        Self { archives, store, clock, settings }
    }

    pub fn settings(&self) -> &BackupSettings {
        &self.settings
    }

    /// Owners only, and only while the server holds their household alone (an archive holds every household).
    async fn require_owner_of_all(&self, caller: &Caller) -> Result<(), Error> {
        caller.require(Permission::ManageHousehold)?;
        if self.store.households().await? > 1 {
            return Err(Forbidden::OtherHouseholds.into());
        }
        Ok(())
    }

    /// The last backup's time and size, and the schedule.
    ///
    /// # Errors
    /// [`Error::Forbidden`] unless the caller is an owner.
    pub async fn status(&self, caller: &Caller) -> Result<BackupStatus, Error> {
        caller.require(Permission::ManageHousehold)?;
        let files = self.archives.list(&self.settings.dir)?;
        Ok(BackupStatus {
            every: self.settings.every,
            keep: self.settings.keep,
            last: files.first().cloned(),
            count: files.len(),
        })
    }

    /// When the newest archive in the directory was made.
    ///
    /// # Errors
    /// When the directory cannot be read.
    pub fn last_made(&self) -> Result<Option<trove_domain::Timestamp>, Error> {
        Ok(self.archives.list(&self.settings.dir)?.first().map(|f| f.at))
    }

    /// Writes a backup now into the directory (the oldest beyond the number kept are removed) and answers it.
    ///
    /// # Errors
    /// [`Error::Forbidden`] unless the caller is an owner of the server's only household; `Unexpected` when the
    /// archive cannot be written.
    pub async fn make(&self, caller: &Caller) -> Result<BackupFile, Error> {
        self.require_owner_of_all(caller).await?;
        self.write().await
    }

    /// The path of the archive `name` in the directory, to download; `None` for a name that is not one of its
    /// archives.
    ///
    /// # Errors
    /// As [`Backups::make`].
    pub async fn file(&self, caller: &Caller, name: &str) -> Result<Option<PathBuf>, Error> {
        self.require_owner_of_all(caller).await?;
        let files = self.archives.list(&self.settings.dir)?;
        Ok(files.iter().find(|f| f.name == name).map(|f| self.settings.dir.join(&f.name)))
    }

    /// One scheduled backup: written, then the oldest beyond the number kept removed. A removal that fails is
    /// logged and tried again after the next backup: the backup made stands.
    ///
    /// # Errors
    /// `Unexpected` when the archive cannot be written (the older ones are then all kept).
    pub async fn write(&self) -> Result<BackupFile, Error> {
        let made = self.archives.write_into(&self.settings.dir, self.clock.now()).await?;
        if let Err(e) = self.prune(&self.settings.dir) {
            tracing::warn!(dir = %self.settings.dir.display(), error = %e, "old backups could not all be removed");
        }
        Ok(made)
    }

    fn prune(&self, dir: &Path) -> Result<(), Error> {
        let files = self.archives.list(dir)?;
        for old in files.iter().skip(self.settings.keep.max(1)) {
            self.archives.remove(dir, &old.name)?;
            tracing::info!(name = %old.name, "removed an old backup");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::backup::MockBackupArchives;
    use trove_domain::testing::at;

    #[tokio::test]
    async fn a_backup_keeps_the_newest_and_removes_the_rest() {
        let mut archives = MockBackupArchives::new();
        archives
            .expect_write_into()
            .returning(|_, at| Ok(BackupFile { name: format!("b{}", at.timestamp()), at, bytes: 1 }));
        let listed: Vec<BackupFile> =
            (1..=5).rev().map(|d| BackupFile { name: format!("d{d}"), at: at(d), bytes: 10 }).collect();
        archives.expect_list().returning(move |_| Ok(listed.clone()));
        archives.expect_remove().times(3).returning(move |_, name| {
            assert!(["d3", "d2", "d1"].contains(&name), "only the oldest go: {name}");
            Ok(())
        });
        struct Fixed;
        impl Clock for Fixed {
            fn now(&self) -> trove_domain::Timestamp {
                at(6)
            }
        }
        let settings = BackupSettings { dir: PathBuf::from("/nowhere"), every: None, keep: 2 };
        let store: Arc<dyn BackupRepo> = Arc::new(NoStore);
        let backups = Backups::new(Arc::new(archives), store, Arc::new(Fixed), settings);
        let made = backups.write().await.unwrap();
        assert_eq!(made.at, at(6));
    }

    /// A store never asked for anything by a scheduled backup (the archive port reads it).
    struct NoStore;

    #[async_trait::async_trait]
    impl BackupRepo for NoStore {
        async fn schema_version(&self) -> Result<String, crate::RepoError> {
            unreachable!()
        }
        fn known_schemas(&self) -> Vec<String> {
            unreachable!()
        }
        async fn dump(&self, _: &mut dyn crate::ports::DumpSink) -> Result<crate::ports::Dumped, crate::RepoError> {
            unreachable!()
        }
        async fn households(&self) -> Result<u64, crate::RepoError> {
            unreachable!()
        }
        async fn is_empty(&self) -> Result<bool, crate::RepoError> {
            unreachable!()
        }
        async fn load(&self, _: &mut dyn crate::ports::LoadSource) -> Result<Vec<(String, u64)>, crate::RepoError> {
            unreachable!()
        }
    }
}
