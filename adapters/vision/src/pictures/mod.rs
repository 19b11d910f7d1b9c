//! [`Pictures`] over the `image` crate: the pictures kept on items lose their location metadata and keep
//! showing the right way up, and get a small JPEG thumbnail.
//!
//! Keeping a picture decodes all its pixels (a file that does not decode is refused, not kept). A JPEG whose EXIF
//! orientation is the default keeps its compressed bytes: only its metadata segments go (APP1: EXIF, where GPS
//! lives, and XMP; APP13: IPTC; APP2: MPF), and whatever follows its end (further pictures with their own
//! EXIF), so it loses no quality. A PNG whose orientation is the default keeps its compressed bytes too, with only
//! the chunks that say how its pixels look ([`strip_png_metadata`]: no EXIF, text, XMP or time; its ICC profile
//! only when it inflates within [`PNG_HEADER_BYTES`]). Any other picture carrying metadata (a JPEG or PNG to be
//! turned, a WebP with EXIF or XMP) is re-encoded from its pixels with the orientation applied and no metadata at
//! all (a JPEG at quality [`JPEG_QUALITY`] with its ICC profile, a PNG, a lossless WebP).
//!
//! Every decode is bounded by its bytes, whatever the file claims. Checking, thumbnailing and cropping go row by
//! row through `decode.rs` (a PNG is streamed and never held whole; a JPEG's check decodes only its luma plane; a
//! thumbnail is averaged over blocks as the rows arrive; a crop keeps only its region's rows). A picture decoded
//! whole (a JPEG or WebP to re-encode, a JPEG's or WebP's thumbnail or crop, an interlaced PNG) is decoded under
//! [`MAX_DECODED_BYTES`] and refused as too large beyond it. A PNG's text chunks and a compressed ICC profile are
//! never inflated beyond [`PNG_HEADER_BYTES`]. Even so a whole decode takes up to 160 MB, so at most
//! [`PIXEL_WORKERS`] pictures are decoded at once; the others wait their turn ([`Gate`]), which bounds the memory
//! of many concurrent uploads.

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::codecs::webp::WebPEncoder;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageEncoder, ImageFormat, RgbImage};
use std::io::Cursor;
use std::sync::{Condvar, Mutex};
use trove_application::ports::VisionError;
use trove_application::ports::media::{KeptPicture, PictureError, Pictures};
use trove_domain::measure::Region;
use trove_domain::media::{MediaType, PixelSize, THUMB_MAX_SIDE, thumb_size};

use crate::decode::{Samples, decode_rows_from};
use crate::segment::{Rows, Shrinker};
use crate::{MAX_DECODED_BYTES, MAX_PIXELS};

/// The quality of a re-encoded JPEG (a turned photo).
pub const JPEG_QUALITY: u8 = 90;
/// The quality of a thumbnail.
pub const THUMB_QUALITY: u8 = 80;
/// The JPEG quality of the crop of a region kept at intake: a photo to recognise the item by.
pub const CROP_QUALITY: u8 = 88;
/// How many pictures are decoded at once; the others wait.
pub const PIXEL_WORKERS: usize = 2;
/// The most a PNG's chunks before its pixels may take when read for a picture, its ICC profile inflated included
/// (its text chunks are skipped unread): a real profile is well under 1 MB, while 1 MB of deflated zeros inflates
/// to 1 GB. A profile whose chunk or inflated bytes do not fit is dropped, never read past it; a picture whose
/// other chunks do not fit (an EXIF block of megabytes) is refused as broken.
pub const PNG_HEADER_BYTES: usize = 8 * 1024 * 1024;

/// A counting gate: at most `n` holders at once.
#[derive(Debug)]
struct Gate {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A place in the [`Gate`], given back when dropped.
struct Pass<'a>(&'a Gate);

impl Gate {
    fn new(n: usize) -> Self {
        Self { free: Mutex::new(n), freed: Condvar::new() }
    }

    fn enter(&self) -> Pass<'_> {
        let mut free = self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *free -= 1;
        Pass(self)
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

/// The picture work over the `image` crate.
#[derive(Debug)]
pub struct PictureWork {
    /// Bounds how many pictures are decoded at once (memory).
    gate: Gate,
}

impl Default for PictureWork {
    fn default() -> Self {
        Self::new()
    }
}

impl PictureWork {
    pub fn new() -> Self {
        Self { gate: Gate::new(PIXEL_WORKERS) }
    }
}

fn format(media_type: MediaType) -> Result<ImageFormat, PictureError> {
    match media_type {
        MediaType::Jpeg => Ok(ImageFormat::Jpeg),
        MediaType::Png => Ok(ImageFormat::Png),
        MediaType::Webp => Ok(ImageFormat::WebP),
        MediaType::Pdf => Err(PictureError::Unexpected(anyhow::anyhow!("a PDF is no picture"))),
    }
}

fn broken(e: image::ImageError) -> PictureError {
    PictureError::Broken(e.to_string())
}

/// What refusing an image to decode says of a picture: over the pixels or bytes decoded, too many pixels; the
/// rest is a broken file.
fn refused(e: VisionError) -> PictureError {
    match e {
        VisionError::TooLarge { width, height, max_pixels } => {
            PictureError::TooManyPixels { width, height, max_pixels }
        }
        VisionError::Unexpected(e) => PictureError::Unexpected(e),
        e @ (VisionError::Unsupported | VisionError::Undecodable(_) | VisionError::TooSmall { .. }) => {
            PictureError::Broken(e.to_string())
        }
    }
}

mod crops;
mod fixtures;
mod keep;
mod metadata;
mod pixels;
#[cfg(test)]
mod tests;

use crops::*;
pub use fixtures::*;
use metadata::*;
pub use metadata::{strip_jpeg_metadata, strip_png_metadata};
use pixels::*;

impl Pictures for PictureWork {
    fn keep(&self, media_type: MediaType, bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
        if media_type == MediaType::Jpeg && !jpeg_complete(&bytes) {
            return Err(PictureError::Broken("the JPEG is cut short (it has no end marker)".into()));
        }
        let _pass = self.gate.enter();
        match media_type {
            MediaType::Jpeg => Self::keep_jpeg(bytes),
            MediaType::Png => Self::keep_png(bytes),
            MediaType::Webp => Self::keep_webp(bytes),
            MediaType::Pdf => Err(PictureError::Unexpected(anyhow::anyhow!("a PDF is no picture"))),
        }
    }

    /// Averages blocks of the picture's pixels as its rows arrive, to between two and four times the thumbnail's
    /// size (as it is when smaller), and makes the thumbnail from that: a PNG is never held whole.
    fn thumbnail(&self, media_type: MediaType, bytes: &[u8]) -> Result<Vec<u8>, PictureError> {
        let _pass = self.gate.enter();
        let orientation = orientation_of(media_type, bytes)?;
        let blocks = decode_rows_from(bytes, Samples::Colour, 1, |width, height| {
            Shrinker::new(width, height, width.max(height) / (2 * THUMB_MAX_SIDE))
        })
        .map_err(refused)?;
        let (width, height) = blocks.photo_size();
        let mut small = DynamicImage::ImageRgb8(blocks.into_rgb());
        small.apply_orientation(orientation);
        let want = thumb_size(shown(width, height, orientation));
        let thumb = image::imageops::thumbnail(&small.to_rgb8(), want.width, want.height);
        encode_jpeg(&DynamicImage::ImageRgb8(thumb), THUMB_QUALITY, None)
    }

    /// Keeps only the region's rows as they arrive: a PNG is never held whole.
    fn crops(&self, media_type: MediaType, bytes: &[u8], regions: &[Region]) -> Result<Vec<Vec<u8>>, PictureError> {
        let _pass = self.gate.enter();
        let orientation = orientation_of(media_type, bytes)?;
        let cuts = decode_rows_from(bytes, Samples::Colour, 1, |width, height| {
            Cuts(regions.iter().map(|r| Cut::new(width, height, *r)).collect())
        })
        .map_err(refused)?;
        cuts.0
            .into_iter()
            .zip(regions)
            .map(|(cut, region)| {
                let Some(pixels) = cut.pixels else {
                    let (width, height) = cut.size;
                    return Err(PictureError::Broken(format!(
                        "the region at {}, {} lies outside the {width} x {height} picture",
                        region.x, region.y
                    )));
                };
                let mut cut = DynamicImage::ImageRgb8(pixels);
                cut.apply_orientation(orientation);
                encode_jpeg(&cut, CROP_QUALITY, None)
            })
            .collect()
    }
}
