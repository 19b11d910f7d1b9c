//! Measurement of photographed items: a reference of known size in the photo (a printed square marker of stated
//! side, or a credit card) sets the scale, and every region found in the photo gets its width and height in mm.
//!
//! The regions come from segmentation (an adapter's work); this module only decides which region is the
//! reference and what the scale is.

use serde::{Deserialize, Serialize};

/// A credit card (ISO/IEC 7810 ID-1): long side in mm.
pub const CARD_LONG_MM: f64 = 85.60;
/// A credit card: short side in mm.
pub const CARD_SHORT_MM: f64 = 53.98;
/// A credit card's corner radius in mm: its area is a little under long x short.
pub const CARD_CORNER_RADIUS_MM: f64 = 3.18;

/// How far (relative) a region's bounding box may be from the box the reference would have at its best-fitting
/// angle and its area, and still be taken for the reference.
const SHAPE_TOLERANCE: f64 = 0.05;
/// Within this many degrees of upright, the reference is taken as upright and its sides give the scale;
/// otherwise its area does (which does not depend on the angle).
const UPRIGHT_DEGREES: f64 = 2.0;

/// One region of a photo: its bounding box in pixels (`x`, `y` the top-left corner) and how many pixels it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    /// Pixels that belong to the region (at most `width * height`).
    pub area_px: u64,
}

/// The reference of known size laid in the photo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reference {
    /// A printed square marker whose side is this many mm.
    SquareMm(f64),
    /// A credit card, 85.60 x 53.98 mm with rounded corners.
    Card,
}

impl Reference {
    /// The long and the short side in mm.
    fn sides_mm(self) -> (f64, f64) {
        match self {
            Reference::SquareMm(side) => (side, side),
            Reference::Card => (CARD_LONG_MM, CARD_SHORT_MM),
        }
    }

    /// The area in mm², rounded corners deducted.
    fn area_mm2(self) -> f64 {
        let (long, short) = self.sides_mm();
        match self {
            Reference::SquareMm(_) => long * short,
            Reference::Card => long * short - (4.0 - std::f64::consts::PI) * CARD_CORNER_RADIUS_MM.powi(2),
        }
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reference::SquareMm(side) => write!(f, "a square marker of {side} mm"),
            Reference::Card => write!(f, "a credit card"),
        }
    }
}

/// A region with its size in mm when the photo has a scale.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeasuredRegion {
    pub region: Region,
    /// Bounding-box width in mm, to 0.1 mm.
    pub width_mm: Option<f64>,
    /// Bounding-box height in mm, to 0.1 mm.
    pub height_mm: Option<f64>,
    /// Whether this region is the reference that set the scale.
    pub reference: bool,
}

/// The regions of a photo, measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    pub regions: Vec<MeasuredRegion>,
    /// Millimetres per pixel, when a reference was given and found.
    pub scale_mm_per_px: Option<f64>,
}

/// Why a measurement cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MeasureError {
    /// The square marker's side is not a positive number of mm.
    #[error("the reference side must be a positive number of mm, not {0}")]
    BadSide(f64),
    /// The marked reference region is not among the regions.
    #[error("no region {index}: the photo has {count} regions")]
    NoSuchRegion { index: usize, count: usize },
    /// The marked reference region covers no pixel.
    #[error("region {0} is empty and cannot be the reference")]
    EmptyReference(usize),
}

/// How well a region fits the reference, and the scale it would set.
#[derive(Debug, Clone, Copy)]
struct Fit {
    /// The worst relative difference between the region's box and the reference's box at the best angle.
    error: f64,
    /// Millimetres per pixel.
    scale: f64,
}

/// Fits the reference to a region: its area gives the reference's sides in pixels (the area does not depend on
/// the angle); the angle whose bounding box comes nearest to the region's is the reference's angle. Upright, the
/// sides give the scale (they are measured more precisely than the area); turned, the area does.
fn fit(region: &Region, reference: Reference) -> Option<Fit> {
    if region.area_px == 0 || region.width == 0 || region.height == 0 {
        return None;
    }
    let (long_mm, short_mm) = reference.sides_mm();
    let by_area = (reference.area_mm2() / region.area_px as f64).sqrt();
    let (long_px, short_px) = (long_mm / by_area, short_mm / by_area);
    let (w, h) = (f64::from(region.width), f64::from(region.height));
    let mut best = (f64::INFINITY, 0.0);
    // Half-degree steps over a quarter turn: a rectangle's bounding box repeats after that.
    for step in 0..=180 {
        let angle = f64::from(step) * 0.5;
        let (s, c) = angle.to_radians().sin_cos();
        let (bw, bh) = (long_px * c + short_px * s, long_px * s + short_px * c);
        let error = ((bw - w).abs() / w).max((bh - h).abs() / h);
        if error < best.0 {
            best = (error, angle);
        }
    }
    let (error, angle) = best;
    let upright = angle <= UPRIGHT_DEGREES || angle >= 90.0 - UPRIGHT_DEGREES;
    let scale = if upright {
        let (long, short) = (w.max(h), w.min(h));
        (long_mm / long + short_mm / short) / 2.0
    } else {
        by_area
    };
    Some(Fit { error, scale })
}

fn tenth(mm: f64) -> f64 {
    (mm * 10.0).round() / 10.0
}

/// Measures `regions` against `reference`: the `marked` region, or else the largest region shaped like the
/// reference (at any angle), sets the scale, and every region gets its bounding box in mm. Without a reference,
/// or when no region is shaped like it, the regions come back without mm and without a scale.
///
/// ```
/// use trove_domain::measure::{measure, Reference, Region};
/// let marker = Region { x: 10, y: 10, width: 100, height: 100, area_px: 10_000 };
/// let item = Region { x: 200, y: 10, width: 300, height: 150, area_px: 40_000 };
/// let m = measure(&[marker, item], Some(Reference::SquareMm(50.0)), None).unwrap();
/// assert_eq!(m.scale_mm_per_px, Some(0.5));
/// assert_eq!((m.regions[1].width_mm, m.regions[1].height_mm), (Some(150.0), Some(75.0)));
/// assert!(m.regions[0].reference);
/// ```
///
/// # Errors
/// A square side that is not a positive finite number; a `marked` index out of range or of an empty region.
pub fn measure(
    regions: &[Region],
    reference: Option<Reference>,
    marked: Option<usize>,
) -> Result<Measured, MeasureError> {
    let unmeasured = |r: &Region| MeasuredRegion { region: *r, width_mm: None, height_mm: None, reference: false };
    let Some(reference) = reference else {
        return Ok(Measured { regions: regions.iter().map(unmeasured).collect(), scale_mm_per_px: None });
    };
    if let Reference::SquareMm(side) = reference
        && !(side.is_finite() && side > 0.0)
    {
        return Err(MeasureError::BadSide(side));
    }
    let chosen = match marked {
        Some(index) => {
            let region = regions.get(index).ok_or(MeasureError::NoSuchRegion { index, count: regions.len() })?;
            let fit = fit(region, reference).ok_or(MeasureError::EmptyReference(index))?;
            Some((index, fit))
        }
        None => regions
            .iter()
            .enumerate()
            .filter_map(|(i, r)| fit(r, reference).map(|f| (i, f)))
            .filter(|(_, f)| f.error <= SHAPE_TOLERANCE)
            .max_by_key(|(i, _)| (regions[*i].area_px, std::cmp::Reverse(*i))),
    };
    let Some((index, Fit { scale, .. })) = chosen else {
        return Ok(Measured { regions: regions.iter().map(unmeasured).collect(), scale_mm_per_px: None });
    };
    let regions = regions
        .iter()
        .enumerate()
        .map(|(i, r)| MeasuredRegion {
            region: *r,
            width_mm: Some(tenth(f64::from(r.width) * scale)),
            height_mm: Some(tenth(f64::from(r.height) * scale)),
            reference: i == index,
        })
        .collect();
    Ok(Measured { regions, scale_mm_per_px: Some(scale) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(width: u32, height: u32, area_px: u64) -> Region {
        Region { x: 0, y: 0, width, height, area_px }
    }

    /// The bounding box and area of a `long` x `short` pixel rectangle turned by `degrees`.
    fn turned(long: f64, short: f64, degrees: f64) -> Region {
        let (s, c) = degrees.to_radians().sin_cos();
        region((long * c + short * s).round() as u32, (long * s + short * c).round() as u32, (long * short) as u64)
    }

    /// Measures `regions` and compares the scale (to 0.1 %), which region is the reference, and the mm sizes (to
    /// 0.5 mm).
    fn check(
        regions: &[Region],
        reference: Option<Reference>,
        marked: Option<usize>,
        scale: Option<f64>,
        reference_at: Option<usize>,
        sizes: &[(usize, f64, f64)],
    ) {
        let m = measure(regions, reference, marked).unwrap();
        match (m.scale_mm_per_px, scale) {
            (Some(got), Some(want)) => assert!((got - want).abs() / want < 1e-3, "scale {got}, want {want}"),
            (got, want) => assert_eq!(got, want, "scale"),
        }
        let got_reference: Vec<usize> =
            m.regions.iter().enumerate().filter(|(_, r)| r.reference).map(|(i, _)| i).collect();
        assert_eq!(got_reference, reference_at.into_iter().collect::<Vec<_>>(), "the reference");
        for &(i, w, h) in sizes {
            let (gw, gh) = (m.regions[i].width_mm.unwrap(), m.regions[i].height_mm.unwrap());
            assert!((gw - w).abs() <= 0.5 && (gh - h).abs() <= 0.5, "region {i}: {gw} x {gh} mm, want {w} x {h}");
        }
    }

    #[test]
    fn a_square_marker_sets_the_scale_upright_or_turned() {
        let item = region(400, 200, 70_000);
        // Upright 50 mm marker of 100 px: 0.5 mm per pixel.
        check(
            &[region(100, 100, 10_000), item],
            Some(Reference::SquareMm(50.0)),
            None,
            Some(0.5),
            Some(0),
            &[(0, 50.0, 50.0), (1, 200.0, 100.0)],
        );
        // The same marker turned 30 and 45 degrees: its area still says 100 px a side.
        for degrees in [30.0, 45.0] {
            check(
                &[item, turned(100.0, 100.0, degrees)],
                Some(Reference::SquareMm(50.0)),
                None,
                Some(0.5),
                Some(1),
                &[(0, 200.0, 100.0)],
            );
        }
    }

    #[test]
    fn a_card_sets_the_scale_upright_sideways_or_turned() {
        // 0.2 mm per pixel: the card is 428 x 270 px.
        let (long, short) = (CARD_LONG_MM / 0.2, CARD_SHORT_MM / 0.2);
        let card_area = (Reference::Card.area_mm2() / 0.04).round() as u64;
        let item = region(1000, 500, 400_000);
        check(
            &[item, region(428, 270, card_area)],
            Some(Reference::Card),
            None,
            Some(0.2),
            Some(1),
            &[(0, 200.0, 100.0), (1, 85.6, 54.0)],
        );
        check(
            &[region(270, 428, card_area), item],
            Some(Reference::Card),
            None,
            Some(0.2),
            Some(0),
            &[(1, 200.0, 100.0)],
        );
        for degrees in [20.0, 45.0, 70.0] {
            let mut card = turned(long, short, degrees);
            card.area_px = card_area;
            check(&[item, card], Some(Reference::Card), None, Some(0.2), Some(1), &[(0, 200.0, 100.0)]);
        }
    }

    #[test]
    fn the_largest_region_shaped_like_the_reference_wins() {
        // Two squares (the larger is the marker), a long strip that is larger still but not square.
        let regions = [region(50, 50, 2_500), region(100, 100, 10_000), region(600, 40, 24_000)];
        check(&regions, Some(Reference::SquareMm(40.0)), None, Some(0.4), Some(1), &[(2, 240.0, 16.0)]);
        // A ring (a square box, far too few pixels for a filled square) is not a square marker.
        let regions = [region(100, 100, 3_000), region(60, 60, 3_600)];
        check(&regions, Some(Reference::SquareMm(30.0)), None, Some(0.5), Some(1), &[(0, 50.0, 50.0)]);
    }

    #[test]
    fn a_marked_region_is_the_reference_whatever_its_size() {
        let regions = [region(50, 50, 2_500), region(100, 100, 10_000)];
        check(&regions, Some(Reference::SquareMm(25.0)), Some(0), Some(0.5), Some(0), &[(1, 50.0, 50.0)]);
    }

    #[test]
    fn without_a_reference_or_a_match_there_are_no_mm() {
        let regions = [region(300, 100, 30_000), region(80, 200, 16_000)];
        check(&regions, None, None, None, None, &[]);
        check(&regions, Some(Reference::SquareMm(50.0)), None, None, None, &[]);
        check(&regions, Some(Reference::Card), None, None, None, &[]);
        check(&[], Some(Reference::Card), None, None, None, &[]);
    }

    #[test]
    fn bad_references_are_refused() {
        let regions = [region(10, 10, 100), region(0, 0, 0)];
        for side in [0.0, -3.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(measure(&regions, Some(Reference::SquareMm(side)), None), Err(MeasureError::BadSide(_))));
        }
        assert_eq!(
            measure(&regions, Some(Reference::Card), Some(2)),
            Err(MeasureError::NoSuchRegion { index: 2, count: 2 })
        );
        assert_eq!(measure(&regions, Some(Reference::Card), Some(1)), Err(MeasureError::EmptyReference(1)));
        assert_eq!(
            MeasureError::NoSuchRegion { index: 2, count: 2 }.to_string(),
            "no region 2: the photo has 2 regions"
        );
    }
}
