//! [`Pictures`] over the `image` crate: the pictures kept on items lose their location metadata and keep
//! showing the right way up, and get a small JPEG thumbnail.
//!
//! Keeping a picture decodes it whole (a file that does not decode is refused, not kept). A JPEG whose EXIF
//! orientation is the default keeps its compressed bytes: only its metadata segments go (APP1: EXIF, where GPS
//! lives, and XMP; APP13: IPTC; APP2: MPF), and whatever follows its end (further pictures with their own
//! EXIF), so it loses no quality. Any other picture carrying metadata (a JPEG to be
//! turned, a PNG or WebP with EXIF or XMP) is re-encoded from its pixels with the orientation applied and no
//! metadata at all (a JPEG at quality [`JPEG_QUALITY`] with its ICC profile, a PNG, a lossless WebP).
//!
//! Decoding a 12-megapixel photo takes tens of MB, so at most [`PIXEL_WORKERS`] pictures are decoded at once;
//! the others wait their turn ([`Gate`]), which bounds the memory of many concurrent uploads.

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::codecs::webp::WebPEncoder;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageEncoder, ImageFormat};
use std::io::Cursor;
use std::sync::{Condvar, Mutex};
use trove_application::ports::media::{KeptPicture, PictureError, Pictures};
use trove_domain::measure::Region;
use trove_domain::media::{MediaType, PixelSize, thumb_size};

use crate::MAX_PIXELS;

/// The quality of a re-encoded JPEG (a turned photo).
pub const JPEG_QUALITY: u8 = 90;
/// The quality of a thumbnail.
pub const THUMB_QUALITY: u8 = 80;
/// The JPEG quality of the crop of a region kept at intake: a photo to recognise the item by.
pub const CROP_QUALITY: u8 = 88;
/// How many pictures are decoded at once; the others wait.
pub const PIXEL_WORKERS: usize = 2;

/// A counting gate: at most `n` holders at once.
#[derive(Debug)]
struct Gate {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A place in the [`Gate`], given back when dropped.
struct Pass<'a>(&'a Gate);

impl Gate {
    fn new(n: usize) -> Self {
        Self { free: Mutex::new(n), freed: Condvar::new() }
    }

    fn enter(&self) -> Pass<'_> {
        let mut free = self.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *free -= 1;
        Pass(self)
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(std::sync::PoisonError::into_inner) += 1;
        self.0.freed.notify_one();
    }
}

/// The picture work over the `image` crate.
#[derive(Debug)]
pub struct PictureWork {
    /// Bounds how many pictures are decoded at once (memory).
    gate: Gate,
}

impl Default for PictureWork {
    fn default() -> Self {
        Self::new()
    }
}

impl PictureWork {
    pub fn new() -> Self {
        Self { gate: Gate::new(PIXEL_WORKERS) }
    }
}

fn format(media_type: MediaType) -> Result<ImageFormat, PictureError> {
    match media_type {
        MediaType::Jpeg => Ok(ImageFormat::Jpeg),
        MediaType::Png => Ok(ImageFormat::Png),
        MediaType::Webp => Ok(ImageFormat::WebP),
        MediaType::Pdf => Err(PictureError::Unexpected(anyhow::anyhow!("a PDF is no picture"))),
    }
}

fn broken(e: image::ImageError) -> PictureError {
    PictureError::Broken(e.to_string())
}

/// A decoded picture and what its metadata said.
struct Decoded {
    pixels: DynamicImage,
    orientation: Orientation,
    /// Whether it carries EXIF or XMP metadata.
    has_metadata: bool,
    icc: Option<Vec<u8>>,
}

/// Decodes a picture whole, checking its size before the pixels are decoded.
fn decode(media_type: MediaType, bytes: &[u8]) -> Result<Decoded, PictureError> {
    let reader = image::ImageReader::with_format(Cursor::new(bytes), format(media_type)?);
    let mut decoder = reader.into_decoder().map_err(broken)?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(PictureError::TooManyPixels { width, height, max_pixels: MAX_PIXELS });
    }
    let exif = decoder.exif_metadata().map_err(broken)?;
    let xmp = decoder.xmp_metadata().map_err(broken)?;
    let icc = decoder.icc_profile().map_err(broken)?;
    let orientation = exif.as_deref().and_then(Orientation::from_exif_chunk).unwrap_or(Orientation::NoTransforms);
    let pixels = DynamicImage::from_decoder(decoder).map_err(broken)?;
    Ok(Decoded { pixels, orientation, has_metadata: exif.is_some() || xmp.is_some(), icc })
}

/// The size shown once `orientation` is applied to a picture of `width` x `height`.
fn shown(width: u32, height: u32, orientation: Orientation) -> PixelSize {
    match orientation {
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH => {
            PixelSize { width: height, height: width }
        }
        _ => PixelSize { width, height },
    }
}

fn encode_jpeg(pixels: &DynamicImage, quality: u8, icc: Option<Vec<u8>>) -> Result<Vec<u8>, PictureError> {
    let mut out = Vec::new();
    let mut encoder = JpegEncoder::new_with_quality(&mut out, quality);
    if let Some(icc) = icc {
        // A profile the encoder cannot take is left out: the colours shift a little, nothing else.
        let _ = encoder.set_icc_profile(icc);
    }
    let rgb = pixels.to_rgb8();
    encoder.encode_image(&rgb).map_err(|e| PictureError::Unexpected(anyhow::anyhow!("encode a JPEG: {e}")))?;
    Ok(out)
}

/// Re-encodes `pixels` (orientation applied) as `media_type`, without metadata.
fn encode(media_type: MediaType, pixels: &DynamicImage, icc: Option<Vec<u8>>) -> Result<Vec<u8>, PictureError> {
    let unexpected = |e: image::ImageError| PictureError::Unexpected(anyhow::anyhow!("encode a {media_type}: {e}"));
    match media_type {
        MediaType::Jpeg => encode_jpeg(pixels, JPEG_QUALITY, icc),
        MediaType::Png => {
            let mut out = Vec::new();
            pixels.write_with_encoder(PngEncoder::new(&mut out)).map_err(unexpected)?;
            Ok(out)
        }
        MediaType::Webp => {
            let mut out = Vec::new();
            let rgba = pixels.to_rgba8();
            WebPEncoder::new_lossless(&mut out)
                .write_image(&rgba, rgba.width(), rgba.height(), image::ExtendedColorType::Rgba8)
                .map_err(unexpected)?;
            Ok(out)
        }
        MediaType::Pdf => format(media_type).map(|_| Vec::new()),
    }
}

/// Walks the segments of a JPEG before its image data, handing each (its marker and its bytes, marker included)
/// to `segment`; answers where the first scan (SOS) starts. `None` when they do not parse.
fn walk_segments(jpeg: &[u8], mut segment: impl FnMut(u8, &[u8])) -> Option<usize> {
    if !jpeg.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut at = 2;
    loop {
        // Markers may be preceded by fill bytes (0xFF).
        while jpeg.get(at) == Some(&0xFF) && jpeg.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        if jpeg.get(at) != Some(&0xFF) {
            return None;
        }
        let marker = *jpeg.get(at + 1)?;
        if marker == 0xDA {
            return Some(at);
        }
        // Markers without a length.
        if marker == 0x01 || (0xD0..=0xD7).contains(&marker) {
            segment(marker, &jpeg[at..at + 2]);
            at += 2;
            continue;
        }
        let len = usize::from(u16::from_be_bytes([*jpeg.get(at + 2)?, *jpeg.get(at + 3)?]));
        let end = at.checked_add(2 + len).filter(|&e| len >= 2 && e <= jpeg.len())?;
        segment(marker, &jpeg[at..end]);
        at = end;
    }
}

/// A JPEG without its APP1 (EXIF, XMP), APP13 (IPTC) and APP2 multi-picture (MPF) segments, and without
/// whatever follows its end marker (the further pictures of an MPF file or a phone's motion photo, which carry
/// their own EXIF); everything else, the compressed image included, byte for byte. `None` when the segments
/// before the image data do not parse.
pub fn strip_jpeg_metadata(jpeg: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(jpeg.len());
    out.extend_from_slice(&[0xFF, 0xD8]);
    let scan = walk_segments(jpeg, |marker, bytes| {
        let mpf = marker == 0xE2 && bytes.get(4..8) == Some(b"MPF\0");
        if marker != 0xE1 && marker != 0xED && !mpf {
            out.extend_from_slice(bytes);
        }
    })?;
    // The compressed data, up to and including its end marker (or all of it when it has none).
    let end = jpeg[scan..].windows(2).position(|w| w == [0xFF, 0xD9]).map_or(jpeg.len(), |p| scan + p + 2);
    out.extend_from_slice(&jpeg[scan..end]);
    Some(out)
}

/// Whether a JPEG ends its image: an end marker (EOI) after the start of its scan. Inside the compressed data a
/// 0xFF byte is always followed by 0x00 or a restart marker, so the first `FF D9` there is the end; whatever a
/// camera appends after it stays. A file cut short has none, and the decoder would fill the missing part grey.
fn jpeg_complete(jpeg: &[u8]) -> bool {
    walk_segments(jpeg, |_, _| {}).is_some_and(|scan| jpeg[scan..].windows(2).any(|w| w == [0xFF, 0xD9]))
}

impl Pictures for PictureWork {
    fn keep(&self, media_type: MediaType, bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
        if media_type == MediaType::Jpeg && !jpeg_complete(&bytes) {
            return Err(PictureError::Broken("the JPEG is cut short (it has no end marker)".into()));
        }
        let _pass = self.gate.enter();
        let mut decoded = decode(media_type, &bytes)?;
        let size = shown(decoded.pixels.width(), decoded.pixels.height(), decoded.orientation);
        let turn = decoded.orientation != Orientation::NoTransforms;
        if media_type == MediaType::Jpeg && !turn {
            drop(decoded);
            let stripped = strip_jpeg_metadata(&bytes)
                .ok_or_else(|| PictureError::Broken("the JPEG's segments do not parse".into()))?;
            return Ok(KeptPicture { bytes: stripped, size });
        }
        if !turn && !decoded.has_metadata {
            return Ok(KeptPicture { bytes, size });
        }
        drop(bytes);
        decoded.pixels.apply_orientation(decoded.orientation);
        let bytes = encode(media_type, &decoded.pixels, decoded.icc.take())?;
        Ok(KeptPicture { bytes, size })
    }

    fn thumbnail(&self, media_type: MediaType, bytes: &[u8]) -> Result<Vec<u8>, PictureError> {
        let _pass = self.gate.enter();
        let mut decoded = decode(media_type, bytes)?;
        decoded.pixels.apply_orientation(decoded.orientation);
        let want = thumb_size(PixelSize { width: decoded.pixels.width(), height: decoded.pixels.height() });
        let rgb = decoded.pixels.to_rgb8();
        drop(decoded.pixels);
        let small = image::imageops::thumbnail(&rgb, want.width, want.height);
        drop(rgb);
        encode_jpeg(&DynamicImage::ImageRgb8(small), THUMB_QUALITY, None)
    }

    fn crop(&self, media_type: MediaType, bytes: &[u8], region: Region) -> Result<Vec<u8>, PictureError> {
        let _pass = self.gate.enter();
        let decoded = decode(media_type, bytes)?;
        let (width, height) = (decoded.pixels.width(), decoded.pixels.height());
        if region.x >= width || region.y >= height || region.width == 0 || region.height == 0 {
            return Err(PictureError::Broken(format!(
                "the region at {}, {} lies outside the {width} x {height} picture",
                region.x, region.y
            )));
        }
        let cut_width = region.width.min(width - region.x);
        let cut_height = region.height.min(height - region.y);
        let mut cut = decoded.pixels.crop_imm(region.x, region.y, cut_width, cut_height);
        drop(decoded.pixels);
        cut.apply_orientation(decoded.orientation);
        encode_jpeg(&DynamicImage::ImageRgb8(cut.to_rgb8()), CROP_QUALITY, None)
    }
}

/// A JPEG of `width` x `height` whose top-left quarter is red and the rest blue, carrying an EXIF block with
/// `orientation` and, when `gps`, a GPS position ([`with_exif`]): the kind of photo a phone takes. For tests.
pub fn exif_jpeg(width: u32, height: u32, orientation: u16, gps: bool) -> Vec<u8> {
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        if x < width / 2 && y < height / 2 { image::Rgb([220, 20, 20]) } else { image::Rgb([20, 20, 220]) }
    });
    let mut plain = Vec::new();
    JpegEncoder::new_with_quality(&mut plain, 95).encode_image(&img).expect("encode a test JPEG");
    with_exif(&plain, orientation, gps)
}

/// `jpeg` with an EXIF block carrying `orientation` and, when `gps`, a GPS position (51°28'38"N) inserted
/// after its start marker. For tests and benchmarks.
pub fn with_exif(jpeg: &[u8], orientation: u16, gps: bool) -> Vec<u8> {
    let plain = jpeg;
    // A big-endian TIFF block: IFD0 with Orientation and (with `gps`) a GPS IFD pointer; the GPS IFD with the
    // latitude's reference and value.
    let mut tiff: Vec<u8> = b"MM\0\x2A\0\0\0\x08".to_vec();
    let entries: u16 = if gps { 2 } else { 1 };
    tiff.extend_from_slice(&entries.to_be_bytes());
    tiff.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1]);
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    let gps_ifd = 8 + 2 + u32::from(entries) * 12 + 4;
    if gps {
        tiff.extend_from_slice(&[0x88, 0x25, 0, 4, 0, 0, 0, 1]);
        tiff.extend_from_slice(&gps_ifd.to_be_bytes());
    }
    tiff.extend_from_slice(&[0, 0, 0, 0]);
    if gps {
        let rationals = gps_ifd + 2 + 2 * 12 + 4;
        tiff.extend_from_slice(&2u16.to_be_bytes());
        // GPSLatitudeRef "N".
        tiff.extend_from_slice(&[0x00, 0x01, 0, 2, 0, 0, 0, 2, b'N', 0, 0, 0]);
        // GPSLatitude: three rationals 51/1, 28/1, 38/1.
        tiff.extend_from_slice(&[0x00, 0x02, 0, 5, 0, 0, 0, 3]);
        tiff.extend_from_slice(&rationals.to_be_bytes());
        tiff.extend_from_slice(&[0, 0, 0, 0]);
        for v in [51u32, 28, 38] {
            tiff.extend_from_slice(&v.to_be_bytes());
            tiff.extend_from_slice(&1u32.to_be_bytes());
        }
    }
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = plain[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&u16::try_from(app1.len() + 2).expect("a small EXIF block").to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&plain[2..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(p: image::Rgb<u8>) -> bool {
        p.0[0] > 150 && p.0[2] < 100
    }

    fn decoded(bytes: &[u8]) -> image::RgbImage {
        image::load_from_memory(bytes).unwrap().to_rgb8()
    }

    #[test]
    fn the_test_photo_carries_its_gps_and_orientation() {
        let jpeg = exif_jpeg(64, 32, 6, true);
        let mut decoder =
            image::ImageReader::with_format(Cursor::new(&jpeg), ImageFormat::Jpeg).into_decoder().unwrap();
        let exif = decoder.exif_metadata().unwrap().unwrap();
        assert_eq!(Orientation::from_exif_chunk(&exif), Some(Orientation::Rotate90));
        assert!(exif.windows(2).any(|w| w == [0x88, 0x25]), "a GPS IFD pointer");
    }

    #[test]
    fn an_upright_jpeg_loses_its_exif_and_keeps_its_image_data() {
        let jpeg = exif_jpeg(64, 32, 1, true);
        let kept = PictureWork::new().keep(MediaType::Jpeg, jpeg.clone()).unwrap();
        assert_eq!(kept.size, PixelSize { width: 64, height: 32 });
        assert!(!kept.bytes.windows(4).any(|w| w == b"Exif"), "no EXIF left");
        // Nothing but the EXIF segment went: the rest is the same bytes.
        let app1_len = usize::from(u16::from_be_bytes([jpeg[4], jpeg[5]])) + 2;
        assert_eq!(kept.bytes.len(), jpeg.len() - app1_len);
        assert_eq!(&kept.bytes[2..], &jpeg[2 + app1_len..]);
    }

    #[test]
    fn a_turned_jpeg_is_turned_in_its_pixels_and_loses_its_exif() {
        // Orientation 6: the camera was turned; shown, the picture is rotated 90 degrees clockwise, so the
        // red top-left quarter of the stored pixels shows at the top right.
        let kept = PictureWork::new().keep(MediaType::Jpeg, exif_jpeg(64, 32, 6, true)).unwrap();
        assert_eq!(kept.size, PixelSize { width: 32, height: 64 });
        assert!(!kept.bytes.windows(4).any(|w| w == b"Exif"), "no EXIF left");
        let shown = decoded(&kept.bytes);
        assert_eq!(shown.dimensions(), (32, 64));
        assert!(red(*shown.get_pixel(28, 4)), "top right is red");
        assert!(!red(*shown.get_pixel(4, 4)), "top left is not");
        let mut decoder =
            image::ImageReader::with_format(Cursor::new(&kept.bytes), ImageFormat::Jpeg).into_decoder().unwrap();
        assert_eq!(decoder.orientation().unwrap(), Orientation::NoTransforms);
    }

    #[test]
    fn a_png_without_metadata_is_kept_as_it_is() {
        let mut png = Vec::new();
        DynamicImage::ImageRgb8(image::RgbImage::new(5, 4))
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .unwrap();
        let kept = PictureWork::new().keep(MediaType::Png, png.clone()).unwrap();
        assert_eq!(kept, KeptPicture { bytes: png, size: PixelSize { width: 5, height: 4 } });
    }

    #[test]
    fn broken_pictures_are_refused() {
        let mut cut = exif_jpeg(64, 32, 1, false);
        cut.truncate(cut.len() / 3);
        for (media_type, bytes) in [
            (MediaType::Jpeg, cut),
            (MediaType::Png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
            (MediaType::Webp, b"RIFF\x24\0\0\0WEBPVP8 \0\0".to_vec()),
        ] {
            let err = PictureWork::new().keep(media_type, bytes).unwrap_err();
            assert!(matches!(err, PictureError::Broken(_)), "{media_type}: {err:?}");
        }
    }

    #[test]
    fn a_crop_is_just_its_region_without_metadata() {
        let photo = exif_jpeg(200, 100, 1, true);
        let region = |x, y, width, height| Region { x, y, width, height, area_px: 1 };
        let crop = PictureWork::new().crop(MediaType::Jpeg, &photo, region(10, 5, 60, 30)).unwrap();
        assert!(!crop.windows(4).any(|w| w == b"Exif"), "no EXIF in a crop");
        let pixels = decoded(&crop);
        assert_eq!(pixels.dimensions(), (60, 30));
        assert!(red(*pixels.get_pixel(30, 15)), "the crop lies in the red quarter");
        // Cut at the picture's edge; outside it is refused.
        let edge = decoded(&PictureWork::new().crop(MediaType::Jpeg, &photo, region(150, 80, 100, 100)).unwrap());
        assert_eq!(edge.dimensions(), (50, 20));
        let err = PictureWork::new().crop(MediaType::Jpeg, &photo, region(200, 0, 5, 5)).unwrap_err();
        assert!(matches!(err, PictureError::Broken(_)), "{err:?}");
    }

    #[test]
    fn a_jpeg_cut_anywhere_in_its_scan_is_refused() {
        let whole = exif_jpeg(200, 100, 1, true);
        for keep in [whole.len() - 2, whole.len() * 2 / 3, whole.len() / 3] {
            let err = PictureWork::new().keep(MediaType::Jpeg, whole[..keep].to_vec()).unwrap_err();
            assert!(matches!(err, PictureError::Broken(_)), "cut at {keep}: {err:?}");
        }
        // What a camera appends after the end (a motion photo, the further pictures of an MPF file, each with
        // its own EXIF) is no reason to refuse, and is not kept.
        let mut trailer = whole.clone();
        trailer.extend_from_slice(&exif_jpeg(8, 8, 1, true));
        let kept = PictureWork::new().keep(MediaType::Jpeg, trailer).unwrap();
        assert!(!kept.bytes.windows(4).any(|w| w == b"Exif"), "no EXIF left, the trailer's neither");
        assert!(kept.bytes.ends_with(&[0xFF, 0xD9]));
    }

    #[test]
    fn thumbnails_are_small_jpegs_shown_upright() {
        let thumb = PictureWork::new().thumbnail(MediaType::Jpeg, &exif_jpeg(1000, 500, 6, false)).unwrap();
        assert!(thumb.starts_with(&[0xFF, 0xD8, 0xFF]));
        let shown = decoded(&thumb);
        assert_eq!(shown.dimensions(), (160, 320));
        assert!(red(*shown.get_pixel(150, 10)), "top right is red");
        let again = PictureWork::new().thumbnail(MediaType::Jpeg, &exif_jpeg(1000, 500, 6, false)).unwrap();
        assert_eq!(thumb, again, "the same picture makes the same thumbnail");
    }

    #[test]
    fn stripping_keeps_every_other_segment() {
        let jpeg = [
            &[0xFF, 0xD8][..],
            &[0xFF, 0xE0, 0, 4, 1, 2],
            &[0xFF, 0xE1, 0, 4, 3, 4],
            &[0xFF, 0xED, 0, 3, 5],
            &[0xFF, 0xE2, 0, 3, 6],
            &[0xFF, 0xE2, 0, 6, b'M', b'P', b'F', 0],
            &[0xFF, 0xDA, 0, 2, 0xAB, 0xFF, 0xE1, 0xFF, 0xD9, 0xFF, 0xD8, 0xFF, 0xE1],
        ]
        .concat();
        let expected = [
            &[0xFF, 0xD8][..],
            &[0xFF, 0xE0, 0, 4, 1, 2],
            &[0xFF, 0xE2, 0, 3, 6],
            &[0xFF, 0xDA, 0, 2, 0xAB, 0xFF, 0xE1, 0xFF, 0xD9],
        ]
        .concat();
        assert_eq!(strip_jpeg_metadata(&jpeg), Some(expected));
        assert_eq!(strip_jpeg_metadata(&[0xFF, 0xD8, 0xFF, 0xE1, 0, 40]), None, "a segment past the end");
    }
}
