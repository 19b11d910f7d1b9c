//! Media on items: photos, receipts, manuals and other files. Uploads are told by their bytes (JPEG, PNG, WebP
//! or PDF); a photo loses its location metadata before it is kept. Every medium answers only to its household:
//! another household's is a 404, like a missing one.

use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::Created;
use chrono::{DateTime, Utc};
use poem_openapi::param::Path;
use poem_openapi::payload::{Binary, Json};
use poem_openapi::types::MaybeUndefined;
use poem_openapi::types::multipart::Upload as FilePart;
use poem_openapi::{ApiResponse, Multipart, Object, OpenApi, ResponseContent, Tags};
use trove_application::media::Upload;
use trove_domain::media::{Caption, MAX_BYTES, MediaKind, MediaType, Medium};
use trove_domain::{ItemId, MediaId};

#[derive(Tags)]
enum Tag {
    /// Photos, receipts, manuals and other files kept on items.
    Media,
}

/// A file to keep on an item.
#[derive(Debug, Multipart)]
pub struct MediaUpload {
    /// The file: JPEG, PNG, WebP or PDF (told by its bytes, not its name), at most 25 MB.
    pub file: FilePart,
    /// `photo`, `receipt`, `manual` or `other`; by default `photo` for a picture, `other` for a PDF.
    pub kind: Option<String>,
    /// What the file shows, at most 500 characters.
    pub caption: Option<String>,
}

impl MediaUpload {
    /// The upload's values read by the domain's rules, and the file's bytes.
    async fn try_into_domain(self) -> ApiResult<Upload> {
        let kind = self
            .kind
            .as_deref()
            .filter(|k| !k.trim().is_empty())
            .map(MediaKind::parse)
            .transpose()
            .map_err(ApiError::from)?;
        let caption = self.caption.as_deref().map(Caption::new).transpose().map_err(ApiError::from)?.flatten();
        if self.file.size() > MAX_BYTES {
            return Err(ApiError::too_large("file", MAX_BYTES).into());
        }
        let bytes = self
            .file
            .into_vec()
            .await
            .map_err(|e| ApiError::bad_request(format!("the file could not be read: {e}")))?;
        Ok(Upload { bytes, kind, caption })
    }
}

/// A photo, receipt, manual or other file kept on an item.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Media")]
pub struct MediaDto {
    pub id: i64,
    /// The item it is on; null while pending (kept from intake, no item saved yet).
    pub item_id: Option<i64>,
    /// `photo`, `receipt`, `manual` or `other`.
    pub kind: String,
    /// `image/jpeg`, `image/png`, `image/webp` or `application/pdf`.
    pub media_type: String,
    /// The kept file's size.
    pub bytes: u64,
    /// The picture's width as shown (orientation applied); null for a PDF.
    pub width: Option<u32>,
    /// The picture's height as shown; null for a PDF.
    pub height: Option<u32>,
    /// The SHA-256 of the kept file, in hex.
    pub sha256: String,
    pub caption: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl From<&Medium> for MediaDto {
    fn from(m: &Medium) -> Self {
        Self {
            id: m.id.0,
            item_id: m.item_id.map(|i| i.0),
            kind: m.kind.as_str().to_owned(),
            media_type: m.media_type.mime().to_owned(),
            bytes: m.bytes,
            width: m.size.map(|s| s.width),
            height: m.size.map(|s| s.height),
            sha256: m.sha256.to_string(),
            caption: m.caption.as_ref().map(|c| c.as_str().to_owned()),
            created_at: m.created_at,
        }
    }
}

/// A medium's caption changed.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct PatchMedia {
    /// What the file shows, at most 500 characters; `null` (or a blank text) removes it.
    pub caption: MaybeUndefined<String>,
}

impl PatchMedia {
    /// The caption to keep (`None`: none).
    ///
    /// # Errors
    /// 400 when the caption is missing or the domain refuses it (too long, a control character).
    fn try_into_domain(self) -> ApiResult<Option<Caption>> {
        match self.caption {
            MaybeUndefined::Undefined => {
                Err(ApiError::bad_request("caption: give a caption, or null to remove it").into())
            }
            MaybeUndefined::Null => Ok(None),
            MaybeUndefined::Value(text) => Ok(Caption::new(&text).map_err(ApiError::from)?),
        }
    }
}

/// The media of an item, oldest first.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct MediaList {
    pub media: Vec<MediaDto>,
}

/// A kept file's bytes, in its media type.
#[derive(ResponseContent)]
pub enum MediaBytes {
    #[oai(content_type = "image/jpeg")]
    Jpeg(Binary<Vec<u8>>),
    #[oai(content_type = "image/png")]
    Png(Binary<Vec<u8>>),
    #[oai(content_type = "image/webp")]
    Webp(Binary<Vec<u8>>),
    #[oai(content_type = "application/pdf")]
    Pdf(Binary<Vec<u8>>),
}

/// A kept file.
#[derive(ApiResponse)]
pub enum MediaFile {
    /// The file's bytes.
    #[oai(status = 200)]
    File(MediaBytes),
}

/// A thumbnail.
#[derive(ApiResponse)]
pub enum Thumbnail {
    /// A JPEG at most 320 pixels on its longer side, the right way up.
    #[oai(status = 200, content_type = "image/jpeg")]
    Jpeg(Binary<Vec<u8>>),
}

/// A deletion.
#[derive(ApiResponse)]
pub enum Deleted {
    /// Deleted.
    #[oai(status = 204)]
    Deleted,
}

/// The media routes.
pub struct MediaApi(pub Services);

#[OpenApi(tag = "Tag::Media")]
impl MediaApi {
    /// Keep a file on an item (multipart: `file`, optional `kind` and `caption`). JPEG, PNG, WebP or PDF, at most
    /// 25 MB: anything else (a HEIC photo too) is 415 naming the accepted types, an empty or broken file 400, a
    /// larger one 413. A photo's location metadata (EXIF GPS) is removed before it is kept, and its EXIF
    /// orientation applied, so it still shows the right way up.
    #[oai(path = "/items/:id/media", method = "post")]
    async fn upload(&self, Person(c): Person, id: Path<i64>, body: MediaUpload) -> ApiResult<Created<MediaDto>> {
        let upload = body.try_into_domain().await?;
        let kept = self.0.media.upload((&c).into(), Some(ItemId(id.0)), upload).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json((&kept).into())))
    }

    /// The media of an item, oldest first.
    #[oai(path = "/items/:id/media", method = "get")]
    async fn of_item(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<MediaList>> {
        let media = self.0.media.of_item(h, ItemId(id.0)).await.map_err(ApiError::from)?;
        Ok(Json(MediaList { media: media.iter().map(MediaDto::from).collect() }))
    }

    /// A kept file's bytes, in its media type.
    #[oai(path = "/media/:id", method = "get")]
    async fn file(&self, Member(h): Member, id: Path<i64>) -> ApiResult<MediaFile> {
        let (medium, bytes) = self.0.media.get(h, MediaId(id.0)).await.map_err(ApiError::from)?;
        let bytes = Binary(bytes);
        Ok(MediaFile::File(match medium.media_type {
            MediaType::Jpeg => MediaBytes::Jpeg(bytes),
            MediaType::Png => MediaBytes::Png(bytes),
            MediaType::Webp => MediaBytes::Webp(bytes),
            MediaType::Pdf => MediaBytes::Pdf(bytes),
        }))
    }

    /// A picture's thumbnail: a JPEG at most 320 pixels on its longer side, the right way up (made at the first
    /// request, then kept). A PDF has none: 404.
    #[oai(path = "/media/:id/thumb", method = "get")]
    async fn thumb(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Thumbnail> {
        let thumb = self.0.media.thumbnail(h, MediaId(id.0)).await.map_err(ApiError::from)?;
        Ok(Thumbnail::Jpeg(Binary(thumb)))
    }

    /// Change a kept file's caption (`null` removes it). Recorded in the item's history.
    #[oai(path = "/media/:id", method = "patch")]
    async fn patch(&self, Person(c): Person, id: Path<i64>, body: Json<PatchMedia>) -> ApiResult<Json<MediaDto>> {
        let caption = body.0.try_into_domain()?;
        let kept = self.0.media.caption((&c).into(), MediaId(id.0), caption).await.map_err(ApiError::from)?;
        Ok(Json((&kept).into()))
    }

    /// Delete a kept file.
    #[oai(path = "/media/:id", method = "delete")]
    async fn delete(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Deleted> {
        self.0.media.delete((&c).into(), MediaId(id.0)).await.map_err(ApiError::from)?;
        Ok(Deleted::Deleted)
    }
}
