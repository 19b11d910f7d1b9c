//! [`Pictures`] over the `image` crate: the pictures kept on items lose their location metadata and keep
//! showing the right way up, and get a small JPEG thumbnail.
//!
//! Keeping a picture decodes all its pixels (a file that does not decode is refused, not kept). A JPEG whose EXIF
//! orientation is the default keeps its compressed bytes: only its metadata segments go (APP1: EXIF, where GPS
//! lives, and XMP; APP13: IPTC; APP2: MPF), and whatever follows its end (further pictures with their own
//! EXIF), so it loses no quality. A PNG whose orientation is the default keeps its compressed bytes too, with only
//! the chunks that say how its pixels look ([`strip_png_metadata`]: no EXIF, text, XMP or time; its ICC profile
//! only when it inflates within [`PNG_HEADER_BYTES`]). Any other picture carrying metadata (a JPEG or PNG to be
//! turned, a WebP with EXIF or XMP) is re-encoded from its pixels with the orientation applied and no metadata at
//! all (a JPEG at quality [`JPEG_QUALITY`] with its ICC profile, a PNG, a lossless WebP).
//!
//! Every decode is bounded by its bytes, whatever the file claims. Checking, thumbnailing and cropping go row by
//! row through `decode.rs` (a PNG is streamed and never held whole; a JPEG's check decodes only its luma plane; a
//! thumbnail is averaged over blocks as the rows arrive; a crop keeps only its region's rows). A picture decoded
//! whole (a JPEG or WebP to re-encode, a JPEG's or WebP's thumbnail or crop, an interlaced PNG) is decoded under
//! [`MAX_DECODED_BYTES`] and refused as too large beyond it. A PNG's text chunks and a compressed ICC profile are
//! never inflated beyond [`PNG_HEADER_BYTES`]. Even so a whole decode takes up to 160 MB, so at most
//! [`PIXEL_WORKERS`] pictures are decoded at once; the others wait their turn ([`Gate`]), which bounds the memory
//! of many concurrent uploads.

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngEncoder;
use image::codecs::webp::WebPEncoder;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageEncoder, ImageFormat, RgbImage};
use std::io::Cursor;
use std::sync::{Condvar, Mutex};
use trove_application::ports::VisionError;
use trove_application::ports::media::{KeptPicture, PictureError, Pictures};
use trove_domain::measure::Region;
use trove_domain::media::{MediaType, PixelSize, THUMB_MAX_SIDE, thumb_size};

use crate::decode::{Samples, decode_rows_from};
use crate::segment::{Rows, Shrinker};
use crate::{MAX_DECODED_BYTES, MAX_PIXELS};

/// The quality of a re-encoded JPEG (a turned photo).
pub const JPEG_QUALITY: u8 = 90;
/// The quality of a thumbnail.
pub const THUMB_QUALITY: u8 = 80;
/// The JPEG quality of the crop of a region kept at intake: a photo to recognise the item by.
pub const CROP_QUALITY: u8 = 88;
/// How many pictures are decoded at once; the others wait.
pub const PIXEL_WORKERS: usize = 2;
/// The most a PNG's chunks before its pixels may take when read for a picture, its ICC profile inflated included
/// (its text chunks are skipped unread): a real profile is well under 1 MB, while 1 MB of deflated zeros inflates
/// to 1 GB. A profile whose chunk or inflated bytes do not fit is dropped, never read past it; a picture whose
/// other chunks do not fit (an EXIF block of megabytes) is refused as broken.
pub const PNG_HEADER_BYTES: usize = 8 * 1024 * 1024;

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

/// What refusing an image to decode says of a picture: over the pixels or bytes decoded, too many pixels; the
/// rest is a broken file.
fn refused(e: VisionError) -> PictureError {
    match e {
        VisionError::TooLarge { width, height, max_pixels } => {
            PictureError::TooManyPixels { width, height, max_pixels }
        }
        VisionError::Unexpected(e) => PictureError::Unexpected(e),
        e @ (VisionError::Unsupported | VisionError::Undecodable(_) | VisionError::TooSmall { .. }) => {
            PictureError::Broken(e.to_string())
        }
    }
}

/// Checks that every pixel of a picture decodes, without keeping them (a JPEG's luma plane only, a PNG's rows one
/// at a time): its size.
fn check_pixels(bytes: &[u8]) -> Result<PixelSize, PictureError> {
    struct Size(u32, u32);
    impl Rows for Size {
        fn add_row(&mut self, _: u32, _: &[u8], _: usize) {}
    }
    let Size(width, height) = decode_rows_from(bytes, Samples::Luma, 1, Size).map_err(refused)?;
    Ok(PixelSize { width, height })
}

/// What a PNG says before its pixels, read with its text chunks skipped and within [`PNG_HEADER_BYTES`].
struct PngHeader {
    orientation: Orientation,
    /// Whether its ICC profile inflated within the bound (none when it has none).
    icc: bool,
}

/// Reads a PNG's header twice within [`PNG_HEADER_BYTES`]: without its ICC profile, which must succeed, then
/// with it, which fails, or reads no profile, when the profile does not fit.
fn png_header(bytes: &[u8]) -> Result<PngHeader, PictureError> {
    let read = |icc: bool| {
        let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), png::Limits { bytes: PNG_HEADER_BYTES });
        decoder.set_ignore_text_chunk(true);
        decoder.set_ignore_iccp_chunk(!icc);
        decoder.read_info()
    };
    let reader = read(false).map_err(|e| match e {
        png::DecodingError::LimitsExceeded => {
            PictureError::Broken(format!("the PNG's chunks before its pixels take more than {PNG_HEADER_BYTES} bytes"))
        }
        e => PictureError::Broken(e.to_string()),
    })?;
    let info = reader.info();
    if u64::from(info.width) * u64::from(info.height) > MAX_PIXELS {
        return Err(PictureError::TooManyPixels { width: info.width, height: info.height, max_pixels: MAX_PIXELS });
    }
    let orientation =
        info.exif_metadata.as_deref().and_then(Orientation::from_exif_chunk).unwrap_or(Orientation::NoTransforms);
    let icc = read(true).is_ok_and(|with| with.info().icc_profile.is_some());
    Ok(PngHeader { orientation, icc })
}

/// The chunks a kept PNG keeps besides a readable ICC profile: those that make its pixels and say how they look.
/// Everything else goes: EXIF (`eXIf`, where GPS lives), text and XMP (`tEXt`, `zTXt`, `iTXt`), the time, an
/// animation's frames, private chunks.
const PNG_KEPT_CHUNKS: [&[u8; 4]; 14] = [
    b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"gAMA", b"cHRM", b"sRGB", b"sBIT", b"bKGD", b"pHYs", b"cICP",
    b"mDCV", b"cLLI",
];

/// A PNG with only the chunks that make its pixels and say how they look ([`PNG_KEPT_CHUNKS`], and its ICC
/// profile when `keep_icc`), byte for byte; nothing after its end. `None` when its chunks do not parse.
pub fn strip_png_metadata(png: &[u8], keep_icc: bool) -> Option<Vec<u8>> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    if !png.starts_with(SIGNATURE) {
        return None;
    }
    let mut out = Vec::with_capacity(png.len());
    out.extend_from_slice(SIGNATURE);
    let mut at = SIGNATURE.len();
    loop {
        let length = u32::from_be_bytes(png.get(at..at + 4)?.try_into().ok()?);
        let end = at.checked_add(12)?.checked_add(usize::try_from(length).ok()?).filter(|&e| e <= png.len())?;
        let kind = &png[at + 4..at + 8];
        if PNG_KEPT_CHUNKS.iter().any(|k| &k[..] == kind) || (keep_icc && kind == b"iCCP") {
            out.extend_from_slice(&png[at..end]);
        }
        if kind == b"IEND" {
            return Some(out);
        }
        at = end;
    }
}

/// A picture's EXIF orientation, read from its header (a PNG's within [`PNG_HEADER_BYTES`]).
fn orientation_of(media_type: MediaType, bytes: &[u8]) -> Result<Orientation, PictureError> {
    if media_type == MediaType::Png {
        return Ok(png_header(bytes)?.orientation);
    }
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format(media_type)?);
    reader.limits(whole_limits());
    let mut decoder = reader.into_decoder().map_err(broken)?;
    decoder.orientation().map_err(broken)
}

/// What a whole decode may allocate: [`MAX_DECODED_BYTES`].
fn whole_limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    limits
}

/// A decoded picture and what its metadata said.
struct Decoded {
    pixels: DynamicImage,
    orientation: Orientation,
    /// Whether it carries EXIF or XMP metadata.
    has_metadata: bool,
    icc: Option<Vec<u8>>,
}

/// Decodes a picture whole, checking its size before the pixels are decoded, under [`MAX_DECODED_BYTES`]: a
/// picture that would need more is refused as too large. Only for a picture to re-encode; a PNG's metadata chunks
/// are gone before ([`strip_png_metadata`]), so its orientation is read from its header instead.
fn decode(media_type: MediaType, bytes: &[u8]) -> Result<Decoded, PictureError> {
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format(media_type)?);
    reader.limits(whole_limits());
    let mut decoder = reader.into_decoder().map_err(broken)?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(PictureError::TooManyPixels { width, height, max_pixels: MAX_PIXELS });
    }
    let total = decoder.total_bytes();
    if total > MAX_DECODED_BYTES {
        let per_pixel = u64::from(decoder.color_type().bytes_per_pixel());
        return Err(PictureError::TooManyPixels { width, height, max_pixels: MAX_DECODED_BYTES / per_pixel });
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

/// The rows of one region of a picture, kept as they arrive; the rest are dropped.
struct Cut {
    /// The region's top-left corner.
    x: u32,
    y: u32,
    /// The region's pixels, cut at the picture's edge; `None` when it lies wholly outside the picture.
    pixels: Option<RgbImage>,
    /// The picture's size, to say so then.
    size: (u32, u32),
}

impl Cut {
    fn new(width: u32, height: u32, region: Region) -> Self {
        let inside = region.x < width && region.y < height && region.width > 0 && region.height > 0;
        let pixels =
            inside.then(|| RgbImage::new(region.width.min(width - region.x), region.height.min(height - region.y)));
        Cut { x: region.x, y: region.y, pixels, size: (width, height) }
    }
}

impl Rows for Cut {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        let Some(pixels) = &mut self.pixels else { return };
        let Some(at) = y.checked_sub(self.y).filter(|&at| at < pixels.height()) else { return };
        let from = self.x as usize * channels;
        if let Some(part) = row.get(from..from + pixels.width() as usize * channels) {
            pixels.add_row(at, part, channels);
        }
    }
}

/// The rows of several regions of a picture, each kept as they arrive: one decoding for every crop.
struct Cuts(Vec<Cut>);

impl Rows for Cuts {
    fn add_row(&mut self, y: u32, row: &[u8], channels: usize) {
        for cut in &mut self.0 {
            cut.add_row(y, row, channels);
        }
    }
}

impl PictureWork {
    fn keep_jpeg(bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
        let orientation = orientation_of(MediaType::Jpeg, &bytes)?;
        if orientation != Orientation::NoTransforms {
            return Self::re_encode(MediaType::Jpeg, &bytes, orientation);
        }
        let size = check_pixels(&bytes)?;
        let stripped = strip_jpeg_metadata(&bytes)
            .ok_or_else(|| PictureError::Broken("the JPEG's segments do not parse".into()))?;
        Ok(KeptPicture { bytes: stripped, size })
    }

    fn keep_png(bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
        let header = png_header(&bytes)?;
        let stripped = strip_png_metadata(&bytes, header.icc)
            .ok_or_else(|| PictureError::Broken("the PNG's chunks do not parse".into()))?;
        drop(bytes);
        if header.orientation != Orientation::NoTransforms {
            return Self::re_encode(MediaType::Png, &stripped, header.orientation);
        }
        let size = check_pixels(&stripped)?;
        Ok(KeptPicture { bytes: stripped, size })
    }

    fn keep_webp(bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
        let decoded = decode(MediaType::Webp, &bytes)?;
        if decoded.orientation == Orientation::NoTransforms && !decoded.has_metadata {
            let size = PixelSize { width: decoded.pixels.width(), height: decoded.pixels.height() };
            return Ok(KeptPicture { bytes, size });
        }
        drop(bytes);
        Self::encode_turned(MediaType::Webp, decoded)
    }

    /// Decodes a picture whole (under [`MAX_DECODED_BYTES`]) and re-encodes it turned by `orientation`.
    fn re_encode(media_type: MediaType, bytes: &[u8], orientation: Orientation) -> Result<KeptPicture, PictureError> {
        let mut decoded = decode(media_type, bytes)?;
        decoded.orientation = orientation;
        Self::encode_turned(media_type, decoded)
    }

    fn encode_turned(media_type: MediaType, mut decoded: Decoded) -> Result<KeptPicture, PictureError> {
        let size = shown(decoded.pixels.width(), decoded.pixels.height(), decoded.orientation);
        decoded.pixels.apply_orientation(decoded.orientation);
        let bytes = encode(media_type, &decoded.pixels, decoded.icc.take())?;
        Ok(KeptPicture { bytes, size })
    }
}

impl Pictures for PictureWork {
    fn keep(&self, media_type: MediaType, bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
        if media_type == MediaType::Jpeg && !jpeg_complete(&bytes) {
            return Err(PictureError::Broken("the JPEG is cut short (it has no end marker)".into()));
        }
        let _pass = self.gate.enter();
        match media_type {
            MediaType::Jpeg => Self::keep_jpeg(bytes),
            MediaType::Png => Self::keep_png(bytes),
            MediaType::Webp => Self::keep_webp(bytes),
            MediaType::Pdf => Err(PictureError::Unexpected(anyhow::anyhow!("a PDF is no picture"))),
        }
    }

    /// Averages blocks of the picture's pixels as its rows arrive, to between two and four times the thumbnail's
    /// size (as it is when smaller), and makes the thumbnail from that: a PNG is never held whole.
    fn thumbnail(&self, media_type: MediaType, bytes: &[u8]) -> Result<Vec<u8>, PictureError> {
        let _pass = self.gate.enter();
        let orientation = orientation_of(media_type, bytes)?;
        let blocks = decode_rows_from(bytes, Samples::Colour, 1, |width, height| {
            Shrinker::new(width, height, width.max(height) / (2 * THUMB_MAX_SIDE))
        })
        .map_err(refused)?;
        let (width, height) = blocks.photo_size();
        let mut small = DynamicImage::ImageRgb8(blocks.into_rgb());
        small.apply_orientation(orientation);
        let want = thumb_size(shown(width, height, orientation));
        let thumb = image::imageops::thumbnail(&small.to_rgb8(), want.width, want.height);
        encode_jpeg(&DynamicImage::ImageRgb8(thumb), THUMB_QUALITY, None)
    }

    /// Keeps only the region's rows as they arrive: a PNG is never held whole.
    fn crops(&self, media_type: MediaType, bytes: &[u8], regions: &[Region]) -> Result<Vec<Vec<u8>>, PictureError> {
        let _pass = self.gate.enter();
        let orientation = orientation_of(media_type, bytes)?;
        let cuts = decode_rows_from(bytes, Samples::Colour, 1, |width, height| {
            Cuts(regions.iter().map(|r| Cut::new(width, height, *r)).collect())
        })
        .map_err(refused)?;
        cuts.0
            .into_iter()
            .zip(regions)
            .map(|(cut, region)| {
                let Some(pixels) = cut.pixels else {
                    let (width, height) = cut.size;
                    return Err(PictureError::Broken(format!(
                        "the region at {}, {} lies outside the {width} x {height} picture",
                        region.x, region.y
                    )));
                };
                let mut cut = DynamicImage::ImageRgb8(pixels);
                cut.apply_orientation(orientation);
                encode_jpeg(&cut, CROP_QUALITY, None)
            })
            .collect()
    }
}

/// A JPEG of `width` x `height` whose top-left quarter is red and the rest blue, carrying an EXIF block with
/// `orientation` and, when `gps`, a GPS position ([`with_exif`]): the kind of photo a phone takes. For tests.
pub fn exif_jpeg(width: u32, height: u32, orientation: u16, gps: bool) -> Vec<u8> {
    let img = RgbImage::from_fn(width, height, |x, y| {
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

/// A 64 x 64 PNG whose ICC profile is `inflated` zero bytes deflated into about `inflated / 160` bytes (a zlib
/// stream of back-references), the kind of file that costs gigabytes to a decoder that inflates its chunks:
/// with `inflated` of 1 GB, about 6 MB. For tests and benchmarks.
pub fn iccp_bomb_png(inflated: usize) -> Vec<u8> {
    let mut plain = Vec::new();
    let pixels = RgbImage::from_fn(64, 64, |x, _| image::Rgb([(x * 4) as u8, 90, 160]));
    PngEncoder::new(&mut plain).write_image(&pixels, 64, 64, image::ExtendedColorType::Rgb8).expect("a test PNG");
    let mut profile = b"bomb\0\0".to_vec();
    profile.extend_from_slice(&deflated_zeros(inflated));
    // The signature and IHDR (8 + 25 bytes), the profile, then the rest.
    let mut out = plain[..33].to_vec();
    out.extend_from_slice(&png_chunk(b"iCCP", &profile));
    out.extend_from_slice(&plain[33..]);
    out
}

/// A PNG chunk: its length, kind, data and CRC. For tests.
pub fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut crc = !0u32;
    for &byte in kind.iter().chain(data) {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    let length = u32::try_from(data.len()).expect("a chunk under 4 GB");
    [&length.to_be_bytes()[..], kind, data, &(!crc).to_be_bytes()].concat()
}

/// A zlib stream of at least `n` zero bytes (rounded up to 1 + a multiple of 258): one literal zero, then
/// back-references of 258 bytes at distance 1, in one block of fixed Huffman codes (13 bits each).
fn deflated_zeros(n: usize) -> Vec<u8> {
    let repeats = n.saturating_sub(1).div_ceil(258);
    let mut out = vec![0x78, 0x01];
    let (mut bits, mut count) = (0u64, 0u32);
    let mut put = |code: u64, len: u32, out: &mut Vec<u8>| {
        // Huffman codes go most significant bit first into a stream filled from each byte's low bit.
        for i in (0..len).rev() {
            bits |= ((code >> i) & 1) << count;
            count += 1;
        }
        while count >= 8 {
            out.push(bits as u8);
            bits >>= 8;
            count -= 8;
        }
    };
    // The last block, of fixed codes (BFINAL 1, BTYPE 01, written from the low bit).
    put(1, 1, &mut out);
    put(0b10, 2, &mut out);
    // A literal zero (code 0x30, 8 bits), then length 258 (symbol 285: 0xC5, 8 bits) at distance 1 (0, 5 bits).
    put(0x30, 8, &mut out);
    for _ in 0..repeats {
        put(0xC5, 8, &mut out);
        put(0, 5, &mut out);
    }
    // The end of the block (symbol 256: seven zero bits), then zero bits to fill the last byte.
    put(0, 7, &mut out);
    put(0, 7, &mut out);
    let total = 1 + repeats * 258;
    let adler = (((total % 65_521) as u32) << 16) | 1;
    out.extend_from_slice(&adler.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red(p: image::Rgb<u8>) -> bool {
        p.0[0] > 150 && p.0[2] < 100
    }

    fn decoded(bytes: &[u8]) -> RgbImage {
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
        DynamicImage::ImageRgb8(RgbImage::new(5, 4)).write_to(&mut Cursor::new(&mut png), ImageFormat::Png).unwrap();
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
        let region = |x, y, width, height| Region { x, y, width, height, area_px: 1, spread: None };
        let crop = PictureWork::new().crops(MediaType::Jpeg, &photo, &[region(10, 5, 60, 30)]).unwrap().remove(0);
        assert!(!crop.windows(4).any(|w| w == b"Exif"), "no EXIF in a crop");
        let pixels = decoded(&crop);
        assert_eq!(pixels.dimensions(), (60, 30));
        assert!(red(*pixels.get_pixel(30, 15)), "the crop lies in the red quarter");
        // Cut at the picture's edge; outside it is refused.
        let edge = decoded(
            &PictureWork::new().crops(MediaType::Jpeg, &photo, &[region(150, 80, 100, 100)]).unwrap().remove(0),
        );
        assert_eq!(edge.dimensions(), (50, 20));
        let err = PictureWork::new().crops(MediaType::Jpeg, &photo, &[region(200, 0, 5, 5)]).unwrap_err();
        assert!(matches!(err, PictureError::Broken(_)), "{err:?}");
        // Several regions from one decoding: each the same as cropped alone, in the order asked.
        let one_by_one: Vec<Vec<u8>> = [region(150, 80, 100, 100), region(10, 5, 60, 30)]
            .iter()
            .map(|r| PictureWork::new().crops(MediaType::Jpeg, &photo, &[*r]).unwrap().remove(0))
            .collect();
        let at_once =
            PictureWork::new().crops(MediaType::Jpeg, &photo, &[region(150, 80, 100, 100), region(10, 5, 60, 30)]);
        assert_eq!(at_once.unwrap(), one_by_one);
        assert_eq!(one_by_one[1], crop);
        assert!(PictureWork::new().crops(MediaType::Jpeg, &photo, &[]).unwrap().is_empty());
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

    /// The kinds of a PNG's chunks, in order.
    fn chunks(png: &[u8]) -> Vec<String> {
        let mut kinds = Vec::new();
        let mut at = 8;
        while at + 8 <= png.len() {
            let length = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            kinds.push(String::from_utf8_lossy(&png[at + 4..at + 8]).into_owned());
            at += 12 + length;
        }
        kinds
    }

    /// A PNG of `width` x `height` 16-bit RGB whose top-left quarter is red and the rest blue.
    fn png16(width: u32, height: u32) -> Vec<u8> {
        let pixels = image::ImageBuffer::<image::Rgb<u16>, _>::from_fn(width, height, |x, y| {
            if x < width / 2 && y < height / 2 {
                image::Rgb([60_000, 5_000, 5_000])
            } else {
                image::Rgb([5_000, 5_000, 60_000])
            }
        });
        let mut png = Vec::new();
        DynamicImage::ImageRgb16(pixels).write_to(&mut Cursor::new(&mut png), ImageFormat::Png).unwrap();
        png
    }

    #[test]
    fn the_test_bomb_inflates_to_what_it_says() {
        let bomb = iccp_bomb_png(1 << 20);
        let mut decoder = png::Decoder::new_with_limits(Cursor::new(&bomb), png::Limits { bytes: 4 << 20 });
        decoder.set_ignore_text_chunk(true);
        let reader = decoder.read_info().unwrap();
        let profile = reader.info().icc_profile.as_deref().expect("the profile inflates within 4 MB");
        assert_eq!(profile.len(), 1 + ((1usize << 20) - 1).div_ceil(258) * 258);
        assert!(profile.iter().all(|&b| b == 0));
    }

    #[test]
    fn an_icc_profile_that_inflates_past_the_bound_is_dropped_unread() {
        // 256 MB of profile in about 1.6 MB: read within the bound, the inflater stops at PNG_HEADER_BYTES.
        let bomb = iccp_bomb_png(256 << 20);
        assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
        let header = png_header(&bomb).unwrap();
        assert!(!header.icc, "the profile is not read past the bound");
        let kept = PictureWork::new().keep(MediaType::Png, bomb.clone()).unwrap();
        assert_eq!(kept.size, PixelSize { width: 64, height: 64 });
        assert_eq!(chunks(&kept.bytes), ["IHDR", "IDAT", "IEND"], "the profile is gone, the pixels stay");
        assert_eq!(decoded(&kept.bytes), decoded(&bomb));
        let thumb = PictureWork::new().thumbnail(MediaType::Png, &bomb).unwrap();
        assert_eq!(decoded(&thumb).dimensions(), (64, 64));
        let region = Region { x: 8, y: 8, width: 16, height: 16, area_px: 256, spread: None };
        assert_eq!(
            decoded(&PictureWork::new().crops(MediaType::Png, &bomb, &[region]).unwrap().remove(0)).dimensions(),
            (16, 16)
        );
    }

    #[test]
    fn a_png_keeps_a_small_icc_profile_and_loses_its_exif_and_text_byte_for_byte() {
        let mut plain = Vec::new();
        let mut encoder = PngEncoder::new(&mut plain);
        encoder.set_icc_profile(vec![7; 3000]).unwrap();
        encoder.write_image(&RgbImage::new(20, 10), 20, 10, image::ExtendedColorType::Rgb8).unwrap();
        let iend = plain.len() - 12;
        let tagged = [
            &plain[..iend],
            &png_chunk(b"eXIf", &with_exif(&[0xFF, 0xD8], 1, true)[12..]),
            &png_chunk(b"tEXt", b"Comment\0taken at home"),
            &png_chunk(b"tIME", &[7, 234, 12, 3, 10, 0, 0]),
            &plain[iend..],
        ]
        .concat();
        assert!(png_header(&tagged).unwrap().icc);
        let kept = PictureWork::new().keep(MediaType::Png, tagged).unwrap();
        assert_eq!(kept.bytes, plain, "only the EXIF, text and time went");
        assert_eq!(kept.size, PixelSize { width: 20, height: 10 });
    }

    #[test]
    fn a_turned_png_is_turned_in_its_pixels_and_loses_its_exif() {
        // The EXIF block of a JPEG's APP1 segment, after its marker, length and "Exif\0\0", right after IHDR.
        let plain = png16(40, 20);
        let turned =
            [&plain[..33], &png_chunk(b"eXIf", &with_exif(&[0xFF, 0xD8], 6, true)[12..]), &plain[33..]].concat();
        let kept = PictureWork::new().keep(MediaType::Png, turned).unwrap();
        assert_eq!(kept.size, PixelSize { width: 20, height: 40 });
        assert!(!chunks(&kept.bytes).contains(&"eXIf".to_owned()));
        let shown = decoded(&kept.bytes);
        assert!(red(*shown.get_pixel(18, 2)), "top right is red");
        assert!(!red(*shown.get_pixel(2, 2)), "top left is not");
    }

    #[test]
    fn a_16_bit_png_is_thumbnailed_and_cropped_row_by_row() {
        let png = png16(1400, 700);
        let thumb = decoded(&PictureWork::new().thumbnail(MediaType::Png, &png).unwrap());
        assert_eq!(thumb.dimensions(), (320, 160));
        assert!(red(*thumb.get_pixel(40, 40)), "top left is red");
        assert!(!red(*thumb.get_pixel(280, 120)), "bottom right is not");
        let region = Region { x: 600, y: 300, width: 200, height: 100, area_px: 1, spread: None };
        let crop = decoded(&PictureWork::new().crops(MediaType::Png, &png, &[region]).unwrap().remove(0));
        assert_eq!(crop.dimensions(), (200, 100));
        assert!(red(*crop.get_pixel(10, 10)) && !red(*crop.get_pixel(190, 90)), "the crop straddles the quarter");
    }

    #[test]
    fn an_interlaced_png_over_the_decoded_bytes_is_refused_before_its_pixels() {
        // 7000 x 7000 16-bit RGBA, interlaced: 392 MB whole, more than MAX_DECODED_BYTES. Its pixel data is
        // never reached, so a few bytes of it do.
        let header = [&7000u32.to_be_bytes()[..], &7000u32.to_be_bytes(), &[16, 6, 0, 0, 1]].concat();
        let png = [
            &b"\x89PNG\r\n\x1a\n"[..],
            &png_chunk(b"IHDR", &header),
            &png_chunk(b"IDAT", &[0x78, 0x01, 0x03, 0x00]),
            &png_chunk(b"IEND", b""),
        ]
        .concat();
        let work = PictureWork::new();
        let region = Region { x: 0, y: 0, width: 10, height: 10, area_px: 100, spread: None };
        for err in [
            work.keep(MediaType::Png, png.clone()).unwrap_err(),
            work.thumbnail(MediaType::Png, &png).unwrap_err(),
            work.crops(MediaType::Png, &png, &[region]).unwrap_err(),
        ] {
            let PictureError::TooManyPixels { width, height, max_pixels } = err else { panic!("{err:?}") };
            // At 8 bytes a pixel, the bound's worth of pixels.
            assert_eq!((width, height, max_pixels), (7000, 7000, MAX_DECODED_BYTES / 8));
        }
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
