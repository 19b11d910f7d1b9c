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
/// How far (relative) an upright region's long side over its short side may be from the reference's. The area sets the sides' scale, which halves a wrong aspect in [`SHAPE_TOLERANCE`]'s measure: a 3 : 2
/// box is within 3 % of a card's sides, but its aspect is 5.7 % off the card's 1.586.
const ASPECT_TOLERANCE: f64 = 0.03;
/// Within this many degrees of upright, the reference is taken as upright and its sides give the scale;
/// otherwise its area does (which does not depend on the angle).
const UPRIGHT_DEGREES: f64 = 2.0;

/// How far (relative) a region's area may be from that of a filled rectangle of its spread (`12 major minor`)
/// and still be taken for a rectangular reference: an ellipse's is 4.7 % off, whatever its angle.
const RECTANGLE_TOLERANCE: f64 = 0.025;

/// The most a photo's longer side may span, in mm, at the scale a region would set as the reference: a photo of
/// items taken from a person's height (1.5 m) with the widest lens a phone has (about 110 degrees) spans about
/// 3 m of the floor. A region that would make the photo span more is too small to be the reference it is shaped
/// like: a card across less than a 35th of the photo's longer side (115 of 4,032 pixels), a 40 mm square marker
/// across less than a 75th.
pub const MAX_VIEW_MM: f64 = 3_000.0;

/// A picture's size in pixels (also `media::PixelSize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PixelSize {
    pub width: u32,
    pub height: u32,
}

/// One region of a photo: its bounding box in pixels (`x`, `y` the top-left corner) and how many pixels it covers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Region {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    /// Pixels that belong to the region (at most `width * height`).
    pub area_px: u64,
    /// How its pixels spread, when the segmenter measured it: what tells a rectangle from an ellipse and gives its
    /// aspect at any angle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

/// How a region's pixels spread about their centre: the standard deviations along its two principal axes, in the
/// photo's pixels, from the pixels' second moments. A filled L x S rectangle at any angle has `L / √12` and
/// `S / √12`, so `12 major minor` is its area and `major / minor` its aspect; an ellipse of axes A x B has `A / 4`
/// and `B / 4`, and its area is 4.7 % more than `12 major minor`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub major: f64,
    pub minor: f64,
}

impl Spread {
    /// The spread of `n` pixels from the sums of their coordinates, their squares and their products.
    ///
    /// ```
    /// use trove_domain::measure::Spread;
    /// // A 4 x 2 block of pixels at (0..4, 0..2).
    /// let (mut sx, mut sy, mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    /// for x in 0..4 { for y in 0..2 { let (x, y) = (f64::from(x), f64::from(y));
    ///     sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y; } }
    /// let s = Spread::from_moments(8.0, [sx, sy], [sxx, syy, sxy]).unwrap();
    /// assert!((s.major * s.major - 15.0 / 12.0).abs() < 1e-9 && (s.minor * s.minor - 3.0 / 12.0).abs() < 1e-9);
    /// ```
    pub fn from_moments(n: f64, [sx, sy]: [f64; 2], [sxx, syy, sxy]: [f64; 3]) -> Option<Spread> {
        if n < 1.0 {
            return None;
        }
        let (mx, my) = (sx / n, sy / n);
        let (vx, vy, cxy) = (sxx / n - mx * mx, syy / n - my * my, sxy / n - mx * my);
        let half_sum = (vx + vy) / 2.0;
        let root = (((vx - vy) / 2.0).powi(2) + cxy * cxy).sqrt();
        let (major, minor) = ((half_sum + root).max(0.0).sqrt(), (half_sum - root).max(0.0).sqrt());
        (major.is_finite() && minor > 0.0).then_some(Spread { major, minor })
    }

    /// This spread scaled by `k` (a region measured on a copy `k` times smaller).
    pub fn scaled(self, k: f64) -> Spread {
        Spread { major: self.major * k, minor: self.minor * k }
    }
}

/// Puts `regions` in reading order: by rows, top to bottom, then left to right within a row. A row is the regions
/// whose vertical middle lies within the span of the row's first (topmost) region, so parts laid out in a row
/// that are a little higher or lower than each other read left to right, as a person numbers them.
///
/// ```
/// use trove_domain::measure::{reading_order, Region};
/// let r = |x, y| Region { x, y, width: 100, height: 100, area_px: 10_000, spread: None };
/// let mut regions = vec![r(300, 0), r(0, 30), r(150, 10), r(0, 200)];
/// reading_order(&mut regions);
/// assert_eq!(regions.iter().map(|r| (r.x, r.y)).collect::<Vec<_>>(), [(0, 30), (150, 10), (300, 0), (0, 200)]);
/// ```
pub fn reading_order(regions: &mut [Region]) {
    regions.sort_by_key(|r| (r.y, r.x));
    let mut start = 0;
    while start < regions.len() {
        let first = regions[start];
        let bottom = u64::from(first.y) + u64::from(first.height);
        // Only regions whose top is above the first's bottom can have their middle there; they follow it (sorted
        // by top). Those in the row move to its front, the others keep their order behind it.
        let window = 1 + regions[start + 1..].iter().take_while(|r| u64::from(r.y) < bottom).count();
        let (others, rest): (Vec<Region>, Vec<Region>) = regions[start + 1..start + window]
            .iter()
            .partition(|r| u64::from(r.y) * 2 + u64::from(r.height) < bottom * 2);
        let mut row = others;
        row.push(first);
        row.sort_by_key(|r| (r.x, r.y));
        let end = start + row.len();
        regions[start..end].copy_from_slice(&row);
        regions[end..start + window].copy_from_slice(&rest);
        start = end;
    }
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

impl Reference {
    /// What the reference is called without an article: "credit card", "square marker".
    pub fn noun(self) -> &'static str {
        match self {
            Reference::SquareMm(_) => "square marker",
            Reference::Card => "credit card",
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
    /// The region taken as the reference and why, when one was.
    pub reference_match: Option<ReferenceMatch>,
}

impl Measured {
    /// What a person is told about the reference: which region was taken for it and why, or that it was not
    /// found (the regions then have no mm, and no size is guessed). `None` when no reference was asked for.
    ///
    /// ```
    /// use trove_domain::measure::{measure_in, PixelSize, Reference, Region};
    /// let item = Region { x: 0, y: 0, width: 300, height: 150, area_px: 40_000, spread: None };
    /// let photo = PixelSize { width: 640, height: 480 };
    /// let m = measure_in(photo, &[item], Some(Reference::Card), None).unwrap();
    /// assert_eq!(m.reference_note(Some(Reference::Card)).unwrap(), "No credit card found in the photo: no region is shaped like one, so the sizes are not known.");
    /// ```
    pub fn reference_note(&self, reference: Option<Reference>) -> Option<String> {
        let reference = reference?;
        let Some(m) = &self.reference_match else {
            return Some(format!(
                "No {} found in the photo: no region is shaped like one, so the sizes are not known.",
                reference.noun()
            ));
        };
        let n = m.index + 1;
        if m.marked {
            return Some(format!("Region {n} is {reference}, as marked: it sets the scale."));
        }
        let (long, short) = reference.sides_mm();
        let shape = match m.aspect {
            Some(aspect) => format!("its sides are {aspect:.2}:1 (a {}'s {:.2}:1)", reference.noun(), long / short),
            None => format!("it is turned {:.0}°", m.angle_degrees),
        };
        Some(format!(
            "Region {n} was taken as {reference}: {shape}, its box and area fit a {long} × {short} mm rectangle's \
             within {error:.1}%, and it is the largest region shaped so. If it is not the {noun}, say so and the \
             sizes go.",
            error = m.error * 100.0,
            noun = reference.noun(),
        ))
    }
}

/// The region taken as the reference, and how well it fits the reference's shape.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReferenceMatch {
    /// Its index among the regions.
    pub index: usize,
    /// Whether it was marked by the person (else found as the largest region shaped like the reference).
    pub marked: bool,
    /// The angle (0-90°) at which the reference's box comes nearest to the region's.
    pub angle_degrees: f64,
    /// The region's long side over its short side, when it is upright (a turned one's box is not its shape).
    pub aspect: Option<f64>,
    /// The worst relative difference between the region's box and the reference's at that angle.
    pub error: f64,
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
    /// The relative difference between the region's aspect (long side over short side: from its spread, or
    /// upright from its box) and the reference's; 0 when it cannot be told.
    aspect_error: f64,
    /// The relative difference between the region's area and a filled rectangle's of its spread; 0 without one.
    rectangle_error: f64,
    /// Millimetres per pixel.
    scale: f64,
    /// The best-fitting angle, in degrees.
    angle: f64,
    /// The region's long side over its short side, when it is upright (its box's sides are its own).
    aspect: Option<f64>,
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
    // The region's spread gives its aspect at any angle and tells a rectangle from an ellipse. Without it, an
    // upright box's sides are the region's own; turned, a box's aspect says little (it nears 1 at 45°) and the
    // fit of box and area over the angles decides alone.
    let (aspect_error, rectangle_error) = match region.spread {
        Some(Spread { major, minor }) => (
            ((major / minor) / (long_mm / short_mm) - 1.0).abs(),
            (region.area_px as f64 / (12.0 * major * minor) - 1.0).abs(),
        ),
        None if upright => (((w.max(h) / w.min(h)) / (long_mm / short_mm) - 1.0).abs(), 0.0),
        None => (0.0, 0.0),
    };
    let (long, short) = (w.max(h), w.min(h));
    let (scale, aspect) =
        if upright { ((long_mm / long + short_mm / short) / 2.0, Some(long / short)) } else { (by_area, None) };
    Some(Fit { error, aspect_error, rectangle_error, scale, angle, aspect })
}

fn tenth(mm: f64) -> f64 {
    (mm * 10.0).round() / 10.0
}

/// Measures the `regions` of a photo of `photo`'s size against `reference`: the `marked` region, or else the
/// largest region that matches the reference in shape and size, sets the scale, and every region gets its
/// bounding box in mm. A region matches when its box and area fit the reference's rectangle at some angle within
/// 5 %, its aspect is the reference's within 3 % and its area a filled rectangle's within 2.5 % (from its spread
/// when it has one), and at the scale it would set the photo's longer side spans at most [`MAX_VIEW_MM`]: a
/// smaller region of the same shape is a part, not the reference. Without a reference, or when no region matches
/// it, the regions come back without mm and without a scale, each a part.
///
/// ```
/// use trove_domain::measure::{measure_in, Reference, Region};
/// use trove_domain::media::PixelSize;
/// let photo = PixelSize { width: 640, height: 480 };
/// let marker = Region { x: 10, y: 10, width: 100, height: 100, area_px: 10_000, spread: None };
/// let item = Region { x: 200, y: 10, width: 300, height: 150, area_px: 40_000, spread: None };
/// let m = measure_in(photo, &[marker, item], Some(Reference::SquareMm(50.0)), None).unwrap();
/// assert_eq!(m.scale_mm_per_px, Some(0.5));
/// assert_eq!((m.regions[1].width_mm, m.regions[1].height_mm), (Some(150.0), Some(75.0)));
/// assert!(m.regions[0].reference);
/// // The same marker in a photo 8,000 pixels wide would make it span 4 m: too small for a 50 mm marker.
/// let wide = PixelSize { width: 8_000, height: 6_000 };
/// assert_eq!(measure_in(wide, &[marker, item], Some(Reference::SquareMm(50.0)), None).unwrap().scale_mm_per_px, None);
/// ```
///
/// # Errors
/// A square side that is not a positive finite number; a `marked` index out of range or of an empty region.
pub fn measure_in(
    photo: PixelSize,
    regions: &[Region],
    reference: Option<Reference>,
    marked: Option<usize>,
) -> Result<Measured, MeasureError> {
    let unmeasured = |r: &Region| MeasuredRegion { region: *r, width_mm: None, height_mm: None, reference: false };
    let Some(reference) = reference else {
        return Ok(Measured {
            regions: regions.iter().map(unmeasured).collect(),
            scale_mm_per_px: None,
            reference_match: None,
        });
    };
    if let Reference::SquareMm(side) = reference
        && !(side.is_finite() && side > 0.0)
    {
        return Err(MeasureError::BadSide(side));
    }
    let longer_side = f64::from(photo.width.max(photo.height));
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
            .filter(|(_, f)| {
                f.error <= SHAPE_TOLERANCE
                    && f.aspect_error <= ASPECT_TOLERANCE
                    && f.rectangle_error <= RECTANGLE_TOLERANCE
                    && f.scale * longer_side <= MAX_VIEW_MM
            })
            .max_by_key(|(i, _)| (regions[*i].area_px, std::cmp::Reverse(*i))),
    };
    let Some((index, Fit { scale, angle, aspect, error, .. })) = chosen else {
        return Ok(Measured {
            regions: regions.iter().map(unmeasured).collect(),
            scale_mm_per_px: None,
            reference_match: None,
        });
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
    let reference_match = Some(ReferenceMatch { index, marked: marked.is_some(), angle_degrees: angle, aspect, error });
    Ok(Measured { regions, scale_mm_per_px: Some(scale), reference_match })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`measure_in`] for a photo only as large as its regions reach: the tests' regions stand in a photo of their
    /// own extent.
    fn measure(
        regions: &[Region],
        reference: Option<Reference>,
        marked: Option<usize>,
    ) -> Result<Measured, MeasureError> {
        let reach =
            |edge: fn(&Region) -> u64| regions.iter().map(edge).max().unwrap_or(0).min(u64::from(u32::MAX)) as u32;
        let photo = PixelSize {
            width: reach(|r| u64::from(r.x) + u64::from(r.width)),
            height: reach(|r| u64::from(r.y) + u64::from(r.height)),
        };
        measure_in(photo, regions, reference, marked)
    }

    fn region(width: u32, height: u32, area_px: u64) -> Region {
        Region { x: 0, y: 0, width, height, area_px, spread: None }
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

    #[test]
    fn a_box_of_another_aspect_is_not_taken_for_a_card() {
        // 3 : 2 (a 150 x 100 mm box): its sides come within 3 % of a card's once the area sets the scale, but its
        // aspect is 5.7 % off; a card-shaped box a little off (2 %) still is one.
        let m = measure(&[region(300, 200, 60_000)], Some(Reference::Card), None).unwrap();
        assert_eq!(m.reference_match, None);
        let m = measure(&[region(856, 530, 453_000)], Some(Reference::Card), None).unwrap();
        assert_eq!(m.reference_match.map(|r| r.index), Some(0));
    }

    /// A card's region `long` pixels long, upright, with the area a card has at that scale.
    fn card_of(long: u32) -> Region {
        let scale = CARD_LONG_MM / f64::from(long);
        let short = (CARD_SHORT_MM / scale).round() as u32;
        Region {
            x: 100,
            y: 100,
            width: long,
            height: short,
            area_px: (Reference::Card.area_mm2() / scale / scale) as u64,
            spread: None,
        }
    }

    #[test]
    fn a_region_shaped_like_the_reference_but_too_small_for_it_is_a_part() {
        // In a photo 4,032 pixels across a card spans at least 115 of them (3 m over 85.6 mm): a part of a card's
        // shape smaller than that (an eraser, a chip, a label) is a part; every region stays one, without mm.
        let photo = PixelSize { width: 4032, height: 3024 };
        let coin = Region { x: 900, y: 700, width: 240, height: 240, area_px: 45_000, spread: None };
        let tool = Region { x: 2000, y: 1500, width: 900, height: 130, area_px: 110_000, spread: None };
        for (long, taken) in [(60, false), (90, false), (112, false), (118, true), (400, true), (1500, true)] {
            let regions = [coin, card_of(long), tool];
            let m = measure_in(photo, &regions, Some(Reference::Card), None).unwrap();
            assert_eq!(m.reference_match.map(|r| r.index), taken.then_some(1), "a card-shaped part {long} px long");
            if !taken {
                assert_eq!(m.scale_mm_per_px, None);
                assert!(m.regions.iter().all(|r| !r.reference && r.width_mm.is_none()), "every region is a part");
                assert_eq!(m.regions.iter().map(|r| r.region).collect::<Vec<_>>(), regions);
            }
        }
        // The same photo at a tenth of the pixels: a card 12 pixels long would span it from 3 m; 11 not.
        let small = PixelSize { width: 403, height: 302 };
        assert!(measure_in(small, &[card_of(40)], Some(Reference::Card), None).unwrap().reference_match.is_some());
        // A square marker of 40 mm: at least 54 of 4,032 pixels.
        let marker =
            |side: u32| Region { x: 0, y: 0, width: side, height: side, area_px: u64::from(side * side), spread: None };
        for (side, taken) in [(50, false), (56, true)] {
            let m = measure_in(photo, &[marker(side)], Some(Reference::SquareMm(40.0)), None).unwrap();
            assert_eq!(m.reference_match.is_some(), taken, "a square of {side} px");
        }
        // A marked region is the reference whatever its size: the person said so.
        let m = measure_in(photo, &[coin, card_of(60)], Some(Reference::Card), Some(1)).unwrap();
        assert_eq!(m.reference_match.map(|r| r.index), Some(1));
    }

    #[test]
    fn without_the_photos_size_the_regions_reach_bounds_it() {
        // Parts spread over a 4,000-pixel photo and a small card-shaped one: it is no card.
        let far = Region { x: 3800, y: 2800, width: 150, height: 150, area_px: 17_671, spread: None };
        let m = measure(&[card_of(90), far], Some(Reference::Card), None).unwrap();
        assert_eq!(m.reference_match, None);
        // Alone, the regions say nothing of the photo beyond them: it is taken.
        let m = measure(&[card_of(90)], Some(Reference::Card), None).unwrap();
        assert_eq!(m.reference_match.map(|r| r.index), Some(0));
    }

    #[test]
    fn a_spread_tells_a_turned_card_from_an_ellipse_of_its_box() {
        let root12 = 12f64.sqrt();
        // A card 171 x 108 px turned 7°: its box and area alone fit an ellipse of 120 x 80 px's as well.
        let mut card = turned(171.0, 108.0, 7.0);
        card.spread = Some(Spread { major: 171.0 / root12, minor: 108.0 / root12 });
        let m = measure(&[card], Some(Reference::Card), None).unwrap();
        assert_eq!(m.reference_match.map(|r| r.index), Some(0));
        let (w, h) = (f64::from(card.width), f64::from(card.height));
        let ellipse = Region {
            x: 0,
            y: 0,
            width: card.width,
            height: card.height,
            area_px: (std::f64::consts::PI * w * h / 4.0) as u64,
            spread: None,
        };
        let m = measure(&[ellipse], Some(Reference::Card), None).unwrap();
        assert_eq!(m.reference_match.map(|r| r.index), Some(0), "without a spread, the ellipse passes");
        let ellipse = Region { spread: Some(Spread { major: w / 4.0, minor: h / 4.0 }), ..ellipse };
        let m = measure(&[ellipse], Some(Reference::Card), None).unwrap();
        assert_eq!(m.reference_match, None, "its spread says it is no rectangle");
        // A 3 : 2 rectangle turned 30°: the spread gives its aspect at any angle.
        let mut box_ = turned(300.0, 200.0, 30.0);
        box_.spread = Some(Spread { major: 300.0 / root12, minor: 200.0 / root12 });
        assert_eq!(measure(&[box_], Some(Reference::Card), None).unwrap().reference_match, None);
    }

    #[test]
    fn the_note_says_which_region_is_the_reference_and_why_or_that_none_is() {
        let item = region(300, 100, 30_000);
        // A card upright, 856 x 540 px: 0.1 mm a pixel.
        let card = Region { x: 400, y: 0, width: 856, height: 540, area_px: 462_000, spread: None };
        let m = measure(&[item, card], Some(Reference::Card), None).unwrap();
        let matched = m.reference_match.unwrap();
        assert_eq!((matched.index, matched.marked), (1, false));
        assert!(matched.error < 0.01, "{matched:?}");
        let note = m.reference_note(Some(Reference::Card)).unwrap();
        assert!(
            note.starts_with("Region 2 was taken as a credit card: its sides are 1.59:1 (a credit card's 1.59:1)"),
            "{note}"
        );
        let turned_card = turned(856.0, 540.0, 30.0);
        let m = measure(&[item, turned_card], Some(Reference::Card), None).unwrap();
        let note = m.reference_note(Some(Reference::Card)).unwrap();
        assert!(note.contains("it is turned 30°, its box and area fit a 85.6 × 53.98 mm rectangle's within"), "{note}");
        let m = measure(&[item, card], Some(Reference::Card), Some(0)).unwrap();
        assert_eq!(
            m.reference_note(Some(Reference::Card)).unwrap(),
            "Region 1 is a credit card, as marked: it sets the scale."
        );
        let m = measure(&[item], Some(Reference::SquareMm(40.0)), None).unwrap();
        assert_eq!((m.scale_mm_per_px, m.reference_match), (None, None));
        assert_eq!(
            m.reference_note(Some(Reference::SquareMm(40.0))).unwrap(),
            "No square marker found in the photo: no region is shaped like one, so the sizes are not known."
        );
        assert_eq!(measure(&[item], None, None).unwrap().reference_note(None), None);
    }

    fn at(x: u32, y: u32, side: u32) -> Region {
        Region { x, y, width: side, height: side, area_px: u64::from(side) * u64::from(side), spread: None }
    }

    #[test]
    fn reading_order_numbers_rows_left_to_right() {
        // Three parts in a row, the right one highest; a tall part whose row holds a short one lower down; a
        // last row.
        let mut regions =
            vec![at(400, 0, 80), at(0, 30, 80), at(200, 15, 80), at(0, 200, 200), at(300, 320, 60), at(50, 500, 50)];
        reading_order(&mut regions);
        let got: Vec<(u32, u32)> = regions.iter().map(|r| (r.x, r.y)).collect();
        assert_eq!(got, [(0, 30), (200, 15), (400, 0), (0, 200), (300, 320), (50, 500)]);
        // A part whose middle is below the row's first part starts the next row.
        let mut regions = vec![at(0, 0, 100), at(300, 60, 100), at(100, 80, 100)];
        reading_order(&mut regions);
        let got: Vec<(u32, u32)> = regions.iter().map(|r| (r.x, r.y)).collect();
        assert_eq!(got, [(0, 0), (100, 80), (300, 60)]);
        // Degenerate regions (no height) still come out, each once.
        let mut regions =
            vec![Region { x: 5, y: 5, width: 3, height: 0, area_px: 0, spread: None }, at(0, 5, 0), at(1, 1, 1)];
        reading_order(&mut regions);
        assert_eq!(regions.len(), 3);
    }

    proptest::proptest! {
        /// A grid of parts, each moved up or down by less than a quarter of its side and shuffled, reads row by
        /// row, left to right; any set of regions comes back as the same regions.
        #[test]
        fn a_jittered_grid_reads_row_by_row(
            rows in 1usize..8,
            cols in 1usize..8,
            jitter in proptest::collection::vec(0u32..25, 64),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let mut expected = Vec::new();
            for r in 0..rows {
                for c in 0..cols {
                    expected.push(at(c as u32 * 150, r as u32 * 150 + jitter[(r * cols + c) % 64], 100));
                }
            }
            let mut shuffled = expected.clone();
            let mut state = seed | 1;
            for i in (1..shuffled.len()).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                shuffled.swap(i, (state % (i as u64 + 1)) as usize);
            }
            reading_order(&mut shuffled);
            proptest::prop_assert_eq!(shuffled, expected);
        }

        #[test]
        fn reading_order_keeps_every_region(
            raw in proptest::collection::vec((0u32..500, 0u32..500, 0u32..80, 0u32..80), 0..40),
        ) {
            let mut regions: Vec<Region> = raw
                .iter()
                .map(|&(x, y, width, height)| Region { x, y, width, height, area_px: u64::from(width * height), spread: None })
                .collect();
            let mut before = regions.clone();
            reading_order(&mut regions);
            let mut after = regions.clone();
            let key = |r: &Region| (r.x, r.y, r.width, r.height);
            before.sort_by_key(key);
            after.sort_by_key(key);
            proptest::prop_assert_eq!(before, after);
        }
    }
}
