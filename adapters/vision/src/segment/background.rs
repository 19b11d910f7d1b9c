//! The background's lighting, a quadratic surface per channel fitted to cell medians, and each pixel's relative
//! deviation from it.

use super::*;

/// A quadratic surface `a0 + a1 x + a2 y + a3 x² + a4 xy + a5 y²` over coordinates scaled to -1..1.
#[derive(Debug, Clone, Copy)]
pub(super) struct Surface(pub(super) [f64; 6]);

pub(super) fn basis(x: f64, y: f64) -> [f64; 6] {
    [1.0, x, y, x * x, x * y, y * y]
}

impl Surface {
    pub(super) fn flat(level: f64) -> Self {
        Surface([level, 0.0, 0.0, 0.0, 0.0, 0.0])
    }

    /// Least squares over `points` (x, y, value); `None` when they do not determine a surface.
    pub(super) fn fit(points: &[(f64, f64, f64)]) -> Option<Self> {
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

    /// The surface along the row at `y`: a quadratic `a + b x + q x²`, as `(a, b, q)`.
    pub(super) fn along_row(&self, y: f64) -> (f64, f64, f64) {
        let s = self.0;
        (s[0] + s[2] * y + s[5] * y * y, s[1] + s[4] * y, s[3])
    }

    pub(super) fn at(&self, x: f64, y: f64) -> f64 {
        basis(x, y).iter().zip(self.0).map(|(b, c)| b * c).sum()
    }
}

/// The background's lighting, one surface per plane.
pub(super) struct Background {
    /// The first `planes` are fitted.
    pub(super) surfaces: [Surface; 3],
    pub(super) planes: usize,
}

/// The photo cut into cells, each with its median colour, to fit the background on.
pub(super) struct Cells {
    pub(super) side: u32,
    pub(super) cols: u32,
    pub(super) rows: u32,
    /// How many planes the photo has (1 or 3).
    pub(super) planes: usize,
    /// Per cell: centre (scaled to -1..1) and median of each plane (the first `planes`). The median, not the mean:
    /// a cell of a tray tiled with small parts is mostly background, and its median is the background's.
    pub(super) means: Vec<(f64, f64, [f64; 3])>,
}

pub(super) fn scaled(v: f64, len: u32) -> f64 {
    2.0 * v / f64::from(len.max(2) - 1) - 1.0
}

pub(super) fn cells(work: &Working) -> Cells {
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
    pub(super) fn fit(cells: &Cells, use_cell: &[bool]) -> Self {
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
    pub(super) fn cell_deviation(&self, m: &(f64, f64, [f64; 3])) -> f64 {
        (0..self.planes)
            .map(|c| {
                let b = self.surfaces[c].at(m.0, m.1);
                (m.2[c] - b).abs() / b.max(16.0)
            })
            .fold(0.0, f64::max)
    }

    /// Refits on the selected cells, twice dropping those far off the fit (robustly: three deviations' median).
    pub(super) fn robust(cells: &Cells, mut selected: Vec<bool>) -> Self {
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
    pub(super) fn estimate(cells: &Cells) -> Self {
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
    pub(super) fn relative(&self, work: &Working) -> Vec<Vec<f32>> {
        let (w, h) = (work.width, work.height);
        let mut out = vec![vec![0f32; (w * h) as usize]; self.planes];
        let xs: Vec<f64> = (0..w).map(|x| scaled(f64::from(x), w)).collect();
        for y in 0..h {
            let sy = scaled(f64::from(y), h);
            let base = (y * w) as usize;
            for (c, plane) in out.iter_mut().enumerate() {
                let (a, b, q) = self.surfaces[c].along_row(sy);
                let row = &mut plane[base..base + w as usize];
                for ((d, v), sx) in row.iter_mut().zip(&work.planes[c][base..]).zip(&xs) {
                    let bg = (a + b * sx + q * sx * sx).max(16.0) as f32;
                    *d = (v - bg) / bg;
                }
            }
        }
        out
    }

    /// Each block's texture (its standard deviation) relative to the background's level there, when the working
    /// copy has one: the relief of a part of the cloth's own brightness stands out of a plain or finely textured
    /// cloth; uneven light scales both alike.
    pub(super) fn relative_texture(&self, work: &Working) -> Option<Vec<f32>> {
        let texture = work.texture.as_ref()?;
        let (w, h) = (work.width, work.height);
        let mut out = vec![0f32; texture.len()];
        for y in 0..h {
            let sy = scaled(f64::from(y), h);
            // The level of the luma the texture is of: a colour copy's three surfaces weighed as luma is.
            let (a, b, q) = match self.planes {
                3 => {
                    let [r, g, b] = [0, 1, 2].map(|c| self.surfaces[c].along_row(sy));
                    let luma = |f: fn((f64, f64, f64)) -> f64| (77.0 * f(r) + 150.0 * f(g) + 29.0 * f(b)) / 256.0;
                    (luma(|t| t.0), luma(|t| t.1), luma(|t| t.2))
                }
                _ => self.surfaces[0].along_row(sy),
            };
            let base = (y * w) as usize;
            for (x, (o, t)) in out[base..base + w as usize].iter_mut().zip(&texture[base..]).enumerate() {
                let sx = scaled(x as f64, w);
                *o = t / (a + b * sx + q * sx * sx).max(16.0) as f32;
            }
        }
        Some(out)
    }
}

/// Each pixel's signed relative deviation: that of the plane deviating most.
pub(super) fn deviations(relative: &[Vec<f32>]) -> Vec<f32> {
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
