//! Trove's media stores: the `MediaStore` port of `trove_application` (blobs by their SHA-256) on the local
//! filesystem ([`FileStore`], the embedded default, under `TROVE_DATA_DIR/media/`) and on S3-compatible object
//! storage ([`S3Store`], when `TROVE_MEDIA_URL=s3://BUCKET/PREFIX`), so that several Trove processes sharing
//! one PostgreSQL share one media store. The only crate that knows where blobs live.

mod files;
pub mod owner_only;
pub mod s3;

pub use files::FileStore;
pub use s3::{S3Settings, S3Store};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use trove_application::ports::MediaStore;

/// Where the blobs are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MediaLocation {
    /// Files under this directory.
    Files(PathBuf),
    /// Objects in an S3-compatible bucket.
    S3(S3Settings),
}

impl MediaLocation {
    /// The files under `data_dir/media/`: the embedded default.
    pub fn under_data_dir(data_dir: &Path) -> Self {
        MediaLocation::Files(data_dir.join("media"))
    }

    /// Opens the store.
    ///
    /// # Errors
    /// When the S3 settings do not make a client.
    pub fn open(&self) -> anyhow::Result<Arc<dyn MediaStore>> {
        Ok(match self {
            MediaLocation::Files(dir) => Arc::new(FileStore::open(dir)),
            MediaLocation::S3(settings) => Arc::new(S3Store::open(settings)?),
        })
    }

    /// Where the blobs are, for start-up messages (no secret in it).
    pub fn describe(&self) -> String {
        match self {
            MediaLocation::Files(dir) => dir.display().to_string(),
            MediaLocation::S3(s) => format!("s3://{}/{}", s.bucket, s.prefix),
        }
    }
}
