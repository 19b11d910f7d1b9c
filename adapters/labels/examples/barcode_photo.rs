//! Writes the phone photo `bench/scan_photo.sh` scans: a 12-megapixel JPEG (4000 x 3000) of a box face with an
//! EAN-13 on it, turned by 30 degrees, seen at an angle and a little out of focus, on a noisy table.
//!
//! `cargo run --release -p trove-labels --features testing --example barcode_photo -- OUT.jpg`

use trove_domain::barcode::Symbology;
use trove_labels::testing::{Shot, barcode, photographed_box};

/// The EAN-13 the photo carries (an ISBN: a book's back).
const CODE: &str = "9780306406157";

fn main() {
    let out = std::env::args().nth(1).expect("usage: barcode_photo OUT.jpg");
    let shot = Shot { width: 4000, height: 3000, face: 0.45, degrees: 30.0, tilt: 0.2, blur: 2.0 };
    let photo = photographed_box(&barcode(Symbology::Ean13, CODE, 8), shot);
    std::fs::write(&out, &photo).unwrap();
    println!("{out}: {} bytes, 4000 x 3000, EAN-13 {CODE}", photo.len());
}
