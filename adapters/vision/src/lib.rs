//! Trove's photo segmentation: a photo of items laid out on a plain background, split into one region per item.
//!
//! The pipeline, all but the first step on a working copy of at most [`WORKING_SIDE`] pixels a side:
//! 1. decode (JPEG, PNG or WebP, told by magic bytes) and average blocks of `k x k` pixels into the working copy
//!    (one pass over the full-size pixels: this is most of the time on a 12-megapixel photo);
//! 2. model the background's lighting per channel as a quadratic surface, fitted to the border cells first and
//!    then to every cell that looks like background, so that gradients and vignetting fall away;
//! 3. measure each pixel's relative deviation from that background; decide the objects' polarity (darker, lighter
//!    or both) from the strongly deviating pixels, so that shadows next to light objects are ignored;
//! 4. threshold with Otsu's level, kept between a noise floor (estimated on the border) and a contrast cap;
//! 5. clean the mask with an opening and a closing, fill holes (labels on light objects, glare on dark ones);
//! 6. label connected components, split components with a narrow neck (touching objects) at the cores of their
//!    distance transform and grow the cores back;
//! 7. drop specks (relative to the image's area), regions that are most of the image or run along the border
//!    (a table edge, a dark corner), and scale the boxes back to the photo's pixels.

pub mod scene;
mod segment;

pub use segment::{WORKING_SIDE, segment_rgb};

use std::io::Cursor;
use trove_application::ports::{PhotoSegmenter, Segmentation, VisionError};

/// The largest photo accepted, in pixels (an 8000 x 6000 photo is 48 megapixels).
pub const MAX_PIXELS: u64 = 50_000_000;

/// The segmenter over the `image` and `imageproc` crates.
#[derive(Debug, Clone, Copy, Default)]
pub struct Segmenter;

impl Segmenter {
    pub fn new() -> Self {
        Self
    }
}

/// The format told by the first bytes: JPEG, PNG or WebP.
pub fn sniff(bytes: &[u8]) -> Option<image::ImageFormat> {
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(image::ImageFormat::Jpeg)
    } else if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(image::ImageFormat::Png)
    } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(image::ImageFormat::WebP)
    } else {
        None
    }
}

/// Decodes a JPEG, PNG or WebP into 8-bit RGB, checking its size before decoding the pixels.
///
/// # Errors
/// `Unsupported`, `Undecodable` or `TooLarge`, as [`PhotoSegmenter::segment`] states.
pub fn decode(bytes: &[u8]) -> Result<image::RgbImage, VisionError> {
    use image::ImageDecoder;
    let format = sniff(bytes).ok_or(VisionError::Unsupported)?;
    let reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    let decoder = reader.into_decoder().map_err(|e| VisionError::Undecodable(e.to_string()))?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(VisionError::TooLarge { width, height, max_pixels: MAX_PIXELS });
    }
    let decoded = image::DynamicImage::from_decoder(decoder).map_err(|e| VisionError::Undecodable(e.to_string()))?;
    Ok(match decoded {
        image::DynamicImage::ImageRgb8(rgb) => rgb,
        other => other.to_rgb8(),
    })
}

impl PhotoSegmenter for Segmenter {
    fn segment(&self, image: &[u8]) -> Result<Segmentation, VisionError> {
        let rgb = decode(image)?;
        Ok(segment_rgb(&rgb))
    }
}

#[cfg(test)]
mod tests;
