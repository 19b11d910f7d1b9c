//! The threshold: the objects' polarity, Otsu's level kept between a noise floor and a contrast cap.

use super::*;

/// Which deviations count: darker, lighter or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Polarity {
    Darker,
    Lighter,
    Both,
}

/// Otsu's level over a histogram.
pub(super) fn otsu(histogram: &[u64; 256]) -> u8 {
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

pub(super) fn quantise(d: f32) -> u8 {
    (d * QUANT).clamp(0.0, 255.0) as u8
}

/// The noise on the border ring (mostly background): the median magnitude of its deviations, quantised.
pub(super) fn border_noise(dev: &[f32], w: u32, h: u32) -> usize {
    let ring = (w.min(h) / 50).max(1);
    let mut border = [0u64; 256];
    let (wu, ring_u) = (w as usize, ring as usize);
    for (y, row) in dev.chunks_exact(wu.max(1)).take(h as usize).enumerate() {
        // A row of the top or bottom band whole; of the others, only their two ends (the ring's sides).
        let (left, right) = if y < ring_u || y + ring_u >= h as usize || 2 * ring_u >= wu {
            (row, &row[..0])
        } else {
            (&row[..ring_u], &row[wu - ring_u..])
        };
        for d in left.iter().chain(right) {
            border[quantise(d.abs()) as usize] += 1;
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

/// Thresholds the deviations: Otsu's level on their magnitudes, kept between a noise floor measured on the
/// border and [`MAX_CONTRAST`]; then the polarity, from the pixels over that level. Where Otsu's level is at the
/// floor or under it (faint parts: the floor, not the photo, decides), a part is found only where it stands out
/// most, in pieces; its weaker pixels next to those pieces join them ([`grow_into_weak`]: down to
/// [`WEAK_SHARE`] of the level, never under [`WEAK_NOISE`] times the noise, within [`WEAK_STEPS`] pixels).
pub(super) fn threshold(dev: &[f32], w: u32, h: u32) -> GrayImage {
    let mut histogram = [0u64; 256];
    for d in dev {
        histogram[quantise(d.abs()) as usize] += 1;
    }
    let median = border_noise(dev, w, h);
    let floor = (5 * median as u32).max(quantise(MIN_CONTRAST) as u32).min(250) as u8;
    let otsu = otsu(&histogram);
    let level = otsu.clamp(floor, quantise(MAX_CONTRAST).max(floor));
    let weak = if otsu <= floor {
        ((WEAK_SHARE * f32::from(level)) as u32)
            .max(WEAK_NOISE * median as u32)
            .max(u32::from(quantise(MIN_CONTRAST)))
            .min(u32::from(level)) as u8
    } else {
        level
    };
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
    let mut mask: Vec<u8> = dev
        .iter()
        .map(|&d| {
            let d = match polarity {
                Polarity::Darker => -d,
                Polarity::Lighter => d,
                Polarity::Both => d.abs(),
            };
            strength(quantise(d), level, weak)
        })
        .collect();
    grow_into_weak(&mut mask, w as usize, WEAK_STEPS);
    GrayImage::from_raw(w, h, mask).unwrap_or_else(|| GrayImage::new(w, h))
}

/// A faint part's weaker pixels join it down to this share of the threshold...
const WEAK_SHARE: f32 = 0.5;
/// ...and no lower than this many times the border's median deviation (the noise)...
const WEAK_NOISE: u32 = 2;
/// ...within this many pixels of its pixels over the threshold: enough to close a part found in pieces (a
/// coin of the cloth's own shade, seen only at its darker relief), too few to creep along the lighting.
const WEAK_STEPS: usize = 2;

/// A pixel of value `q` against the threshold `level` and the weaker level `weak`: 255 over the threshold, 1
/// weak (over `weak` only), 0 neither.
fn strength(q: u8, level: u8, weak: u8) -> u8 {
    if q >= level {
        255
    } else if q >= weak {
        1
    } else {
        0
    }
}

/// A hysteresis threshold bounded in reach: the weak pixels (1) of `mask` joined to a pixel over the threshold
/// (255) through at most `steps` weak pixels, 8-connected, join it (255); every other weak pixel is background
/// (0). Unbounded, the weak pixels would creep along a gradient of lighting.
pub(super) fn grow_into_weak(mask: &mut [u8], w: usize, steps: usize) {
    let mut weak: Vec<u32> = (0..mask.len() as u32).filter(|i| mask[*i as usize] == 1).collect();
    if w == 0 || weak.is_empty() {
        return;
    }
    let h = mask.len() / w;
    let mut joined = Vec::new();
    for _ in 0..steps {
        weak.retain(|&i| {
            let i = i as usize;
            let (x, y) = (i % w, i / w);
            let strong = if x > 0 && y > 0 && x + 1 < w && y + 1 < h {
                let (up, down) = (i - w, i + w);
                [up - 1, up, up + 1, i - 1, i + 1, down - 1, down, down + 1].iter().any(|j| mask[*j] == 255)
            } else {
                (y.saturating_sub(1)..=(y + 1).min(h - 1))
                    .any(|ny| (x.saturating_sub(1)..=(x + 1).min(w - 1)).any(|nx| mask[ny * w + nx] == 255))
            };
            if strong {
                joined.push(i);
            }
            !strong
        });
        if joined.is_empty() {
            break;
        }
        // Marked after the pass, so that each step reaches one pixel further, whatever the order.
        for i in joined.drain(..) {
            mask[i] = 255;
        }
    }
    for i in weak {
        mask[i as usize] = 0;
    }
}

/// Adds to `mask` the blocks whose texture stands out: at least [`TEXTURE_OVER_NOISE`] times the border's median
/// texture, and at least [`MIN_TEXTURE`] of the background's level. A part of the cloth's own brightness shows
/// only so (its relief, its print, its rim), often as a broken ring; its inside is filled with the holes. On a
/// smooth cloth (its median texture under [`MIN_TEXTURE`]) a block next to such texture joins it from a weaker
/// texture, so that the ring closes: one still over the cloth's median by [`WEAK_TEXTURE_ERRORS`] times the
/// standard error of a `k x k` block's deviation (the texture is measured on blocks of `k x k` photo pixels). On a
/// textured cloth (gravel), or with blocks too small for their texture to be steady, a weaker texture is the
/// cloth's own.
pub(super) fn add_texture(mask: &mut GrayImage, texture: &[f32], k: u32) {
    let (w, h) = mask.dimensions();
    let median = border_noise(texture, w, h);
    let level = (TEXTURE_OVER_NOISE * median as f32).max(f32::from(quantise(MIN_TEXTURE))).min(255.0) as u8;
    let weak = if median <= usize::from(quantise(MIN_TEXTURE)) && k > 1 {
        // The standard deviation of n samples is off by about 1 / sqrt(2 (n - 1)) of itself.
        let error = 1.0 / (2.0 * (k * k - 1) as f32).sqrt();
        ((median as f32 * (1.0 + WEAK_TEXTURE_ERRORS * error)).ceil() as u8).max(quantise(MIN_TEXTURE) / 2).min(level)
    } else {
        level
    };
    let mut found: Vec<u8> = texture.iter().map(|t| strength(quantise(*t), level, weak)).collect();
    grow_into_weak(&mut found, w as usize, 1);
    for (m, t) in mask.iter_mut().zip(&found) {
        if *t == 255 {
            *m = 255;
        }
    }
}

/// How far over the smooth cloth's median texture, in standard errors of a block's deviation, a block's texture
/// joins texture over the level next to it.
const WEAK_TEXTURE_ERRORS: f32 = 4.0;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A mask of strong (255), weak (1) and background (0) pixels in stripes and speckles, touching the borders.
    fn mixed(w: usize, h: usize) -> Vec<u8> {
        (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                match (x * 7919 + y * 104_729 + x * y * 31) % 23 {
                    0 => 255,
                    v if v < 14 || (x + 2 * y) % 9 == 0 => 1,
                    _ => 0,
                }
            })
            .collect()
    }

    /// The same by breadth-first search: a weak pixel joins when a path of weak pixels, 8-connected, leads from a
    /// strong one to it in at most `steps` steps.
    fn by_search(mask: &[u8], w: usize, steps: usize) -> Vec<u8> {
        let h = mask.len() / w;
        let mut far = vec![usize::MAX; mask.len()];
        let mut queue: VecDeque<usize> = (0..mask.len()).filter(|i| mask[*i] == 255).collect();
        for i in &queue {
            far[*i] = 0;
        }
        while let Some(i) = queue.pop_front() {
            let (x, y) = ((i % w) as isize, (i / w) as isize);
            for (dx, dy) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= w as isize || ny >= h as isize {
                    continue;
                }
                let j = ny as usize * w + nx as usize;
                if mask[j] == 1 && far[j] == usize::MAX {
                    far[j] = far[i] + 1;
                    queue.push_back(j);
                }
            }
        }
        far.iter().map(|d| if *d <= steps { 255 } else { 0 }).collect()
    }

    #[test]
    fn the_border_noise_is_the_median_of_the_ring_of_a_fiftieth_of_the_shorter_side() {
        for (w, h) in [(1, 1), (1, 7), (7, 1), (3, 3), (60, 40), (120, 101), (101, 120)] {
            let dev: Vec<f32> = (0..w * h).map(|i| ((i * 7919 % 97) as f32 - 48.0) / 120.0).collect();
            let ring = (w.min(h) / 50).max(1);
            let mut on_ring: Vec<u8> = (0..w * h)
                .filter(|i| {
                    let (x, y) = (i % w, i / w);
                    x < ring || y < ring || x + ring >= w || y + ring >= h
                })
                .map(|i| quantise(dev[i as usize].abs()))
                .collect();
            on_ring.sort_unstable();
            // The first value whose count takes the running total over half the ring.
            let median = on_ring[on_ring.len() / 2];
            assert_eq!(border_noise(&dev, w, h), usize::from(median), "{w}x{h}");
        }
    }

    #[test]
    fn weak_pixels_join_within_so_many_steps_of_strong_ones_and_no_further() {
        for (w, h) in [(40, 30), (17, 64), (64, 17), (100, 3), (1, 9)] {
            let mask = mixed(w, h);
            assert!(mask.contains(&1) && mask.contains(&255));
            for steps in 0..4 {
                let mut ours = mask.clone();
                grow_into_weak(&mut ours, w, steps);
                assert_eq!(ours, by_search(&mask, w, steps), "{w}x{h}, {steps} steps");
            }
        }
    }

    /// Deviations of a 60 x 40 photo with a darker part: a disc whose middle (to `middle` pixels from its centre)
    /// stands out by `core` and whose rest (to `edge` pixels) by `rim`, on a background of noise, +-0.03.
    fn disc(core: f32, rim: f32, middle: f32, edge: f32) -> (Vec<f32>, u32, u32) {
        let (w, h) = (60u32, 40u32);
        let dev = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                let r = ((x as f32 - 30.0).powi(2) + (y as f32 - 20.0).powi(2)).sqrt();
                let noise = if (x + y) % 2 == 0 { 0.03 } else { -0.03 };
                if r <= middle {
                    -core
                } else if r <= edge {
                    -rim
                } else {
                    noise
                }
            })
            .collect();
        (dev, w, h)
    }

    fn area(mask: &GrayImage) -> usize {
        mask.iter().filter(|m| **m != 0).count()
    }

    fn over(dev: &[f32], d: f32) -> usize {
        dev.iter().filter(|v| **v <= -d).count()
    }

    #[test]
    fn a_faint_part_found_in_pieces_takes_its_weaker_pixels_next_to_them() {
        // The noise floor (five times the border's median deviation, 0.14) is over Otsu's level: the middle is over
        // it, the rest (0.06 to 0.12) under it but over half of it, and joins within two pixels of the middle.
        let (dev, w, h) = disc(0.2, 0.09, 4.0, 9.0);
        let at = |i: usize| ((i % w as usize) as i32, (i / w as usize) as i32);
        let middle: Vec<usize> = (0..dev.len()).filter(|i| dev[*i] <= -0.14).collect();
        let within_two = (0..dev.len())
            .filter(|i| {
                let (x, y) = at(*i);
                dev[*i] < -0.06 && middle.iter().any(|m| (at(*m).0 - x).abs().max((at(*m).1 - y).abs()) <= 2)
            })
            .count();
        assert!(within_two > middle.len() + 40 && within_two < over(&dev, 0.06));
        assert_eq!(area(&threshold(&dev, w, h)), within_two);
        // Under half the threshold, nothing joins.
        let (dev, w, h) = disc(0.2, 0.035, 4.0, 9.0);
        assert_eq!(area(&threshold(&dev, w, h)), over(&dev, 0.14));
    }

    #[test]
    fn a_part_that_stands_out_clearly_is_thresholded_at_otsus_level_alone() {
        // A part far over the noise, its middle from 0.6 down to 0.2: Otsu's level is over the noise floor (five
        // times the border's median deviation), so its rim (0.10 to 0.13, under that level but over half of it,
        // which a faint part's weaker pixels would be) stays background.
        let (w, h) = (60u32, 40u32);
        let dev: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                let r = ((x as f32 - 30.0).powi(2) + (y as f32 - 20.0).powi(2)).sqrt();
                if r <= 8.0 {
                    -(0.6 - 0.05 * r)
                } else if r <= 10.0 {
                    -0.1 - 0.01 * ((x + y) % 5) as f32
                } else if (x + y) % 2 == 0 {
                    0.02
                } else {
                    -0.02
                }
            })
            .collect();
        let mut histogram = [0u64; 256];
        for d in &dev {
            histogram[quantise(d.abs()) as usize] += 1;
        }
        let (level, floor) = (otsu(&histogram), 5 * border_noise(&dev, w, h) as u8);
        assert!(level > floor && quantise(0.13) < level && quantise(0.1) >= level / 2, "{level} over {floor}");
        let mask = threshold(&dev, w, h);
        assert_eq!(area(&mask), dev.iter().filter(|d| quantise(-**d) >= level).count());
        assert!(area(&mask) + 50 < over(&dev, 0.1));
    }
}
