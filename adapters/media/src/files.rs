//! [`FileStore`]: blobs as files named by their SHA-256 under one directory, two hex digits of fan-out
//! (`ab/abcdef...`), so no directory holds more than a few thousand files. A blob is written to a temporary file
//! under `tmp/` and renamed into place, so a crash never leaves half a file under a real name.

use anyhow::Context as _;
use async_trait::async_trait;
use std::path::{Path, PathBuf};
use trove_application::RepoError;
use trove_application::ports::media::{MediaStore, StoredBlob};
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

#[async_trait]
impl MediaStore for FileStore {
    async fn put(&self, hash: &ContentHash, bytes: &[u8]) -> Result<(), RepoError> {
        let target = self.path(hash);
        if tokio::fs::try_exists(&target).await.unwrap_or(false) {
            // Content-addressed: the same name holds the same bytes.
            return Ok(());
        }
        let temp = self.root.join("tmp").join(temp_name(hash)?);
        let write = async {
            tokio::fs::create_dir_all(self.root.join("tmp")).await.context("create the media directory")?;
            let mut file = tokio::fs::File::create(&temp).await.context("create the temporary file")?;
            tokio::io::AsyncWriteExt::write_all(&mut file, bytes).await.context("write the temporary file")?;
            file.sync_all().await.context("flush the temporary file")?;
            if let Some(dir) = target.parent() {
                tokio::fs::create_dir_all(dir).await.context("create the fan-out directory")?;
            }
            tokio::fs::rename(&temp, &target).await.context("rename the temporary file into place")?;
            anyhow::Ok(())
        };
        if let Err(e) = write.await {
            let _ = tokio::fs::remove_file(&temp).await;
            return Err(RepoError::Unexpected(e.context(format!("store blob {hash} under {}", self.root.display()))));
        }
        Ok(())
    }

    async fn get(&self, hash: &ContentHash) -> Result<Vec<u8>, RepoError> {
        match tokio::fs::read(self.path(hash)).await {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(RepoError::NotFound),
            Err(e) => Err(anyhow::Error::new(e).context(format!("read blob {hash}")).into()),
        }
    }

    async fn delete(&self, hash: &ContentHash) -> Result<(), RepoError> {
        match tokio::fs::remove_file(self.path(hash)).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(anyhow::Error::new(e).context(format!("delete blob {hash}")).into()),
        }
    }

    async fn list(&self) -> Result<Vec<StoredBlob>, RepoError> {
        let root = self.root.clone();
        let listed = tokio::task::spawn_blocking(move || list_files(&root))
            .await
            .context("the listing of the media directory stopped")?;
        Ok(listed?)
    }
}

/// Every blob under `root`: the files of the fan-out directories named by a content hash. Temporary files
/// (under `tmp/`, named `HASH.SALT.tmp`) are no blobs.
fn list_files(root: &Path) -> anyhow::Result<Vec<StoredBlob>> {
    let mut out = Vec::new();
    let dirs = match std::fs::read_dir(root) {
        Ok(dirs) => dirs,
        // Nothing was ever written.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(anyhow::Error::new(e).context(format!("list {}", root.display()))),
    };
    for dir in dirs {
        let dir = dir.context("read the media directory")?;
        let name = dir.file_name();
        if name.len() != 2 || !dir.file_type().context("read a file type")?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(dir.path()).with_context(|| format!("list {}", dir.path().display()))? {
            let file = file.context("read a fan-out directory")?;
            let Some(hash) = file.file_name().to_str().and_then(ContentHash::parse) else { continue };
            let modified = file.metadata().and_then(|m| m.modified()).context("read a blob's time")?;
            out.push(StoredBlob { hash, written_at: modified.into() });
        }
    }
    Ok(out)
}
