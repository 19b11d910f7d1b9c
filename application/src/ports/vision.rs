//! Photo segmentation: a photo of several items laid out on a plain background, split into one region per item.

use trove_domain::measure::Region;

/// What segmentation found in a photo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segmentation {
    /// The photo's width in pixels.
    pub width: u32,
    /// The photo's height in pixels.
    pub height: u32,
    /// One region per item, in reading order (top to bottom, then left to right), in the photo's pixels.
    pub regions: Vec<Region>,
}

/// What a segmenter reports besides success.
#[derive(Debug, thiserror::Error)]
pub enum VisionError {
    /// The bytes are not a JPEG, PNG or WebP image.
    #[error("the image is not a JPEG, PNG or WebP")]
    Unsupported,
    /// The bytes claim a supported format but do not decode.
    #[error("the image does not decode: {0}")]
    Undecodable(String),
    /// The image has more pixels than the segmenter accepts.
    #[error("the image is {width} x {height} pixels, more than {max_pixels} pixels")]
    TooLarge { width: u32, height: u32, max_pixels: u64 },
    /// Anything else.
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Splits a photo into regions, one per item. Synchronous: it is CPU work, which async callers run on a blocking
/// thread (`tokio::task::spawn_blocking`).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait PhotoSegmenter: Send + Sync {
    /// Decodes `image` (JPEG, PNG or WebP, told by its magic bytes) and answers its size and one region per item
    /// on the plain background. An empty background answers no region.
    ///
    /// # Errors
    /// MUST return `Unsupported` when the bytes are of no supported format, `Undecodable` when they claim one and
    /// do not decode, and `TooLarge` when the decoded image would be over the segmenter's pixel limit (checked
    /// before the pixels are decoded).
    fn segment(&self, image: &[u8]) -> Result<Segmentation, VisionError>;
}
