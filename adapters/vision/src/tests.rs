//! The generated test set: every scene segmented and, where it holds a reference, measured; the precision of
//! the count over the whole set is printed (`cargo test -p trove-vision -- --nocapture`).

use crate::scene::{Scene, catalogue, parts_tray};
use crate::{ModelImageEncoder, Segmenter, segment_luma, segment_rgb};
use trove_application::ports::{ModelImages, PhotoSegmenter, VisionError};
use trove_domain::measure::{Reference, Region, measure_in};
use trove_domain::media::PixelSize;

/// How one scene came out.
struct Outcome {
    name: &'static str,
    expected: usize,
    found: usize,
    /// Expected regions matched by a found region with all four edges within the tolerance.
    placed: usize,
    /// Worst relative error of an item's mm size, when the scene has a reference.
    worst_mm_error: Option<f64>,
}

/// Edges may be off by this many pixels, or this share of the object's size (soft shadows, blur).
fn close(found: &Region, want: &Region) -> bool {
    let tolerance = |size: u32| (f64::from(size) * 0.04).max(4.0);
    let near = |a: u32, b: u32, size: u32| f64::from(a.abs_diff(b)) <= tolerance(size);
    near(found.x, want.x, want.width)
        && near(found.y, want.y, want.height)
        && near(found.x + found.width, want.x + want.width, want.width)
        && near(found.y + found.height, want.y + want.height, want.height)
}

fn evaluate(scene: &Scene) -> Outcome {
    let seg = segment_rgb(&scene.render());
    assert_eq!((seg.width, seg.height), (scene.width, scene.height), "{}", scene.name);
    let expected = scene.expected();
    let placed = expected.iter().filter(|want| seg.regions.iter().any(|f| close(f, want))).count();
    let worst_mm_error = scene.reference.map(|(index, reference)| {
        let reference_box = scene.objects[index].region(scene.width, scene.height);
        let photo = PixelSize { width: scene.width, height: scene.height };
        let m = measure_in(photo, &seg.regions, Some(reference), None).expect("measures");
        let mut worst = 0f64;
        for object in scene.objects.iter().enumerate().filter(|(i, _)| *i != index).map(|(_, o)| o) {
            let want = object.region(scene.width, scene.height);
            let Some(got) = m.regions.iter().find(|r| close(&r.region, &want)) else {
                worst = f64::INFINITY;
                continue;
            };
            if got.reference {
                worst = f64::INFINITY;
                continue;
            }
            let (want_w, want_h) = (f64::from(want.width) / scene.px_per_mm, f64::from(want.height) / scene.px_per_mm);
            let (w, h) = (got.width_mm.unwrap_or(0.0), got.height_mm.unwrap_or(0.0));
            worst = worst.max((w - want_w).abs() / want_w).max((h - want_h).abs() / want_h);
        }
        let marked = m.regions.iter().find(|r| r.reference).map(|r| r.region);
        if !marked.is_some_and(|r| close(&r, &reference_box)) {
            worst = f64::INFINITY;
        }
        worst
    });
    Outcome { name: scene.name, expected: expected.len(), found: seg.regions.len(), placed, worst_mm_error }
}

#[test]
fn the_generated_scenes_are_counted_placed_and_measured() {
    let outcomes: Vec<Outcome> = catalogue().iter().map(evaluate).collect();
    let counted = outcomes.iter().filter(|o| o.found == o.expected).count();
    let (expected, placed): (usize, usize) = outcomes.iter().fold((0, 0), |(e, p), o| (e + o.expected, p + o.placed));
    for o in &outcomes {
        let mm = o.worst_mm_error.map(|e| format!(", worst mm error {:.1} %", e * 100.0)).unwrap_or_default();
        eprintln!("{:<40} expected {:>2}, found {:>2}, placed {:>2}{mm}", o.name, o.expected, o.found, o.placed);
    }
    eprintln!(
        "count correct in {counted} of {} scenes ({:.0} %); {placed} of {expected} objects placed",
        outcomes.len(),
        100.0 * counted as f64 / outcomes.len() as f64
    );
    // Every scene must be counted right: items sharing a long straight edge (split at the seam), specks, dark bands
    // and corners (not items) included.
    for o in &outcomes {
        assert_eq!(o.found, o.expected, "{}: found {}, expected {}", o.name, o.found, o.expected);
        assert_eq!(o.placed, o.expected, "{}: {} of {} placed", o.name, o.placed, o.expected);
        if let Some(e) = o.worst_mm_error {
            assert!(e <= 0.03, "{}: mm off by {:.1} %", o.name, e * 100.0);
        }
    }
}

#[test]
fn an_empty_background_has_no_region() {
    for scene in [
        Scene { noise: 6.0, gradient: 0.6, vignette: 0.3, ..Scene::plain("empty", 320, 240, [200, 200, 195]) },
        Scene::plain("flat", 64, 48, [0, 0, 0]),
    ] {
        assert_eq!(segment_rgb(&scene.render()).regions, Vec::new(), "{}", scene.name);
    }
}

#[test]
fn formats_are_told_by_their_magic_bytes() {
    let scene = catalogue().remove(0);
    let png = scene.png();
    let mut jpeg = std::io::Cursor::new(Vec::new());
    scene.render().write_to(&mut jpeg, image::ImageFormat::Jpeg).unwrap();
    for bytes in [png, jpeg.into_inner()] {
        let seg = Segmenter.segment(&bytes).unwrap();
        assert_eq!(seg.regions.len(), 3);
    }
    assert!(matches!(Segmenter.segment(b"GIF89a\x01\x00\x01\x00"), Err(VisionError::Unsupported)));
    assert!(matches!(Segmenter.segment(b"\x89PNG\r\n\x1a\nnot really"), Err(VisionError::Undecodable(_))));
    assert!(matches!(Segmenter.segment(b""), Err(VisionError::Unsupported)));
}

/// Encodes `image` in `format`.
fn encoded(image: &image::DynamicImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

#[test]
fn decoding_row_by_row_segments_exactly_as_the_decoded_pixels() {
    for scene in catalogue().iter().filter(|s| ["three boxes", "a card turned", "a square marker"].contains(&s.name)) {
        let rgb = scene.render();
        let want = segment_rgb(&rgb);
        assert!(!want.regions.is_empty(), "{}", scene.name);
        // 8-bit RGB PNG, streamed by rows.
        assert_eq!(Segmenter.segment(&scene.png()).unwrap(), want, "{}: PNG", scene.name);
        // 16-bit RGBA PNG (each 8-bit sample v is v * 257, which rounds back to v), streamed by rows.
        let deep = image::DynamicImage::ImageRgba16(image::DynamicImage::ImageRgb8(rgb.clone()).to_rgba16());
        assert_eq!(
            Segmenter.segment(&encoded(&deep, image::ImageFormat::Png)).unwrap(),
            want,
            "{}: 16-bit",
            scene.name
        );
        // Grey PNG: the same as its grey pixels given as RGB.
        let grey = image::DynamicImage::ImageRgb8(rgb.clone()).to_luma8();
        let grey_rgb = image::DynamicImage::ImageLuma8(grey.clone()).to_rgb8();
        let png = encoded(&image::DynamicImage::ImageLuma8(grey), image::ImageFormat::Png);
        assert_eq!(Segmenter.segment(&png).unwrap(), segment_rgb(&grey_rgb), "{}: grey", scene.name);
        // A JPEG of at most `COLOUR_JPEG_PIXELS` is segmented in its colours: the same as its RGB decoding. Its
        // luma plane alone (how a larger one is read) is the luma of those colours to within rounding, and is
        // segmented into the same items, at the same places.
        let jpeg = scene.jpeg();
        assert!(u64::from(scene.width) * u64::from(scene.height) <= crate::decode::COLOUR_JPEG_PIXELS);
        let decoded = image::load_from_memory(&jpeg).unwrap().to_rgb8();
        let luma = crate::decode_luma(&jpeg).unwrap();
        assert_eq!(Segmenter.segment(&jpeg).unwrap(), segment_rgb(&decoded), "{}: JPEG", scene.name);
        // (The RGB decoding upsamples the chroma and clamps, so the two part by a few levels at edges of colour.)
        let off: Vec<u32> = luma
            .iter()
            .zip(decoded.pixels())
            .map(|(y, p)| {
                let from_rgb = (77 * u32::from(p[0]) + 150 * u32::from(p[1]) + 29 * u32::from(p[2]) + 128) >> 8;
                u32::from(*y).abs_diff(from_rgb)
            })
            .collect();
        let (worst, mean) = (off.iter().max(), off.iter().sum::<u32>() as f64 / off.len() as f64);
        assert!(
            worst <= Some(&4) && mean < 0.5,
            "{}: the JPEG's luma is off by {worst:?}, {mean} on average",
            scene.name
        );
        let (from_luma, from_colour) = (segment_luma(&luma).regions, segment_rgb(&decoded).regions);
        assert_eq!(from_luma.len(), from_colour.len(), "{}: JPEG", scene.name);
        for (l, c) in from_luma.iter().zip(&from_colour) {
            assert!(close(l, c), "{}: from the luma {l:?}, from the colours {c:?}", scene.name);
        }
        assert_eq!(crate::decode(&jpeg).unwrap(), decoded);
        // A PNG's colours decoded to luma: the weights of a JPEG's luma, rounded.
        let png_luma = crate::decode_luma(&scene.png()).unwrap();
        assert!(png_luma.iter().zip(rgb.pixels()).all(|(y, p)| {
            u32::from(*y) == (77 * u32::from(p[0]) + 150 * u32::from(p[1]) + 29 * u32::from(p[2]) + 128) >> 8
        }));
    }
}

#[test]
fn images_too_small_to_hold_an_item_are_refused_before_segmentation() {
    for (w, h) in [(1, 1), (15, 200), (200, 15)] {
        let png = encoded(&image::DynamicImage::new_rgb8(w, h), image::ImageFormat::Png);
        let err = Segmenter.segment(&png).unwrap_err();
        assert!(
            matches!(err, VisionError::TooSmall { width, height, min_side: 16 } if (width, height) == (w, h)),
            "{w}x{h}: {err:?}"
        );
        assert!(matches!(ModelImageEncoder.prepare_for_model(&png), Err(VisionError::TooSmall { .. })));
    }
    // At the smallest size and the thinnest shapes, segmentation runs (on noise) without failing.
    for (w, h) in [(16, 16), (16, 3000), (3000, 16), (17, 1100)] {
        let noisy = Scene { noise: 20.0, ..Scene::plain("noise", w, h, [120, 120, 120]) };
        let seg = Segmenter.segment(&noisy.png()).unwrap();
        assert_eq!((seg.width, seg.height), (w, h));
        assert_eq!(segment_rgb(&noisy.render()), seg);
    }
}

#[test]
fn a_jpeg_cut_short_is_undecodable_and_bytes_after_its_end_do_not_matter() {
    let jpeg = catalogue().remove(0).jpeg();
    assert!(crate::jpeg_is_complete(&jpeg));
    for cut in [jpeg.len() - 2, jpeg.len() / 2, 600, 4] {
        let short = &jpeg[..cut];
        assert!(!crate::jpeg_is_complete(short), "cut at {cut}");
        assert!(matches!(Segmenter.segment(short), Err(VisionError::Undecodable(_))), "cut at {cut}");
        assert!(matches!(ModelImageEncoder.prepare_for_model(short), Err(VisionError::Undecodable(_))), "{cut}");
    }
    // A trailer after the end-of-image marker (as phones append) is not part of the picture.
    let mut trailed = jpeg.clone();
    trailed.extend_from_slice(b"\0\0ftypmp42 a motion photo's video");
    assert_eq!(Segmenter.segment(&trailed).unwrap(), Segmenter.segment(&jpeg).unwrap());
    // A PNG cut short fails in its rows.
    let png = catalogue().remove(0).png();
    assert!(matches!(Segmenter.segment(&png[..png.len() / 2]), Err(VisionError::Undecodable(_))));
}

/// A smooth picture of `w x h`: a horizontal red ramp and a vertical green one.
fn ramp(w: u32, h: u32) -> image::RgbImage {
    image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 255 / w) as u8, (y * 255 / h) as u8, 128]))
}

#[test]
fn a_label_larger_than_the_model_needs_is_downscaled_to_a_jpeg_of_2048_pixels() {
    let check = |bytes: Vec<u8>, want: (u32, u32)| {
        let prepared = ModelImageEncoder.prepare_for_model(&bytes).unwrap();
        assert_eq!(prepared.format, trove_domain::reading::ImageFormat::Jpeg);
        assert_eq!((prepared.width, prepared.height), want);
        let sent = image::load_from_memory_with_format(&prepared.bytes, image::ImageFormat::Jpeg).unwrap().to_rgb8();
        assert_eq!(sent.dimensions(), want);
        // The picture is the same picture: the ramps are where they were.
        let (w, h) = want;
        for (x, y) in [(w / 4, h / 4), (3 * w / 4, h / 2), (w / 2, 3 * h / 4)] {
            let px = sent.get_pixel(x, y);
            let (r, g) = (i32::from(px[0]), i32::from(px[1]));
            assert!((r - (x * 255 / w) as i32).abs() <= 6, "red at {x},{y}: {r}");
            assert!((g - (y * 255 / h) as i32).abs() <= 6, "green at {x},{y}: {g}");
        }
    };
    // 4000 x 3000: decoded whole, then resized.
    let photo = image::DynamicImage::ImageRgb8(ramp(4000, 3000));
    check(encoded(&photo, image::ImageFormat::Jpeg), (2048, 1536));
    // 1500 x 4500 PNG, 16-bit: streamed into blocks of 2 x 2 first.
    let tall = image::DynamicImage::ImageRgb16(image::DynamicImage::ImageRgb8(ramp(1500, 4500)).to_rgb16());
    check(encoded(&tall, image::ImageFormat::Png), (683, 2048));
}

#[test]
fn a_label_the_model_can_read_as_it_is_is_sent_as_it_is() {
    let png = encoded(&image::DynamicImage::ImageRgb8(ramp(1200, 900)), image::ImageFormat::Png);
    let prepared = ModelImageEncoder.prepare_for_model(&png).unwrap();
    assert_eq!(prepared.format, trove_domain::reading::ImageFormat::Png);
    assert_eq!((prepared.width, prepared.height, prepared.bytes), (1200, 900, png));
    assert!(matches!(ModelImageEncoder.prepare_for_model(b"GIF89a...."), Err(VisionError::Unsupported)));
}

#[test]
fn a_tray_of_thousands_of_small_parts_is_counted_within_two_percent() {
    // A 12-megapixel JPEG, as a phone sends it: 2,400 parts of 4 to 10 pixels of the working copy. A share of the
    // image as the smallest item would leave none of them.
    let tray = parts_tray();
    let jpeg = tray.jpeg();
    let seg = Segmenter.segment(&jpeg).unwrap();
    // Over `COLOUR_JPEG_PIXELS`, a JPEG is segmented from its luma plane alone.
    assert_eq!(seg, segment_luma(&crate::decode_luma(&jpeg).unwrap()));
    let (found, expected) = (seg.regions.len() as f64, tray.objects.len() as f64);
    eprintln!("a tray of small parts: expected {expected}, found {found}");
    assert!((found - expected).abs() <= 0.02 * expected, "found {found} of {expected}");
    // Each part found is where a part is: its box holds a part's centre, and is no larger than two parts.
    let centres: Vec<(f64, f64)> = tray.objects.iter().map(|o| (o.cx, o.cy)).collect();
    for r in &seg.regions {
        let holds = |(x, y): &(f64, f64)| {
            *x >= f64::from(r.x)
                && *x <= f64::from(r.x + r.width)
                && *y >= f64::from(r.y)
                && *y <= f64::from(r.y + r.height)
        };
        assert!(centres.iter().any(holds), "{r:?} holds no part");
        assert!(r.width <= 90 && r.height <= 90, "{r:?} is larger than a part");
    }
    // Asked for a card or a square marker, which the tray does not hold, no part is taken for it (issue 45: a
    // part of 32 x 44 pixels had a card's shape, and at a card's size the photo would have spanned 8.4 m) and
    // every part stays a part, without mm.
    let photo = PixelSize { width: tray.width, height: tray.height };
    for reference in [Reference::Card, Reference::SquareMm(40.0)] {
        let m = measure_in(photo, &seg.regions, Some(reference), None).unwrap();
        assert_eq!(m.reference_match, None, "{reference} taken from a tray without one");
        assert_eq!(m.regions.len(), seg.regions.len());
        assert!(m.regions.iter().all(|r| !r.reference && r.width_mm.is_none()), "every part stays a part");
    }
}

#[test]
fn a_row_of_touching_parts_of_different_sizes_comes_apart_at_every_neck() {
    // Coins of 240 and 110 px in a row, each touching the next (the gap between their outlines is nothing):
    // one level of cores for the whole row misses the small ones, which must come apart all the same.
    use crate::scene::Object;
    let mut objects = Vec::new();
    let mut x = 150.0;
    for i in 0..12 {
        let d = if i % 2 == 0 { 240.0 } else { 110.0 };
        objects.push(Object::ellipse(x + d / 2.0, 600.0, d, d, [200, 195, 185]));
        x += d - 2.0;
    }
    let row =
        Scene { objects, noise: 3.0, seed: 12, ..Scene::plain("a row of touching coins", 2800, 1200, [60, 58, 55]) };
    let seg = Segmenter.segment(&row.png()).unwrap();
    assert_eq!(seg.regions.len(), 12, "{:?}", seg.regions);
    // In reading order, left to right, each region where its coin is.
    for (r, o) in seg.regions.iter().zip(&row.objects) {
        assert!(f64::from(r.x) < o.cx && o.cx < f64::from(r.x + r.width), "{r:?} is not around {}", o.cx);
    }
}
