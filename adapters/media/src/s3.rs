//! [`S3Store`]: blobs as objects `PREFIX/HASH` in an S3-compatible bucket, through the `object_store` crate. An
//! object appears whole or not at all (S3's PUT is atomic), so no temporary name is needed.

use anyhow::Context as _;
use async_trait::async_trait;
use futures::TryStreamExt as _;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload};
use trove_application::RepoError;
use trove_application::ports::media::{MediaStore, StoredBlob};
use trove_domain::media::ContentHash;

/// Where and how to reach the bucket: `TROVE_MEDIA_URL=s3://BUCKET/PREFIX` and the usual `AWS_*` settings,
/// read once at start-up by the configuration.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Settings {
    pub bucket: String,
    /// The key prefix, without slashes at its ends; may be empty.
    pub prefix: String,
    /// `AWS_ENDPOINT_URL`: an S3-compatible server (MinIO, moto, ...); AWS itself when `None`.
    pub endpoint: Option<String>,
    /// `AWS_REGION`; `us-east-1` when `None`.
    pub region: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
}

impl std::fmt::Debug for S3Settings {
    /// Never shows the secret key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Settings")
            .field("bucket", &self.bucket)
            .field("prefix", &self.prefix)
            .field("endpoint", &self.endpoint)
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

impl S3Settings {
    /// Reads `s3://BUCKET/PREFIX` (the prefix may be left out).
    ///
    /// ```
    /// let s = trove_media::S3Settings::from_url("s3://trove/media/one", None, None, None, None).unwrap();
    /// assert_eq!((s.bucket.as_str(), s.prefix.as_str()), ("trove", "media/one"));
    /// assert!(trove_media::S3Settings::from_url("https://trove/media", None, None, None, None).is_err());
    /// ```
    ///
    /// # Errors
    /// When the URL is not `s3://` or names no bucket.
    pub fn from_url(
        url: &str,
        endpoint: Option<String>,
        region: Option<String>,
        access_key_id: Option<String>,
        secret_access_key: Option<String>,
    ) -> anyhow::Result<S3Settings> {
        let rest = url.strip_prefix("s3://").with_context(|| format!("{url:?} is not an s3://BUCKET/PREFIX URL"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        anyhow::ensure!(!bucket.is_empty(), "{url:?} names no bucket (s3://BUCKET/PREFIX)");
        Ok(S3Settings {
            bucket: bucket.to_owned(),
            prefix: prefix.trim_matches('/').to_owned(),
            endpoint,
            region,
            access_key_id,
            secret_access_key,
        })
    }
}

/// Blobs as objects of an S3-compatible bucket.
#[derive(Debug)]
pub struct S3Store {
    store: AmazonS3,
    /// The key prefix every blob's name is under.
    prefix: Path,
}

impl S3Store {
    /// A client of the bucket. Nothing is sent until the first request.
    ///
    /// # Errors
    /// When the settings do not make a client.
    pub fn open(settings: &S3Settings) -> anyhow::Result<S3Store> {
        let mut builder = AmazonS3Builder::new()
            .with_bucket_name(&settings.bucket)
            .with_region(settings.region.clone().unwrap_or_else(|| "us-east-1".to_owned()));
        if let Some(endpoint) = &settings.endpoint {
            builder = builder.with_endpoint(endpoint).with_allow_http(endpoint.starts_with("http://"));
        }
        if let Some(key) = &settings.access_key_id {
            builder = builder.with_access_key_id(key);
        }
        if let Some(secret) = &settings.secret_access_key {
            builder = builder.with_secret_access_key(secret);
        }
        let store = builder.build().with_context(|| format!("make a client of the bucket {}", settings.bucket))?;
        Ok(S3Store { store, prefix: Path::from(settings.prefix.as_str()) })
    }

    fn path(&self, hash: &ContentHash) -> Path {
        self.prefix.clone().join(hash.as_str())
    }
}

#[async_trait]
impl MediaStore for S3Store {
    async fn put(&self, hash: &ContentHash, bytes: &[u8]) -> Result<(), RepoError> {
        self.store
            .put(&self.path(hash), PutPayload::from(bytes.to_vec()))
            .await
            .with_context(|| format!("store blob {hash}"))?;
        Ok(())
    }

    async fn get(&self, hash: &ContentHash) -> Result<Vec<u8>, RepoError> {
        match self.store.get(&self.path(hash)).await {
            Ok(got) => Ok(got.bytes().await.with_context(|| format!("read blob {hash}"))?.to_vec()),
            Err(object_store::Error::NotFound { .. }) => Err(RepoError::NotFound),
            Err(e) => Err(anyhow::Error::new(e).context(format!("read blob {hash}")).into()),
        }
    }

    async fn delete(&self, hash: &ContentHash) -> Result<(), RepoError> {
        match self.store.delete(&self.path(hash)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(anyhow::Error::new(e).context(format!("delete blob {hash}")).into()),
        }
    }

    async fn list(&self) -> Result<Vec<StoredBlob>, RepoError> {
        let prefix = (!self.prefix.as_ref().is_empty()).then_some(&self.prefix);
        let objects: Vec<_> = self.store.list(prefix).try_collect().await.context("list the blobs")?;
        Ok(objects
            .into_iter()
            .filter_map(|o| {
                // Only the objects directly under the prefix and named by a hash are blobs.
                let rest: Vec<_> = o.location.prefix_match(&self.prefix)?.collect();
                let [name] = rest.as_slice() else { return None };
                Some(StoredBlob { hash: ContentHash::parse(name.as_ref())?, written_at: o.last_modified })
            })
            .collect())
    }
}
