//! Metadata: a PNG's chunks and a JPEG's segments read without decoding pixels, and stripped of what locates
//! or describes the picture.

use super::*;

/// What a PNG says before its pixels, read with its text chunks skipped and within [`PNG_HEADER_BYTES`].
pub(super) struct PngHeader {
    pub(super) orientation: Orientation,
    /// Whether its ICC profile inflated within the bound (none when it has none).
    pub(super) icc: bool,
}

/// Reads a PNG's header twice within [`PNG_HEADER_BYTES`]: without its ICC profile, which must succeed, then
/// with it, which fails, or reads no profile, when the profile does not fit.
pub(super) fn png_header(bytes: &[u8]) -> Result<PngHeader, PictureError> {
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
pub(super) const PNG_KEPT_CHUNKS: [&[u8; 4]; 14] = [
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
pub(super) fn orientation_of(media_type: MediaType, bytes: &[u8]) -> Result<Orientation, PictureError> {
    if media_type == MediaType::Png {
        return Ok(png_header(bytes)?.orientation);
    }
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format(media_type)?);
    reader.limits(whole_limits());
    let mut decoder = reader.into_decoder().map_err(broken)?;
    decoder.orientation().map_err(broken)
}

/// Walks the segments of a JPEG before its image data, handing each (its marker and its bytes, marker included)
/// to `segment`; answers where the first scan (SOS) starts. `None` when they do not parse.
pub(super) fn walk_segments(jpeg: &[u8], mut segment: impl FnMut(u8, &[u8])) -> Option<usize> {
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
pub(super) fn jpeg_complete(jpeg: &[u8]) -> bool {
    walk_segments(jpeg, |_, _| {}).is_some_and(|scan| jpeg[scan..].windows(2).any(|w| w == [0xFF, 0xD9]))
}
