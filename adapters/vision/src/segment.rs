//! The segmentation pipeline over decoded pixels (see the crate's documentation for the steps).

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
/// The smallest region, in working pixels: smaller ones are noise whatever the photo.
const MIN_AREA: u64 = 24;
/// Specks smaller than this share of the typical region (the area-weighted median: the size of region that half
/// of the found area is in) are dropped: dust and crumbs next to items, not small parts among small parts.
const SPECK_SHARE: f64 = 1.0 / 40.0;
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
/// The levels (shares of a component's largest inscribed radius) at which cores are looked for.
const CORE_LEVELS: [f32; 3] = [0.15, 0.3, 0.5];
/// The smallest inscribed radius, in working pixels, of a core that may be an object of its own.
const MIN_CORE_RADIUS: u16 = 3;

/// The working copy: channel planes of the photo averaged over `k x k` blocks.
pub(crate) struct Working {
    width: u32,
    height: u32,
    /// The block side: one working pixel is `k x k` photo pixels.
    k: u32,
    /// Red, green and blue; or luma alone (a grey image, a JPEG decoded to its luma).
    planes: Vec<Vec<f32>>,
}

/// Where decoded rows go, one at a time, as 8-bit samples: the decoder never holds more than a row of its own.
pub(crate) trait Rows {
    /// Takes row `y` of the image: `channels` 8-bit samples a pixel (1 grey, 2 grey and alpha, 3 RGB, 4 RGBA;
    /// alpha is ignored, as `image`'s conversion to RGB ignores it).
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize);
}

/// The sums of `k x k` blocks of a photo's pixels, filled row by row as they are decoded (the remainder at the
/// right and bottom edges, under `k` pixels, is left out): the only copy of the photo that is ever whole. Grey
/// rows are summed into one plane, colour rows into three.
pub(crate) struct Shrinker {
    /// The photo's size in pixels.
    width: u32,
    height: u32,
    k: u32,
    /// The shrunk size.
    ww: u32,
    wh: u32,
    /// The block's sides, `k` but no more than the photo's.
    k_x: usize,
    k_y: usize,
    /// How many planes are summed: set by the first row (1 for grey, 3 for colour), 0 before it.
    planes: usize,
    /// Per block, the sums of each plane (red, green and blue; or grey).
    sums: Vec<u32>,
}

impl Shrinker {
    /// Blocks of `k x k` pixels (1 keeps every pixel).
    pub(crate) fn new(width: u32, height: u32, k: u32) -> Self {
        let k = k.max(1);
        let (ww, wh) = ((width / k).max(1), (height / k).max(1));
        let (k_x, k_y) = (k.min(width.max(1)) as usize, k.min(height.max(1)) as usize);
        Shrinker { width, height, k, ww, wh, k_x, k_y, planes: 0, sums: Vec::new() }
    }

    /// The blocks of the working copy: the longest side at most [`WORKING_SIDE`].
    pub(crate) fn working(width: u32, height: u32) -> Self {
        Self::new(width, height, width.max(height).div_ceil(WORKING_SIDE).max(1))
    }

    /// The photo's size in pixels.
    pub(crate) fn photo_size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The planes summed (1 before any row).
    fn plane_count(&self) -> usize {
        self.planes.max(1)
    }

    /// The sums, zero before any row.
    fn all_sums(&self) -> Vec<u32> {
        let n = self.ww as usize * self.wh as usize * self.plane_count();
        if self.sums.len() == n { self.sums.clone() } else { vec![0; n] }
    }

    /// The working copy: each block's mean.
    pub(crate) fn into_working(self) -> Working {
        let n = self.ww as usize * self.wh as usize;
        let scale = 1.0 / (self.k_x * self.k_y) as f32;
        let count = self.plane_count();
        let sums = self.all_sums();
        let planes =
            (0..count).map(|c| (0..n).map(|i| sums[i * count + c] as f32 * scale).collect::<Vec<f32>>()).collect();
        Working { width: self.ww, height: self.wh, k: self.k, planes }
    }

    /// The shrunk image in grey: each block's mean, rounded (colour as its luma, [`luma`]).
    pub(crate) fn into_grey(self) -> GrayImage {
        let n = (self.k_x * self.k_y) as u32;
        let count = self.plane_count();
        let mean = |sum: u32| ((sum + n / 2) / n) as u8;
        let raw = self
            .all_sums()
            .chunks_exact(count)
            .map(|s| if count >= 3 { luma(&[mean(s[0]), mean(s[1]), mean(s[2])]) } else { mean(s[0]) })
            .collect();
        GrayImage::from_raw(self.ww, self.wh, raw).unwrap_or_else(|| GrayImage::new(self.ww, self.wh))
    }

    /// The shrunk image: each block's mean, rounded (grey given as RGB).
    pub(crate) fn into_rgb(self) -> RgbImage {
        let n = (self.k_x * self.k_y) as u32;
        let count = self.plane_count();
        let raw = self
            .all_sums()
            .chunks_exact(count)
            .flat_map(|s| [0, 1, 2].map(|c| ((s[c.min(count - 1)] + n / 2) / n) as u8))
            .collect();
        RgbImage::from_raw(self.ww, self.wh, raw).unwrap_or_else(|| RgbImage::new(self.ww, self.wh))
    }

    /// Adds a row of `N` samples a pixel into `P` planes (`P` is 3 when `N` is 3 or 4, else 1).
    fn add<const N: usize, const P: usize>(&mut self, y: usize, row: &[u8]) {
        let base = (y / self.k_y) * self.ww as usize * P;
        let used = self.ww as usize * self.k_x * N;
        let Some(row) = row.get(..used) else { return };
        let Some(sums) = self.sums.get_mut(base..base + self.ww as usize * P) else { return };
        for (block, sum) in row.chunks_exact(self.k_x * N).zip(sums.chunks_exact_mut(P)) {
            if N == 1 {
                sum[0] += block.iter().map(|&v| u32::from(v)).sum::<u32>();
                continue;
            }
            let mut block_sum = [0u32; P];
            for px in block.chunks_exact(N) {
                for (c, s) in block_sum.iter_mut().enumerate() {
                    *s += u32::from(px[c]);
                }
            }
            for (s, b) in sum.iter_mut().zip(block_sum) {
                *s += b;
            }
        }
    }
}

impl Rows for Shrinker {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        let y = y as usize;
        if self.planes == 0 {
            self.planes = if channels >= 3 { 3 } else { 1 };
            self.sums = vec![0; self.ww as usize * self.wh as usize * self.planes];
        }
        if y >= self.wh as usize * self.k_y {
            return;
        }
        match (channels, self.planes) {
            (1, 1) => self.add::<1, 1>(y, row),
            (2, 1) => self.add::<2, 1>(y, row),
            (3, 3) => self.add::<3, 3>(y, row),
            (4, 3) => self.add::<4, 3>(y, row),
            // The rows of one image all have the same samples.
            _ => {}
        }
    }
}

impl Rows for RgbImage {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        let width = self.width() as usize;
        let raw: &mut [u8] = self;
        let Some(out) = raw.chunks_exact_mut(width * 3).nth(y as usize) else { return };
        for (o, px) in out.chunks_exact_mut(3).zip(row.chunks_exact(channels.max(1))) {
            if channels >= 3 {
                o.copy_from_slice(&px[..3]);
            } else {
                o.fill(px[0]);
            }
        }
    }
}

impl Rows for GrayImage {
    /// Grey as it is; colour as its luma, `(77 R + 150 G + 29 B) / 256` rounded (the weights of a JPEG's luma).
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        let width = self.width() as usize;
        let raw: &mut [u8] = self;
        let Some(out) = raw.chunks_exact_mut(width).nth(y as usize) else { return };
        for (o, px) in out.iter_mut().zip(row.chunks_exact(channels.max(1))) {
            *o = if channels >= 3 { luma(px) } else { px[0] };
        }
    }
}

/// The luma of an RGB pixel (the first three samples of `px`): `(77 R + 150 G + 29 B) / 256` rounded, the weights
/// of a JPEG's luma.
pub(crate) fn luma(px: &[u8]) -> u8 {
    ((77 * u32::from(px[0]) + 150 * u32::from(px[1]) + 29 * u32::from(px[2]) + 128) >> 8) as u8
}

/// Averages `k x k` blocks of decoded pixels, `channels` samples each, into the working copy.
fn shrink(raw: &[u8], w: u32, h: u32, channels: usize) -> Working {
    let mut shrinker = Shrinker::working(w, h);
    for (y, row) in raw.chunks_exact(w.max(1) as usize * channels).enumerate() {
        shrinker.add_row(y as u32, row, channels);
    }
    shrinker.into_working()
}

/// A quadratic surface `a0 + a1 x + a2 y + a3 x² + a4 xy + a5 y²` over coordinates scaled to -1..1.
#[derive(Debug, Clone, Copy)]
struct Surface([f64; 6]);

fn basis(x: f64, y: f64) -> [f64; 6] {
    [1.0, x, y, x * x, x * y, y * y]
}

impl Surface {
    fn flat(level: f64) -> Self {
        Surface([level, 0.0, 0.0, 0.0, 0.0, 0.0])
    }

    /// Least squares over `points` (x, y, value); `None` when they do not determine a surface.
    fn fit(points: &[(f64, f64, f64)]) -> Option<Self> {
        if points.len() < 6 {
            return None;
        }
        let mut a = [[0f64; 7]; 6];
        for &(x, y, v) in points {
            let b = basis(x, y);
            for i in 0..6 {
                for j in 0..6 {
                    a[i][j] += b[i] * b[j];
                }
                a[i][6] += b[i] * v;
            }
        }
        // Gaussian elimination with partial pivoting.
        for col in 0..6 {
            let pivot = (col..6).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
            if a[pivot][col].abs() < 1e-9 {
                return None;
            }
            a.swap(col, pivot);
            let pivot_row = a[col];
            for (row, values) in a.iter_mut().enumerate() {
                if row != col {
                    let f = values[col] / pivot_row[col];
                    for (v, p) in values.iter_mut().zip(pivot_row).skip(col) {
                        *v -= f * p;
                    }
                }
            }
        }
        Some(Surface(std::array::from_fn(|i| a[i][6] / a[i][i])))
    }

    fn at(&self, x: f64, y: f64) -> f64 {
        basis(x, y).iter().zip(self.0).map(|(b, c)| b * c).sum()
    }
}

/// The background's lighting, one surface per plane.
struct Background {
    /// The first `planes` are fitted.
    surfaces: [Surface; 3],
    planes: usize,
}

/// The photo cut into cells, each with its median colour, to fit the background on.
struct Cells {
    side: u32,
    cols: u32,
    rows: u32,
    /// How many planes the photo has (1 or 3).
    planes: usize,
    /// Per cell: centre (scaled to -1..1) and median of each plane (the first `planes`). The median, not the mean:
    /// a cell of a tray tiled with small parts is mostly background, and its median is the background's.
    means: Vec<(f64, f64, [f64; 3])>,
}

fn scaled(v: f64, len: u32) -> f64 {
    2.0 * v / f64::from(len.max(2) - 1) - 1.0
}

fn cells(work: &Working) -> Cells {
    let side = (work.width.max(work.height) / 48).max(4);
    let (cols, rows) = (work.width.div_ceil(side), work.height.div_ceil(side));
    let planes = work.planes.len().min(3);
    let mut means = Vec::with_capacity((cols * rows) as usize);
    // One band of cells at a time: a histogram of each cell's samples per plane, rounded to grey levels.
    let mut histograms = vec![[0u32; 256]; cols as usize * planes];
    for cy in 0..rows {
        histograms.iter_mut().for_each(|h| h.fill(0));
        let (top, bottom) = (cy * side, ((cy + 1) * side).min(work.height));
        for y in top..bottom {
            let base = (y * work.width) as usize;
            for (c, plane) in work.planes.iter().take(planes).enumerate() {
                for (x, v) in plane[base..base + work.width as usize].iter().enumerate() {
                    let bin = (v + 0.5).clamp(0.0, 255.0) as usize;
                    histograms[(x / side as usize) * planes + c][bin] += 1;
                }
            }
        }
        for cx in 0..cols {
            let width = side.min(work.width - cx * side);
            let n = width * (bottom - top);
            let centre_x = f64::from(cx * side) + f64::from(width) / 2.0;
            let centre_y = f64::from(top) + f64::from(bottom - top) / 2.0;
            let mut median = [0f64; 3];
            for (c, m) in median.iter_mut().enumerate().take(planes) {
                let mut seen = 0;
                let histogram = &histograms[cx as usize * planes + c];
                *m = histogram
                    .iter()
                    .position(|count| {
                        seen += count;
                        2 * seen > n
                    })
                    .unwrap_or(0) as f64;
            }
            means.push((scaled(centre_x, work.width), scaled(centre_y, work.height), median));
        }
    }
    Cells { side, cols, rows, planes, means }
}

impl Background {
    /// Fits the surfaces on the cells `use_cell` selects; a flat median where too few cells are left.
    fn fit(cells: &Cells, use_cell: &[bool]) -> Self {
        let surfaces = [0, 1, 2].map(|c| {
            if c >= cells.planes {
                return Surface::flat(0.0);
            }
            let points: Vec<(f64, f64, f64)> =
                cells.means.iter().zip(use_cell).filter(|(_, u)| **u).map(|(m, _)| (m.0, m.1, m.2[c])).collect();
            Surface::fit(&points).unwrap_or_else(|| {
                let mut values: Vec<f64> = cells.means.iter().map(|m| m.2[c]).collect();
                values.sort_by(f64::total_cmp);
                Surface::flat(values.get(values.len() / 2).copied().unwrap_or(128.0))
            })
        });
        Background { surfaces, planes: cells.planes }
    }

    /// The largest relative deviation of a cell's mean from the background, over the channels.
    fn cell_deviation(&self, m: &(f64, f64, [f64; 3])) -> f64 {
        (0..self.planes)
            .map(|c| {
                let b = self.surfaces[c].at(m.0, m.1);
                (m.2[c] - b).abs() / b.max(16.0)
            })
            .fold(0.0, f64::max)
    }

    /// Refits on the selected cells, twice dropping those far off the fit (robustly: three deviations' median).
    fn robust(cells: &Cells, mut selected: Vec<bool>) -> Self {
        let mut bg = Background::fit(cells, &selected);
        for _ in 0..3 {
            let mut devs: Vec<f64> =
                cells.means.iter().zip(&selected).filter(|(_, s)| **s).map(|(m, _)| bg.cell_deviation(m)).collect();
            if devs.len() < 6 {
                break;
            }
            devs.sort_by(f64::total_cmp);
            let tolerance = (3.0 * devs[devs.len() / 2]).max(0.03);
            for (m, s) in cells.means.iter().zip(selected.iter_mut()) {
                *s = *s && bg.cell_deviation(m) <= tolerance;
            }
            bg = Background::fit(cells, &selected);
        }
        bg
    }

    /// The background: fitted on the border cells, then on every cell near that fit, then refined.
    fn estimate(cells: &Cells) -> Self {
        let border: Vec<bool> = (0..cells.cols * cells.rows)
            .map(|i| {
                let (x, y) = (i % cells.cols, i / cells.cols);
                x == 0 || y == 0 || x + 1 == cells.cols || y + 1 == cells.rows
            })
            .collect();
        let mut bg = Background::robust(cells, border);
        for _ in 0..2 {
            let near: Vec<bool> = cells.means.iter().map(|m| bg.cell_deviation(m) <= 0.08).collect();
            bg = Background::robust(cells, near);
        }
        bg
    }

    /// Each plane's relative deviation from the background at each pixel.
    fn relative(&self, work: &Working) -> Vec<Vec<f32>> {
        let (w, h) = (work.width, work.height);
        let mut out = vec![vec![0f32; (w * h) as usize]; self.planes];
        let xs: Vec<f64> = (0..w).map(|x| scaled(f64::from(x), w)).collect();
        for y in 0..h {
            let sy = scaled(f64::from(y), h);
            let base = (y * w) as usize;
            for (c, plane) in out.iter_mut().enumerate() {
                // Along a row the surface is a quadratic in x.
                let s = self.surfaces[c].0;
                let (a, b, q) = (s[0] + s[2] * sy + s[5] * sy * sy, s[1] + s[4] * sy, s[3]);
                let row = &mut plane[base..base + w as usize];
                for ((d, v), sx) in row.iter_mut().zip(&work.planes[c][base..]).zip(&xs) {
                    let bg = (a + b * sx + q * sx * sx).max(16.0) as f32;
                    *d = (v - bg) / bg;
                }
            }
        }
        out
    }
}

/// Each pixel's signed relative deviation: that of the plane deviating most.
fn deviations(relative: &[Vec<f32>]) -> Vec<f32> {
    let mut out = relative.first().cloned().unwrap_or_default();
    for plane in relative.iter().skip(1) {
        for (best, d) in out.iter_mut().zip(plane) {
            if d.abs() > best.abs() {
                *best = *d;
            }
        }
    }
    out
}

/// Which deviations count: darker, lighter or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Polarity {
    Darker,
    Lighter,
    Both,
}

/// Otsu's level over a histogram.
fn otsu(histogram: &[u64; 256]) -> u8 {
    let total: u64 = histogram.iter().sum();
    let sum_all: f64 = histogram.iter().enumerate().map(|(i, n)| i as f64 * *n as f64).sum();
    let (mut weight_below, mut sum_below) = (0f64, 0f64);
    let (mut best, mut level) = (0f64, 0u8);
    for (i, n) in histogram.iter().enumerate() {
        weight_below += *n as f64;
        sum_below += i as f64 * *n as f64;
        let weight_above = total as f64 - weight_below;
        if weight_below == 0.0 || weight_above == 0.0 {
            continue;
        }
        let mean_below = sum_below / weight_below;
        let mean_above = (sum_all - sum_below) / weight_above;
        let between = weight_below * weight_above * (mean_below - mean_above).powi(2);
        if between > best {
            best = between;
            level = i as u8;
        }
    }
    level
}

fn quantise(d: f32) -> u8 {
    (d * QUANT).clamp(0.0, 255.0) as u8
}

/// Thresholds the deviations: Otsu's level on their magnitudes, kept between a noise floor measured on the
/// border and [`MAX_CONTRAST`]; then the polarity, from the pixels over that level.
/// The noise on the border ring (mostly background): the median magnitude of its deviations, quantised.
fn border_noise(dev: &[f32], w: u32, h: u32) -> usize {
    let ring = (w.min(h) / 50).max(1);
    let mut border = [0u64; 256];
    for y in 0..h {
        for x in 0..w {
            if x < ring || y < ring || x + ring >= w || y + ring >= h {
                border[quantise(dev[(y * w + x) as usize].abs()) as usize] += 1;
            }
        }
    }
    let half = border.iter().sum::<u64>() / 2;
    let mut seen = 0;
    border
        .iter()
        .position(|n| {
            seen += n;
            seen > half
        })
        .unwrap_or(0)
}

fn threshold(dev: &[f32], w: u32, h: u32) -> GrayImage {
    let mut histogram = [0u64; 256];
    for d in dev {
        histogram[quantise(d.abs()) as usize] += 1;
    }
    let median = border_noise(dev, w, h);
    let floor = (5 * median as u32).max(quantise(MIN_CONTRAST) as u32).min(250) as u8;
    let level = otsu(&histogram).clamp(floor, quantise(MAX_CONTRAST).max(floor));
    let (mut darker, mut lighter) = (0u64, 0u64);
    for d in dev {
        if quantise(d.abs()) >= level {
            if *d < 0.0 {
                darker += 1;
            } else {
                lighter += 1;
            }
        }
    }
    let strong = (darker + lighter).max(1) as f64;
    let polarity = if darker as f64 / strong >= POLARITY_SHARE {
        Polarity::Darker
    } else if lighter as f64 / strong >= POLARITY_SHARE {
        Polarity::Lighter
    } else {
        Polarity::Both
    };
    let mask = dev
        .iter()
        .map(|&d| {
            let d = match polarity {
                Polarity::Darker => -d,
                Polarity::Lighter => d,
                Polarity::Both => d.abs(),
            };
            if quantise(d) >= level { 255 } else { 0 }
        })
        .collect();
    GrayImage::from_raw(w, h, mask).unwrap_or_else(|| GrayImage::new(w, h))
}

/// Fills holes: background pixels enclosed by foreground (a label on a box, glare on a phone), that is those not
/// joined to the border through background (4-connected), found by a flood from the border.
fn fill_holes(mask: &mut GrayImage) {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let raw: &mut [u8] = mask;
    // 0: background not reached yet; 1: background reached from the border; 255: foreground.
    let mut stack = Vec::new();
    let reach = |i: usize, raw: &mut [u8], stack: &mut Vec<usize>| {
        if raw[i] == 0 {
            raw[i] = 1;
            stack.push(i);
        }
    };
    for x in 0..w {
        reach(x, raw, &mut stack);
        reach((h - 1) * w + x, raw, &mut stack);
    }
    for y in 0..h {
        reach(y * w, raw, &mut stack);
        reach(y * w + w - 1, raw, &mut stack);
    }
    while let Some(i) = stack.pop() {
        let (x, y) = (i % w, i / w);
        if x > 0 {
            reach(i - 1, raw, &mut stack);
        }
        if x + 1 < w {
            reach(i + 1, raw, &mut stack);
        }
        if y > 0 {
            reach(i - w, raw, &mut stack);
        }
        if y + 1 < h {
            reach(i + w, raw, &mut stack);
        }
    }
    for m in raw.iter_mut() {
        *m = if *m == 1 { 0 } else { 255 };
    }
}

/// Labels the connected components of the foreground (non-zero) pixels, 1, 2, ... in the order their first
/// pixels come in a raster scan (as `imageproc`'s `connected_components`, tested), by flooding each from its first
/// pixel: the background costs one look a pixel, where a union-find over every pixel costs an allocation and a
/// pass of its own.
fn components(mask: &GrayImage, connectivity: Connectivity) -> Vec<u32> {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let raw: &[u8] = mask;
    let mut labels = vec![0u32; w * h];
    let mut next = 0;
    let mut stack = Vec::new();
    let eight = connectivity == Connectivity::Eight;
    for start in 0..w * h {
        if raw[start] == 0 || labels[start] != 0 {
            continue;
        }
        next += 1;
        labels[start] = next;
        stack.push(start);
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            let (left, right, up, down) = (x > 0, x + 1 < w, y > 0, y + 1 < h);
            let mut visit = |j: usize| {
                if raw[j] != 0 && labels[j] == 0 {
                    labels[j] = next;
                    stack.push(j);
                }
            };
            if left {
                visit(i - 1);
            }
            if right {
                visit(i + 1);
            }
            if up {
                visit(i - w);
            }
            if down {
                visit(i + w);
            }
            if eight {
                if up && left {
                    visit(i - w - 1);
                }
                if up && right {
                    visit(i - w + 1);
                }
                if down && left {
                    visit(i + w - 1);
                }
                if down && right {
                    visit(i + w + 1);
                }
            }
        }
    }
    labels
}

/// A square (L-infinity) erosion or dilation of radius `r`, as `imageproc::morphology` defines them (pixels
/// outside the image count neither way), by counting the foreground in a sliding window: a row pass, then a
/// column pass. Eroded, a pixel stays only when its whole window is foreground; dilated, it is set when any is.
fn square_filter<const ERODE: bool>(mask: &mut GrayImage, r: usize) {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let keep = |count: u16, len: usize| -> u8 {
        let on = if ERODE { usize::from(count) == len } else { count > 0 };
        if on { 255 } else { 0 }
    };
    let raw: &mut [u8] = mask;
    // Rows: a sliding count of the foreground in the window.
    let mut row_out = vec![0u8; w];
    for row in raw.chunks_exact_mut(w) {
        let mut count: u16 = row[..r.min(w)].iter().map(|v| u16::from(*v != 0)).sum();
        for x in 0..w {
            if x + r < w {
                count += u16::from(row[x + r] != 0);
            }
            if x > r {
                count -= u16::from(row[x - r - 1] != 0);
            }
            row_out[x] = keep(count, (x + r + 1).min(w) - x.saturating_sub(r));
        }
        row.copy_from_slice(&row_out);
    }
    // Columns: a running count per column of the rows in the window.
    let mut counts = vec![0u16; w];
    let mut out = vec![0u8; w * h];
    let add = |counts: &mut [u16], row: &[u8]| counts.iter_mut().zip(row).for_each(|(c, v)| *c += u16::from(*v != 0));
    let remove =
        |counts: &mut [u16], row: &[u8]| counts.iter_mut().zip(row).for_each(|(c, v)| *c -= u16::from(*v != 0));
    for y in 0..r.min(h) {
        add(&mut counts, &raw[y * w..(y + 1) * w]);
    }
    for y in 0..h {
        if y + r < h {
            add(&mut counts, &raw[(y + r) * w..(y + r + 1) * w]);
        }
        if y > r {
            remove(&mut counts, &raw[(y - r - 1) * w..(y - r) * w]);
        }
        let len = (y + r + 1).min(h) - y.saturating_sub(r);
        for (o, c) in out[y * w..(y + 1) * w].iter_mut().zip(&counts) {
            *o = keep(*c, len);
        }
    }
    raw.copy_from_slice(&out);
}

/// An opening (erosion, then dilation) of radius `r`: removes what is thinner than the window.
fn open(mask: &mut GrayImage, r: usize) {
    square_filter::<true>(mask, r);
    square_filter::<false>(mask, r);
}

/// A closing (dilation, then erosion) of radius `r`: bridges gaps narrower than the window.
fn close(mask: &mut GrayImage, r: usize) {
    square_filter::<false>(mask, r);
    square_filter::<true>(mask, r);
}

/// A chamfer (3-4) distance transform of the foreground: each foreground pixel's distance to the background, in
/// thirds of a pixel.
fn chamfer(mask: &GrayImage) -> Vec<u16> {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    let far = u16::MAX / 2;
    let mut d: Vec<u16> = mask.iter().map(|&m| if m == 0 { 0 } else { far }).collect();
    let at = |d: &Vec<u16>, x: isize, y: isize| -> u16 {
        if x < 0 || y < 0 || x >= w as isize || y >= h as isize { 0 } else { d[y as usize * w + x as usize] }
    };
    for y in 0..h as isize {
        for x in 0..w as isize {
            let i = y as usize * w + x as usize;
            if d[i] == 0 {
                continue;
            }
            let v = d[i]
                .min(at(&d, x - 1, y) + 3)
                .min(at(&d, x, y - 1) + 3)
                .min(at(&d, x - 1, y - 1) + 4)
                .min(at(&d, x + 1, y - 1) + 4);
            d[i] = v;
        }
    }
    for y in (0..h as isize).rev() {
        for x in (0..w as isize).rev() {
            let i = y as usize * w + x as usize;
            if d[i] == 0 {
                continue;
            }
            let v = d[i]
                .min(at(&d, x + 1, y) + 3)
                .min(at(&d, x, y + 1) + 3)
                .min(at(&d, x + 1, y + 1) + 4)
                .min(at(&d, x - 1, y + 1) + 4);
            d[i] = v;
        }
    }
    d
}

/// Splits components joined by a narrow neck (touching objects): at the level that finds most, the cores of the
/// distance transform whose neck is narrow against their own radius become seeds, and the component's pixels
/// are grown back to the nearest seed. Answers the new label image and the number of labels.
fn split_touching(mask: &GrayImage, dist: &[u16], labels: Vec<u32>, count: u32) -> (Vec<u32>, u32) {
    let (w, h) = mask.dimensions();
    let mut peak = vec![0u16; count as usize + 1];
    for (l, d) in labels.iter().zip(dist) {
        let p = &mut peak[*l as usize];
        *p = (*p).max(*d);
    }
    // Per component: the most significant cores found at any level (their seeds, as core labels of that level).
    let mut best: Vec<(usize, Vec<u32>)> = vec![(0, Vec::new()); count as usize + 1];
    let mut best_cores: Vec<Option<Vec<u32>>> = vec![None; CORE_LEVELS.len()];
    for (level_index, share) in CORE_LEVELS.iter().enumerate() {
        let core_mask: Vec<u8> = labels
            .iter()
            .zip(dist)
            .map(|(l, d)| {
                let p = peak[*l as usize];
                if *l != 0 && p >= 3 * MIN_CORE_RADIUS && f32::from(*d) > share * f32::from(p) { 255 } else { 0 }
            })
            .collect();
        let core_mask = GrayImage::from_raw(w, h, core_mask).unwrap_or_else(|| GrayImage::new(w, h));
        let cores = components(&core_mask, Connectivity::Eight);
        let core_count = cores.iter().copied().max().unwrap_or(0) as usize;
        let mut core_peak = vec![0u16; core_count + 1];
        let mut core_parent = vec![0u32; core_count + 1];
        for ((c, d), l) in cores.iter().zip(dist).zip(&labels) {
            if *c != 0 {
                core_peak[*c as usize] = core_peak[*c as usize].max(*d);
                core_parent[*c as usize] = *l;
            }
        }
        let mut significant: Vec<Vec<u32>> = vec![Vec::new(); count as usize + 1];
        for c in 1..=core_count {
            let parent = core_parent[c] as usize;
            let neck = share * f32::from(peak[parent]);
            if core_peak[c] >= 3 * MIN_CORE_RADIUS && neck <= NECK_SHARE * f32::from(core_peak[c]) {
                significant[parent].push(c as u32);
            }
        }
        let mut used = false;
        for (parent, cores_of) in significant.into_iter().enumerate() {
            if cores_of.len() >= 2 && cores_of.len() > best[parent].0 {
                best[parent] = (cores_of.len(), cores_of.iter().map(|c| *c | ((level_index as u32) << 28)).collect());
                used = true;
            }
        }
        if used {
            best_cores[level_index] = Some(cores);
        }
    }
    if best.iter().all(|(n, _)| *n < 2) {
        return (labels, count);
    }
    // Seeds: a new label per significant core of the chosen level; pixels of split components start unassigned.
    let mut out = labels.clone();
    let mut next = count;
    let mut seed_label = std::collections::HashMap::new();
    for (_, seeds) in best.iter().filter(|(n, _)| *n >= 2) {
        for s in seeds {
            next += 1;
            seed_label.insert(*s, next);
        }
    }
    let split: Vec<bool> = best.iter().map(|(n, _)| *n >= 2).collect();
    let mut queue = VecDeque::new();
    for (i, l) in labels.iter().enumerate() {
        if split[*l as usize] {
            out[i] = 0;
            for (level_index, cores) in best_cores.iter().enumerate() {
                if let Some(cores) = cores
                    && let Some(new) = seed_label.get(&(cores[i] | ((level_index as u32) << 28)))
                    && cores[i] != 0
                {
                    out[i] = *new;
                    queue.push_back(i);
                    break;
                }
            }
        }
    }
    grow(&mut out, &labels, queue, w, h);
    (out, next)
}

/// Splits components with no neck along seams: lines across them where the relative deviation steps (a change
/// of colour, or of brightness, between two items sharing a straight edge; the shaded rims of two boxes). The
/// component's inside (its pixels at least [`SEAM_MARGIN`] from the outline), less the seam pixels, falls into
/// parts; when at least two parts each hold [`SEAM_PART_SHARE`] of the component and reach its outline (a label
/// or an embossed middle is enclosed, so it is no part), they become seeds and the component is grown back to
/// them. Answers the new label image and the number of labels.
fn split_seams(
    relative: &[Vec<f32>],
    dist: &[u16],
    noise: f32,
    (w, h): (u32, u32),
    labels: Vec<u32>,
    count: u32,
) -> (Vec<u32>, u32) {
    let (wu, hu) = (w as usize, h as usize);
    let mut area = vec![0u64; count as usize + 1];
    let mut peak = vec![0u16; count as usize + 1];
    for (l, d) in labels.iter().zip(dist) {
        area[*l as usize] += 1;
        peak[*l as usize] = peak[*l as usize].max(*d);
    }
    let looked_into: Vec<bool> = area
        .iter()
        .zip(&peak)
        .enumerate()
        .map(|(l, (a, p))| l != 0 && *a >= SEAM_MIN_AREA && *p > 2 * SEAM_MARGIN)
        .collect();
    if !looked_into.iter().any(|l| *l) {
        return (labels, count);
    }
    let step = SEAM_STEP.max(SEAM_NOISE * noise);
    let looked_at = |i: usize| {
        let (x, y) = (i % wu, i / wu);
        looked_into[labels[i] as usize] && dist[i] >= SEAM_MARGIN && x > 0 && y > 0 && x + 1 < wu && y + 1 < hu
    };
    let seam: Vec<bool> = (0..wu * hu)
        .map(|i| {
            looked_at(i)
                && relative.iter().any(|plane| {
                    (plane[i + 1] - plane[i - 1]).abs() >= step || (plane[i + wu] - plane[i - wu]).abs() >= step
                })
        })
        .collect();
    // The seam widened by a pixel, so that noise leaves no gap in it for the parts to join through.
    let inside: Vec<u8> = (0..wu * hu)
        .map(|i| {
            if !looked_at(i) || seam[i] || seam[i - 1] || seam[i + 1] || seam[i - wu] || seam[i + wu] { 0 } else { 255 }
        })
        .collect();
    let inside = GrayImage::from_raw(w, h, inside).unwrap_or_else(|| GrayImage::new(w, h));
    let parts = components(&inside, Connectivity::Four);
    let part_count = parts.iter().copied().max().unwrap_or(0) as usize;
    // Per part: its component, its area and how close it comes to the outline.
    let mut part_of = vec![0u32; part_count + 1];
    let mut part_area = vec![0u64; part_count + 1];
    let mut part_nearest = vec![u16::MAX; part_count + 1];
    for ((p, l), d) in parts.iter().zip(&labels).zip(dist) {
        if *p != 0 {
            let p = *p as usize;
            part_of[p] = *l;
            part_area[p] += 1;
            part_nearest[p] = part_nearest[p].min(*d);
        }
    }
    let mut items_of = vec![Vec::new(); count as usize + 1];
    for p in 1..=part_count {
        let l = part_of[p] as usize;
        let reaches_outline = part_nearest[p] <= (peak[l] / 4).max(3 * SEAM_MARGIN / 2);
        if reaches_outline && part_area[p] as f64 >= SEAM_PART_SHARE * area[l] as f64 {
            items_of[l].push(p);
        }
    }
    if items_of.iter().all(|parts| parts.len() < 2) {
        return (labels, count);
    }
    let mut new_label = vec![0u32; part_count + 1];
    let mut next = count;
    for parts in items_of.iter().filter(|parts| parts.len() >= 2) {
        for p in parts {
            next += 1;
            new_label[*p] = next;
        }
    }
    let split: Vec<bool> = items_of.iter().map(|parts| parts.len() >= 2).collect();
    let mut out = labels.clone();
    let mut queue = VecDeque::new();
    for (i, l) in labels.iter().enumerate() {
        if split[*l as usize] {
            out[i] = new_label[parts[i] as usize];
            if out[i] != 0 {
                queue.push_back(i);
            }
        }
    }
    grow(&mut out, &labels, queue, w, h);
    (out, next)
}

/// Grows the labels of `out` from the pixels in `queue` over the unassigned (0) pixels of the same component of
/// `labels`, 8-connected, breadth first (each pixel to its nearest seed).
fn grow(out: &mut [u32], labels: &[u32], mut queue: VecDeque<usize>, w: u32, h: u32) {
    let (w, h) = (w as isize, h as isize);
    while let Some(i) = queue.pop_front() {
        let (x, y) = ((i as isize) % w, (i as isize) / w);
        for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)] {
            let (nx, ny) = (x + dx, y + dy);
            if nx < 0 || ny < 0 || nx >= w || ny >= h {
                continue;
            }
            let j = (ny * w + nx) as usize;
            if out[j] == 0 && labels[j] == labels[i] {
                out[j] = out[i];
                queue.push_back(j);
            }
        }
    }
}

/// The statistics of one label.
#[derive(Debug, Clone, Copy)]
struct Stats {
    min_x: u32,
    min_y: u32,
    max_x: u32,
    max_y: u32,
    area: u64,
    /// Sums of the pixels' x and y, and of x², y² and x y: the region's second moments.
    sums: [u64; 2],
    squares: [u64; 3],
}

impl Stats {
    /// How the region's pixels spread, in the working copy's pixels.
    fn spread(&self) -> Option<Spread> {
        let f = |v: u64| v as f64;
        Spread::from_moments(
            f(self.area),
            [f(self.sums[0]), f(self.sums[1])],
            [f(self.squares[0]), f(self.squares[1]), f(self.squares[2])],
        )
    }
}

fn stats(labels: &[u32], count: u32, w: u32) -> Vec<Stats> {
    let empty = Stats { min_x: u32::MAX, min_y: u32::MAX, max_x: 0, max_y: 0, area: 0, sums: [0; 2], squares: [0; 3] };
    let mut out = vec![empty; count as usize + 1];
    for (i, l) in labels.iter().enumerate() {
        if *l == 0 {
            continue;
        }
        let (x, y) = (i as u32 % w, i as u32 / w);
        let s = &mut out[*l as usize];
        s.min_x = s.min_x.min(x);
        s.min_y = s.min_y.min(y);
        s.max_x = s.max_x.max(x);
        s.max_y = s.max_y.max(y);
        s.area += 1;
        let (x, y) = (u64::from(x), u64::from(y));
        s.sums[0] += x;
        s.sums[1] += y;
        s.squares[0] += x * x;
        s.squares[1] += y * y;
        s.squares[2] += x * y;
    }
    out
}

/// Whether a region is background by its place and size: most of the image, or a run along a border it touches.
fn is_background(s: &Stats, w: u32, h: u32) -> bool {
    let area = f64::from(w) * f64::from(h);
    if s.area as f64 > MAX_AREA_SHARE * area {
        return true;
    }
    let (span_x, span_y) = (f64::from(s.max_x - s.min_x + 1), f64::from(s.max_y - s.min_y + 1));
    let touches_top_or_bottom = s.min_y == 0 || s.max_y + 1 == h;
    let touches_left_or_right = s.min_x == 0 || s.max_x + 1 == w;
    if (touches_top_or_bottom && span_x >= BORDER_RUN_SHARE * f64::from(w))
        || (touches_left_or_right && span_y >= BORDER_RUN_SHARE * f64::from(h))
    {
        return true;
    }
    // A sliver: thin across the border it touches against the photo, and either long along it or very thin.
    let sliver = |across: f64, along: f64, side: u32| {
        let across_share = across / f64::from(side);
        across_share <= SLIVER_THIN_SHARE || (across <= SLIVER_ASPECT * along && across_share <= SLIVER_DEPTH_SHARE)
    };
    if (touches_top_or_bottom && sliver(span_y, span_x, h)) || (touches_left_or_right && sliver(span_x, span_y, w)) {
        return true;
    }
    touches_top_or_bottom && touches_left_or_right && (s.area as f64) < CORNER_FILL * span_x * span_y
}

/// The typical region's area: the area-weighted median (half of the regions' area is in regions at least this
/// large), so that many specks do not make a speck typical.
fn typical_area(regions: &[&Stats]) -> u64 {
    let mut areas: Vec<u64> = regions.iter().map(|s| s.area).collect();
    areas.sort_unstable();
    let half = areas.iter().sum::<u64>().div_ceil(2);
    let mut seen = 0;
    areas
        .iter()
        .find(|a| {
            seen += **a;
            seen >= half
        })
        .copied()
        .unwrap_or(0)
}

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
    if clear.iter().filter(|c| **c).count() >= 12 {
        background = Background::robust(&grid, clear);
        relative = background.relative(work);
        dev = deviations(&relative);
        mask = threshold(&dev, w, h);
    }
    // Holes are filled before the opening too: a small washer is a ring of a pixel or two in the working copy,
    // which the opening would wipe out.
    fill_holes(&mut mask);
    open(&mut mask, 1);
    close(&mut mask, 2);
    fill_holes(&mut mask);
    let labels = components(&mask, Connectivity::Eight);
    let count = labels.iter().copied().max().unwrap_or(0);
    let dist = chamfer(&mask);
    let (labels, count) = split_touching(&mask, &dist, labels, count);
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

#[cfg(test)]
mod morphology_tests {
    use super::*;
    use image::Luma;
    use imageproc::distance_transform::Norm;

    /// A mask of scattered blobs and single pixels, touching the borders.
    fn speckled(w: u32, h: u32) -> GrayImage {
        GrayImage::from_fn(w, h, |x, y| {
            let v = (x * 7919 + y * 104_729 + x * y * 31) % 97;
            Luma([if v < 30 || (x / 5 + y / 7) % 3 == 0 { 255 } else { 0 }])
        })
    }

    #[test]
    fn the_components_are_imageprocs() {
        for (w, h) in [(40, 30), (17, 64), (64, 17), (100, 3)] {
            let mask = speckled(w, h);
            for connectivity in [Connectivity::Four, Connectivity::Eight] {
                let theirs =
                    imageproc::region_labelling::connected_components(&mask, connectivity, Luma([0u8])).into_raw();
                assert_eq!(components(&mask, connectivity), theirs, "{w}x{h} {connectivity:?}");
            }
        }
    }

    #[test]
    fn the_square_opening_and_closing_are_imageprocs() {
        // (Not under 3 pixels: imageproc caps its distances at the width plus the height, so a 1 x 1 foreground is
        // eroded away by a radius of 2. The working copy is never that small.)
        for (w, h) in [(3, 2), (2, 5), (40, 30), (17, 64)] {
            for r in [1u8, 2] {
                let mask = speckled(w, h);
                let (mut ours, mut theirs) = (mask.clone(), mask.clone());
                open(&mut ours, usize::from(r));
                imageproc::morphology::open_mut(&mut theirs, Norm::LInf, r);
                assert_eq!(ours, theirs, "open {w}x{h} r {r}");
                let (mut ours, mut theirs) = (mask.clone(), mask);
                close(&mut ours, usize::from(r));
                imageproc::morphology::close_mut(&mut theirs, Norm::LInf, r);
                assert_eq!(ours, theirs, "close {w}x{h} r {r}");
            }
        }
    }
}
