//! Keeping a picture: its bytes as they are when only metadata must go, else re-encoded upright.

use super::*;

impl PictureWork {
    pub(super) fn keep_jpeg(bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
        let orientation = orientation_of(MediaType::Jpeg, &bytes)?;
        if orientation != Orientation::NoTransforms {
            return Self::re_encode(MediaType::Jpeg, &bytes, orientation);
        }
        let size = check_pixels(&bytes)?;
        let stripped = strip_jpeg_metadata(&bytes)
            .ok_or_else(|| PictureError::Broken("the JPEG's segments do not parse".into()))?;
        Ok(KeptPicture { bytes: stripped, size })
    }

    pub(super) fn keep_png(bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
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

    pub(super) fn keep_webp(bytes: Vec<u8>) -> Result<KeptPicture, PictureError> {
        let decoded = decode(MediaType::Webp, &bytes)?;
        if decoded.orientation == Orientation::NoTransforms && !decoded.has_metadata {
            let size = PixelSize { width: decoded.pixels.width(), height: decoded.pixels.height() };
            return Ok(KeptPicture { bytes, size });
        }
        drop(bytes);
        Self::encode_turned(MediaType::Webp, decoded)
    }

    /// Decodes a picture whole (under [`MAX_DECODED_BYTES`]) and re-encodes it turned by `orientation`.
    pub(super) fn re_encode(
        media_type: MediaType,
        bytes: &[u8],
        orientation: Orientation,
    ) -> Result<KeptPicture, PictureError> {
        let mut decoded = decode(media_type, bytes)?;
        decoded.orientation = orientation;
        Self::encode_turned(media_type, decoded)
    }

    pub(super) fn encode_turned(media_type: MediaType, mut decoded: Decoded) -> Result<KeptPicture, PictureError> {
        let size = shown(decoded.pixels.width(), decoded.pixels.height(), decoded.orientation);
        decoded.pixels.apply_orientation(decoded.orientation);
        let bytes = encode(media_type, &decoded.pixels, decoded.icc.take())?;
        Ok(KeptPicture { bytes, size })
    }
}
