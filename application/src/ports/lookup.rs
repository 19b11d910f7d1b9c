//! Product lookup: the providers a product code is asked of (Open Food Facts and its siblings, Open Library,
//! UPCitemdb), and the instance's cache of what they answered.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::Timestamp;
use trove_domain::code::Code;

/// A product a provider knows under a code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductCandidate {
    /// The product's name (a book's title).
    pub name: String,
    pub brand: Option<String>,
    /// A guess at the item's type (the provider's category), if it has one.
    pub item_type: Option<String>,
    /// A picture of the product, at the provider.
    pub image_url: Option<String>,
    /// The attribution and licence the provider's data and picture are shown with (Open Facts: ODbL and
    /// CC BY-SA), if it asks for one.
    pub attribution: Option<String>,
    /// The product's page at the provider.
    pub source_url: String,
}

/// Why a provider gave no answer. None of these is a miss: nothing is cached for it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderFailed {
    /// The provider asked us to wait (429 or 503 with `Retry-After`), or its rate limit is spent: it was not asked.
    #[error("{provider} is not asked until its wait is over")]
    Waiting { provider: String },
    /// The provider answered something that is not an answer: an error status, HTML, a body too large, a redirect
    /// to another host, or it could not be reached.
    #[error("{provider} failed: {reason}")]
    Failed { provider: String, reason: String },
}

/// One provider of product data.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait ProductSource: Send + Sync {
    /// The provider's name, as the answer lists it (`open_food_facts`).
    fn name(&self) -> String;

    /// Whether the provider can know `code` at all (Open Library knows books only); one that cannot is not asked.
    fn knows(&self, code: &Code) -> bool;

    /// What the provider knows under `code`: its candidates, or none (a miss, which is cached).
    ///
    /// # Errors
    /// [`ProviderFailed`] when the provider gave no usable answer; it MUST NOT answer a miss then, since a miss is
    /// cached and a failure is not.
    async fn look_up(&self, code: &Code) -> Result<Vec<ProductCandidate>, ProviderFailed>;
}

/// A candidate with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcedCandidate {
    /// The provider's name ([`ProductSource::name`]).
    pub source: String,
    pub candidate: ProductCandidate,
    /// When the provider answered it.
    pub fetched_at: Timestamp,
}

/// What the providers answered for a code, as the cache keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedLookup {
    /// Every candidate found (empty: a miss).
    pub candidates: Vec<SourcedCandidate>,
    /// The providers that were asked.
    pub asked: Vec<String>,
    /// When the providers were asked.
    pub fetched_at: Timestamp,
}

/// The instance's cache of lookups, by a code's key. It is derived data: it may be emptied at any time, and is
/// left out of backups.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait LookupCache: Send + Sync {
    /// The lookup kept for `key` that is still fresh at `now`, if any.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn cached(&self, key: &str, now: Timestamp) -> Result<Option<CachedLookup>, RepoError>;

    /// Keeps `lookup` for `key` until `until`, replacing what was kept.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn keep(&self, key: &str, lookup: CachedLookup, until: Timestamp) -> Result<(), RepoError>;
}
