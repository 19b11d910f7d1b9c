//! Trove's backup archives ([`archive`]: one tar of every table as JSON lines, every media file and a manifest of
//! counts and SHA-256s; checked and restored all or nothing), and [`TarBackups`], the `BackupArchives` port: the
//! archives kept in a directory, named by the time they were made, as the server writes them on a schedule and an
//! owner downloads them. The only crate that knows the archive's format.

pub mod archive;

pub use archive::{FORMAT, FORMAT_VERSION, Manifest, MediaPart, Restored, TablePart, backup, restore, verify};

use anyhow::Context as _;
use async_trait::async_trait;
use std::path::Path;
use std::sync::Arc;
use trove_application::ports::{BackupArchives, BackupFile, BackupRepo, MediaStore};
use trove_domain::Timestamp;

/// How an archive in a backup directory is named: `trove-backup-<UTC time>.tar`.
const PREFIX: &str = "trove-backup-";
const SUFFIX: &str = ".tar";
const TIME: &str = "%Y%m%dT%H%M%S%.6fZ";

/// The name of the archive made at `at`.
///
/// ```
/// use chrono::TimeZone;
/// let at = chrono::Utc.with_ymd_and_hms(2026, 12, 4, 10, 15, 0).unwrap();
/// assert_eq!(trove_backup::archive_name(at), "trove-backup-20261204T101500.000000Z.tar");
/// ```
pub fn archive_name(at: Timestamp) -> String {
    format!("{PREFIX}{}{SUFFIX}", at.format(TIME))
}

/// When the archive named `name` was made; `None` for a name that is not an archive's.
pub fn archive_time(name: &str) -> Option<Timestamp> {
    let time = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    chrono::NaiveDateTime::parse_from_str(time, TIME).ok().map(|t| t.and_utc())
}

/// The `BackupArchives` port over [`archive`]: a store, its media, and the backend's name for the manifest.
#[derive(Clone)]
pub struct TarBackups {
    store: Arc<dyn BackupRepo>,
    blobs: Arc<dyn MediaStore>,
    backend: String,
}

impl std::fmt::Debug for TarBackups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TarBackups").field("backend", &self.backend).finish_non_exhaustive()
    }
}

impl TarBackups {
    pub fn new(store: Arc<dyn BackupRepo>, blobs: Arc<dyn MediaStore>, backend: &str) -> Self {
        Self { store, blobs, backend: backend.to_owned() }
    }
}

#[async_trait]
impl BackupArchives for TarBackups {
    async fn write_into(&self, dir: &Path, at: Timestamp) -> anyhow::Result<BackupFile> {
        create_owner_only(dir)?;
        let name = archive_name(at);
        let out = dir.join(&name);
        backup(self.store.as_ref(), &self.backend, self.blobs.as_ref(), &out).await?;
        let bytes = std::fs::metadata(&out).with_context(|| format!("read {}", out.display()))?.len();
        Ok(BackupFile { name, at, bytes })
    }

    fn list(&self, dir: &Path) -> anyhow::Result<Vec<BackupFile>> {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("read {}", dir.display())),
        };
        let mut files = Vec::new();
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(at) = archive_time(&name) {
                // Another process keeping the same directory may remove an archive between the listing and this.
                match entry.metadata() {
                    Ok(m) => files.push(BackupFile { name, at, bytes: m.len() }),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e).with_context(|| format!("read {name}")),
                }
            }
        }
        files.sort_by_key(|f| std::cmp::Reverse(f.at));
        Ok(files)
    }

    fn remove(&self, dir: &Path, name: &str) -> anyhow::Result<()> {
        anyhow::ensure!(archive_time(name).is_some(), "{name:?} is not a backup archive's name");
        match std::fs::remove_file(dir.join(name)) {
            // Removed already (by another process keeping the same directory): what was asked is done.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other.with_context(|| format!("remove {name}")),
        }
    }
}

/// Creates `dir` (and its parents) readable by the owner only: an archive holds every password hash.
fn create_owner_only(dir: &Path) -> anyhow::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).with_context(|| format!("create {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone as _;

    #[test]
    fn an_archive_is_known_by_its_name_and_nothing_else_is() {
        let at = chrono::Utc.with_ymd_and_hms(2026, 12, 4, 10, 15, 0).unwrap() + chrono::Duration::microseconds(42);
        assert_eq!(archive_time(&archive_name(at)), Some(at));
        for other in ["trove.db", "trove-backup-x.tar", "trove-backup-20261204T101500.000000Z.tar.partial", ""] {
            assert_eq!(archive_time(other), None, "{other}");
        }
    }
}
