//! Times segmentation of a generated 12-megapixel (4000 x 3000) photo and writes the photo to a PNG for
//! `bench/opencv_segment.py` to time OpenCV on the same pixels.
//!
//! `cargo run --release -p trove-vision --example segment_bench -- [PNG_PATH] [RUNS]`

use std::time::{Duration, Instant};
use trove_application::ports::PhotoSegmenter;
use trove_vision::{Segmenter, scene, segment_rgb};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "target/segment_12mp.png".to_owned());
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(15);
    let scene = scene::twelve_megapixels();
    let rgb = scene.render();
    let png = scene.png();
    std::fs::write(&path, &png).expect("the PNG is written");

    let seg = segment_rgb(&rgb);
    let m = trove_domain::measure::measure(&seg.regions, Some(trove_domain::measure::Reference::Card), None)
        .expect("measures");
    println!(
        "{}x{}: {} regions (expected {}), scale {:.4} mm/px (laid out at {:.4})",
        seg.width,
        seg.height,
        seg.regions.len(),
        scene.expected().len(),
        m.scale_mm_per_px.unwrap_or(f64::NAN),
        1.0 / scene.px_per_mm
    );
    let segment: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(segment_rgb(std::hint::black_box(&rgb)));
            t.elapsed()
        })
        .collect();
    let with_decode: Vec<Duration> = (0..runs.div_ceil(3))
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(Segmenter.segment(std::hint::black_box(&png)).expect("segments"));
            t.elapsed()
        })
        .collect();
    println!("segment (decoded pixels): median {:.1} ms over {runs} runs", median(segment).as_secs_f64() * 1e3);
    println!("decode PNG + segment: median {:.1} ms", median(with_decode).as_secs_f64() * 1e3);
    println!("photo written to {path} ({} bytes)", png.len());
}
