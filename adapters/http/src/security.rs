//! The headers that tell a browser what the page may do, on every answer (the page, the API, errors included):
//! a Content-Security-Policy that lets the page load scripts, styles and images from its own origin only and run
//! no inline script, no sniffing of media types, no referrer; and no caching of the API's answers, which carry
//! the household's data.

use poem::http::{HeaderValue, header};
use poem::{Endpoint, IntoResponse, Response};
use std::sync::Arc;

/// The page's Content-Security-Policy. Images may also be `blob:` and `data:` URLs (a photo shown before it is
/// sent, the icons the API docs draw), media `blob:` (a recorded voice note played back); everything else is
/// the page's own origin or nothing. No `'unsafe-inline'`: styles are set through the CSSOM, never as a `style`
/// attribute or element.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' blob: data:; connect-src 'self'; media-src 'self' blob:; \
     frame-ancestors 'none'; object-src 'none'; base-uri 'none'; form-action 'self'";

/// Sets the browser security headers on every answer, and `Cache-Control: no-store` on the API's (`/api/...`).
/// Wraps the whole app, outside the error rendering, so that error answers carry them too.
pub async fn headers<E: Endpoint>(next: Arc<E>, req: poem::Request) -> poem::Result<Response> {
    let api = req.uri().path().starts_with("/api/") || req.uri().path() == "/api";
    let mut answer = next.call(req).await?.into_response();
    let set = answer.headers_mut();
    set.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    set.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    set.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if api {
        set.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    Ok(answer)
}
