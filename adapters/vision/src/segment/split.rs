//! Touching objects split: at the cores of the distance transform where a neck joins them, or along a seam of
//! colour or brightness that crosses them.

use super::*;

/// Grows the labels of `out` from the pixels in `seeds` over the unassigned (0) pixels of the same component of
/// `labels`, 8-connected, down the distance transform: the highest unassigned pixel next to a label is taken
/// first, so two labels meet where the distance is least between them, at the neck, and not halfway between
/// their seeds.
pub(super) fn flood(out: &mut [u32], labels: &[u32], dist: &[u16], seeds: VecDeque<usize>, w: u32) {
    let w = w as isize;
    let h = out.len() as isize / w.max(1);
    let top = seeds.iter().map(|i| dist[*i]).max().unwrap_or(0) as usize;
    let mut levels: Vec<VecDeque<usize>> = vec![VecDeque::new(); top + 1];
    for i in seeds {
        levels[dist[i] as usize].push_back(i);
    }
    let mut level = top;
    loop {
        let Some(i) = levels[level].pop_front() else {
            if level == 0 {
                break;
            }
            level -= 1;
            continue;
        };
        for j in neighbours(i, w, h) {
            if out[j] == 0 && labels[j] == labels[i] {
                out[j] = out[i];
                levels[(dist[j] as usize).min(level)].push_back(j);
            }
        }
    }
}

/// Splits components with no neck along seams: lines across them where the relative deviation steps (a change
/// of colour, or of brightness, between two items sharing a straight edge; the shaded rims of two boxes). The
/// component's inside (its pixels at least [`SEAM_MARGIN`] from the outline), less the seam pixels, falls into
/// parts; when at least two parts each hold [`SEAM_PART_SHARE`] of the component and reach its outline (a label
/// or an embossed middle is enclosed, so it is no part), they become seeds and the component is grown back to
/// them. Answers the new label image and the number of labels.
pub(super) fn split_seams(
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

/// The 8 neighbours of pixel `i` of a `w x h` image that lie in it.
fn neighbours(i: usize, w: isize, h: isize) -> impl Iterator<Item = usize> {
    let (x, y) = ((i as isize) % w, (i as isize) / w);
    [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, -1), (-1, 1), (1, 1)].into_iter().filter_map(move |(dx, dy)| {
        let (nx, ny) = (x + dx, y + dy);
        (nx >= 0 && ny >= 0 && nx < w && ny < h).then_some((ny * w + nx) as usize)
    })
}

/// Grows the labels of `out` from the pixels in `queue` over the unassigned (0) pixels of the same component of
/// `labels`, 8-connected, breadth first (each pixel to its nearest seed).
pub(super) fn grow(out: &mut [u32], labels: &[u32], mut queue: VecDeque<usize>, w: u32, h: u32) {
    let (w, h) = (w as isize, h as isize);
    while let Some(i) = queue.pop_front() {
        for j in neighbours(i, w, h) {
            if out[j] == 0 && labels[j] == labels[i] {
                out[j] = out[i];
                queue.push_back(j);
            }
        }
    }
}

/// A component this many times the area of its widest inscribed disc may be a chain of parts: two touching discs
/// are twice theirs, a single disc once, a 2:1 ellipse twice.
const CHAIN_SHARE: f64 = 1.5;

/// Whether a component of `area` pixels whose distance transform peaks at `peak` (thirds of a pixel) may hold two
/// parts or more: it is larger than its widest disc could be, by [`CHAIN_SHARE`]. A lone round or squat part is
/// left alone at no cost.
fn may_be_chain(area: u64, peak: u16) -> bool {
    area as f64 > CHAIN_SHARE * std::f64::consts::PI * (f64::from(peak) / 3.0).powi(2)
}

/// Splits components core by core: the distance transform's maxima are flooded from the
/// highest down (a watershed of the distance), and where two basins meet, the one with the lower peak stays an
/// object of its own when the neck there is narrow against that peak (at most [`NECK_SHARE`] of it) and the
/// peak is a core's ([`MIN_CORE_RADIUS`]); else it joins the other. So a chain of touching parts of different
/// sizes comes apart at every narrow neck, where one level of cores for the whole chain would miss the smaller
/// parts. Answers the new label image and the number of labels.
pub(super) fn split_necks(dist: &[u16], labels: Vec<u32>, count: u32, size: (u32, u32)) -> (Vec<u32>, u32) {
    // Only a component that may be a chain ([`may_be_chain`]) is flooded.
    let mut area = vec![0u64; count as usize + 1];
    let mut peak_of = vec![0u16; count as usize + 1];
    for (l, d) in labels.iter().zip(dist) {
        area[*l as usize] += 1;
        peak_of[*l as usize] = peak_of[*l as usize].max(*d);
    }
    let shares: Vec<f32> = area
        .iter()
        .zip(&peak_of)
        .enumerate()
        .map(|(l, (a, p))| if l != 0 && may_be_chain(*a, *p) { NECK_SHARE } else { 0.0 })
        .collect();
    let (labels, count) = flood_necks(dist, labels, count, size, &shares);
    // Among many like parts, a component of about two parts' area is looked into again with a wider neck allowed:
    // two like parts pressed together along a third of their width, whose neck the texture of their rims filled.
    let mut area = vec![0u64; count as usize + 1];
    for l in &labels {
        area[*l as usize] += 1;
    }
    let parts: Vec<u64> = area.iter().skip(1).copied().filter(|a| *a >= MIN_AREA).collect();
    if parts.len() < LIKE_PARTS {
        return (labels, count);
    }
    let typical = typical_of(parts) as f64;
    let shares: Vec<f32> = area
        .iter()
        .enumerate()
        .map(|(l, a)| {
            let pair = (LIKE_PAIR.0 * typical..=LIKE_PAIR.1 * typical).contains(&(*a as f64));
            if l != 0 && pair { LIKE_PAIR_NECK_SHARE } else { 0.0 }
        })
        .collect();
    flood_necks(dist, labels, count, size, &shares)
}

/// A photo of at least this many parts is a tray of like parts...
const LIKE_PARTS: usize = 40;
/// ...where a component of this many times the typical part's area (the area-weighted median) may be two...
const LIKE_PAIR: (f64, f64) = (1.3, 2.6);
/// ...split where the neck is at most this share of the lower core's peak.
const LIKE_PAIR_NECK_SHARE: f32 = 0.85;

/// [`split_necks`] for the components whose `shares` are over 0 (each its own [`NECK_SHARE`]).
fn flood_necks(dist: &[u16], labels: Vec<u32>, count: u32, (w, h): (u32, u32), shares: &[f32]) -> (Vec<u32>, u32) {
    let n = labels.len();
    let chain: Vec<bool> = shares.iter().map(|s| *s > 0.0).collect();
    // Pixels inside those components, highest distance first.
    let top = dist.iter().copied().max().unwrap_or(0) as usize;
    let mut by_level: Vec<Vec<u32>> = vec![Vec::new(); top + 1];
    for (i, (l, d)) in labels.iter().zip(dist).enumerate() {
        if chain[*l as usize] && *d > 0 {
            by_level[*d as usize].push(i as u32);
        }
    }
    const NONE: u32 = u32::MAX;
    let mut basin = vec![NONE; n];
    let mut parent: Vec<u32> = Vec::new();
    let mut peak: Vec<u16> = Vec::new();
    fn find(parent: &mut [u32], mut b: u32) -> u32 {
        while parent[b as usize] != b {
            let up = parent[parent[b as usize] as usize];
            parent[b as usize] = up;
            b = up;
        }
        b
    }
    let core = 3 * MIN_CORE_RADIUS;
    let (wi, hi) = (w as isize, h as isize);
    let mut near: Vec<u32> = Vec::with_capacity(8);
    for level in (1..=top).rev() {
        for &i in &by_level[level] {
            let i = i as usize;
            near.clear();
            for j in neighbours(i, wi, hi) {
                if basin[j] != NONE && labels[j] == labels[i] {
                    let b = find(&mut parent, basin[j]);
                    if !near.contains(&b) {
                        near.push(b);
                    }
                }
            }
            if near.is_empty() {
                basin[i] = parent.len() as u32;
                parent.push(parent.len() as u32);
                peak.push(level as u16);
                continue;
            }
            // The highest basin takes the pixel; each other one joins it unless the neck here is narrow for it.
            near.sort_by_key(|b| std::cmp::Reverse(peak[*b as usize]));
            let first = near[0];
            basin[i] = first;
            for &b in &near[1..] {
                let p = peak[b as usize];
                let own = p >= core && f32::from(level as u16) <= shares[labels[i] as usize] * f32::from(p);
                if !own {
                    parent[b as usize] = first;
                }
            }
        }
    }
    // Components holding two basins or more that stayed apart are relabelled by basin; the others keep theirs.
    // Only the flooded pixels are visited again (each holds its basin's root from here on), not the whole photo.
    let flooded = || by_level.iter().flatten().map(|i| *i as usize);
    let mut first = vec![NONE; count as usize + 1];
    let mut split = vec![false; count as usize + 1];
    for i in flooded() {
        let r = find(&mut parent, basin[i]);
        basin[i] = r;
        let f = &mut first[labels[i] as usize];
        if *f == NONE {
            *f = r;
        } else if *f != r {
            split[labels[i] as usize] = true;
        }
    }
    if !split.iter().any(|s| *s) {
        return (labels, count);
    }
    let mut out = labels.clone();
    let mut next = count;
    let mut new_label = vec![0u32; parent.len()];
    let mut seeds = Vec::new();
    for i in flooded() {
        if split[labels[i] as usize] {
            out[i] = 0;
            // Each basin that stayed apart is seeded with its core (above its neck) and flooded down from there: its
            // pixels were taken level by level in the photo's order, and its borders would lean that way.
            let root = basin[i];
            if f32::from(dist[i]) >= shares[labels[i] as usize] * f32::from(peak[root as usize]) {
                let l = &mut new_label[root as usize];
                if *l == 0 {
                    next += 1;
                    *l = next;
                }
                out[i] = *l;
                seeds.push(i);
            }
        }
    }
    // Flooded from its seeds in the photo's order, as a scan of the photo would find them.
    seeds.sort_unstable();
    flood(&mut out, &labels, dist, seeds.into(), w);
    (out, next)
}
