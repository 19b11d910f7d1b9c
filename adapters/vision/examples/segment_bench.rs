//! The segmentation benchmark: generated 12-megapixel (4000 x 3000) photos with a known number of items, written
//! as JPEG (what a phone sends) and PNG for `bench/opencv_segment.py` to time OpenCV on the same bytes, and
//! Trove's segmentation timed from those bytes, decoding included. `bench/segment.sh` runs both, interleaved.
//!
//! `cargo run --release -p trove-vision --features scenes --example segment_bench -- write DIR`
//!   writes `DIR/NAME.jpg` and `DIR/NAME.png` for each photo and `DIR/expected.txt` (`NAME COUNT` a line);
//! `cargo run --release -p trove-vision --features scenes --example segment_bench -- time FILE RUNS`
//!   prints `trove FILE MEDIAN_MS REGIONS`: the median time of `Segmenter::segment` on the file's bytes.
//! `cargo run --release -p trove-vision --features testing --example segment_bench -- draw FILE OUT.png`
//!   writes the photo in grey with each region's box drawn on it (white, then black inside), and the boxes as
//!   `[x, y, width, height]` to `OUT.png.json`: to see what was found.

use std::time::{Duration, Instant};
use trove_application::ports::PhotoSegmenter;
use trove_vision::{Segmenter, scene};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The photos: a card and eight items, a tray of coins, a tray of small parts.
fn photos() -> Vec<(&'static str, scene::Scene)> {
    vec![("items", scene::twelve_megapixels()), ("coins", scene::coins_tray()), ("parts", scene::parts_tray())]
}

fn write(dir: &str) {
    std::fs::create_dir_all(dir).expect("the directory is made");
    let mut expected = String::new();
    for (name, scene) in photos() {
        let t = Instant::now();
        let (jpeg, png) = (scene.jpeg(), scene.png());
        std::fs::write(format!("{dir}/{name}.jpg"), &jpeg).expect("the JPEG is written");
        std::fs::write(format!("{dir}/{name}.png"), &png).expect("the PNG is written");
        let found = Segmenter.segment(&jpeg).expect("segments").regions.len();
        println!(
            "{name}: {} x {}, {} items, JPEG {} bytes, PNG {} bytes, drawn in {:.1} s; Trove finds {found} in the JPEG",
            scene.width,
            scene.height,
            scene.objects.len(),
            jpeg.len(),
            png.len(),
            t.elapsed().as_secs_f64()
        );
        expected.push_str(&format!("{name} {}\n", scene.objects.len()));
    }
    std::fs::write(format!("{dir}/expected.txt"), expected).expect("the counts are written");
}

fn time(file: &str, runs: usize) {
    let bytes = std::fs::read(file).expect("the photo is read");
    let found = Segmenter.segment(&bytes).expect("segments").regions.len();
    let times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(Segmenter.segment(std::hint::black_box(&bytes)).expect("segments"));
            t.elapsed()
        })
        .collect();
    println!("trove {file} {:.1} {found}", median(times).as_secs_f64() * 1e3);
}

fn draw(file: &str, out: &str) {
    let bytes = std::fs::read(file).expect("the photo is read");
    let found = Segmenter.segment(&bytes).expect("segments");
    let mut grey = trove_vision::decode_luma(&bytes).expect("decodes");
    let (w, h) = grey.dimensions();
    for r in &found.regions {
        for (ring, value) in [(0, 255u8), (1, 0u8)] {
            let (x0, y0) = (r.x + ring, r.y + ring);
            let (x1, y1) = (
                (r.x + r.width).saturating_sub(1 + ring).min(w - 1),
                (r.y + r.height).saturating_sub(1 + ring).min(h - 1),
            );
            for x in x0..=x1 {
                grey.put_pixel(x, y0, image::Luma([value]));
                grey.put_pixel(x, y1, image::Luma([value]));
            }
            for y in y0..=y1 {
                grey.put_pixel(x0, y, image::Luma([value]));
                grey.put_pixel(x1, y, image::Luma([value]));
            }
        }
    }
    grey.save(out).expect("the drawing is written");
    let boxes: Vec<String> =
        found.regions.iter().map(|r| format!("[{}, {}, {}, {}]", r.x, r.y, r.width, r.height)).collect();
    std::fs::write(format!("{out}.json"), format!("[{}]", boxes.join(", "))).expect("the boxes are written");
    println!("{} regions drawn into {out}", found.regions.len());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["write", dir] => write(dir),
        ["time", file, runs] => time(file, runs.parse().expect("RUNS is a number")),
        ["time", file] => time(file, 7),
        ["draw", file, out] => draw(file, out),
        _ => {
            eprintln!("usage: segment_bench write DIR | segment_bench time FILE [RUNS]");
            std::process::exit(2);
        }
    }
}
