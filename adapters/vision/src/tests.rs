//! The generated test set: every scene segmented and, where it holds a reference, measured; the precision of
//! the count over the whole set is printed (`cargo test -p trove-vision -- --nocapture`).

use crate::scene::{Scene, catalogue};
use crate::{Segmenter, segment_rgb};
use trove_application::ports::{PhotoSegmenter, VisionError};
use trove_domain::measure::{Region, measure};

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
        let m = measure(&seg.regions, Some(reference), None).expect("measures");
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
    // Every scene but the one whose boxes share a long, straight edge (no neck to split at) must be counted right.
    for o in outcomes.iter().filter(|o| o.name != "boxes sharing a long edge") {
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
