//! Crops: the rows of each region kept as a picture's rows arrive.

use super::*;

/// The rows of one region of a picture, kept as they arrive; the rest are dropped.
pub(super) struct Cut {
    /// The region's top-left corner.
    pub(super) x: u32,
    pub(super) y: u32,
    /// The region's pixels, cut at the picture's edge; `None` when it lies wholly outside the picture.
    pub(super) pixels: Option<RgbImage>,
    /// The picture's size, to say so then.
    pub(super) size: (u32, u32),
}

impl Cut {
    pub(super) fn new(width: u32, height: u32, region: Region) -> Self {
        let inside = region.x < width && region.y < height && region.width > 0 && region.height > 0;
        let pixels =
            inside.then(|| RgbImage::new(region.width.min(width - region.x), region.height.min(height - region.y)));
        Cut { x: region.x, y: region.y, pixels, size: (width, height) }
    }
}

impl Rows for Cut {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        let Some(pixels) = &mut self.pixels else { return };
        let Some(at) = y.checked_sub(self.y).filter(|&at| at < pixels.height()) else { return };
        let from = self.x as usize * channels;
        if let Some(part) = row.get(from..from + pixels.width() as usize * channels) {
            pixels.add_row(at, part, channels);
        }
    }
}

/// The rows of several regions of a picture, each kept as they arrive: one decoding for every crop.
pub(super) struct Cuts(pub(super) Vec<Cut>);

impl Rows for Cuts {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        for cut in &mut self.0 {
            cut.add_row(y, row, channels);
        }
    }
}
