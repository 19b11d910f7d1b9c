//! Decoding only what the work needs. The size is read from the header and checked before any pixel is decoded;
//! then the rows go one at a time to a [`Rows`] sink (the working copy's block sums, or an image), as 8-bit
//! samples. A PNG is streamed with the `png` crate: only one row of it (and the inflater's window) is ever held,
//! whatever its size or bit depth. A JPEG or WebP is decoded whole (neither decoder reads rows, nor scales in the
//! DCT), under a limit of the bytes it may allocate; an interlaced PNG too, since its rows do not come in order.
//! A PNG's text chunks and ICC profile are skipped unread (compressed, they can inflate to gigabytes), since no
//! decode here needs them.
//! When luma is enough ([`Samples::Luma`]), a JPEG is decoded by `zune-jpeg` straight to its 8-bit luma plane:
//! its chroma is never transformed, upsampled or converted to RGB (most of a colour JPEG's decoding time).

use crate::segment::Rows;
use image::{ExtendedColorType, ImageDecoder};
use std::io::Cursor;
use trove_application::ports::{MIN_SIDE, VisionError};
use trove_domain::reading::ImageFormat;
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;

/// The largest image accepted, in pixels (an 8000 x 6000 photo is 48 megapixels).
pub const MAX_PIXELS: u64 = 50_000_000;

/// The most a whole-image decoder (JPEG, WebP, interlaced PNG) may allocate: a 50-megapixel 8-bit RGB image
/// (150 MB) and a little more. An image that would need more (16-bit samples, an alpha channel at the largest
/// sizes) is refused as too large; a PNG streamed by rows never comes near it.
pub const MAX_DECODED_BYTES: u64 = 160 * 1024 * 1024;

/// What the `png` crate may allocate while streaming: a row of the widest image and the inflater's state, not
/// the image.
const PNG_STREAM_BYTES: usize = 32 * 1024 * 1024;

/// What the sink needs of each pixel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Samples {
    /// Its colour, as the image holds it (grey stays grey).
    Colour,
    /// Its luma where that is cheaper to decode than the colour (a JPEG's own luma plane); elsewhere what the image
    /// holds, as `Colour`.
    Luma,
    /// Its colour where that costs little (a JPEG of at most [`COLOUR_JPEG_PIXELS`]), its luma above that: what
    /// segmentation reads, so that a saturated part of the cloth's own luma is found by its colour in an ordinary
    /// photo, and a 12-megapixel tray of parts is read at the cost of its luma.
    Segment,
}

/// The largest JPEG decoded in colour for segmentation: 4 megapixels (2300 x 1730). Decoding a JPEG's chroma and
/// converting it to RGB costs about as much again as its luma; over this size, the parts are told apart by their
/// luma and texture.
pub(crate) const COLOUR_JPEG_PIXELS: u64 = 4_000_000;

fn undecodable(e: impl std::fmt::Display) -> VisionError {
    VisionError::Undecodable(e.to_string())
}

/// Refuses a size before any pixel is decoded: under `min_side` a side, or over [`MAX_PIXELS`].
fn check_size(width: u32, height: u32, min_side: u32) -> Result<(), VisionError> {
    if width < min_side || height < min_side {
        return Err(VisionError::TooSmall { width, height, min_side });
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(VisionError::TooLarge { width, height, max_pixels: MAX_PIXELS });
    }
    Ok(())
}

/// Whether a JPEG ends: its segments, read by their lengths, and its entropy-coded scans lead to an end-of-image
/// marker. A JPEG cut short has none, and its decoder would fill the missing part with pixels that are not in
/// the picture. Bytes after the marker (a phone's trailer, a motion photo's video) do not matter.
pub fn jpeg_is_complete(bytes: &[u8]) -> bool {
    if !bytes.starts_with(&[0xFF, 0xD8]) {
        return false;
    }
    let n = bytes.len();
    let mut i = 2;
    loop {
        // A marker: 0xFF (fill bytes of 0xFF may precede it), then its code.
        if i >= n || bytes[i] != 0xFF {
            return false;
        }
        while i < n && bytes[i] == 0xFF {
            i += 1;
        }
        let Some(&code) = bytes.get(i) else { return false };
        i += 1;
        match code {
            0xD9 => return true,
            0x01 | 0xD0..=0xD7 => continue,
            _ => {}
        }
        let Some(length) = bytes.get(i..i + 2).map(|l| usize::from(u16::from_be_bytes([l[0], l[1]]))) else {
            return false;
        };
        i += length;
        if code == 0xDA {
            // The scan's entropy-coded data runs to the next marker that is neither a stuffed 0xFF nor a restart.
            loop {
                let Some(at) = bytes.get(i..).and_then(|rest| memchr::memchr(0xFF, rest)) else {
                    return false;
                };
                i += at;
                match bytes.get(i + 1) {
                    None => return false,
                    Some(0x00 | 0xD0..=0xD7) => i += 2,
                    Some(0xFF) => i += 1,
                    Some(_) => break,
                }
            }
        }
    }
}

/// Decodes `bytes` (JPEG, PNG or WebP, told by its magic bytes) into the sink `sink_for` makes for the image's
/// size, and answers the sink. With `Samples::Luma`, a colour JPEG's rows come as its luma, one sample a pixel.
///
/// # Errors
/// `Unsupported`, `Undecodable` (a JPEG cut short included), `TooSmall` and `TooLarge` (from the header, before
/// the pixels).
pub(crate) fn decode_rows<S: Rows>(
    bytes: &[u8],
    samples: Samples,
    sink_for: impl FnOnce(u32, u32) -> S,
) -> Result<S, VisionError> {
    decode_rows_from(bytes, samples, MIN_SIDE, sink_for)
}

/// As [`decode_rows`], with `min_side` instead of [`MIN_SIDE`] (a picture kept on an item may be an icon).
pub(crate) fn decode_rows_from<S: Rows>(
    bytes: &[u8],
    samples: Samples,
    min_side: u32,
    sink_for: impl FnOnce(u32, u32) -> S,
) -> Result<S, VisionError> {
    let format = ImageFormat::sniff(bytes).ok_or(VisionError::Unsupported)?;
    match format {
        ImageFormat::Png => {
            let reader = png_reader(bytes, min_side)?;
            if reader.info().interlaced { png_whole(reader, sink_for) } else { stream_png(reader, sink_for) }
        }
        ImageFormat::Jpeg => {
            if !jpeg_is_complete(bytes) {
                return Err(VisionError::Undecodable("the JPEG is cut short (it has no end-of-image marker)".into()));
            }
            let luma = match samples {
                Samples::Luma => jpeg_luma(bytes, min_side)?,
                Samples::Segment => jpeg_luma(bytes, min_side)?.filter(|decoder| {
                    decoder.info().is_some_and(|i| u64::from(i.width) * u64::from(i.height) > COLOUR_JPEG_PIXELS)
                }),
                Samples::Colour => None,
            };
            match luma {
                Some(decoder) => stream_jpeg_luma(decoder, sink_for),
                None => whole(bytes, image::ImageFormat::Jpeg, min_side, sink_for),
            }
        }
        ImageFormat::Webp => whole(bytes, image::ImageFormat::WebP, min_side, sink_for),
    }
}

/// Reads a PNG's header and checks its size: the reader of its rows. Its text chunks and ICC profile are skipped
/// unread, so they cost nothing whatever they would inflate to.
fn png_reader(bytes: &[u8], min_side: u32) -> Result<png::Reader<Cursor<&[u8]>>, VisionError> {
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), png::Limits { bytes: PNG_STREAM_BYTES });
    decoder.set_ignore_text_chunk(true);
    decoder.set_ignore_iccp_chunk(true);
    // Palettes and grey under 8 bits become 8-bit samples; 16-bit samples stay, and are rounded below.
    decoder.set_transformations(png::Transformations::EXPAND);
    let reader = decoder.read_info().map_err(|e| png_error(e, None))?;
    let info = reader.info();
    check_size(info.width, info.height, min_side)?;
    Ok(reader)
}

/// Decodes an interlaced PNG whole (its rows come in seven passes), under [`MAX_DECODED_BYTES`], and hands its
/// rows to the sink.
fn png_whole<S: Rows>(
    mut reader: png::Reader<Cursor<&[u8]>>,
    sink_for: impl FnOnce(u32, u32) -> S,
) -> Result<S, VisionError> {
    let (width, height) = (reader.info().width, reader.info().height);
    let (colour, depth) = reader.output_color_type();
    let channels = colour.samples();
    let sixteen = depth == png::BitDepth::Sixteen;
    let per_pixel = (channels * if sixteen { 2 } else { 1 }) as u64;
    let total = reader.output_buffer_size().map_or(u64::MAX, |n| n as u64);
    if total > MAX_DECODED_BYTES {
        return Err(VisionError::TooLarge { width, height, max_pixels: MAX_DECODED_BYTES / per_pixel });
    }
    let mut buffer = vec![0u8; total as usize];
    let frame = reader.next_frame(&mut buffer).map_err(|e| png_error(e, Some((width, height))))?;
    let mut sink = sink_for(width, height);
    let mut row8 = Vec::new();
    for (y, row) in buffer.chunks_exact(frame.line_size).enumerate() {
        let row = if sixteen {
            row8.clear();
            row8.extend(row.chunks_exact(2).map(|s| eight_bits(u16::from_be_bytes([s[0], s[1]]))));
            &row8[..]
        } else {
            row
        };
        sink.add_row(y as u32, row, channels);
    }
    Ok(sink)
}

/// Reads a JPEG's header and checks its size: a decoder set to answer its luma plane, or `None` when its colours
/// are not YCbCr or grey (CMYK, YCCK: `image` converts those).
fn jpeg_luma(bytes: &[u8], min_side: u32) -> Result<Option<zune_jpeg::JpegDecoder<ZCursor<&[u8]>>>, VisionError> {
    // As `image` decodes a JPEG: leniently, and without the decoder's own size limits (the size is checked here).
    let options = DecoderOptions::default()
        .set_strict_mode(false)
        .set_max_width(usize::MAX)
        .set_max_height(usize::MAX)
        .jpeg_set_out_colorspace(ColorSpace::Luma);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
    decoder.decode_headers().map_err(undecodable)?;
    let info = decoder.info().ok_or_else(|| undecodable("the JPEG has no frame header"))?;
    check_size(u32::from(info.width), u32::from(info.height), min_side)?;
    match decoder.input_colorspace() {
        Some(ColorSpace::YCbCr | ColorSpace::Luma) => Ok(Some(decoder)),
        _ => Ok(None),
    }
}

/// Decodes a JPEG's luma plane whole (one byte a pixel: at most [`MAX_PIXELS`] bytes, under
/// [`MAX_DECODED_BYTES`]) and hands its rows to the sink.
fn stream_jpeg_luma<S: Rows>(
    mut decoder: zune_jpeg::JpegDecoder<ZCursor<&[u8]>>,
    sink_for: impl FnOnce(u32, u32) -> S,
) -> Result<S, VisionError> {
    let size = decoder.output_buffer_size().ok_or_else(|| undecodable("the JPEG's size overflows"))?;
    let info = decoder.info().ok_or_else(|| undecodable("the JPEG has no frame header"))?;
    let (width, height) = (u32::from(info.width), u32::from(info.height));
    let mut luma = vec![0u8; size];
    decoder.decode_into(&mut luma).map_err(undecodable)?;
    let mut sink = sink_for(width, height);
    for (y, row) in luma.chunks_exact(width as usize).enumerate() {
        sink.add_row(y as u32, row, 1);
    }
    Ok(sink)
}

fn png_error(e: png::DecodingError, size: Option<(u32, u32)>) -> VisionError {
    match (e, size) {
        (png::DecodingError::LimitsExceeded, Some((width, height))) => {
            VisionError::TooLarge { width, height, max_pixels: MAX_PIXELS }
        }
        (e, _) => undecodable(e),
    }
}

fn stream_png<S: Rows>(
    mut reader: png::Reader<Cursor<&[u8]>>,
    sink_for: impl FnOnce(u32, u32) -> S,
) -> Result<S, VisionError> {
    let (width, height) = (reader.info().width, reader.info().height);
    let (colour, depth) = reader.output_color_type();
    let channels = colour.samples();
    let mut sink = sink_for(width, height);
    let mut row8 = Vec::new();
    let mut y = 0;
    while let Some(row) = reader.next_row().map_err(|e| png_error(e, Some((width, height))))? {
        let data = row.data();
        let data = if depth == png::BitDepth::Sixteen {
            row8.clear();
            row8.extend(data.chunks_exact(2).map(|s| eight_bits(u16::from_be_bytes([s[0], s[1]]))));
            &row8[..]
        } else {
            data
        };
        sink.add_row(y, data, channels);
        y += 1;
    }
    if y < height {
        return Err(VisionError::Undecodable(format!("the PNG is cut short: {y} of {height} rows")));
    }
    Ok(sink)
}

/// A 16-bit sample rounded to 8 bits, as the `image` crate converts it: `round(v * 255 / 65535)`.
fn eight_bits(v: u16) -> u8 {
    ((u32::from(v) + 128) / 257) as u8
}

/// Decodes a whole image with the `image` crate, under [`MAX_DECODED_BYTES`], and hands its rows to the sink.
fn whole<S: Rows>(
    bytes: &[u8],
    format: image::ImageFormat,
    min_side: u32,
    sink_for: impl FnOnce(u32, u32) -> S,
) -> Result<S, VisionError> {
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    reader.limits(limits);
    let decoder = reader.into_decoder().map_err(undecodable)?;
    let (width, height) = decoder.dimensions();
    check_size(width, height, min_side)?;
    let (channels, sixteen) = match decoder.color_type() {
        image::ColorType::L8 => (1, false),
        image::ColorType::La8 => (2, false),
        image::ColorType::Rgb8 => (3, false),
        image::ColorType::Rgba8 => (4, false),
        image::ColorType::L16 => (1, true),
        image::ColorType::La16 => (2, true),
        image::ColorType::Rgb16 => (3, true),
        image::ColorType::Rgba16 => (4, true),
        other => return Err(undecodable(format!("unsupported colour type {:?}", ExtendedColorType::from(other)))),
    };
    let total = decoder.total_bytes();
    if total > MAX_DECODED_BYTES {
        let per_pixel = u64::from(decoder.color_type().bytes_per_pixel());
        return Err(VisionError::TooLarge { width, height, max_pixels: MAX_DECODED_BYTES / per_pixel });
    }
    let mut buffer = vec![0u8; total as usize];
    decoder.read_image(&mut buffer).map_err(undecodable)?;
    let mut sink = sink_for(width, height);
    let stride = width as usize * channels * if sixteen { 2 } else { 1 };
    let mut row8 = Vec::new();
    for (y, row) in buffer.chunks_exact(stride).enumerate() {
        let row = if sixteen {
            row8.clear();
            row8.extend(row.chunks_exact(2).map(|s| eight_bits(u16::from_ne_bytes([s[0], s[1]]))));
            &row8[..]
        } else {
            row
        };
        sink.add_row(y as u32, row, channels);
    }
    Ok(sink)
}
