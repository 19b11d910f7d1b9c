//! [`S3Store`]: blobs as objects `PREFIX/HASH` in an S3-compatible bucket, through the `object_store` crate. An
//! object appears whole or not at all (S3's PUT is atomic), so no temporary name is needed.
//!
//! A bucket that cannot be reached fails a request within [`UNREACHABLE_WITHIN`] (bounded connections and
//! retries), and one that takes connections but never answers (hung) within [`FIRST_BYTE`] for a read and within
//! [`put_deadline`] for a write (its bytes at 10 Mbit/s on top), as [`RepoError::Unavailable`], so a client is
//! told to come back instead of waiting.

use anyhow::Context as _;
use async_trait::async_trait;
use futures::TryStreamExt as _;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::client::{HttpError, HttpErrorKind};
use object_store::path::Path;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt as _, PutPayload, RetryConfig};
use std::time::Duration;
use trove_application::ports::media::{MediaStore, StoredBlob};
use trove_application::{RepoError, StorageFault};
use trove_domain::media::ContentHash;

/// How long a connection to the bucket may take (name lookup, TCP, TLS) before the attempt is given up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(CONNECT_MS);
/// How long one request may take whole, its body included: a photo of the largest size taken
/// (`trove_domain::media::MAX_BYTES`, 25 MB) at 10 Mbit/s.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(25);
/// How long a read (get, list, delete) may wait for the bucket's answer to begin, from the request's start, and
/// then between two parts of its body: a bucket that takes the connection but never answers is given up after
/// this, not after [`REQUEST_TIMEOUT`].
pub const FIRST_BYTE: Duration = Duration::from_millis(1_200);
/// The slowest upload a write is given time for, in bytes a second (10 Mbit/s).
pub const UPLOAD_FLOOR_BYTES_PER_S: u64 = 1_250_000;
/// How long after a request's first attempt a retry may still start (object_store's `retry_timeout`).
pub const RETRY_WINDOW: Duration = Duration::from_millis(RETRY_WINDOW_MS);
/// The longest wait before a retry.
pub const MAX_BACKOFF: Duration = Duration::from_millis(MAX_BACKOFF_MS);
/// Retries of a failed request (a refused connection, a 5xx answer): one, and only within [`RETRY_WINDOW`].
pub const MAX_RETRIES: usize = 1;
/// The longest a request waits on a bucket that cannot be reached (connections refused or unanswered) before it
/// fails: an attempt gives up its connection after [`CONNECT_TIMEOUT`], a retry starts only within
/// [`RETRY_WINDOW`] of the first attempt and after at most [`MAX_BACKOFF`], and there is one retry.
pub const UNREACHABLE_WITHIN: Duration = Duration::from_millis(RETRY_WINDOW_MS + MAX_BACKOFF_MS + CONNECT_MS);

const CONNECT_MS: u64 = 1_000;
const RETRY_WINDOW_MS: u64 = 500;
const MAX_BACKOFF_MS: u64 = 300;

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
    /// Reads: given up when the answer does not begin within [`FIRST_BYTE`].
    store: AmazonS3,
    /// Writes: a whole request may take [`REQUEST_TIMEOUT`]; each write is bounded by [`put_deadline`] too.
    writes: AmazonS3,
    /// The key prefix every blob's name is under.
    prefix: Path,
}

impl S3Store {
    /// A client of the bucket. Nothing is sent until the first request.
    ///
    /// # Errors
    /// When the settings do not make a client.
    pub fn open(settings: &S3Settings) -> anyhow::Result<S3Store> {
        let retry = RetryConfig {
            backoff: BackoffConfig { init_backoff: Duration::from_millis(100), max_backoff: MAX_BACKOFF, base: 2.0 },
            max_retries: MAX_RETRIES,
            retry_timeout: RETRY_WINDOW,
        };
        let client = ClientOptions::new().with_connect_timeout(CONNECT_TIMEOUT).with_timeout(REQUEST_TIMEOUT);
        let reads = Self::client(settings, client.clone().with_read_timeout(FIRST_BYTE), retry.clone())?;
        let writes = Self::client(settings, client, retry)?;
        Ok(S3Store { store: reads, writes, prefix: Path::from(settings.prefix.as_str()) })
    }

    fn client(settings: &S3Settings, client: ClientOptions, retry: RetryConfig) -> anyhow::Result<AmazonS3> {
        // The client options first: `with_allow_http` below sets one of them.
        let mut builder = AmazonS3Builder::new()
            .with_client_options(client)
            .with_retry(retry)
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
        builder.build().with_context(|| format!("make a client of the bucket {}", settings.bucket))
    }

    fn path(&self, hash: &ContentHash) -> Path {
        self.prefix.clone().join(hash.as_str())
    }
}

/// How long a write of `len` bytes may take before the bucket is given up: [`FIRST_BYTE`] for the answer and
/// the bytes at [`UPLOAD_FLOOR_BYTES_PER_S`] (a few kilobytes: 1.2 s; a 3 MB photo: 3.6 s; the largest, 25 MB:
/// 21.2 s), never more than [`REQUEST_TIMEOUT`].
#[must_use]
pub fn put_deadline(len: usize) -> Duration {
    let sending =
        Duration::from_millis(u64::try_from(len).unwrap_or(u64::MAX).saturating_mul(1_000) / UPLOAD_FLOOR_BYTES_PER_S);
    (FIRST_BYTE + sending).min(REQUEST_TIMEOUT)
}

/// What a failed request to the bucket tells a client. A transport failure (refused, unanswered, timed out) or
/// a failing server (5xx after the retry) is the storage's, [`RepoError::Unavailable`]; a refusal of the
/// credentials or the bucket is the configuration's, unexpected.
fn failure(e: object_store::Error, what: String) -> RepoError {
    let fault = match &e {
        object_store::Error::Generic { .. } => Some(transport_fault(&e).unwrap_or(StorageFault::Failed)),
        _ => None,
    };
    let cause = anyhow::Error::new(e).context(what);
    match fault {
        Some(fault) => RepoError::Unavailable { fault, cause },
        None => RepoError::Unexpected(cause),
    }
}

/// The fault of the HTTP transport under `e`, if a transport failure is its cause.
fn transport_fault(e: &(dyn std::error::Error + 'static)) -> Option<StorageFault> {
    let mut source = Some(e);
    while let Some(e) = source {
        if let Some(http) = e.downcast_ref::<HttpError>() {
            return Some(match http.kind() {
                HttpErrorKind::Timeout => StorageFault::TimedOut,
                HttpErrorKind::Connect | HttpErrorKind::Request => StorageFault::Unreachable,
                _ => StorageFault::Failed,
            });
        }
        source = e.source();
    }
    None
}

#[async_trait]
impl MediaStore for S3Store {
    async fn put(&self, hash: &ContentHash, bytes: &[u8]) -> Result<(), RepoError> {
        let deadline = put_deadline(bytes.len());
        let path = self.path(hash);
        let put = self.writes.put(&path, PutPayload::from(bytes.to_vec()));
        match tokio::time::timeout(deadline, put).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(failure(e, format!("store blob {hash}"))),
            Err(_) => Err(RepoError::Unavailable {
                fault: StorageFault::TimedOut,
                cause: anyhow::anyhow!("store blob {hash}: the bucket did not answer within {deadline:?}"),
            }),
        }
    }

    async fn get(&self, hash: &ContentHash) -> Result<Vec<u8>, RepoError> {
        let what = || format!("read blob {hash}");
        match self.store.get(&self.path(hash)).await {
            Ok(got) => Ok(got.bytes().await.map_err(|e| failure(e, what()))?.to_vec()),
            Err(object_store::Error::NotFound { .. }) => Err(RepoError::NotFound),
            Err(e) => Err(failure(e, what())),
        }
    }

    async fn delete(&self, hash: &ContentHash) -> Result<(), RepoError> {
        match self.store.delete(&self.path(hash)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(failure(e, format!("delete blob {hash}"))),
        }
    }

    async fn list(&self) -> Result<Vec<StoredBlob>, RepoError> {
        let prefix = (!self.prefix.as_ref().is_empty()).then_some(&self.prefix);
        let objects: Vec<_> =
            self.store.list(prefix).try_collect().await.map_err(|e| failure(e, "list the blobs".to_owned()))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A bucket that cannot be reached is reported within 2 s, by the bounds the client is built with (not by a
    /// stopwatch: the integration tests print the time they measured).
    #[test]
    fn an_unreachable_bucket_fails_within_two_seconds() {
        assert!(UNREACHABLE_WITHIN <= Duration::from_secs(2), "{UNREACHABLE_WITHIN:?}");
        assert!(RETRY_WINDOW + MAX_BACKOFF + CONNECT_TIMEOUT == UNREACHABLE_WITHIN);
    }

    /// A hung bucket is given up within 2 s for a read and a small write; a write is given the time its bytes
    /// take at 10 Mbit/s on top, up to the whole request's bound.
    #[test]
    fn a_hung_bucket_is_given_up_by_the_size_of_the_request() {
        assert!(FIRST_BYTE < Duration::from_secs(2));
        assert_eq!(put_deadline(4), FIRST_BYTE);
        assert_eq!(put_deadline(3_000_000), Duration::from_millis(3_600));
        assert_eq!(put_deadline(25_000_000), Duration::from_millis(21_200));
        assert_eq!(put_deadline(usize::MAX), REQUEST_TIMEOUT);
    }
}
