//! QR codes read from a photo: decoded grey by `trove_vision::decode_luma_within`, which averages blocks of pixels
//! as the rows arrive (the photo is never held whole at full size when it is a PNG, and at most one byte a pixel
//! when it is a JPEG), brought down to a bounded working size, then searched by `rqrr`. How many photos are read at
//! once is the caller's to bound: the labels use case reads under the server's one limit of image jobs.

use image::GrayImage;
use image::imageops;
use trove_application::ports::{CodeReader, VisionError};

/// The longest side, in pixels, a photo is searched at: a label filling a tenth of a 12-megapixel photo's width
/// still has modules of about four pixels there, and the search costs the same for any photo.
pub const WORKING_SIDE: u32 = 1600;
/// A second, smaller size tried when nothing is read at the first: a photo's noise and blur average away.
const SMALL_SIDE: u32 = 800;

/// The `CodeReader` over `rqrr`.
#[derive(Debug, Clone, Copy, Default)]
pub struct QrReader;

impl QrReader {
    pub fn new() -> Self {
        Self
    }
}

impl CodeReader for QrReader {
    fn read(&self, image: &[u8]) -> Result<Vec<String>, VisionError> {
        let grey = trove_vision::decode_luma_within(image, WORKING_SIDE)?;
        let mut found = Vec::new();
        for side in [WORKING_SIDE, SMALL_SIDE] {
            let scaled = within(&grey, side);
            found = codes(scaled.as_ref().unwrap_or(&grey));
            if !found.is_empty() || scaled.is_none() {
                break;
            }
        }
        Ok(found)
    }
}

/// `grey` brought down to at most `side` pixels on its longest side, each pixel the mean of the area it covers
/// (`imageops::resize` would hold a copy at four `f32` a pixel between its passes: 45 MB from 1,750 pixels a
/// side); `None` when it is that small already.
fn within(grey: &GrayImage, side: u32) -> Option<GrayImage> {
    let (w, h) = grey.dimensions();
    let longest = w.max(h);
    if longest <= side {
        return None;
    }
    let scale = f64::from(side) / f64::from(longest);
    let (nw, nh) = ((f64::from(w) * scale).round().max(1.0) as u32, (f64::from(h) * scale).round().max(1.0) as u32);
    Some(imageops::thumbnail(grey, nw, nh))
}

/// The text of every QR code `rqrr` decodes in `grey`.
fn codes(grey: &GrayImage) -> Vec<String> {
    let (w, h) = grey.dimensions();
    let mut prepared = rqrr::PreparedImage::prepare_from_greyscale(w as usize, h as usize, |x, y| {
        grey.get_pixel(x as u32, y as u32).0[0]
    });
    prepared.detect_grids().into_iter().filter_map(|grid| grid.decode().ok().map(|(_, text)| text)).collect()
}
