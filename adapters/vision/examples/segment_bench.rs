//! The segmentation benchmark: generated 12-megapixel (4000 x 3000) photos with a known number of items, written
//! as JPEG (what a phone sends) and PNG for `bench/opencv_segment.py` to time OpenCV on the same bytes, and
//! Trove's segmentation timed from those bytes, decoding included. `bench/segment.sh` runs both, interleaved.
//!
//! `cargo run --release -p trove-vision --features scenes --example segment_bench -- write DIR`
//!   writes `DIR/NAME.jpg` and `DIR/NAME.png` for each photo and `DIR/expected.txt` (`NAME COUNT` a line);
//! `cargo run --release -p trove-vision --features scenes --example segment_bench -- time FILE RUNS`
//!   prints `trove FILE MEDIAN_MS REGIONS`: the median time of `Segmenter::segment` on the file's bytes.

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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["write", dir] => write(dir),
        ["time", file, runs] => time(file, runs.parse().expect("RUNS is a number")),
        ["time", file] => time(file, 7),
        _ => {
            eprintln!("usage: segment_bench write DIR | segment_bench time FILE [RUNS]");
            std::process::exit(2);
        }
    }
}
