//! [`FileStore`]: blobs as files named by their SHA-256 under one directory, two hex digits of fan-out
//! (`ab/abcdef...`), so no directory holds more than a few thousand files. A blob is written to a temporary file
//! under `tmp/` and renamed into place, so a crash never leaves half a file under a real name. Files are 0600 and
//! directories 0700 ([`owner_only`]); a full or unwritable disk is [`RepoError::Unavailable`].

use crate::owner_only;
use anyhow::Context as _;
use async_trait::async_trait;
use std::path::{Path, PathBuf};
use trove_application::ports::media::{MediaStore, StoredBlob};
use trove_application::{RepoError, StorageFault};
use trove_domain::media::ContentHash;

/// Blobs as files under `root`.
#[derive(Debug, Clone)]
pub struct FileStore {
    /// The directory holding the fan-out directories and `tmp/`.
    root: PathBuf,
}

impl FileStore {
    /// The store at `root`. Nothing is created until the first blob is written.
    pub fn open(root: &Path) -> FileStore {
        FileStore { root: root.to_path_buf() }
    }

    fn path(&self, hash: &ContentHash) -> PathBuf {
        self.root.join(&hash.as_str()[..2]).join(hash.as_str())
    }
}

/// A name for a temporary file no other writer picks.
fn temp_name(hash: &ContentHash) -> anyhow::Result<String> {
    let mut salt = [0u8; 8];
    getrandom::fill(&mut salt).map_err(|e| anyhow::anyhow!("random bytes for a temporary name: {e}"))?;
    Ok(format!("{}.{}.tmp", hash, hex::encode(salt)))
}

/// What an I/O failure of the store tells a client: the storage is full or cannot be written (so the same
/// request may succeed once an operator freed space or fixed it), or it failed otherwise. Every I/O failure of a
/// blob store is the storage's, none a bug of the caller's, so each is [`RepoError::Unavailable`].
pub(crate) fn fault_of(e: &std::io::Error) -> StorageFault {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::StorageFull | K::QuotaExceeded => StorageFault::Full,
        K::ReadOnlyFilesystem | K::PermissionDenied => StorageFault::NotWritable,
        _ => StorageFault::Failed,
    }
}

/// An I/O failure of `what` as the store reports it.
fn unavailable(what: String) -> impl FnOnce(std::io::Error) -> RepoError {
    move |e| RepoError::Unavailable { fault: fault_of(&e), cause: anyhow::Error::new(e).context(what) }
}

impl FileStore {
    /// Writes `bytes` to the temporary file `temp` and renames it to `target`, the directories and the file
    /// the owner's only ([`owner_only`]).
    async fn write(&self, temp: &Path, target: &Path, bytes: &[u8]) -> Result<(), (&'static str, std::io::Error)> {
        owner_only::create_dir_all_async(&self.root.join("tmp"))
            .await
            .map_err(|e| ("create the media directory", e))?;
        let mut file = owner_only::file_options()
            .create_new(true)
            .open(temp)
            .await
            .map_err(|e| ("create the temporary file", e))?;
        owner_only::ensure_file_mode(&file).await.map_err(|e| ("restrict the temporary file", e))?;
        tokio::io::AsyncWriteExt::write_all(&mut file, bytes).await.map_err(|e| ("write the temporary file", e))?;
        file.sync_all().await.map_err(|e| ("flush the temporary file", e))?;
        if let Some(dir) = target.parent() {
            owner_only::create_dir_all_async(dir).await.map_err(|e| ("create the fan-out directory", e))?;
        }
        tokio::fs::rename(temp, target).await.map_err(|e| ("rename the temporary file into place", e))
    }
}

#[async_trait]
impl MediaStore for FileStore {
    async fn put(&self, hash: &ContentHash, bytes: &[u8]) -> Result<(), RepoError> {
        let target = self.path(hash);
        if tokio::fs::try_exists(&target).await.unwrap_or(false) {
            // Content-addressed: the same name holds the same bytes.
            return Ok(());
        }
        let temp = self.root.join("tmp").join(temp_name(hash)?);
        if let Err((step, e)) = self.write(&temp, &target, bytes).await {
            let _ = tokio::fs::remove_file(&temp).await;
            return Err(unavailable(format!("{step}: store blob {hash} under {}", self.root.display()))(e));
        }
        Ok(())
    }

    async fn get(&self, hash: &ContentHash) -> Result<Vec<u8>, RepoError> {
        match tokio::fs::read(self.path(hash)).await {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(RepoError::NotFound),
            Err(e) => Err(unavailable(format!("read blob {hash}"))(e)),
        }
    }

    async fn delete(&self, hash: &ContentHash) -> Result<(), RepoError> {
        match tokio::fs::remove_file(self.path(hash)).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(unavailable(format!("delete blob {hash}"))(e)),
        }
    }

    async fn list(&self) -> Result<Vec<StoredBlob>, RepoError> {
        let root = self.root.clone();
        let listed = tokio::task::spawn_blocking(move || list_files(&root))
            .await
            .context("the listing of the media directory stopped")?;
        listed.map_err(|(what, e)| unavailable(what)(e))
    }
}

/// Every blob under `root`: the files of the fan-out directories named by a content hash. Temporary files
/// (under `tmp/`, named `HASH.SALT.tmp`) are no blobs. A failure says what was being read.
fn list_files(root: &Path) -> Result<Vec<StoredBlob>, (String, std::io::Error)> {
    let mut out = Vec::new();
    fn at(p: &Path) -> impl FnOnce(std::io::Error) -> (String, std::io::Error) {
        let what = format!("list {}", p.display());
        move |e| (what, e)
    }
    let dirs = match std::fs::read_dir(root) {
        Ok(dirs) => dirs,
        // Nothing was ever written.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(at(root)(e)),
    };
    for dir in dirs {
        let dir = dir.map_err(at(root))?;
        let name = dir.file_name();
        if name.len() != 2 || !dir.file_type().map_err(at(root))?.is_dir() {
            continue;
        }
        let path = dir.path();
        for file in std::fs::read_dir(&path).map_err(at(&path))? {
            let file = file.map_err(at(&path))?;
            let Some(hash) = file.file_name().to_str().and_then(ContentHash::parse) else { continue };
            let modified = file.metadata().and_then(|m| m.modified()).map_err(at(&file.path()))?;
            out.push(StoredBlob { hash, written_at: modified.into() });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each I/O failure is the storage's, and tells a client which: full, not writable, or failed.
    #[test]
    fn io_failures_are_storage_faults() {
        let check = |errno: i32, want: StorageFault| {
            assert_eq!(fault_of(&std::io::Error::from_raw_os_error(errno)), want, "errno {errno}");
        };
        // ENOSPC, EDQUOT, EROFS, EACCES, EPERM, EIO, ENOTDIR (Linux numbers).
        check(28, StorageFault::Full);
        check(122, StorageFault::Full);
        check(30, StorageFault::NotWritable);
        check(13, StorageFault::NotWritable);
        check(1, StorageFault::NotWritable);
        check(5, StorageFault::Failed);
        check(20, StorageFault::Failed);
    }
}
