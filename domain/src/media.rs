//! Media: the pictures and papers kept on an item (photos, receipts, manuals). The rules here decide what a file
//! is by its first bytes (never by its name or the type a client claims), which files are taken, how large they
//! may be, what a caption may say, and when a pending upload (one no item took yet) has waited too long.

use crate::Timestamp;
use crate::ids::{ItemId, MediaId};
pub use crate::measure::PixelSize;
use crate::measure::Region;
use std::fmt;

/// The largest file kept, in bytes (25 MiB).
pub const MAX_BYTES: usize = 25 * 1024 * 1024;
/// Longest caption kept, in characters.
pub const CAPTION_MAX: usize = 500;
/// The longer side of a thumbnail, in pixels, at most.
pub const THUMB_MAX_SIDE: u32 = 320;
/// How long an upload may stay pending (attached to no item) before the sweep removes it.
pub const PENDING_KEPT_FOR: chrono::TimeDelta = chrono::TimeDelta::hours(24);
/// The media types taken, as the 415 answer names them.
pub const ACCEPTED: &str = "image/jpeg, image/png, image/webp or application/pdf";

/// What a file is, told by its first bytes: the four kinds taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaType {
    Jpeg,
    Png,
    Webp,
    Pdf,
}

impl MediaType {
    /// Every media type taken.
    pub const ALL: [MediaType; 4] = [MediaType::Jpeg, MediaType::Png, MediaType::Webp, MediaType::Pdf];

    /// The IANA media type: `image/jpeg`.
    pub fn mime(self) -> &'static str {
        match self {
            MediaType::Jpeg => "image/jpeg",
            MediaType::Png => "image/png",
            MediaType::Webp => "image/webp",
            MediaType::Pdf => "application/pdf",
        }
    }

    /// The usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            MediaType::Jpeg => "jpg",
            MediaType::Png => "png",
            MediaType::Webp => "webp",
            MediaType::Pdf => "pdf",
        }
    }

    /// Whether it is a picture (it has pixels, a size and a thumbnail).
    pub fn is_image(self) -> bool {
        self != MediaType::Pdf
    }

    /// Reads the media type back from [`MediaType::mime`].
    pub fn parse(mime: &str) -> Option<MediaType> {
        Self::ALL.into_iter().find(|t| t.mime() == mime)
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mime())
    }
}

/// What a medium is for the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MediaKind {
    Photo,
    Receipt,
    Manual,
    Other,
}

impl MediaKind {
    pub const ALL: [MediaKind; 4] = [MediaKind::Photo, MediaKind::Receipt, MediaKind::Manual, MediaKind::Other];

    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Photo => "photo",
            MediaKind::Receipt => "receipt",
            MediaKind::Manual => "manual",
            MediaKind::Other => "other",
        }
    }

    /// ```
    /// use trove_domain::media::MediaKind;
    /// assert_eq!(MediaKind::parse(" Receipt "), Ok(MediaKind::Receipt));
    /// assert!(MediaKind::parse("selfie").is_err());
    /// ```
    ///
    /// # Errors
    /// [`MediaRefused::UnknownKind`] for any other word.
    pub fn parse(raw: &str) -> Result<MediaKind, MediaRefused> {
        let word = raw.trim();
        Self::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(word))
            .ok_or_else(|| MediaRefused::UnknownKind(crate::text::clip(word, 40)))
    }

    /// The kind of a file uploaded without one: a picture is a photo, a PDF something else.
    ///
    /// ```
    /// use trove_domain::media::{MediaKind, MediaType};
    /// assert_eq!(MediaKind::default_for(MediaType::Png), MediaKind::Photo);
    /// assert_eq!(MediaKind::default_for(MediaType::Pdf), MediaKind::Other);
    /// ```
    pub fn default_for(media_type: MediaType) -> MediaKind {
        if media_type.is_image() { MediaKind::Photo } else { MediaKind::Other }
    }
}

impl fmt::Display for MediaKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a file or one of its values was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaRefused {
    /// No bytes at all.
    #[error("file is empty")]
    Empty,
    /// More than [`MAX_BYTES`].
    #[error("file is {bytes} bytes, more than {MAX_BYTES}")]
    TooLarge { bytes: usize },
    /// A file of a type not taken; `found` names it when it is recognised (`image/heic`).
    #[error("file is {}, which is not accepted: send {ACCEPTED}", found.unwrap_or("of an unknown type"))]
    Unsupported { found: Option<&'static str> },
    /// A file of a type taken whose content is broken (cut short, not decodable).
    #[error("file is not a readable {media_type}: {reason}")]
    Broken { media_type: MediaType, reason: String },
    /// A picture with more pixels than are decoded (checked before decoding).
    #[error("picture is {width} x {height} pixels, more than {max_pixels} pixels")]
    TooManyPixels { width: u32, height: u32, max_pixels: u64 },
    #[error("kind must be photo, receipt, manual or other, not {0:?}")]
    UnknownKind(String),
    #[error("caption is longer than {CAPTION_MAX} characters")]
    CaptionTooLong,
    #[error("caption must not contain control characters other than line breaks")]
    CaptionControl,
}

/// Tells a file's media type by its first bytes ("magic bytes"), and checks its size.
///
/// ```
/// use trove_domain::media::{sniff, MediaRefused, MediaType};
/// assert_eq!(sniff(b"%PDF-1.7\n...\n%%EOF\n"), Ok(MediaType::Pdf));
/// assert_eq!(sniff(b"\0\0\0\x18ftypheic\0\0\0\0"), Err(MediaRefused::Unsupported { found: Some("image/heic") }));
/// ```
///
/// # Errors
/// [`MediaRefused::Empty`] for no bytes, [`MediaRefused::TooLarge`] over [`MAX_BYTES`],
/// [`MediaRefused::Unsupported`] for any other type (named when recognised: HEIC, AVIF, GIF, TIFF, BMP), and
/// [`MediaRefused::Broken`] for a PDF without its end marker (cut short).
pub fn sniff(bytes: &[u8]) -> Result<MediaType, MediaRefused> {
    if bytes.is_empty() {
        return Err(MediaRefused::Empty);
    }
    if bytes.len() > MAX_BYTES {
        return Err(MediaRefused::TooLarge { bytes: bytes.len() });
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(MediaType::Jpeg);
    }
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Ok(MediaType::Png);
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        return Ok(MediaType::Webp);
    }
    if bytes.starts_with(b"%PDF-") {
        // A PDF ends with `%%EOF` (maybe followed by line breaks or padding); one without it was cut short.
        let tail = &bytes[bytes.len().saturating_sub(1024)..];
        if !tail.windows(5).any(|w| w == b"%%EOF") {
            return Err(MediaRefused::Broken { media_type: MediaType::Pdf, reason: "it has no end (%%EOF)".into() });
        }
        return Ok(MediaType::Pdf);
    }
    Err(MediaRefused::Unsupported { found: recognised(bytes) })
}

/// The media type of a file that is not taken, when its bytes say it.
fn recognised(bytes: &[u8]) -> Option<&'static str> {
    if bytes.len() >= 12 && &bytes[4..8] == b"ftyp" {
        return match &bytes[8..12] {
            b"heic" | b"heix" | b"hevc" | b"hevx" | b"heim" | b"heis" | b"mif1" | b"msf1" => Some("image/heic"),
            b"avif" | b"avis" => Some("image/avif"),
            _ => Some("video/mp4"),
        };
    }
    if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        return Some("image/gif");
    }
    if bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*") {
        return Some("image/tiff");
    }
    if bytes.starts_with(b"BM") {
        return Some("image/bmp");
    }
    None
}

/// What the owner wrote about a medium: trimmed, non-empty, at most [`CAPTION_MAX`] characters, no control
/// characters but line breaks.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caption(String);

impl Caption {
    /// A blank caption is none.
    ///
    /// ```
    /// use trove_domain::media::Caption;
    /// assert_eq!(Caption::new("  the box, front ").unwrap().unwrap().as_str(), "the box, front");
    /// assert_eq!(Caption::new(" \n ").unwrap(), None);
    /// assert!(Caption::new("bell\u{7}").is_err());
    /// ```
    ///
    /// # Errors
    /// [`MediaRefused::CaptionTooLong`] or [`MediaRefused::CaptionControl`].
    pub fn new(raw: &str) -> Result<Option<Caption>, MediaRefused> {
        let t = raw.trim();
        if t.is_empty() {
            return Ok(None);
        }
        if t.chars().count() > CAPTION_MAX {
            return Err(MediaRefused::CaptionTooLong);
        }
        if t.chars().any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t') {
            return Err(MediaRefused::CaptionControl);
        }
        Ok(Some(Caption(t.to_owned())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Caption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The SHA-256 of a blob's bytes in lower-case hex: the name a blob is stored under.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentHash(String);

impl ContentHash {
    /// ```
    /// use trove_domain::media::ContentHash;
    /// let h = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    /// assert_eq!(ContentHash::parse(h).unwrap().as_str(), h);
    /// assert!(ContentHash::parse("../etc/passwd").is_none());
    /// ```
    pub fn parse(hex: &str) -> Option<ContentHash> {
        (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
            .then(|| ContentHash(hex.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A medium (one photo, receipt, manual or other file) as stored: the row that names a blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Medium {
    pub id: MediaId,
    /// The item it is on; `None` while pending (kept from intake, no item saved yet).
    pub item_id: Option<ItemId>,
    pub kind: MediaKind,
    pub media_type: MediaType,
    /// The stored blob's size.
    pub bytes: u64,
    /// The picture's size as it is shown (orientation applied); `None` for a PDF.
    pub size: Option<PixelSize>,
    /// The stored blob's content hash.
    pub sha256: ContentHash,
    /// The thumbnail's blob, once made.
    pub thumb: Option<ContentHash>,
    pub caption: Option<Caption>,
    pub created_at: Timestamp,
}

/// A medium to store: everything but what the store gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMedium {
    pub item_id: Option<ItemId>,
    pub kind: MediaKind,
    pub media_type: MediaType,
    pub bytes: u64,
    pub size: Option<PixelSize>,
    pub sha256: ContentHash,
    pub caption: Option<Caption>,
}

/// Why a region of a medium cannot be cropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CropRefused {
    #[error("media {0} is not a picture: only a picture has regions")]
    NotAPicture(MediaId),
    #[error("a region must be at least a pixel wide and high")]
    Empty,
    #[error("the region at {x}, {y} lies outside the {width} x {height} picture")]
    Outside { x: u32, y: u32, width: u32, height: u32 },
}

/// Whether `region` (in the picture's stored pixels) can be cropped from `medium`: a picture, a region of at least
/// a pixel, starting inside the picture (one reaching past its edge is cut there).
///
/// # Errors
/// The first of [`CropRefused`] that holds.
pub fn check_crop(medium: &Medium, region: &Region) -> Result<(), CropRefused> {
    if !medium.media_type.is_image() {
        return Err(CropRefused::NotAPicture(medium.id));
    }
    if region.width == 0 || region.height == 0 {
        return Err(CropRefused::Empty);
    }
    match medium.size {
        Some(s) if region.x >= s.width || region.y >= s.height => {
            Err(CropRefused::Outside { x: region.x, y: region.y, width: s.width, height: s.height })
        }
        _ => Ok(()),
    }
}

/// The size of a thumbnail of a picture of `size`: the longer side at most [`THUMB_MAX_SIDE`], the ratio kept,
/// never enlarged, never 0.
///
/// ```
/// use trove_domain::media::{thumb_size, PixelSize};
/// assert_eq!(thumb_size(PixelSize { width: 4000, height: 3000 }), PixelSize { width: 320, height: 240 });
/// assert_eq!(thumb_size(PixelSize { width: 100, height: 50 }), PixelSize { width: 100, height: 50 });
/// ```
pub fn thumb_size(size: PixelSize) -> PixelSize {
    let longer = size.width.max(size.height);
    if longer <= THUMB_MAX_SIDE {
        return size;
    }
    let scale =
        |side: u32| ((u64::from(side) * u64::from(THUMB_MAX_SIDE) + u64::from(longer) / 2) / u64::from(longer)) as u32;
    PixelSize { width: scale(size.width).max(1), height: scale(size.height).max(1) }
}

/// Whether a pending upload made at `created_at` is due for the sweep at `now` (older than
/// [`PENDING_KEPT_FOR`]).
///
/// ```
/// use trove_domain::media::pending_expired;
/// let t0 = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
/// assert!(!pending_expired(t0, t0 + chrono::TimeDelta::hours(24)));
/// assert!(pending_expired(t0, t0 + chrono::TimeDelta::hours(25)));
/// ```
pub fn pending_expired(created_at: Timestamp, now: Timestamp) -> bool {
    now - created_at > PENDING_KEPT_FOR
}

/// The moment before which pending uploads are due for the sweep at `now`.
pub fn pending_cutoff(now: Timestamp) -> Timestamp {
    now - PENDING_KEPT_FOR
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bytes: &[u8], expected: Result<MediaType, MediaRefused>) {
        assert_eq!(sniff(bytes), expected, "{:?}", &bytes[..bytes.len().min(16)]);
    }

    #[test]
    fn a_crop_needs_a_picture_and_a_region_of_pixels_starting_inside_it() {
        let hash = ContentHash::parse(&"ab".repeat(32)).unwrap();
        let at = Timestamp::from_timestamp(1_790_000_000, 0).unwrap();
        let photo = Medium {
            id: MediaId(7),
            item_id: None,
            kind: MediaKind::Photo,
            media_type: MediaType::Jpeg,
            bytes: 10,
            size: Some(PixelSize { width: 200, height: 100 }),
            sha256: hash,
            thumb: None,
            caption: None,
            created_at: at,
        };
        let region = |x, y, width, height| Region { x, y, width, height, area_px: 1, spread: None };
        assert_eq!(check_crop(&photo, &region(150, 80, 100, 100)), Ok(()), "cut at the edge");
        assert_eq!(check_crop(&photo, &region(10, 10, 0, 5)), Err(CropRefused::Empty));
        assert_eq!(check_crop(&photo, &region(10, 10, 5, 0)), Err(CropRefused::Empty));
        assert_eq!(
            check_crop(&photo, &region(200, 0, 5, 5)),
            Err(CropRefused::Outside { x: 200, y: 0, width: 200, height: 100 })
        );
        assert_eq!(
            check_crop(&photo, &region(0, 100, 5, 5)).unwrap_err().to_string(),
            "the region at 0, 100 lies outside the 200 x 100 picture"
        );
        let pdf = Medium { media_type: MediaType::Pdf, size: None, ..photo };
        assert_eq!(check_crop(&pdf, &region(0, 0, 5, 5)), Err(CropRefused::NotAPicture(MediaId(7))));
    }

    #[test]
    fn files_are_told_by_their_first_bytes() {
        check(b"\xFF\xD8\xFF\xE0\0\x10JFIF", Ok(MediaType::Jpeg));
        check(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", Ok(MediaType::Png));
        check(b"RIFF\x24\0\0\0WEBPVP8 ", Ok(MediaType::Webp));
        check(b"%PDF-1.4\n1 0 obj\n%%EOF", Ok(MediaType::Pdf));
        check(b"%PDF-1.4\n1 0 obj\n%%EOF\r\n\0\0", Ok(MediaType::Pdf));
        check(b"\0\0\0\x18ftypheic\0\0\0\0mif1heic", Err(MediaRefused::Unsupported { found: Some("image/heic") }));
        check(b"\0\0\0\x18ftypmif1\0\0\0\0", Err(MediaRefused::Unsupported { found: Some("image/heic") }));
        check(b"\0\0\0\x1cftypavif\0\0\0\0", Err(MediaRefused::Unsupported { found: Some("image/avif") }));
        check(b"GIF89a\x01\0\x01\0", Err(MediaRefused::Unsupported { found: Some("image/gif") }));
        check(b"II*\0\x08\0\0\0", Err(MediaRefused::Unsupported { found: Some("image/tiff") }));
        check(b"hello, world", Err(MediaRefused::Unsupported { found: None }));
        check(b"RIFF\x24\0\0\0WAVEfmt ", Err(MediaRefused::Unsupported { found: None }));
        check(b"", Err(MediaRefused::Empty));
        // A JPEG's magic is three bytes; two are not enough.
        check(b"\xFF\xD8", Err(MediaRefused::Unsupported { found: None }));
    }

    #[test]
    fn a_pdf_cut_short_is_broken() {
        let err = sniff(b"%PDF-1.7\n1 0 obj << >> endobj\n").unwrap_err();
        assert!(matches!(err, MediaRefused::Broken { media_type: MediaType::Pdf, .. }), "{err:?}");
    }

    #[test]
    fn the_size_cap_is_checked_before_the_type() {
        let mut big = vec![0u8; MAX_BYTES + 1];
        big[..3].copy_from_slice(&[0xFF, 0xD8, 0xFF]);
        assert_eq!(sniff(&big), Err(MediaRefused::TooLarge { bytes: MAX_BYTES + 1 }));
        big.pop();
        assert_eq!(sniff(&big), Ok(MediaType::Jpeg));
    }

    #[test]
    fn the_refusal_of_a_heic_names_it_and_the_accepted_types() {
        let message = sniff(b"\0\0\0\x18ftypheic\0\0\0\0").unwrap_err().to_string();
        assert_eq!(
            message,
            "file is image/heic, which is not accepted: send image/jpeg, image/png, image/webp or application/pdf"
        );
    }

    #[test]
    fn captions() {
        assert_eq!(Caption::new("").unwrap(), None);
        assert_eq!(Caption::new("line one\nline two").unwrap().unwrap().as_str(), "line one\nline two");
        assert_eq!(Caption::new(&"é".repeat(CAPTION_MAX)).unwrap().unwrap().as_str().chars().count(), CAPTION_MAX);
        assert_eq!(Caption::new(&"é".repeat(CAPTION_MAX + 1)), Err(MediaRefused::CaptionTooLong));
        assert_eq!(Caption::new("a\u{1b}[31m"), Err(MediaRefused::CaptionControl));
    }

    #[test]
    fn kinds_and_types_read_back() {
        for k in MediaKind::ALL {
            assert_eq!(MediaKind::parse(k.as_str()), Ok(k));
        }
        for t in MediaType::ALL {
            assert_eq!(MediaType::parse(t.mime()), Some(t));
        }
        assert_eq!(MediaKind::parse("Selfie"), Err(MediaRefused::UnknownKind("Selfie".into())));
    }

    #[test]
    fn thumbnails_keep_the_ratio_and_never_grow() {
        let t = |w, h| thumb_size(PixelSize { width: w, height: h });
        assert_eq!(t(3000, 4000), PixelSize { width: 240, height: 320 });
        assert_eq!(t(321, 1), PixelSize { width: 320, height: 1 });
        assert_eq!(t(10_000, 1), PixelSize { width: 320, height: 1 });
        assert_eq!(t(320, 320), PixelSize { width: 320, height: 320 });
        assert_eq!(t(1, 1), PixelSize { width: 1, height: 1 });
    }

    proptest::proptest! {
        #[test]
        fn thumbnails_fit(w in 1u32..100_000, h in 1u32..100_000) {
            let s = thumb_size(PixelSize { width: w, height: h });
            proptest::prop_assert!(s.width.max(s.height) <= THUMB_MAX_SIDE);
            proptest::prop_assert!(s.width >= 1 && s.height >= 1 && s.width <= w && s.height <= h);
        }

        #[test]
        fn what_is_taken_starts_with_its_magic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            if let Ok(t) = sniff(&bytes) {
                let magic: &[u8] = match t {
                    MediaType::Jpeg => b"\xFF\xD8\xFF",
                    MediaType::Png => b"\x89PNG",
                    MediaType::Webp => b"RIFF",
                    MediaType::Pdf => b"%PDF-",
                };
                proptest::prop_assert!(bytes.starts_with(magic));
            }
        }
    }
}
