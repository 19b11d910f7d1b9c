//! The web page, embedded in the binary: no separate server, no CDN.

use poem::endpoint::EmbeddedFilesEndpoint;
use rust_embed::RustEmbed;

/// The page's files, from `adapters/http/web/`.
#[derive(RustEmbed)]
#[folder = "web/"]
pub struct Assets;

/// The endpoint serving the page (`index.html` at `/`).
pub fn site() -> EmbeddedFilesEndpoint<Assets> {
    EmbeddedFilesEndpoint::<Assets>::new()
}
