//! Photo intake: a photo of several items on a plain background, split into one region per item by the
//! `PhotoSegmenter` and, with a reference of known size in the photo, measured in mm by the domain's
//! `measure::measure_in`. It never writes the inventory. Segmentation runs under the limit of concurrent jobs.

use crate::jobs::Jobs;
use crate::ports::{PhotoSegmenter, VisionError};
use crate::{Error, Refusal};
use std::sync::Arc;
use trove_domain::measure::{self, Measured, Reference};

/// A photo split into regions and measured.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredPhoto {
    /// The photo's width in pixels.
    pub width: u32,
    /// The photo's height in pixels.
    pub height: u32,
    /// One region per item, in reading order, with mm when the photo has a scale.
    pub measured: Measured,
}

/// What measuring a photo reports besides success. The refusals of the image itself get their own variants
/// (the HTTP adapter answers them with statuses no [`Error`] variant has); everything else is an [`Error`].
#[derive(Debug, thiserror::Error)]
pub enum PhotoError {
    /// The bytes are not a JPEG, PNG or WebP image.
    #[error("the image is not a JPEG, PNG or WebP")]
    Unsupported,
    /// The image has more pixels than the segmenter accepts.
    #[error("the image is {width} x {height} pixels, more than {max_pixels} pixels")]
    TooLarge { width: u32, height: u32, max_pixels: u64 },
    /// `Invalid` when the image does not decode or the reference cannot be used; `Refused(ImageTooSmall)` when it
    /// is too small to hold an item; `Busy` when too many jobs wait; `Unexpected` for anything else.
    #[error(transparent)]
    Failed(#[from] Error),
}

impl From<VisionError> for PhotoError {
    fn from(e: VisionError) -> Self {
        match e {
            VisionError::Unsupported => Self::Unsupported,
            VisionError::TooLarge { width, height, max_pixels } => Self::TooLarge { width, height, max_pixels },
            e @ VisionError::Undecodable(_) => Self::Failed(Error::Invalid(e.to_string())),
            VisionError::TooSmall { width, height, min_side } => {
                Self::Failed(Refusal::ImageTooSmall { width, height, min: min_side }.into())
            }
            VisionError::Unexpected(e) => Self::Failed(Error::Unexpected(e)),
        }
    }
}

/// The photo use case.
#[derive(Clone)]
pub struct Photos {
    /// Splits a photo into regions (CPU work).
    segmenter: Arc<dyn PhotoSegmenter>,
    /// The limit of concurrent CPU-heavy jobs, shared with the other use cases.
    jobs: Jobs,
}

impl std::fmt::Debug for Photos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Photos").finish_non_exhaustive()
    }
}

impl Photos {
    pub fn new(segmenter: Arc<dyn PhotoSegmenter>, jobs: Jobs) -> Self {
        Self { segmenter, jobs }
    }

    /// Splits `image` into one region per item and measures the regions against `reference`: the `marked`
    /// region (by its index; ignored without a reference), or else the largest region shaped like the reference,
    /// sets the scale. Without a reference, or when no region is shaped like it, the regions have no mm.
    ///
    /// Segmentation is CPU work: it runs on a blocking thread under the limit of concurrent jobs, waiting for
    /// its turn.
    ///
    /// # Errors
    /// `Unsupported` when the bytes are of no supported format and `TooLarge` when the image has too many
    /// pixels; `Invalid` when the image does not decode, the square's side is not a positive number of mm, or the
    /// marked region is missing or empty; `Refused(ImageTooSmall)` when a side is too short to hold an item
    /// (before segmentation); `Busy` when the queue of jobs is full (nothing ran); `Unexpected` when the
    /// segmenter fails otherwise.
    pub async fn measure(
        &self,
        image: Vec<u8>,
        reference: Option<Reference>,
        marked: Option<usize>,
    ) -> Result<MeasuredPhoto, PhotoError> {
        let segmenter = self.segmenter.clone();
        let segmentation = self.jobs.run(move || segmenter.segment(&image)).await??;
        let marked = marked.filter(|_| reference.is_some());
        // The photo's own size: a region too small to be the reference at that size is a part (issue 45).
        let photo = trove_domain::media::PixelSize { width: segmentation.width, height: segmentation.height };
        let measured = measure::measure_in(photo, &segmentation.regions, reference, marked)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(MeasuredPhoto { width: segmentation.width, height: segmentation.height, measured })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::Segmentation;
    use crate::ports::vision::MockPhotoSegmenter;
    use trove_domain::measure::Region;

    const MARKER: Region = Region { x: 10, y: 10, width: 100, height: 100, area_px: 10_000, spread: None };
    const BOX: Region = Region { x: 200, y: 10, width: 300, height: 150, area_px: 40_000, spread: None };

    /// The use case over a segmenter that is called once with `b"photo"` and answers `answer`.
    fn photos(answer: impl FnOnce() -> Result<Segmentation, VisionError> + Send + 'static) -> Photos {
        let mut segmenter = MockPhotoSegmenter::new();
        segmenter.expect_segment().withf(|image| image == b"photo").times(1).return_once(move |_| answer());
        Photos::new(Arc::new(segmenter), Jobs::new(1, 1))
    }

    fn two_regions() -> Result<Segmentation, VisionError> {
        Ok(Segmentation { width: 640, height: 480, regions: vec![MARKER, BOX] })
    }

    fn photo() -> Vec<u8> {
        b"photo".to_vec()
    }

    #[tokio::test]
    async fn a_photo_is_segmented_then_measured_against_its_reference() {
        let got = photos(two_regions).measure(photo(), Some(Reference::SquareMm(50.0)), None).await.unwrap();
        assert_eq!((got.width, got.height), (640, 480));
        assert_eq!(got.measured.scale_mm_per_px, Some(0.5));
        assert!(got.measured.regions[0].reference);
        assert_eq!((got.measured.regions[1].width_mm, got.measured.regions[1].height_mm), (Some(150.0), Some(75.0)));
    }

    #[tokio::test]
    async fn without_a_reference_the_regions_have_no_mm_and_the_mark_is_ignored() {
        let got = photos(two_regions).measure(photo(), None, Some(7)).await.unwrap();
        assert_eq!(got.measured.scale_mm_per_px, None);
        assert_eq!(got.measured.regions.len(), 2);
        assert!(got.measured.regions.iter().all(|r| r.width_mm.is_none() && !r.reference));
    }

    #[tokio::test]
    async fn a_reference_the_rules_refuse_is_invalid() {
        let err = photos(two_regions).measure(photo(), Some(Reference::Card), Some(5)).await.unwrap_err();
        assert!(matches!(&err, PhotoError::Failed(Error::Invalid(m)) if m == "no region 5: the photo has 2 regions"));
        let err = photos(two_regions).measure(photo(), Some(Reference::SquareMm(-1.0)), None).await.unwrap_err();
        assert!(matches!(err, PhotoError::Failed(Error::Invalid(_))), "{err:?}");
    }

    #[tokio::test]
    async fn what_the_segmenter_refuses_keeps_its_kind_and_its_message() {
        async fn check(refusal: fn() -> VisionError, expected: fn(&PhotoError) -> bool) {
            let message = refusal().to_string();
            let err = photos(move || Err(refusal())).measure(photo(), Some(Reference::Card), None).await.unwrap_err();
            assert!(expected(&err), "{err:?}");
            assert_eq!(err.to_string(), message);
        }
        check(|| VisionError::Unsupported, |e| matches!(e, PhotoError::Unsupported)).await;
        check(
            || VisionError::TooLarge { width: 9000, height: 9000, max_pixels: 50_000_000 },
            |e| matches!(e, PhotoError::TooLarge { width: 9000, height: 9000, max_pixels: 50_000_000 }),
        )
        .await;
        check(|| VisionError::Undecodable("truncated".into()), |e| matches!(e, PhotoError::Failed(Error::Invalid(_))))
            .await;
        check(
            || VisionError::TooSmall { width: 1, height: 1, min_side: 16 },
            |e| {
                matches!(e, PhotoError::Failed(Error::Refused(Refusal::ImageTooSmall { width: 1, height: 1, min: 16 })))
            },
        )
        .await;
        check(
            || VisionError::Unexpected(anyhow::anyhow!("out of memory")),
            |e| matches!(e, PhotoError::Failed(Error::Unexpected(_))),
        )
        .await;
    }

    #[tokio::test]
    async fn beyond_the_queue_of_jobs_a_photo_is_busy_and_never_segmented() {
        let (release, held) = std::sync::mpsc::channel::<()>();
        let held = std::sync::Mutex::new(held);
        let mut segmenter = MockPhotoSegmenter::new();
        // Only the running job and the waiting one are segmented; the third is refused before.
        segmenter.expect_segment().times(2).returning(move |_| {
            held.lock().unwrap().recv().unwrap();
            two_regions()
        });
        let photos = Photos::new(Arc::new(segmenter), Jobs::new(1, 1));
        let running = tokio::spawn({
            let photos = photos.clone();
            async move { photos.measure(photo(), None, None).await }
        });
        let waiting = tokio::spawn({
            let photos = photos.clone();
            async move { photos.measure(photo(), None, None).await }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while photos.jobs.waiting() < 1 {
            assert!(std::time::Instant::now() < deadline, "the second photo never waited");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let err = photos.measure(photo(), None, None).await.unwrap_err();
        assert!(matches!(err, PhotoError::Failed(Error::Busy { .. })), "{err:?}");
        release.send(()).unwrap();
        release.send(()).unwrap();
        assert_eq!(running.await.unwrap().unwrap().measured.regions.len(), 2);
        assert_eq!(waiting.await.unwrap().unwrap().measured.regions.len(), 2);
    }
}
