//! Media: the blobs (by content hash), the rows that name them, and the pixel work on pictures.
//!
//! The blob and its row stay consistent by order, not by a transaction across the two stores: a blob is
//! written before the row that names it, and removed only after the last row naming it is gone. What a crash
//! leaves between the two (a blob no row names) is removed by the sweep.

use crate::RepoError;
use async_trait::async_trait;
use std::collections::HashSet;
use trove_domain::history::Recording;
use trove_domain::measure::Region;
use trove_domain::media::{Caption, ContentHash, MediaType, Medium, NewMedium, PixelSize};
use trove_domain::{HouseholdId, ItemId, MediaId, Timestamp};

/// A blob in the store and when it was last written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredBlob {
    pub hash: ContentHash,
    pub written_at: Timestamp,
}

/// The blobs: bytes stored under their SHA-256, shared by every household (the same bytes are kept once).
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait MediaStore: Send + Sync {
    /// Stores `bytes` under `hash` (the SHA-256 of `bytes`, which the caller computed). Writing a hash that is
    /// already stored is harmless. A blob is either whole under its name or absent: never half written.
    ///
    /// # Errors
    /// MUST return `Unavailable` when the storage cannot take it now (full, not writable, unreachable, not
    /// answering in time); `Unexpected` otherwise. Nothing is kept under `hash` then.
    async fn put(&self, hash: &ContentHash, bytes: &[u8]) -> Result<(), RepoError>;

    /// The bytes stored under `hash`.
    ///
    /// # Errors
    /// MUST return `NotFound` when nothing is stored under `hash`, `Unavailable` when the storage cannot answer
    /// now.
    async fn get(&self, hash: &ContentHash) -> Result<Vec<u8>, RepoError>;

    /// Removes the blob `hash`. Removing a missing blob is not an error.
    ///
    /// # Errors
    /// `Unavailable` when the storage cannot answer now, `Unexpected` otherwise.
    async fn delete(&self, hash: &ContentHash) -> Result<(), RepoError>;

    /// Every blob stored, in no particular order (for the sweep).
    ///
    /// # Errors
    /// `Unavailable` when the storage cannot answer now, `Unexpected` otherwise.
    async fn list(&self) -> Result<Vec<StoredBlob>, RepoError>;
}

/// The media rows of each household. Every method but the sweep's is scoped to one household: another
/// household's media is never read nor written, and looks exactly like a missing one.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait MediaRepo: Send + Sync {
    /// Stores a new medium with `created_at = rec.at`.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: its `create` (`rec.object`) when it is on an item; pending media (intake's) are
    /// recorded once an item takes them.
    ///
    /// # Errors
    /// MUST return `NotFound` when `medium.item_id` is not an item of `household`; nothing is written then.
    async fn insert(&self, household: HouseholdId, medium: NewMedium, rec: &Recording) -> Result<Medium, RepoError>;

    /// One medium.
    ///
    /// # Errors
    /// MUST return `NotFound` when no medium `id` exists in `household`.
    async fn get(&self, household: HouseholdId, id: MediaId) -> Result<Medium, RepoError>;

    /// The media of an item, oldest first (by id).
    ///
    /// # Errors
    /// `Unexpected` only (an item that is not the household's has no media).
    async fn of_item(&self, household: HouseholdId, item: ItemId) -> Result<Vec<Medium>, RepoError>;

    /// The media on the household's items (not those pending), by id.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn on_items(&self, household: HouseholdId) -> Result<Vec<Medium>, RepoError>;

    /// Records the thumbnail of a medium, unless one is recorded already (two requests making it at once both
    /// made the same one).
    ///
    /// # Errors
    /// MUST return `NotFound` when no medium `id` exists in `household`.
    async fn set_thumb(&self, household: HouseholdId, id: MediaId, thumb: &ContentHash) -> Result<(), RepoError>;

    /// Sets (or, with `None`, removes) a medium's caption and answers the medium as stored.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: its fields before and after (`rec.object`; none when unchanged).
    ///
    /// # Errors
    /// MUST return `NotFound` when no medium `id` exists in `household`; nothing is written then.
    async fn set_caption(
        &self,
        household: HouseholdId,
        id: MediaId,
        caption: Option<Caption>,
        rec: &Recording,
    ) -> Result<Medium, RepoError>;

    /// Deletes a medium's row and answers it.
    ///
    /// Its events are written in the same transaction, made by `trove_domain::history::Recording` from the rows
    /// as written: its fields before (`rec.object`).
    ///
    /// # Errors
    /// MUST return `NotFound` when no medium `id` exists in `household`.
    async fn delete(&self, household: HouseholdId, id: MediaId, rec: &Recording) -> Result<Medium, RepoError>;

    /// Whether any row of any household names `hash`, as its blob or its thumbnail.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn names(&self, hash: &ContentHash) -> Result<bool, RepoError>;

    /// Every hash any row names (blobs and thumbnails), for the sweep.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn hashes(&self) -> Result<HashSet<ContentHash>, RepoError>;

    /// Deletes the pending media (on no item) of every household created before `before`, and answers them.
    ///
    /// # Errors
    /// `Unexpected` only; nothing is deleted then.
    async fn delete_pending(&self, before: Timestamp) -> Result<Vec<Medium>, RepoError>;
}

/// A picture ready to keep: its bytes with the location metadata removed, and its size as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptPicture {
    /// Of the media type given: a picture is never converted to another type.
    pub bytes: Vec<u8>,
    /// Width and height with the orientation applied.
    pub size: PixelSize,
}

/// What the pixel work reports besides success.
#[derive(Debug, thiserror::Error)]
pub enum PictureError {
    /// The bytes claim a picture type but do not decode (cut short, corrupt).
    #[error("{0}")]
    Broken(String),
    /// The picture has more pixels than are decoded (checked before decoding).
    #[error("the picture is {width} x {height} pixels, more than {max_pixels} pixels")]
    TooManyPixels { width: u32, height: u32, max_pixels: u64 },
    /// Anything else.
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// The pixel work on pictures (JPEG, PNG, WebP). Synchronous: it is CPU work, which async callers run on a
/// blocking thread.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait Pictures: Send + Sync {
    /// Makes a picture fit to keep: no location metadata (EXIF GPS, XMP) is left in it, and it still shows the
    /// right way up (an EXIF orientation other than the default is applied to the pixels before the metadata
    /// goes). Answers the size as shown.
    ///
    /// # Errors
    /// MUST return `Broken` when the bytes do not decode as `media_type`, `TooManyPixels` over the pixel limit
    /// or when decoding would take more bytes than its bound (checked before the pixels are decoded).
    fn keep(&self, media_type: MediaType, bytes: Vec<u8>) -> Result<KeptPicture, PictureError>;

    /// A JPEG thumbnail of a kept picture: at most `trove_domain::media::THUMB_MAX_SIDE` pixels on its longer
    /// side (`trove_domain::media::thumb_size`), orientation applied. The same bytes always make the same
    /// thumbnail.
    ///
    /// # Errors
    /// As [`Pictures::keep`].
    fn thumbnail(&self, media_type: MediaType, bytes: &[u8]) -> Result<Vec<u8>, PictureError>;

    /// A JPEG of just each of `regions` of a picture, in their order, from one decoding of it; each region given
    /// in the picture's stored pixel grid (as the `PhotoSegmenter` reports it: before any EXIF orientation), shown
    /// the right way up and without metadata. A region reaching past the picture's edge is cut at the edge.
    ///
    /// # Errors
    /// As [`Pictures::keep`]; `Broken` too when a region lies wholly outside the picture.
    fn crops(&self, media_type: MediaType, bytes: &[u8], regions: &[Region]) -> Result<Vec<Vec<u8>>, PictureError>;
}
