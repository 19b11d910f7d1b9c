//! Each component's statistics (box, area, second moments), and which are background, slivers or specks.

use super::*;

/// The statistics of one label.
#[derive(Debug, Clone, Copy)]
pub(super) struct Stats {
    pub(super) min_x: u32,
    pub(super) min_y: u32,
    pub(super) max_x: u32,
    pub(super) max_y: u32,
    pub(super) area: u64,
    /// Sums of the pixels' x and y, and of x², y² and x y: the region's second moments.
    pub(super) sums: [u64; 2],
    pub(super) squares: [u64; 3],
}

impl Stats {
    /// How the region's pixels spread, in the working copy's pixels.
    pub(super) fn spread(&self) -> Option<Spread> {
        let f = |v: u64| v as f64;
        Spread::from_moments(
            f(self.area),
            [f(self.sums[0]), f(self.sums[1])],
            [f(self.squares[0]), f(self.squares[1]), f(self.squares[2])],
        )
    }
}

pub(super) fn stats(labels: &[u32], count: u32, w: u32) -> Vec<Stats> {
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
pub(super) fn is_background(s: &Stats, w: u32, h: u32) -> bool {
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
pub(super) fn typical_area(regions: &[&Stats]) -> u64 {
    typical_of(regions.iter().map(|s| s.area).collect())
}

/// The area-weighted median of `areas`: the size of region that half of the area is in.
pub(super) fn typical_of(mut areas: Vec<u64>) -> u64 {
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
