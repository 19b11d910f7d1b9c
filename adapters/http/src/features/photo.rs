//! `POST /api/intake/photo`: a photo of several items on a plain background, split into one region per item and,
//! with a reference of known size in the photo, measured in mm. Intake never writes the inventory; it keeps the
//! photo and a crop of each region as pending media (of up to 40 regions; with more, each crop when asked:
//! `POST /api/intake/photo/{photo_id}/crop`).

use crate::auth::Person;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::Created;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::multipart::Upload;
use poem_openapi::{Multipart, Object, OpenApi, Tags};
use trove_application::intake::IMAGE_MAX;
use trove_application::photo::MeasuredPhoto;
use trove_domain::MediaId;
use trove_domain::measure::{Reference, Region};
use trove_domain::media::Medium;

#[derive(Tags)]
enum Tag {
    /// Segmentation and measurement of a photo of items.
    Photo,
}

/// A photo of items, with an optional reference of known size.
#[derive(Debug, Multipart)]
pub struct PhotoUpload {
    /// The photo: JPEG, PNG or WebP (told by its bytes), at most 20 MB.
    pub image: Upload,
    /// The side in mm of a printed square marker in the photo.
    pub reference_mm: Option<f64>,
    /// `card` when a credit card (85.60 x 53.98 mm) is in the photo.
    pub reference: Option<String>,
    /// Which region (by its index in the answer) is the reference; by default the largest shaped like it.
    pub reference_region: Option<u32>,
}

/// One region of the photo: its bounding box and area in pixels, and its size in mm when the photo has a scale.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PhotoRegion {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    pub area_px: u64,
    #[oai(skip_serializing_if_is_none)]
    pub width_mm: Option<f64>,
    #[oai(skip_serializing_if_is_none)]
    pub height_mm: Option<f64>,
    /// Whether this region is the reference that set the scale.
    pub reference: bool,
    /// A photo of just this region, kept as pending media (for `media_ids` when saving the item). Absent when the
    /// photo has more than 40 regions (a tray of parts, a count): `POST /api/intake/photo/{photo_id}/crop` makes
    /// the one wanted.
    #[oai(skip_serializing_if_is_none)]
    pub photo_id: Option<i64>,
}

/// The photo's size in pixels.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PhotoSize {
    pub width: u32,
    pub height: u32,
}

/// The regions found, one per item, in reading order.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PhotoAnswer {
    pub regions: Vec<PhotoRegion>,
    pub image: PhotoSize,
    /// Millimetres per pixel, when a reference was given and found.
    #[oai(skip_serializing_if_is_none)]
    pub scale_mm_per_px: Option<f64>,
    /// With a reference: which region was taken for it and why, or that none was found (the regions then have no
    /// mm, never a guessed scale).
    #[oai(skip_serializing_if_is_none)]
    pub note: Option<String>,
    /// The whole photo, kept as pending media: attached by `media_ids` when saving an item, removed after a day
    /// otherwise.
    pub photo_id: i64,
}

/// The reference from the form's fields, else from the query: a square's side or a card, not both.
fn reference_of(mm: Option<f64>, kind: Option<&str>) -> ApiResult<Option<Reference>> {
    match (mm, kind.map(str::trim).filter(|k| !k.is_empty())) {
        (Some(_), Some(_)) => Err(ApiError::bad_request("give reference_mm or reference=card, not both").into()),
        (Some(side), None) if side.is_finite() && side > 0.0 => Ok(Some(Reference::SquareMm(side))),
        (Some(side), None) => {
            Err(ApiError::bad_request(format!("reference_mm must be a number over 0, not {side}")).into())
        }
        (None, Some(k)) if k.eq_ignore_ascii_case("card") => Ok(Some(Reference::Card)),
        (None, Some(k)) => Err(ApiError::bad_request(format!("reference must be card, not {k:?}")).into()),
        (None, None) => Ok(None),
    }
}

fn answer(photo: MeasuredPhoto, reference: Option<Reference>, kept: (Medium, Vec<Medium>)) -> PhotoAnswer {
    let MeasuredPhoto { width, height, measured } = photo;
    let note = measured.reference_note(reference);
    let mut crops = kept.1.into_iter();
    PhotoAnswer {
        regions: measured
            .regions
            .into_iter()
            .map(|m| (m, crops.next()))
            .map(|(m, crop)| PhotoRegion {
                x: m.region.x,
                y: m.region.y,
                width: m.region.width,
                height: m.region.height,
                area_px: m.region.area_px,
                width_mm: m.width_mm,
                height_mm: m.height_mm,
                reference: m.reference,
                photo_id: crop.map(|c| c.id.0),
            })
            .collect(),
        image: PhotoSize { width, height },
        scale_mm_per_px: measured.scale_mm_per_px,
        note,
        photo_id: kept.0.id.0,
    }
}

/// A region of a photo, in its pixels (as `POST /api/intake/photo` answers it).
#[derive(Debug, Clone, PartialEq, Object)]
pub struct CropRegion {
    pub x: u32,
    pub y: u32,
    /// At least 1.
    pub width: u32,
    /// At least 1.
    pub height: u32,
}

/// The crop of a region, kept as pending media.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct CropAnswer {
    /// For `media_ids` when saving the item; removed after a day otherwise.
    pub photo_id: i64,
}

/// The photo route.
pub struct PhotoApi(pub Services);

#[OpenApi(tag = "Tag::Photo")]
impl PhotoApi {
    /// Split a photo of items on a plain background into one region per item (multipart field `image`: JPEG, PNG
    /// or WebP, at most 20 MB; 415 for anything else). With `reference_mm` (the side of a printed square marker)
    /// or `reference=card` (a credit card) in the photo, as form fields or in the query, every region also gets
    /// its width and height in mm. An image under 16 pixels a side is 422. Segmentation waits for a free core; when
    /// too many images wait already, 503 with `Retry-After`. The photo is kept as pending media (`photo_id`), and a
    /// cropped photo of each region (the region's `photo_id`; with more than 40 regions, none: see `.../crop`), for
    /// `media_ids` when saving the items; the inventory is not written.
    #[oai(path = "/intake/photo", method = "post")]
    async fn photo(
        &self,
        Person(caller): Person,
        #[oai(name = "reference_mm")] query_mm: Query<Option<f64>>,
        #[oai(name = "reference")] query_kind: Query<Option<String>>,
        body: PhotoUpload,
    ) -> ApiResult<Json<PhotoAnswer>> {
        let reference = match (body.reference_mm, body.reference.as_deref()) {
            (None, None) => reference_of(query_mm.0, query_kind.0.as_deref())?,
            (mm, kind) => reference_of(mm, kind)?,
        };
        if body.image.size() > IMAGE_MAX {
            return Err(ApiError::too_large("image", IMAGE_MAX).into());
        }
        let bytes = body
            .image
            .into_vec()
            .await
            .map_err(|e| ApiError::bad_request(format!("the image could not be read: {e}")))?;
        let marked = body.reference_region.map(|i| i as usize);
        let photo = self.0.photos.measure(bytes.clone(), reference, marked).await.map_err(ApiError::from)?;
        let regions: Vec<Region> = photo.measured.regions.iter().map(|m| m.region).collect();
        let kept = self.0.media.keep_intake((&caller).into(), bytes, &regions).await.map_err(ApiError::from)?;
        Ok(Json(answer(photo, reference, kept)))
    }

    /// Keep a cropped photo of one region of a picture (`photo_id`: a photo kept at intake, or any picture of
    /// the household) as pending media, for `media_ids` when saving an item: the crop of a region of a photo
    /// with more than 40 regions, whose crops are made only when wanted. 404 for no such picture, 400 for a PDF,
    /// an empty region or one wholly outside the picture (a region reaching past its edge is cut there).
    #[oai(path = "/intake/photo/:photo_id/crop", method = "post")]
    async fn crop(
        &self,
        Person(caller): Person,
        photo_id: Path<i64>,
        body: Json<CropRegion>,
    ) -> ApiResult<Created<CropAnswer>> {
        let CropRegion { x, y, width, height } = body.0;
        let region = Region { x, y, width, height, area_px: u64::from(width) * u64::from(height), spread: None };
        let kept = self.0.media.crop((&caller).into(), MediaId(photo_id.0), region).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json(CropAnswer { photo_id: kept.id.0 })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_a_positive_side_or_a_card() {
        assert_eq!(reference_of(None, None).unwrap(), None);
        assert_eq!(reference_of(Some(40.0), None).unwrap(), Some(Reference::SquareMm(40.0)));
        assert_eq!(reference_of(None, Some("Card")).unwrap(), Some(Reference::Card));
        assert_eq!(reference_of(None, Some(" ")).unwrap(), None);
        for (mm, kind) in [(Some(0.0), None), (Some(-1.0), None), (None, Some("coin")), (Some(20.0), Some("card"))] {
            assert!(reference_of(mm, kind).is_err(), "{mm:?} {kind:?}");
        }
    }
}
