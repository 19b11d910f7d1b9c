//! Test support (feature `testing`): a PDF's pages as images, rendered by `pdftoppm` (poppler-utils), and a
//! label made to look photographed (on a table, turned, smaller or larger, with sensor noise, as a JPEG).

use image::{GrayImage, Luma, Rgb, RgbImage};
use imageproc::geometric_transformations::{Border, Interpolation, rotate_about_center};
use std::io::Cursor;
use std::process::Command;

/// Every page of `pdf` rendered at `dpi` by `pdftoppm`, in grey.
///
/// # Panics
/// When `pdftoppm` is missing or fails (install poppler-utils).
pub fn pages(pdf: &[u8], dpi: u32) -> Vec<GrayImage> {
    let dir =
        std::env::temp_dir().join(format!("trove-labels-{}-{:?}", std::process::id(), std::thread::current().id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("labels.pdf");
    std::fs::write(&input, pdf).unwrap();
    let status = Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-gray", "-png"])
        .arg(&input)
        .arg(dir.join("page"))
        .status()
        .expect("pdftoppm runs (apt-get install poppler-utils)");
    assert!(status.success(), "pdftoppm failed");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    files.sort();
    let out = files.iter().map(|f| image::open(f).unwrap().into_luma8()).collect();
    std::fs::remove_dir_all(&dir).unwrap();
    out
}

/// A word of a PDF's text, as `pdftotext -bbox` reads it: its page (from 1), its text, and its box in points
/// (`height` is about the font size).
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    pub page: usize,
    pub text: String,
    pub x: f32,
    pub y: f32,
    pub height: f32,
}

/// Every word of `pdf` with its box, read by `pdftotext -bbox` (poppler-utils).
///
/// # Panics
/// When `pdftotext` is missing or fails (install poppler-utils).
pub fn words(pdf: &[u8]) -> Vec<Word> {
    use std::io::Write;
    let mut child = Command::new("pdftotext")
        .args(["-bbox", "-", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("pdftotext runs (apt-get install poppler-utils)");
    child.stdin.take().unwrap().write_all(pdf).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "pdftotext failed");
    let html = String::from_utf8(out.stdout).unwrap();
    let attr = |tag: &str, name: &str| -> f32 {
        let start = tag.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        tag[start..].split('"').next().unwrap().parse().unwrap()
    };
    let mut page = 0;
    let mut found = Vec::new();
    for line in html.lines().map(str::trim) {
        if line.starts_with("<page ") {
            page += 1;
        } else if let Some(rest) = line.strip_prefix("<word ") {
            let (tag, text) = rest.split_once('>').unwrap();
            let text = text.trim_end_matches("</word>").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
            let (y_min, y_max) = (attr(tag, "yMin"), attr(tag, "yMax"));
            found.push(Word { page, text, x: attr(tag, "xMin"), y: y_min, height: y_max - y_min });
        }
    }
    found
}

/// `label` as a phone might see it: scaled by `scale`, turned by `degrees`, laid on a grey table with a
/// lighting gradient in a `width` x `height` frame, with noise; a JPEG.
pub fn photographed(label: &GrayImage, scale: f32, degrees: f32, width: u32, height: u32) -> Vec<u8> {
    let (w, h) = label.dimensions();
    let scaled = image::imageops::resize(
        label,
        (w as f32 * scale) as u32,
        (h as f32 * scale) as u32,
        image::imageops::FilterType::Triangle,
    );
    // A white margin so the turn does not cut corners off.
    let (sw, sh) = scaled.dimensions();
    let side = ((sw * sw + sh * sh) as f64).sqrt() as u32 + 4;
    let mut padded = GrayImage::from_pixel(side, side, Luma([0]));
    let (ox, oy) = ((side - sw) / 2, (side - sh) / 2);
    image::imageops::replace(&mut padded, &scaled, i64::from(ox), i64::from(oy));
    let mut mask = GrayImage::from_pixel(side, side, Luma([0]));
    image::imageops::replace(&mut mask, &GrayImage::from_pixel(sw, sh, Luma([255])), i64::from(ox), i64::from(oy));
    let turned =
        rotate_about_center(&padded, degrees.to_radians(), Interpolation::Bilinear, Border::Constant(Luma([0])));
    let mask = rotate_about_center(&mask, degrees.to_radians(), Interpolation::Bilinear, Border::Constant(Luma([0])));
    let mut frame = RgbImage::new(width, height);
    let mut seed: u32 = 0x2545_F491;
    let (cx, cy) = ((width.saturating_sub(side)) / 2, (height.saturating_sub(side)) / 2);
    for (x, y, px) in frame.enumerate_pixels_mut() {
        let table = 120.0 + 60.0 * x as f32 / width as f32 + 20.0 * y as f32 / height as f32;
        let (lx, ly) = (x.wrapping_sub(cx), y.wrapping_sub(cy));
        let v = if lx < side && ly < side {
            let a = f32::from(mask.get_pixel(lx, ly).0[0]) / 255.0;
            // Paper is not quite white under room light.
            let paper = f32::from(turned.get_pixel(lx, ly).0[0]) * 0.9 + 10.0;
            a * paper + (1.0 - a) * table
        } else {
            table
        };
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let noise = (seed % 41) as f32 - 20.0;
        let v = (v + noise).clamp(0.0, 255.0) as u8;
        *px = Rgb([v, v.saturating_sub(3), v.saturating_sub(8)]);
    }
    let mut jpeg = Vec::new();
    image::DynamicImage::ImageRgb8(frame).write_to(&mut Cursor::new(&mut jpeg), image::ImageFormat::Jpeg).unwrap();
    jpeg
}

/// `page` as a PNG.
pub fn png(page: &GrayImage) -> Vec<u8> {
    let mut out = Vec::new();
    page.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// A white label of `width` x `height` pixels with nothing on it.
pub fn blank(width: u32, height: u32) -> GrayImage {
    GrayImage::from_pixel(width, height, Luma([255]))
}
