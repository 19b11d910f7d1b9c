//! The segmentation test set of real photographic material (`adapters/vision/testset`): composed by its script
//! with the test tools' Python (numpy and Pillow; `TROVE_TEST_PYTHON`, or the venv `.ci/run` makes), then every
//! scene segmented as the photo route does, from its bytes.
//!
//! On every scene: the count within 2% of the parts; no region holding two parts' centres (a region covering two
//! touching parts: the scenes' parts touch by less than a third of their width); the saturated part of the
//! background's own luma found (its centre in a region of its own).

use serde_json::Value;
use std::path::{Path, PathBuf};
use trove_application::ports::{PhotoSegmenter, Segmentation};
use trove_vision::Segmenter;

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("TROVE_TEST_PYTHON") {
        return p.into();
    }
    let venv = PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/trove-ci/py-venv/bin/python3");
    assert!(venv.is_file(), "the test tools' Python is missing: run .ci/run, or set TROVE_TEST_PYTHON");
    venv
}

/// The scenes, composed into a directory of their own.
fn composed() -> (PathBuf, Value) {
    let dir = std::env::temp_dir().join(format!("trove-testset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("testset/make_scenes.py");
    let out = std::process::Command::new(python()).arg(&script).arg(&dir).output().expect("the composer runs");
    assert!(out.status.success(), "make_scenes.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let truth = serde_json::from_slice(&std::fs::read(dir.join("truth.json")).unwrap()).unwrap();
    (dir, truth)
}

/// How many of the centres each region's box holds.
fn held(seg: &Segmentation, centres: &[(u32, u32)]) -> Vec<usize> {
    seg.regions
        .iter()
        .map(|r| {
            centres.iter().filter(|(x, y)| *x >= r.x && *x < r.x + r.width && *y >= r.y && *y < r.y + r.height).count()
        })
        .collect()
}

#[test]
fn every_scene_of_real_material_is_counted_within_two_percent_and_touching_parts_come_apart() {
    let (dir, truth) = composed();
    let mut checked = 0;
    let (mut report, mut failed) = (Vec::new(), Vec::new());
    for (name, scene) in truth.as_object().unwrap() {
        let parts = scene["parts"].as_u64().unwrap() as f64;
        let centres: Vec<(u32, u32)> = scene
            .get("centres")
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|c| (c[0].as_u64().unwrap() as u32, c[1].as_u64().unwrap() as u32)).collect())
            .unwrap_or_default();
        for ext in ["jpg", "png"] {
            let Ok(bytes) = std::fs::read(dir.join(format!("{name}.{ext}"))) else { continue };
            let seg = Segmenter.segment(&bytes).unwrap();
            let found = seg.regions.len() as f64;
            let off = (found - parts) / parts;
            let held = held(&seg, &centres);
            let doubled = held.iter().filter(|n| **n >= 2).count();
            report.push(format!("{name}.{ext}: {found} of {parts} ({:+.1}%), {doubled} regions over two", off * 100.0));
            if off.abs() > 0.02 {
                failed.push(format!("{name}.{ext}: found {found} of {parts} parts"));
            }
            if doubled > 0 {
                failed.push(format!("{name}.{ext}: {doubled} regions each cover two parts or more"));
            }
            // Every tinted coin has a region of its own, the yellow one of the grey's own luma too.
            if name == "colour_on_light" && held != vec![1; 5] {
                failed.push(format!("{name}.{ext}: a coloured part is missed or shared: {held:?}"));
            }
            checked += 1;
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(checked, 8, "every scene and format of the test set is checked");
}
