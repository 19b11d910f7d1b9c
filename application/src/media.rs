//! The media use cases: pictures and papers on items. Upload (the blob is written before its row), list, read,
//! thumbnail (made once, kept), delete (the row first, then the blob once no row names it) and the sweep
//! (pending media older than a day, and blobs no row names).

use crate::error::named;
use crate::ports::media::{KeptPicture, MediaRepo, MediaStore, PictureError, Pictures};
use crate::ports::{Clock, InventoryRepo};
use crate::recorder::{Actor, Recorder};
use crate::{Error, RepoError};
use anyhow::Context as _;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use trove_domain::history::{Action, ObjectKind};
use trove_domain::measure::Region;
use trove_domain::media::{self, Caption, ContentHash, MediaKind, MediaRefused, MediaType, Medium, NewMedium};
use trove_domain::{HouseholdId, ItemId, MediaId, Timestamp};

/// How old a blob no row names must be before the sweep removes it: an upload writes its blob a moment before
/// its row, and the sweep must not take the blob from under it.
pub const ORPHAN_GRACE: chrono::TimeDelta = chrono::TimeDelta::hours(1);

/// A photo of at most this many regions has each cropped when it is kept at intake (items on a table, to save one
/// by one); one of more (a tray of parts: a count) has its crops made when asked ([`Media::crop`]), or a photo
/// of 2,400 parts would keep 2,400 files before it answers.
pub const EAGER_CROPS: usize = 40;

/// What a media use case reports besides success.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// The file or one of its values is refused (its type, size, content, kind or caption); nothing was kept.
    #[error(transparent)]
    Refused(#[from] MediaRefused),
    /// A PDF (or other file without pixels) has no thumbnail.
    #[error("media {0} is not a picture and has no thumbnail")]
    NoThumbnail(MediaId),
    /// The item or the medium does not exist in the household, or the store failed.
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<RepoError> for MediaError {
    fn from(e: RepoError) -> Self {
        MediaError::Failed(e.into())
    }
}

/// A file to keep on an item, its values already read by the domain's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub bytes: Vec<u8>,
    /// By default a photo for a picture, `other` for a PDF.
    pub kind: Option<MediaKind>,
    pub caption: Option<Caption>,
}

/// What a sweep removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Swept {
    /// Pending media rows older than a day.
    pub pending: usize,
    /// Blobs no row named.
    pub blobs: usize,
}

/// The media use cases.
#[derive(Clone)]
pub struct Media {
    media: Arc<dyn MediaRepo>,
    blobs: Arc<dyn MediaStore>,
    pictures: Arc<dyn Pictures>,
    /// To tell a missing item (404) before any work is done.
    inventory: Arc<dyn InventoryRepo>,
    clock: Arc<dyn Clock>,
    /// Where every medium kept or deleted is recorded, with who asked.
    recorder: Recorder,
}

impl std::fmt::Debug for Media {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Media").finish_non_exhaustive()
    }
}

/// The SHA-256 of `bytes`, the name its blob is kept under.
pub fn content_hash(bytes: &[u8]) -> ContentHash {
    ContentHash::parse(&hex::encode(Sha256::digest(bytes))).expect("a SHA-256 in hex is a content hash")
}

fn no_media(id: MediaId) -> impl Fn(RepoError) -> Error {
    named(ObjectKind::Media, id.0)
}

fn picture_refused(media_type: MediaType) -> impl Fn(PictureError) -> MediaError {
    move |e| match e {
        PictureError::Broken(reason) => MediaRefused::Broken { media_type, reason }.into(),
        PictureError::TooManyPixels { width, height, max_pixels } => {
            MediaRefused::TooManyPixels { width, height, max_pixels }.into()
        }
        PictureError::Unexpected(e) => Error::Unexpected(e).into(),
    }
}

/// Runs CPU work on a blocking thread.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, Error> {
    tokio::task::spawn_blocking(work).await.context("the picture work stopped").map_err(Error::Unexpected)
}

impl Media {
    pub fn new(
        media: Arc<dyn MediaRepo>,
        blobs: Arc<dyn MediaStore>,
        pictures: Arc<dyn Pictures>,
        inventory: Arc<dyn InventoryRepo>,
        clock: Arc<dyn Clock>,
        recorder: Recorder,
    ) -> Self {
        Self { media, blobs, pictures, inventory, clock, recorder }
    }

    /// Keeps a file on an item, or pending (on no item, for intake) when `item` is `None`. A picture loses its
    /// location metadata and keeps showing the right way up ([`Pictures::keep`]) before anything is stored;
    /// the blob is written before the row. Recorded as the event `create` of `actor` when it is on an item;
    /// pending media are recorded when an item takes them (`Inventory::create`), and those the sweep removes
    /// were never shown to anyone, so never recorded.
    ///
    /// # Errors
    /// [`MediaError::Refused`] for an empty, too large, broken or unaccepted file; [`Error::NotFound`] naming
    /// the item; [`Error::StorageUnavailable`] when the blob store cannot take the file now (full, unreachable).
    /// Nothing is kept then (a blob written before the item vanished is removed, or swept).
    pub async fn upload(&self, actor: Actor, item: Option<ItemId>, upload: Upload) -> Result<Medium, MediaError> {
        let household = actor.household;
        let media_type = media::sniff(&upload.bytes)?;
        if let Some(item) = item {
            self.inventory.get(household, item).await.map_err(named(ObjectKind::Item, item.0))?;
        }
        let (bytes, size) = if media_type.is_image() {
            let pictures = Arc::clone(&self.pictures);
            let bytes = upload.bytes;
            let kept: KeptPicture =
                blocking(move || pictures.keep(media_type, bytes)).await?.map_err(picture_refused(media_type))?;
            (kept.bytes, Some(kept.size))
        } else {
            (upload.bytes, None)
        };
        let sha256 = content_hash(&bytes);
        self.blobs.put(&sha256, &bytes).await?;
        let new = NewMedium {
            item_id: item,
            kind: upload.kind.unwrap_or_else(|| MediaKind::default_for(media_type)),
            media_type,
            bytes: bytes.len() as u64,
            size,
            sha256: sha256.clone(),
            caption: upload.caption,
        };
        let rec = self.recorder.recording(actor, Action::Create);
        match self.media.insert(household, new, &rec).await {
            Ok(stored) => Ok(stored),
            Err(e) => {
                self.forget_unnamed(&sha256).await;
                Err(match (e, item) {
                    (RepoError::NotFound, Some(item)) => Error::NotFound { what: ObjectKind::Item, id: item.0 }.into(),
                    (e, _) => e.into(),
                })
            }
        }
    }

    /// Keeps a photo read at intake as pending media (on no item; attached by `POST /api/items` with
    /// `media_ids`, removed by the sweep after a day otherwise), and, when there are at most [`EAGER_CROPS`] of
    /// them, a cropped photo of each of `regions` (in the photo's stored pixel grid, as the segmenter reports
    /// them), in the order given, all from one decoding of the photo. More regions (a tray of parts: a count,
    /// not items saved one by one) get none: [`Media::crop`] makes the one a person asks for.
    ///
    /// # Errors
    /// As [`Media::upload`]; nothing is left pending then (what was kept before the failure is swept).
    pub async fn keep_intake(
        &self,
        actor: Actor,
        photo: Vec<u8>,
        regions: &[Region],
    ) -> Result<(Medium, Vec<Medium>), MediaError> {
        let media_type = media::sniff(&photo)?;
        let crops = if media_type.is_image() && !regions.is_empty() && regions.len() <= EAGER_CROPS {
            self.cut(media_type, photo.clone(), regions.to_vec()).await?
        } else {
            Vec::new()
        };
        let whole = self.upload(actor, None, Upload { bytes: photo, kind: None, caption: None }).await?;
        let mut kept = Vec::with_capacity(crops.len());
        for bytes in crops {
            kept.push(self.upload(actor, None, Upload { bytes, kind: None, caption: None }).await?);
        }
        Ok((whole, kept))
    }

    /// Keeps a cropped photo of `region` of the picture `photo` (in its stored pixel grid, as the segmenter
    /// reports regions) as pending media, for `media_ids` when saving an item: the crop of a region of a photo
    /// with more than [`EAGER_CROPS`] of them, made when it is wanted.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the medium (another household's included); [`Error::Invalid`] for a PDF, a
    /// region with no pixels or one wholly outside the picture. Nothing is kept then.
    pub async fn crop(&self, actor: Actor, photo: MediaId, region: Region) -> Result<Medium, MediaError> {
        let medium = self.media.get(actor.household, photo).await.map_err(no_media(photo))?;
        media::check_crop(&medium, &region).map_err(|e| Error::Invalid(e.to_string()))?;
        let original = self.blobs.get(&medium.sha256).await.map_err(no_media(photo))?;
        let bytes = self.cut(medium.media_type, original, vec![region]).await?.remove(0);
        self.upload(actor, None, Upload { bytes, kind: None, caption: None }).await
    }

    /// The crops of `regions` of a picture, from one decoding, on a blocking thread.
    async fn cut(
        &self,
        media_type: MediaType,
        picture: Vec<u8>,
        regions: Vec<Region>,
    ) -> Result<Vec<Vec<u8>>, MediaError> {
        let pictures = Arc::clone(&self.pictures);
        let crops = blocking(move || pictures.crops(media_type, &picture, &regions)).await?;
        crops.map_err(picture_refused(media_type))
    }

    /// Attaches a receipt kept at intake (pending media) to every item it covers: a medium per item naming the
    /// same stored file, recorded as each item's `create`. The pending one is left to the sweep; the file stays
    /// while a row names it.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the medium when it is not pending media of the household, or naming the first
    /// item that is not the household's (nothing is attached then: every item is checked first);
    /// [`Error::Invalid`] for no items or more than 100.
    pub async fn attach_receipt(
        &self,
        actor: Actor,
        receipt: MediaId,
        items: &[ItemId],
    ) -> Result<Vec<Medium>, MediaError> {
        let household = actor.household;
        if items.is_empty() || items.len() > 100 {
            return Err(Error::Invalid("item_ids must name 1 to 100 items".into()).into());
        }
        let pending = self.media.get(household, receipt).await.map_err(named(ObjectKind::Media, receipt.0))?;
        if pending.item_id.is_some() {
            return Err(Error::NotFound { what: ObjectKind::Media, id: receipt.0 }.into());
        }
        for item in items {
            self.inventory.get(household, *item).await.map_err(named(ObjectKind::Item, item.0))?;
        }
        let mut attached = Vec::with_capacity(items.len());
        for item in items {
            let new = NewMedium {
                item_id: Some(*item),
                kind: MediaKind::Receipt,
                media_type: pending.media_type,
                bytes: pending.bytes,
                size: pending.size,
                sha256: pending.sha256.clone(),
                caption: pending.caption.clone(),
            };
            let rec = self.recorder.recording(actor, Action::Create);
            attached.push(self.media.insert(household, new, &rec).await.map_err(named(ObjectKind::Item, item.0))?);
        }
        Ok(attached)
    }

    /// The media of an item, oldest first.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the item.
    pub async fn of_item(&self, household: HouseholdId, item: ItemId) -> Result<Vec<Medium>, MediaError> {
        self.inventory.get(household, item).await.map_err(named(ObjectKind::Item, item.0))?;
        Ok(self.media.of_item(household, item).await?)
    }

    /// A medium and its bytes.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the medium (also when its blob is missing: it cannot be shown).
    pub async fn get(&self, household: HouseholdId, id: MediaId) -> Result<(Medium, Vec<u8>), MediaError> {
        let medium = self.media.get(household, id).await.map_err(no_media(id))?;
        let bytes = self.blobs.get(&medium.sha256).await.map_err(no_media(id))?;
        Ok((medium, bytes))
    }

    /// The JPEG thumbnail of a picture: made from the kept picture at the first request, then kept and named
    /// by the row.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the medium; [`MediaError::NoThumbnail`] for a PDF.
    pub async fn thumbnail(&self, household: HouseholdId, id: MediaId) -> Result<Vec<u8>, MediaError> {
        let medium = self.media.get(household, id).await.map_err(no_media(id))?;
        if !medium.media_type.is_image() {
            return Err(MediaError::NoThumbnail(id));
        }
        if let Some(thumb) = &medium.thumb {
            match self.blobs.get(thumb).await {
                Ok(bytes) => return Ok(bytes),
                // A lost thumbnail is made again.
                Err(RepoError::NotFound) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let original = self.blobs.get(&medium.sha256).await.map_err(no_media(id))?;
        let pictures = Arc::clone(&self.pictures);
        let media_type = medium.media_type;
        let thumb =
            blocking(move || pictures.thumbnail(media_type, &original)).await?.map_err(picture_refused(media_type))?;
        let hash = content_hash(&thumb);
        self.blobs.put(&hash, &thumb).await?;
        self.media.set_thumb(household, id, &hash).await.map_err(no_media(id))?;
        Ok(thumb)
    }

    /// Sets a medium's caption, or removes it with `None`. Recorded as the event `patch` of `actor` with the
    /// caption's change (no event when it is unchanged).
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the medium (another household's included); nothing is written then.
    pub async fn caption(&self, actor: Actor, id: MediaId, caption: Option<Caption>) -> Result<Medium, MediaError> {
        let rec = self.recorder.recording(actor, Action::Patch);
        Ok(self.media.set_caption(actor.household, id, caption, &rec).await.map_err(no_media(id))?)
    }

    /// Deletes a medium: the row first, then its blob and thumbnail once no row names them. Recorded as the event
    /// `delete` of `actor` with the values it had.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming the medium. A blob that cannot be removed now is left to the sweep.
    pub async fn delete(&self, actor: Actor, id: MediaId) -> Result<(), MediaError> {
        let rec = self.recorder.recording(actor, Action::Delete);
        let gone = self.media.delete(actor.household, id, &rec).await.map_err(no_media(id))?;
        self.forget_unnamed(&gone.sha256).await;
        if let Some(thumb) = &gone.thumb {
            self.forget_unnamed(thumb).await;
        }
        Ok(())
    }

    /// Removes pending media older than a day (`trove_domain::media::PENDING_KEPT_FOR`), then every blob no row
    /// names that is older than [`ORPHAN_GRACE`].
    ///
    /// # Errors
    /// `Unexpected` when a store fails; what was removed before stays removed.
    pub async fn sweep(&self) -> Result<Swept, MediaError> {
        let now = self.clock.now();
        let pending = self.media.delete_pending(media::pending_cutoff(now)).await?;
        let named = self.media.hashes().await?;
        let mut blobs = 0;
        for blob in self.blobs.list().await? {
            if !named.contains(&blob.hash) && orphan_due(blob.written_at, now) {
                self.blobs.delete(&blob.hash).await?;
                blobs += 1;
            }
        }
        Ok(Swept { pending: pending.len(), blobs })
    }

    /// Removes the blob `hash` when no row names it any more; a failure is logged and left to the sweep.
    async fn forget_unnamed(&self, hash: &ContentHash) {
        let result = match self.media.names(hash).await {
            Ok(true) => Ok(()),
            Ok(false) => self.blobs.delete(hash).await,
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            tracing::warn!(error = %e, %hash, "a blob no row names was left for the sweep");
        }
    }
}

/// Whether a blob no row names, written at `written_at`, is due for the sweep at `now`.
fn orphan_due(written_at: Timestamp, now: Timestamp) -> bool {
    now - written_at > ORPHAN_GRACE
}

#[cfg(test)]
mod tests;
