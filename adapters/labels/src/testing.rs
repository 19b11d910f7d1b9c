//! Test support (feature `testing`): a PDF's pages as images, rendered by `pdftoppm` (poppler-utils), a label
//! made to look photographed (on a table, turned, smaller or larger, with sensor noise, as a JPEG), barcodes made
//! by `rxing`'s writers, and a box face carrying one photographed at an angle, turned and out of focus.

use image::{GrayImage, Luma, Rgb, RgbImage};
use imageproc::geometric_transformations::{Border, Interpolation, rotate_about_center};
use std::io::Cursor;
use std::process::Command;
use trove_domain::barcode::Symbology;

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

/// Whether the module at (x, y) of a code is dark.
type Modules = Box<dyn Fn(u32, u32) -> bool>;

/// A barcode of `symbology` holding `text`, as made by `rxing`'s writers (a QR code by `qrcode`), each module
/// `module` pixels, black on white with a quiet zone of ten modules all round; a 1-D code as tall as two thirds
/// of its width.
///
/// # Panics
/// When `text` cannot be encoded in `symbology`.
pub fn barcode(symbology: Symbology, text: &str, module: u32) -> GrayImage {
    use rxing::Writer;
    let (width, height, dark): (u32, u32, Modules) = if symbology == Symbology::QrCode {
        let qr = qrcode::QrCode::new(text.as_bytes()).unwrap();
        let side = qr.width() as u32;
        let colours = qr.to_colors();
        (side, side, Box::new(move |x, y| colours[(y * side + x) as usize] == qrcode::Color::Dark))
    } else {
        let format = match symbology {
            Symbology::DataMatrix => rxing::BarcodeFormat::DATA_MATRIX,
            Symbology::Ean13 => rxing::BarcodeFormat::EAN_13,
            Symbology::Ean8 => rxing::BarcodeFormat::EAN_8,
            Symbology::UpcA => rxing::BarcodeFormat::UPC_A,
            Symbology::UpcE => rxing::BarcodeFormat::UPC_E,
            Symbology::Code128 => rxing::BarcodeFormat::CODE_128,
            Symbology::Itf => rxing::BarcodeFormat::ITF,
            Symbology::QrCode => unreachable!(),
        };
        let hints = rxing::EncodeHints { Margin: Some("0".into()), ..rxing::EncodeHints::default() };
        let m = rxing::MultiFormatWriter.encode_with_hints(text, &format, 0, 0, &hints).unwrap();
        let (w, h) = (m.width(), m.height());
        if symbology == Symbology::DataMatrix {
            (w, h, Box::new(move |x, y| m.get(x, y)))
        } else {
            (w, (w * 2 / 3).max(1), Box::new(move |x, _| m.get(x, 0)))
        }
    };
    let quiet = 10;
    GrayImage::from_fn((width + 2 * quiet) * module, (height + 2 * quiet) * module, |x, y| {
        let (mx, my) = ((x / module).wrapping_sub(quiet), (y / module).wrapping_sub(quiet));
        let inside = mx < width && my < height;
        Luma([if inside && dark(mx, my) { 0 } else { 255 }])
    })
}

/// How a box face with a code on it is photographed by [`photographed_box`].
#[derive(Debug, Clone, Copy)]
pub struct Shot {
    /// The frame's size in pixels (4000 x 3000 is a 12-megapixel phone photo).
    pub width: u32,
    pub height: u32,
    /// The box face's width as a share of the frame's width.
    pub face: f32,
    /// The turn of the face in the frame, counter-clockwise, in degrees.
    pub degrees: f32,
    /// The perspective of a face seen at an angle: its right edge this share shorter than its left.
    pub tilt: f32,
    /// The Gaussian blur of a photo out of focus, its sigma in pixels of the frame (0 for none).
    pub blur: f32,
}

impl Shot {
    /// A 1600 x 1200 frame, the face half its width, straight, flat and sharp.
    pub fn new() -> Self {
        Self { width: 1600, height: 1200, face: 0.5, degrees: 0.0, tilt: 0.0, blur: 0.0 }
    }
}

impl Default for Shot {
    fn default() -> Self {
        Self::new()
    }
}

/// `code` printed on a box face (cardboard with a product's name and a picture printed in blocks, the code on a
/// white patch), photographed as `shot` says on a noisy, unevenly lit table, as a JPEG.
pub fn photographed_box(code: &GrayImage, shot: Shot) -> Vec<u8> {
    use imageproc::geometric_transformations::Projection;
    let (cw, ch) = code.dimensions();
    // The face: the code on its lower right, printed blocks above it and left of it.
    let (fw, fh) = (cw * 2 + cw / 2, ch * 2 + ch / 2);
    let mut face = GrayImage::from_pixel(fw, fh, Luma([170]));
    let mut seed: u32 = 0x9E37_79B9;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    for _ in 0..40 {
        let (x, y) = (next() % (fw - cw - 20), next() % (fh / 2));
        let (w, h) = (20 + next() % (cw / 2).max(21), 6 + next() % 30);
        let v = (next() % 120) as u8;
        image::imageops::replace(&mut face, &GrayImage::from_pixel(w, h, Luma([v])), i64::from(x), i64::from(y));
    }
    let (px, py) = (fw - cw - cw / 8, fh - ch - ch / 8);
    image::imageops::replace(&mut face, code, i64::from(px), i64::from(py));
    // Where the face's corners land in the frame: scaled, its right edge shortened, turned about the centre.
    let scale = shot.face * shot.width as f32 / fw as f32;
    let (hw, hh) = (fw as f32 * scale / 2.0, fh as f32 * scale / 2.0);
    let (cx, cy) = (shot.width as f32 / 2.0, shot.height as f32 / 2.0);
    let (sin, cos) = (-shot.degrees).to_radians().sin_cos();
    let corner = |x: f32, y: f32| {
        let y = if x > 0.0 { y * (1.0 - shot.tilt) } else { y };
        (cx + x * cos - y * sin, cy + x * sin + y * cos)
    };
    let to = [corner(-hw, -hh), corner(hw, -hh), corner(hw, hh), corner(-hw, hh)];
    let from = [(0.0, 0.0), (fw as f32, 0.0), (fw as f32, fh as f32), (0.0, fh as f32)];
    let back = Projection::from_control_points(to, from).unwrap();
    let sample = |x: f32, y: f32| -> Option<f32> {
        if x < 0.0 || y < 0.0 || x >= (fw - 1) as f32 || y >= (fh - 1) as f32 {
            return None;
        }
        let (x0, y0) = (x.floor(), y.floor());
        let (fx, fy) = (x - x0, y - y0);
        let p = |dx: u32, dy: u32| f32::from(face.get_pixel(x0 as u32 + dx, y0 as u32 + dy).0[0]);
        Some((p(0, 0) * (1.0 - fx) + p(1, 0) * fx) * (1.0 - fy) + (p(0, 1) * (1.0 - fx) + p(1, 1) * fx) * fy)
    };
    let mut frame = GrayImage::from_fn(shot.width, shot.height, |x, y| {
        let table = 90.0 + 50.0 * x as f32 / shot.width as f32 + 30.0 * y as f32 / shot.height as f32;
        let (fx, fy) = back * (x as f32 + 0.5, y as f32 + 0.5);
        // Room light on the face: brighter to the left.
        let v = sample(fx, fy).map_or(table, |v| v * (0.95 - 0.2 * fx / fw as f32) + 12.0);
        Luma([v.clamp(0.0, 255.0) as u8])
    });
    if shot.blur > 0.0 {
        frame = imageproc::filter::gaussian_blur_f32(&frame, shot.blur);
    }
    let rgb = RgbImage::from_fn(shot.width, shot.height, |x, y| {
        let noise = (next() % 25) as f32 - 12.0;
        let v = (f32::from(frame.get_pixel(x, y).0[0]) + noise).clamp(0.0, 255.0);
        // Cardboard brown, a table's grey: the grey a reader sees is near `v` either way.
        Rgb([(v * 1.05).min(255.0) as u8, v as u8, (v * 0.85) as u8])
    });
    let mut jpeg = Vec::new();
    image::DynamicImage::ImageRgb8(rgb).write_to(&mut Cursor::new(&mut jpeg), image::ImageFormat::Jpeg).unwrap();
    jpeg
}
