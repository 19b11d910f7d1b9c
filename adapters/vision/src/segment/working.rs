//! The working copy: a photo averaged over blocks into at most `WORKING_SIDE` pixels a side, as its rows arrive.

use super::*;

/// The working copy: channel planes of the photo averaged over `k x k` blocks.
pub(crate) struct Working {
    pub(super) width: u32,
    pub(super) height: u32,
    /// The block side: one working pixel is `k x k` photo pixels.
    pub(super) k: u32,
    /// Red, green and blue; or luma alone (a grey image, a JPEG decoded to its luma).
    pub(super) planes: Vec<Vec<f32>>,
    /// Of a working copy of blocks larger than a pixel: each block's standard deviation of luma, the texture inside
    /// it (the relief of a coin, the print on a box) that averaging the block wipes out of `planes`.
    pub(super) texture: Option<Vec<f32>>,
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
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) k: u32,
    /// The shrunk size.
    pub(super) ww: u32,
    pub(super) wh: u32,
    /// The block's sides, `k` but no more than the photo's.
    pub(super) k_x: usize,
    pub(super) k_y: usize,
    /// How many planes are summed: set by the first row (1 for grey, 3 for colour), 0 before it.
    pub(super) planes: usize,
    /// Per block, the sums of each plane (red, green and blue; or grey).
    pub(super) sums: Vec<u32>,
    /// Per block, the sum of its luma samples' squares (for its texture); kept only for the working copy
    /// ([`Shrinker::working`]): a thumbnail or a picture for a model has no use for it.
    pub(super) squares: Option<Vec<u32>>,
}

impl Shrinker {
    /// Blocks of `k x k` pixels (1 keeps every pixel).
    pub(crate) fn new(width: u32, height: u32, k: u32) -> Self {
        let k = k.max(1);
        let (ww, wh) = ((width / k).max(1), (height / k).max(1));
        let (k_x, k_y) = (k.min(width.max(1)) as usize, k.min(height.max(1)) as usize);
        Shrinker { width, height, k, ww, wh, k_x, k_y, planes: 0, sums: Vec::new(), squares: None }
    }

    /// The blocks of the working copy: the longest side at most [`WORKING_SIDE`], each block's texture kept too.
    pub(crate) fn working(width: u32, height: u32) -> Self {
        let mut shrinker = Self::new(width, height, width.max(height).div_ceil(WORKING_SIDE).max(1));
        shrinker.squares = Some(Vec::new());
        shrinker
    }

    /// The photo's size in pixels.
    pub(crate) fn photo_size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// The planes summed (1 before any row).
    pub(super) fn plane_count(&self) -> usize {
        self.planes.max(1)
    }

    /// The sums, zero before any row.
    pub(super) fn all_sums(&self) -> Vec<u32> {
        let n = self.ww as usize * self.wh as usize * self.plane_count();
        if self.sums.len() == n { self.sums.clone() } else { vec![0; n] }
    }

    /// The working copy: each block's mean.
    pub(crate) fn into_working(self) -> Working {
        let n = self.ww as usize * self.wh as usize;
        let scale = 1.0 / (self.k_x * self.k_y) as f32;
        let count = self.plane_count();
        let sums = self.all_sums();
        let planes: Vec<Vec<f32>> =
            (0..count).map(|c| (0..n).map(|i| sums[i * count + c] as f32 * scale).collect::<Vec<f32>>()).collect();
        let squares = self.squares.as_ref().filter(|q| q.len() == n && self.k_x * self.k_y > 1);
        let texture = squares.map(|squares| {
            let mean = |i: usize| match &planes[..] {
                [r, g, b] => (77.0 * r[i] + 150.0 * g[i] + 29.0 * b[i]) / 256.0,
                _ => planes[0][i],
            };
            squares.iter().enumerate().map(|(i, sq)| (*sq as f32 * scale - mean(i).powi(2)).max(0.0).sqrt()).collect()
        });
        Working { width: self.ww, height: self.wh, k: self.k, planes, texture }
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
    pub(super) fn add<const N: usize, const P: usize>(&mut self, y: usize, row: &[u8]) {
        let base = (y / self.k_y) * self.ww as usize * P;
        let used = self.ww as usize * self.k_x * N;
        let Some(row) = row.get(..used) else { return };
        let Some(sums) = self.sums.get_mut(base..base + self.ww as usize * P) else { return };
        let at = (y / self.k_y) * self.ww as usize;
        let squares = self.squares.as_mut().and_then(|q| q.get_mut(at..at + self.ww as usize));
        match (N, squares) {
            (1, Some(squares)) => match self.k_x {
                // The block sides of a working copy of photos up to 48 megapixels, each with its width known to the
                // compiler, which then sums a block without a loop.
                2 => add_grey_blocks::<2>(row, sums, squares),
                3 => add_grey_blocks::<3>(row, sums, squares),
                4 => add_grey_blocks::<4>(row, sums, squares),
                5 => add_grey_blocks::<5>(row, sums, squares),
                6 => add_grey_blocks::<6>(row, sums, squares),
                7 => add_grey_blocks::<7>(row, sums, squares),
                8 => add_grey_blocks::<8>(row, sums, squares),
                k => {
                    for ((block, sum), square) in row.chunks_exact(k).zip(sums.iter_mut()).zip(squares) {
                        let (s, q) = block
                            .iter()
                            .fold((0u32, 0u32), |(s, q), &v| (s + u32::from(v), q + u32::from(v) * u32::from(v)));
                        *sum += s;
                        *square += q;
                    }
                }
            },
            (1, None) => {
                for (block, sum) in row.chunks_exact(self.k_x).zip(sums.iter_mut()) {
                    *sum += block.iter().map(|&v| u32::from(v)).sum::<u32>();
                }
            }
            (_, mut squares) => {
                for (b, (block, sum)) in row.chunks_exact(self.k_x * N).zip(sums.chunks_exact_mut(P)).enumerate() {
                    let mut block_sum = [0u32; P];
                    let mut square = 0u32;
                    for px in block.chunks_exact(N) {
                        for (c, s) in block_sum.iter_mut().enumerate() {
                            *s += u32::from(px[c]);
                        }
                        if squares.is_some() {
                            square += u32::from(if P == 3 { luma(px) } else { px[0] }).pow(2);
                        }
                    }
                    if let Some(q) = squares.as_mut().and_then(|q| q.get_mut(b)) {
                        *q += square;
                    }
                    for (s, b) in sum.iter_mut().zip(block_sum) {
                        *s += b;
                    }
                }
            }
        }
    }
}

/// Adds a grey row's blocks of `K` samples to their sums and sums of squares.
fn add_grey_blocks<const K: usize>(row: &[u8], sums: &mut [u32], squares: &mut [u32]) {
    for ((block, sum), square) in row.chunks_exact(K).zip(sums.iter_mut()).zip(squares) {
        let block: &[u8; K] = block.try_into().expect("chunks of K");
        let mut s = 0u32;
        let mut q = 0u32;
        for &v in block {
            s += u32::from(v);
            q += u32::from(v) * u32::from(v);
        }
        *sum += s;
        *square += q;
    }
}

impl Rows for Shrinker {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        let y = y as usize;
        if self.planes == 0 {
            self.planes = if channels >= 3 { 3 } else { 1 };
            self.sums = vec![0; self.ww as usize * self.wh as usize * self.planes];
            if let Some(squares) = &mut self.squares {
                *squares = vec![0; self.ww as usize * self.wh as usize];
            }
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
pub(super) fn shrink(raw: &[u8], w: u32, h: u32, channels: usize) -> Working {
    let mut shrinker = Shrinker::working(w, h);
    for (y, row) in raw.chunks_exact(w.max(1) as usize * channels).enumerate() {
        shrinker.add_row(y as u32, row, channels);
    }
    shrinker.into_working()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grey_working_copy_holds_each_blocks_mean_and_deviation_whatever_the_block_side() {
        // Block sides 1 to 10: the ones summed by a width known to the compiler (2 to 8) and the others.
        for k in 1..=10u32 {
            // Wide enough for blocks of k (a remainder under k at the right and bottom edges, left out).
            let (w, h) = (WORKING_SIDE * k - k / 2, 3 * k + 1);
            let raw: Vec<u8> = (0..w * h).map(|i| ((i * 7919 + (i / w) * 31) % 251) as u8).collect();
            let work = shrink(&raw, w, h, 1);
            assert_eq!((work.k, work.width, work.height), (k, w / k, h / k), "k {k}");
            let n = (k * k) as f32;
            for (bx, by) in [(0, 0), (work.width - 1, 0), (work.width / 2, work.height - 1)] {
                let block: Vec<f32> =
                    (0..k * k).map(|j| f32::from(raw[((by * k + j / k) * w + bx * k + j % k) as usize])).collect();
                let mean = block.iter().sum::<f32>() / n;
                let deviation = (block.iter().map(|v| v * v).sum::<f32>() / n - mean * mean).max(0.0).sqrt();
                let i = (by * work.width + bx) as usize;
                assert!((work.planes[0][i] - mean).abs() < 1e-3, "k {k} mean at {bx},{by}");
                match &work.texture {
                    Some(texture) => assert!((texture[i] - deviation).abs() < 1e-2, "k {k} texture at {bx},{by}"),
                    None => assert_eq!(k, 1, "a texture for blocks of more than a pixel"),
                }
            }
        }
    }
}
