//! The segmentation pipeline over decoded pixels (see the crate's documentation for the steps).

mod background;
mod morphology;
mod regions;
mod split;
mod threshold;
mod working;

use background::*;
use morphology::*;
use regions::*;
use split::*;
use threshold::*;
use working::*;
pub(crate) use working::{Rows, Shrinker, Working, luma};

use image::{GrayImage, RgbImage};
use imageproc::region_labelling::Connectivity;
use std::collections::VecDeque;
use trove_application::ports::{MIN_SIDE, Segmentation};
use trove_domain::measure::{Region, Spread};
/// The longest side of the working copy: a 4000 x 3000 photo is worked on at 1000 x 750.
pub const WORKING_SIDE: u32 = 1024;

/// Relative deviations are quantised to 0..=255 with this factor (a deviation of 0.8 and more is 255).
const QUANT: f32 = 320.0;
/// The lowest threshold, as a relative deviation from the background: fainter differences are lighting.
const MIN_CONTRAST: f32 = 0.06;
/// The highest threshold: an object differing this much from the background is always an object, whatever Otsu
/// says (Otsu may otherwise cut between dark and light objects).
const MAX_CONTRAST: f32 = 0.30;
/// Share of strongly deviating pixels on one side (darker or lighter) that makes that side the objects' polarity.
const POLARITY_SHARE: f64 = 0.85;
/// A block's texture marks an object when it is this many times the border's median texture...
const TEXTURE_OVER_NOISE: f32 = 2.5;
/// ...and at least this share of the background's level.
const MIN_TEXTURE: f32 = 0.04;
/// The smallest region, in working pixels: smaller ones are noise whatever the photo.
const MIN_AREA: u64 = 24;
/// Specks smaller than this share of the typical region (the area-weighted median: the size of region that half
/// of the found area is in) are dropped: dust and crumbs next to items, not small parts among small parts.
const SPECK_SHARE: f64 = 1.0 / 20.0;
/// A region touching a border whose thickness across it is at most this share of its run along it is a sliver of
/// a dark band or a table edge...
const SLIVER_ASPECT: f64 = 1.0 / 3.0;
/// ...when it is also thin against the photo: at most this share of the side across the border.
const SLIVER_DEPTH_SHARE: f64 = 0.15;
/// A region touching a border that reaches in no further than this share of the side across it is a sliver
/// whatever its length (a piece of a dark band; or an item all but outside the photo, too little of it to tell).
const SLIVER_THIN_SHARE: f64 = 0.06;
/// A region in a corner (touching two borders) filling less than this share of its box hugs the corner (the dark
/// corner of vignetting, hollow towards the middle); an item cut by the corner fills most of its box.
const CORNER_FILL: f64 = 0.45;
/// The smallest step of relative deviation, between the two neighbours of a pixel in any plane, that marks a seam
/// between two items (a change of colour, the shaded rims of two boxes), whatever the noise.
const SEAM_STEP: f32 = 0.12;
/// The seam's step must also stand this many times over the border's median noise (about four deviations of the
/// difference of two noisy pixels).
const SEAM_NOISE: f32 = 5.5;
/// A part of a component cut by seams must hold at least this share of it to be an item of its own.
const SEAM_PART_SHARE: f64 = 0.15;
/// Components under this many working pixels are not looked into for seams.
const SEAM_MIN_AREA: u64 = 400;
/// Pixels this close to the outline, in thirds of a working pixel, are left out when looking for seams: the
/// outline's own gradient is there.
const SEAM_MARGIN: u16 = 6;
/// Regions larger than this share of the image are background (a cloth, a shadowed half).
const MAX_AREA_SHARE: f64 = 0.6;
/// A region that runs along a border it touches for this share of that border is background (a table edge).
const BORDER_RUN_SHARE: f64 = 0.6;
/// A core of the distance transform is a separate object when the neck joining it to the rest is at most this
/// share of its own inscribed radius.
const NECK_SHARE: f32 = 0.7;
/// The smallest inscribed radius, in working pixels, of a core that may be an object of its own.
const MIN_CORE_RADIUS: u16 = 3;

/// Segments decoded pixels: one region per item, in the photo's pixels, in reading order (rows top to bottom,
/// each row left to right: `measure::reading_order`). An image too small to hold an item has none.
pub fn segment_rgb(rgb: &RgbImage) -> Segmentation {
    let (width, height) = rgb.dimensions();
    if width < MIN_SIDE || height < MIN_SIDE {
        return Segmentation { width, height, regions: Vec::new() };
    }
    segment_working(&shrink(rgb.as_raw(), width, height, 3), width, height)
}

/// Segments grey pixels (a JPEG's luma): as [`segment_rgb`], on one plane.
pub fn segment_luma(grey: &GrayImage) -> Segmentation {
    let (width, height) = grey.dimensions();
    if width < MIN_SIDE || height < MIN_SIDE {
        return Segmentation { width, height, regions: Vec::new() };
    }
    segment_working(&shrink(grey.as_raw(), width, height, 1), width, height)
}

/// Segments the working copy of a `width x height` photo.
pub(crate) fn segment_working(work: &Working, width: u32, height: u32) -> Segmentation {
    let (w, h) = (work.width, work.height);
    let grid = cells(work);
    let mut background = Background::estimate(&grid);
    let mut mask = threshold(&deviations(&background.relative(work)), w, h);
    // Refit on the cells that hold no foreground pixel, now that the objects are known, and threshold again.
    let clear: Vec<bool> = {
        let mut busy = vec![false; grid.means.len()];
        for (i, m) in mask.iter().enumerate() {
            if *m != 0 {
                let (x, y) = (i as u32 % w, i as u32 / w);
                busy[((y / grid.side) * grid.cols + x / grid.side) as usize] = true;
            }
        }
        busy.iter().map(|b| !b).collect()
    };
    let mut relative = background.relative(work);
    let mut dev = deviations(&relative);
    // Only where enough of the photo is clear does the refit know the background better: in a tray tiled edge to
    // edge with small parts, the few cells that hold none are too few and too bunched to fit the lighting on.
    if clear.iter().filter(|c| **c).count() >= (clear.len() / 8).max(12) {
        background = Background::robust(&grid, clear);
        relative = background.relative(work);
        dev = deviations(&relative);
        mask = threshold(&dev, w, h);
    }
    if let Some(texture) = background.relative_texture(work) {
        add_texture(&mut mask, &texture, work.k);
    }
    // Holes are filled before the opening too: a small washer is a ring of a pixel or two in the working copy,
    // which the opening would wipe out.
    fill_holes(&mut mask);
    open(&mut mask, 1);
    fill_holes(&mut mask);
    let labels = components(&mask, Connectivity::Eight);
    let count = labels.iter().copied().max().unwrap_or(0);
    let dist = chamfer(&mask);
    let (labels, count) = split_necks(&dist, labels, count, (w, h));
    let noise = border_noise(&dev, w, h) as f32 / QUANT;
    let (labels, count) = split_seams(&relative, &dist, noise, (w, h), labels, count);
    let all = stats(&labels, count, w);
    let found: Vec<&Stats> = all.iter().skip(1).filter(|s| s.area >= MIN_AREA && !is_background(s, w, h)).collect();
    let min_area = (SPECK_SHARE * typical_area(&found) as f64) as u64;
    let k = work.k;
    let mut regions: Vec<Region> = found
        .into_iter()
        .filter(|s| s.area >= min_area)
        .map(|s| {
            let (x, y) = (s.min_x * k, s.min_y * k);
            Region {
                x,
                y,
                width: ((s.max_x + 1) * k).min(width) - x,
                height: ((s.max_y + 1) * k).min(height) - y,
                area_px: s.area * u64::from(k) * u64::from(k),
                spread: s.spread().map(|spread| spread.scaled(f64::from(k))),
            }
        })
        .collect();
    trove_domain::measure::reading_order(&mut regions);
    Segmentation { width, height, regions }
}
