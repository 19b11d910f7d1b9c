//! Codes read from a photo: decoded grey by `trove_vision::decode_luma_within`, which averages blocks of pixels
//! as the rows arrive (the photo is never held whole at full size when it is a PNG, and at most one byte a pixel
//! when it is a JPEG), brought down to a bounded working size, then searched for QR codes by `rqrr` and for
//! barcodes (EAN-13, EAN-8, UPC-A, UPC-E, Code 128, ITF-14, DataMatrix) by `rxing`. How many photos are read at
//! once is the caller's to bound: the labels use case reads under the server's one limit of image jobs.
//!
//! A 1-D barcode is read along rows: `rxing` tries the rows and, trying harder, the columns (a code turned by 90
//! degrees), so a code turned by up to about 20 degrees from either reads. When nothing is read the working copy
//! is turned by 45 degrees each way (into a frame that holds it whole) and read again, so a code at any angle is
//! read. DataMatrix is found at any angle by its own detector.

use image::imageops;
use image::{GrayImage, Luma};
use rxing::common::HybridBinarizer;
use rxing::{
    BarcodeFormat, BinaryBitmap, DecodeHints, Luma8Source, MultiFormatReader, RXingResultMetadataType,
    RXingResultMetadataValue, Reader,
};
use std::collections::HashSet;
use trove_application::ports::{CodeReader, ReadCode, VisionError};
use trove_domain::barcode::Symbology;

/// The longest side, in pixels, a photo is searched at: a label filling a tenth of a 12-megapixel photo's width
/// still has modules of about four pixels there, and the search costs the same for any photo.
pub const WORKING_SIDE: u32 = 1600;
/// A second, smaller size tried when nothing is read at the first: a photo's noise and blur average away.
const SMALL_SIDE: u32 = 800;

/// The turns the working copy is read at again when no barcode is read as it is, in degrees.
const TURNS: [f32; 2] = [45.0, -45.0];

/// The `CodeReader` over `rqrr` (QR codes) and `rxing` (the barcodes).
#[derive(Debug, Clone, Copy, Default)]
pub struct QrReader;

impl QrReader {
    pub fn new() -> Self {
        Self
    }
}

impl CodeReader for QrReader {
    fn read(&self, image: &[u8]) -> Result<Vec<ReadCode>, VisionError> {
        let grey = trove_vision::decode_luma_within(image, WORKING_SIDE)?;
        let working = within(&grey, WORKING_SIDE);
        let working = working.as_ref().unwrap_or(&grey);
        let mut found = codes(working);
        if found.is_empty()
            && let Some(small) = within(&grey, SMALL_SIDE)
        {
            found = codes(&small);
        }
        let mut read: Vec<ReadCode> =
            found.into_iter().map(|text| ReadCode { symbology: Symbology::QrCode, text, gs1: false }).collect();
        read.extend(barcodes_at_any_angle(working));
        // A code found twice (rqrr and rxing both, or the multiple reader twice) is answered once.
        let mut seen = HashSet::new();
        read.retain(|r| seen.insert((r.symbology, r.text.clone())));
        Ok(read)
    }
}

/// `grey` brought down to at most `side` pixels on its longest side, each pixel the mean of the area it covers
/// (`imageops::resize` would hold a copy at four `f32` a pixel between its passes: 45 MB from 1,750 pixels a
/// side); `None` when it is that small already.
fn within(grey: &GrayImage, side: u32) -> Option<GrayImage> {
    let (w, h) = grey.dimensions();
    let longest = w.max(h);
    if longest <= side {
        return None;
    }
    let scale = f64::from(side) / f64::from(longest);
    let (nw, nh) = ((f64::from(w) * scale).round().max(1.0) as u32, (f64::from(h) * scale).round().max(1.0) as u32);
    Some(imageops::thumbnail(grey, nw, nh))
}

/// The text of every QR code `rqrr` decodes in `grey`.
fn codes(grey: &GrayImage) -> Vec<String> {
    let (w, h) = grey.dimensions();
    let mut prepared = rqrr::PreparedImage::prepare_from_greyscale(w as usize, h as usize, |x, y| {
        grey.get_pixel(x as u32, y as u32).0[0]
    });
    prepared.detect_grids().into_iter().filter_map(|grid| grid.decode().ok().map(|(_, text)| text)).collect()
}

/// The barcode `rxing` reads in `grey` as it is, or else turned by each of [`TURNS`].
fn barcodes_at_any_angle(grey: &GrayImage) -> Vec<ReadCode> {
    let found = barcodes(grey);
    if !found.is_empty() {
        return found;
    }
    TURNS.iter().map(|degrees| barcodes(&turned(grey, *degrees))).find(|f| !f.is_empty()).unwrap_or_default()
}

/// The barcode `rxing` reads in `grey`, if it reads one, trying hard: every few rows, and the columns too. One
/// code, not every one: the reader of several codes searches the parts of the photo around each code it found,
/// which cut through a 1-D code's own bars and misread them.
fn barcodes(grey: &GrayImage) -> Vec<ReadCode> {
    let (w, h) = grey.dimensions();
    let Ok(source) = Luma8Source::new_with_slice(grey.as_raw(), w, h) else { return Vec::new() };
    let mut bitmap = BinaryBitmap::new(HybridBinarizer::new(source));
    let hints = DecodeHints {
        PossibleFormats: Some(HashSet::from([
            BarcodeFormat::EAN_13,
            BarcodeFormat::EAN_8,
            BarcodeFormat::UPC_A,
            BarcodeFormat::UPC_E,
            BarcodeFormat::CODE_128,
            BarcodeFormat::ITF,
            BarcodeFormat::DATA_MATRIX,
        ])),
        TryHarder: Some(true),
        // ITF-14 only: shorter Interleaved 2 of 5 is read in the noise of a photo far too easily.
        AllowedLengths: Some(vec![14]),
        ..DecodeHints::default()
    };
    let Ok(r) = MultiFormatReader::default().decode_with_hints(&mut bitmap, &hints) else { return Vec::new() };
    let symbology = match r.getBarcodeFormat() {
        BarcodeFormat::EAN_13 => Symbology::Ean13,
        BarcodeFormat::EAN_8 => Symbology::Ean8,
        BarcodeFormat::UPC_A => Symbology::UpcA,
        BarcodeFormat::UPC_E => Symbology::UpcE,
        BarcodeFormat::CODE_128 => Symbology::Code128,
        BarcodeFormat::ITF => Symbology::Itf,
        BarcodeFormat::DATA_MATRIX => Symbology::DataMatrix,
        _ => return Vec::new(),
    };
    // `]C1` is a GS1-128, `]d2` a GS1 DataMatrix: their text is a GS1 element string.
    let gs1 = matches!(
        r.getRXingResultMetadata().get(&RXingResultMetadataType::SYMBOLOGY_IDENTIFIER),
        Some(RXingResultMetadataValue::SymbologyIdentifier(id)) if id == "]C1" || id == "]d2"
    );
    vec![ReadCode { symbology, text: r.getText().to_owned(), gs1 }]
}

/// `grey` turned by `degrees` (counter-clockwise as seen) about its centre, in a frame that holds the whole of it,
/// the corners its mean grey; each pixel interpolated between the four it falls among.
fn turned(grey: &GrayImage, degrees: f32) -> GrayImage {
    let (w, h) = grey.dimensions();
    let (sin, cos) = degrees.to_radians().sin_cos();
    let (wf, hf) = (w as f32, h as f32);
    let nw = (wf * cos.abs() + hf * sin.abs()).ceil() as u32;
    let nh = (wf * sin.abs() + hf * cos.abs()).ceil() as u32;
    let (cx, cy, ncx, ncy) = (wf / 2.0, hf / 2.0, nw as f32 / 2.0, nh as f32 / 2.0);
    // The corners outside the photo are its mean grey: white ones are edges the readers take for a code's.
    let mean =
        grey.as_raw().iter().map(|&v| u64::from(v)).sum::<u64>() as f32 / (f64::from(w) * f64::from(h)).max(1.0) as f32;
    let at = |x: i64, y: i64| -> f32 {
        if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
            mean
        } else {
            f32::from(grey.get_pixel(x as u32, y as u32).0[0])
        }
    };
    GrayImage::from_fn(nw, nh, |x, y| {
        let (dx, dy) = (x as f32 + 0.5 - ncx, y as f32 + 0.5 - ncy);
        // The point of `grey` that lands here: the turn undone.
        let sx = cos * dx - sin * dy + cx - 0.5;
        let sy = sin * dx + cos * dy + cy - 0.5;
        let (x0, y0) = (sx.floor(), sy.floor());
        let (fx, fy) = (sx - x0, sy - y0);
        let (x0, y0) = (x0 as i64, y0 as i64);
        let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1, y0) * fx;
        let bottom = at(x0, y0 + 1) * (1.0 - fx) + at(x0 + 1, y0 + 1) * fx;
        Luma([(top * (1.0 - fy) + bottom * fy).round().clamp(0.0, 255.0) as u8])
    })
}
