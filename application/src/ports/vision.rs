//! Images: a photo of several items laid out on a plain background, split into one region per item; and an image
//! made ready for a model to read.

use trove_domain::measure::Region;
use trove_domain::reading::ImageFormat;

/// The shortest side, in pixels, of an image that can hold an item: smaller images are refused before any work.
pub const MIN_SIDE: u32 = 16;

/// The longest side, in pixels, of an image sent to a model: the provider reads no finer detail, and a larger
/// image costs more.
pub const MODEL_IMAGE_SIDE: u32 = 2048;

/// What segmentation found in a photo.
#[derive(Debug, Clone, PartialEq)]
pub struct Segmentation {
    /// The photo's width in pixels.
    pub width: u32,
    /// The photo's height in pixels.
    pub height: u32,
    /// One region per item, in reading order (`trove_domain::measure::reading_order`: rows top to bottom, each
    /// left to right), in the photo's pixels.
    pub regions: Vec<Region>,
}

/// An image ready to send to a model: it decodes, its size is sane, and its longest side is at most
/// [`MODEL_IMAGE_SIDE`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    pub format: ImageFormat,
    pub bytes: Vec<u8>,
    /// The size in pixels of what is sent.
    pub width: u32,
    pub height: u32,
}

/// What an image port reports besides success.
#[derive(Debug, thiserror::Error)]
pub enum VisionError {
    /// The bytes are not a JPEG, PNG or WebP image.
    #[error("the image is not a JPEG, PNG or WebP")]
    Unsupported,
    /// The bytes claim a supported format but do not decode (damaged, or cut short).
    #[error("the image does not decode: {0}")]
    Undecodable(String),
    /// The image has more pixels than the port accepts, or would take more memory decoded than it allows.
    #[error("the image is {width} x {height} pixels, more than {max_pixels} pixels")]
    TooLarge { width: u32, height: u32, max_pixels: u64 },
    /// A side of the image is under [`MIN_SIDE`] pixels.
    #[error("the image is {width} x {height} pixels; at least {min_side} x {min_side} are needed to hold an item")]
    TooSmall { width: u32, height: u32, min_side: u32 },
    /// Anything else.
    #[error(transparent)]
    Unexpected(#[from] anyhow::Error),
}

/// Splits a photo into regions, one per item. Synchronous: it is CPU work, which the use case runs on a blocking
/// thread under the limit of concurrent jobs ([`crate::jobs::Jobs`]).
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait PhotoSegmenter: Send + Sync {
    /// Decodes `image` (JPEG, PNG or WebP, told by its magic bytes) and answers its size and one region per item
    /// on the plain background. An empty background answers no region. Only what the work needs is decoded: the
    /// memory taken does not grow with the pixels beyond a bounded working copy where the format allows.
    ///
    /// # Errors
    /// MUST return `Unsupported` when the bytes are of no supported format, `Undecodable` when they claim one and
    /// do not decode (a JPEG cut short included: no region may come from pixels that are not in the picture),
    /// `TooSmall` when a side is under [`MIN_SIDE`] and `TooLarge` when the image would be over the port's pixel
    /// or memory limit (both checked from the header, before the pixels are decoded).
    fn segment(&self, image: &[u8]) -> Result<Segmentation, VisionError>;
}

/// Makes an image ready for a model to read (a label photo). Synchronous CPU work, as [`PhotoSegmenter`].
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait ModelImages: Send + Sync {
    /// Decodes `image` whole to check it, and answers it as it is when its longest side is at most
    /// [`MODEL_IMAGE_SIDE`], or else downscaled to that longest side and encoded as a JPEG.
    ///
    /// # Errors
    /// As [`PhotoSegmenter::segment`]: `Unsupported`, `Undecodable` (a JPEG cut short included), `TooSmall`,
    /// `TooLarge`.
    fn prepare_for_model(&self, image: &[u8]) -> Result<PreparedImage, VisionError>;
}
