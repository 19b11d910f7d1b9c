//! Trove's images: a photo of items laid out on a plain background, split into one region per item
//! ([`Segmenter`]); a label photo made ready for a model ([`ModelImageEncoder`]). The only crate that decodes or
//! looks at pixels, and it decodes only what the work needs (see `decode.rs`).
//!
//! The segmentation pipeline, all but the first step on a working copy of at most [`WORKING_SIDE`] pixels a side:
//! 1. decode (JPEG, PNG or WebP, told by magic bytes), row by row, averaging blocks of `k x k` pixels into the
//!    working copy as the rows arrive (one pass over the full-size pixels: this is most of the time on a
//!    12-megapixel photo; a PNG is never held whole; a JPEG over 4 megapixels is decoded straight to its luma
//!    plane, its chroma never decoded, so its working copy is grey; a smaller JPEG, a PNG or a WebP keeps its
//!    colour, so a saturated part of the cloth's own luma is found by its colour); each block's texture (the
//!    standard deviation of its luma) is kept beside its mean;
//! 2. model the background's lighting per channel as a quadratic surface, fitted to the median of each cell of the
//!    border first and then of every cell that looks like background (the median, so a tray densely tiled with
//!    small parts still shows its background in every cell), so that gradients and vignetting fall away;
//! 3. measure each pixel's relative deviation from that background; decide the objects' polarity (darker, lighter
//!    or both) from the strongly deviating pixels, so that shadows next to light objects are ignored;
//! 4. threshold with Otsu's level, kept between a noise floor (estimated on the border) and a contrast cap; where
//!    the floor decides (faint parts, found in pieces), a bounded hysteresis: weaker pixels within two pixels of
//!    those over the level join them; add the blocks whose texture, against the background's level, stands well
//!    over the border's (a part of the cloth's own brightness shows by its relief, print or rim), on a smooth
//!    cloth with the weaker texture next to them, so that a broken ring of rim closes;
//! 5. fill holes (labels on light objects, glare on dark ones, the hole of a washer), clean the mask with an
//!    opening (no closing: it would widen the necks between small touching parts), fill holes again;
//! 6. label connected components, split components with a narrow neck (touching objects) at the cores of their
//!    distance transform and flood them back down the distance (so two parts meet at their neck); split
//!    components without a neck along a seam (a line of higher gradient or a change of colour across them) when
//!    it cuts them into large parts that each reach the outline (a label inside an item is enclosed, so it is no
//!    part);
//! 7. drop regions that are most of the image, run along the border (a table edge), hug it (a sliver of a dark
//!    band, a dark corner: thin along the border, or a corner much emptier than its box), or are specks much
//!    smaller than the typical region (no share of the image: a tray of thousands of small parts keeps them),
//!    and scale the boxes back to the photo's pixels.

mod decode;
pub mod pictures;
#[cfg(any(test, feature = "testing"))]
pub mod scene;
mod segment;

pub use decode::{MAX_DECODED_BYTES, MAX_PIXELS, jpeg_is_complete};
pub use pictures::PNG_HEADER_BYTES;
pub use segment::{WORKING_SIDE, segment_luma, segment_rgb};

use decode::{Samples, decode_rows};
use image::{GrayImage, RgbImage};
use segment::{Rows, Shrinker, luma, segment_working};
use trove_application::ports::vision::MODEL_IMAGE_SIDE;
use trove_application::ports::{ModelImages, PhotoSegmenter, PreparedImage, Segmentation, VisionError};
use trove_domain::reading::ImageFormat;

/// The quality of the JPEG a downscaled image is sent as.
const MODEL_JPEG_QUALITY: u8 = 85;

/// The segmenter over the `image` and `imageproc` crates.
#[derive(Debug, Clone, Copy, Default)]
pub struct Segmenter;

impl Segmenter {
    pub fn new() -> Self {
        Self
    }
}

/// Decodes a JPEG, PNG or WebP whole into 8-bit RGB, checking its size before decoding the pixels.
///
/// # Errors
/// `Unsupported`, `Undecodable`, `TooSmall` or `TooLarge`, as [`PhotoSegmenter::segment`] states.
pub fn decode(bytes: &[u8]) -> Result<RgbImage, VisionError> {
    decode_rows(bytes, Samples::Colour, RgbImage::new)
}

/// Decodes a JPEG, PNG or WebP whole into 8-bit luma: a JPEG's own luma plane (its chroma is never decoded), the
/// luma of other formats' colours (`(77 R + 150 G + 29 B) / 256`, rounded), checking its size first.
///
/// # Errors
/// `Unsupported`, `Undecodable`, `TooSmall` or `TooLarge`, as [`PhotoSegmenter::segment`] states.
pub fn decode_luma(bytes: &[u8]) -> Result<GrayImage, VisionError> {
    decode_rows(bytes, Samples::Luma, GrayImage::new)
}

/// Where the rows go for [`decode_luma_within`], by the photo's size.
enum Near {
    /// Under twice the side asked for: kept whole, grey.
    Whole(GrayImage),
    /// At least twice: averaged over blocks as the rows arrive, with the row turned grey first.
    Blocks(Shrinker, Vec<u8>),
}

impl Rows for Near {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        match self {
            Near::Whole(i) => i.add_row(y, row, channels),
            Near::Blocks(s, grey) if channels >= 3 => {
                grey.clear();
                grey.extend(row.chunks_exact(channels).map(luma));
                s.add_row(y, grey, 1);
            }
            Near::Blocks(s, _) => s.add_row(y, row, channels),
        }
    }
}

/// Decodes a JPEG, PNG or WebP into 8-bit luma (as [`decode_luma`]) brought down by whole blocks to between `side`
/// and twice `side` pixels on its longest side (as it is when smaller): never held whole at full size when it is
/// a PNG, and at most one byte a pixel when it is a JPEG.
///
/// # Errors
/// `Unsupported`, `Undecodable`, `TooSmall` or `TooLarge`, as [`PhotoSegmenter::segment`] states.
pub fn decode_luma_within(bytes: &[u8], side: u32) -> Result<GrayImage, VisionError> {
    let near = decode_rows(bytes, Samples::Luma, |width, height| match width.max(height) / side.max(1) {
        0 | 1 => Near::Whole(GrayImage::new(width, height)),
        k => Near::Blocks(Shrinker::new(width, height, k), Vec::new()),
    })?;
    Ok(match near {
        Near::Whole(i) => i,
        Near::Blocks(s, _) => s.into_grey(),
    })
}

impl PhotoSegmenter for Segmenter {
    /// Decodes the rows straight into the working copy's block sums: the photo is never held whole when it is a
    /// PNG; a JPEG over 4 megapixels is decoded to its luma plane only, never converted to RGB.
    fn segment(&self, image: &[u8]) -> Result<Segmentation, VisionError> {
        let shrinker = decode_rows(image, Samples::Segment, Shrinker::working)?;
        let (width, height) = shrinker.photo_size();
        Ok(segment_working(&shrinker.into_working(), width, height))
    }
}

/// Label photos made ready for a model: checked by decoding them whole, downscaled to [`MODEL_IMAGE_SIDE`] and
/// encoded as JPEG when larger.
#[derive(Debug, Clone, Copy, Default)]
pub struct ModelImageEncoder;

/// Where a label photo's rows go, by its size.
enum ForModel {
    /// Small enough to send as it is: the rows are decoded only to check them.
    Check(u32, u32),
    /// At least twice the size sent: averaged over blocks first.
    Shrink(Shrinker),
    /// Between the two: kept whole, then resized.
    Whole(RgbImage),
}

impl Rows for ForModel {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        match self {
            ForModel::Check(..) => {}
            ForModel::Shrink(s) => s.add_row(y, row, channels),
            ForModel::Whole(i) => i.add_row(y, row, channels),
        }
    }
}

/// The size of `width x height` with its longest side `side`.
fn fitted(width: u32, height: u32, side: u32) -> (u32, u32) {
    let scaled = |short: u32, long: u32| ((f64::from(short) * f64::from(side) / f64::from(long)).round() as u32).max(1);
    if width >= height { (side, scaled(height, width)) } else { (scaled(width, height), side) }
}

impl ModelImages for ModelImageEncoder {
    fn prepare_for_model(&self, image: &[u8]) -> Result<PreparedImage, VisionError> {
        let format = ImageFormat::sniff(image).ok_or(VisionError::Unsupported)?;
        let sink = decode_rows(image, Samples::Colour, |width, height| {
            let k = width.max(height) / MODEL_IMAGE_SIDE;
            match k {
                _ if width.max(height) <= MODEL_IMAGE_SIDE => ForModel::Check(width, height),
                0 | 1 => ForModel::Whole(RgbImage::new(width, height)),
                k => ForModel::Shrink(Shrinker::new(width, height, k)),
            }
        })?;
        let ((width, height), rgb) = match sink {
            ForModel::Check(width, height) => {
                return Ok(PreparedImage { format, bytes: image.to_vec(), width, height });
            }
            ForModel::Shrink(s) => (s.photo_size(), s.into_rgb()),
            ForModel::Whole(i) => (i.dimensions(), i),
        };
        let (width, height) = fitted(width, height, MODEL_IMAGE_SIDE);
        let small = image::imageops::resize(&rgb, width, height, image::imageops::FilterType::Triangle);
        drop(rgb);
        let mut bytes = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, MODEL_JPEG_QUALITY)
            .encode_image(&small)
            .map_err(|e| VisionError::Unexpected(anyhow::anyhow!("encoding the image as JPEG: {e}")))?;
        Ok(PreparedImage { format: ImageFormat::Jpeg, bytes, width, height })
    }
}

#[cfg(test)]
mod tests;
