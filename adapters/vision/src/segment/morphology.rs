//! The mask cleaned: holes filled, openings and closings by sliding-window counts, components labelled by
//! flooding, the chamfer distance.

use super::*;

/// Fills holes: background pixels enclosed by foreground (a label on a box, glare on a phone), that is those not
/// joined to the border through background (4-connected), found by a flood from the border. The flood goes by
/// runs of a row (a span is filled whole, and only the start of each run above and below it is queued), so a
/// photo that is mostly background costs a few looks a pixel.
pub(super) fn fill_holes(mask: &mut GrayImage) {
    let (w, h) = (mask.width() as usize, mask.height() as usize);
    if w == 0 || h == 0 {
        return;
    }
    let raw: &mut [u8] = mask;
    // 0: background not reached yet; 1: background reached from the border; anything else: foreground.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for x in 0..w {
        stack.push((x, 0));
        stack.push((x, h - 1));
    }
    for y in 0..h {
        stack.push((0, y));
        stack.push((w - 1, y));
    }
    while let Some((x, y)) = stack.pop() {
        let row = y * w;
        if raw[row + x] != 0 {
            continue;
        }
        let (mut left, mut right) = (x, x);
        while left > 0 && raw[row + left - 1] == 0 {
            left -= 1;
        }
        while right + 1 < w && raw[row + right + 1] == 0 {
            right += 1;
        }
        raw[row + left..=row + right].fill(1);
        for ny in [y.wrapping_sub(1), y + 1] {
            if ny >= h {
                continue;
            }
            let next = ny * w;
            let mut in_run = false;
            for nx in left..=right {
                let open = raw[next + nx] == 0;
                if open && !in_run {
                    stack.push((nx, ny));
                }
                in_run = open;
            }
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
pub(super) fn components(mask: &GrayImage, connectivity: Connectivity) -> Vec<u32> {
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
pub(super) fn square_filter<const ERODE: bool>(mask: &mut GrayImage, r: usize) {
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
pub(super) fn open(mask: &mut GrayImage, r: usize) {
    square_filter::<true>(mask, r);
    square_filter::<false>(mask, r);
}

/// A chamfer (3-4) distance transform of the foreground: each foreground pixel's distance to the background, in
/// thirds of a pixel.
pub(super) fn chamfer(mask: &GrayImage) -> Vec<u16> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use image::Luma;
    use imageproc::distance_transform::Norm;

    /// A mask of scattered blobs and single pixels, touching the borders.
    pub(super) fn speckled(w: u32, h: u32) -> GrayImage {
        GrayImage::from_fn(w, h, |x, y| {
            let v = (x * 7919 + y * 104_729 + x * y * 31) % 97;
            Luma([if v < 30 || (x / 5 + y / 7) % 3 == 0 { 255 } else { 0 }])
        })
    }

    /// Holes filled pixel by pixel: a flood from every background pixel of the border, 4-connected.
    fn holes_filled_by_pixels(mask: &GrayImage) -> GrayImage {
        let (w, h) = (mask.width() as usize, mask.height() as usize);
        let mut reached = vec![false; w * h];
        let mut stack: Vec<usize> = (0..w * h)
            .filter(|i| (i % w == 0 || i % w == w - 1 || i / w == 0 || i / w == h - 1) && mask.as_raw()[*i] == 0)
            .collect();
        for i in &stack {
            reached[*i] = true;
        }
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            let near = [
                (x > 0).then(|| i - 1),
                (x + 1 < w).then(|| i + 1),
                (y > 0).then(|| i - w),
                (y + 1 < h).then(|| i + w),
            ];
            for j in near.into_iter().flatten() {
                if !reached[j] && mask.as_raw()[j] == 0 {
                    reached[j] = true;
                    stack.push(j);
                }
            }
        }
        GrayImage::from_raw(w as u32, h as u32, reached.iter().map(|r| if *r { 0 } else { 255 }).collect()).unwrap()
    }

    #[test]
    fn holes_are_filled_as_a_flood_from_the_border_pixel_by_pixel_fills_them() {
        for (w, h) in [(1, 1), (1, 9), (9, 1), (3, 2), (40, 30), (17, 64), (64, 17), (100, 3)] {
            for mask in [
                speckled(w, h),
                GrayImage::from_fn(w, h, |x, y| Luma([if (x % 6 == 0) ^ (y % 5 == 0) { 255 } else { 0 }])),
            ] {
                let mut ours = mask.clone();
                fill_holes(&mut ours);
                assert_eq!(ours, holes_filled_by_pixels(&mask), "{w}x{h}");
            }
        }
    }

    #[test]
    pub(super) fn the_components_are_imageprocs() {
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
    pub(super) fn the_square_opening_is_imageprocs() {
        // (Not under 3 pixels: imageproc caps its distances at the width plus the height, so a 1 x 1 foreground is
        // eroded away by a radius of 2. The working copy is never that small.)
        for (w, h) in [(3, 2), (2, 5), (40, 30), (17, 64)] {
            for r in [1u8, 2] {
                let mask = speckled(w, h);
                let (mut ours, mut theirs) = (mask.clone(), mask.clone());
                open(&mut ours, usize::from(r));
                imageproc::morphology::open_mut(&mut theirs, Norm::LInf, r);
                assert_eq!(ours, theirs, "open {w}x{h} r {r}");
            }
        }
    }
}
