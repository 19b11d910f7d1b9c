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

/// Thresholds the deviations: Otsu's level on their magnitudes, kept between a noise floor measured on the
/// border and [`MAX_CONTRAST`]; then the polarity, from the pixels over that level.
/// The noise on the border ring (mostly background): the median magnitude of its deviations, quantised.
pub(super) fn border_noise(dev: &[f32], w: u32, h: u32) -> usize {
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

pub(super) fn threshold(dev: &[f32], w: u32, h: u32) -> GrayImage {
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

/// Adds to `mask` the blocks whose texture stands out: at least [`TEXTURE_OVER_NOISE`] times the border's median
/// texture, and at least [`MIN_TEXTURE`] of the background's level. A part of the cloth's own brightness shows
/// only so (its relief, its print); its inside is filled with the holes.
pub(super) fn add_texture(mask: &mut GrayImage, texture: &[f32]) {
    let (w, h) = mask.dimensions();
    let median = border_noise(texture, w, h);
    let level = (TEXTURE_OVER_NOISE * median as f32).max(f32::from(quantise(MIN_TEXTURE))).min(255.0) as u8;
    for (m, t) in mask.iter_mut().zip(texture) {
        if quantise(*t) >= level {
            *m = 255;
        }
    }
}
