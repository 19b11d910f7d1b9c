//! Media types of request bodies.

/// Whether a `Content-Type` is the media type `essence` (parameters such as `; charset=utf-8` aside, any case).
pub fn is_media(content_type: Option<&str>, essence: &str) -> bool {
    content_type.and_then(|c| c.split(';').next()).is_some_and(|e| e.trim().eq_ignore_ascii_case(essence))
}
