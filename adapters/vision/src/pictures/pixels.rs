//! Pixels: a picture checked, decoded whole under its bound, shown upright, and encoded again.

use super::*;

/// Checks that every pixel of a picture decodes, without keeping them (a JPEG's luma plane only, a PNG's rows one
/// at a time): its size.
pub(super) fn check_pixels(bytes: &[u8]) -> Result<PixelSize, PictureError> {
    struct Size(u32, u32);
    impl Rows for Size {
        fn add_row(&mut self, _: u32, _: &[u8], _: usize) {}
    }
    let Size(width, height) = decode_rows_from(bytes, Samples::Luma, 1, Size).map_err(refused)?;
    Ok(PixelSize { width, height })
}

/// What a whole decode may allocate: [`MAX_DECODED_BYTES`].
pub(super) fn whole_limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODED_BYTES);
    limits
}

/// A decoded picture and what its metadata said.
pub(super) struct Decoded {
    pub(super) pixels: DynamicImage,
    pub(super) orientation: Orientation,
    /// Whether it carries EXIF or XMP metadata.
    pub(super) has_metadata: bool,
    pub(super) icc: Option<Vec<u8>>,
}

/// Decodes a picture whole, checking its size before the pixels are decoded, under [`MAX_DECODED_BYTES`]: a
/// picture that would need more is refused as too large. Only for a picture to re-encode; a PNG's metadata chunks
/// are gone before ([`strip_png_metadata`]), so its orientation is read from its header instead.
pub(super) fn decode(media_type: MediaType, bytes: &[u8]) -> Result<Decoded, PictureError> {
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
pub(super) fn shown(width: u32, height: u32, orientation: Orientation) -> PixelSize {
    match orientation {
        Orientation::Rotate90 | Orientation::Rotate270 | Orientation::Rotate90FlipH | Orientation::Rotate270FlipH => {
            PixelSize { width: height, height: width }
        }
        _ => PixelSize { width, height },
    }
}

pub(super) fn encode_jpeg(pixels: &DynamicImage, quality: u8, icc: Option<Vec<u8>>) -> Result<Vec<u8>, PictureError> {
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
pub(super) fn encode(
    media_type: MediaType,
    pixels: &DynamicImage,
    icc: Option<Vec<u8>>,
) -> Result<Vec<u8>, PictureError> {
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
