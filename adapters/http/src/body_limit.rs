//! How large a request body may be, by its media type, and the middleware that refuses a larger one with 413
//! (after reading the rest of it, so that clients see the answer).

use crate::error::ApiError;
use crate::media::is_media;
use poem::http::{HeaderValue, Method, StatusCode, header};
use std::sync::Arc;
use tokio::io::AsyncReadExt as _;

/// Largest JSON body accepted (1 MiB).
pub const JSON_BODY_LIMIT: usize = 1 << 20;
/// Largest `multipart/form-data` body accepted: a 20 MB photo or a 32 MB voice note, with room for the parts'
/// headers. Each route checks its own file's limit.
pub const UPLOAD_BODY_LIMIT: usize = 33 << 20;
/// Largest `text/csv` body accepted (an import of a few hundred thousand rows).
pub const CSV_BODY_LIMIT: usize = 256 << 20;

/// The body limit of a request by its content type: uploads and CSV imports may be larger than JSON.
pub fn body_limit(content_type: Option<&str>) -> usize {
    if is_media(content_type, "multipart/form-data") {
        UPLOAD_BODY_LIMIT
    } else if is_media(content_type, "text/csv") {
        CSV_BODY_LIMIT
    } else {
        JSON_BODY_LIMIT
    }
}

/// How much of a refused body is still read (and thrown away) before the 413 is sent. A server that answers
/// and closes while the client is still writing makes most clients (browsers included) report a broken
/// connection instead of the answer; reading the rest first lets them see the JSON error. Past this, the
/// connection is closed without reading further.
pub const DRAIN_LIMIT: u64 = 64 << 20;

/// Refuses a request body over its limit ([`body_limit`]: [`JSON_BODY_LIMIT`] unless it is an upload or a CSV)
/// with 413, whether its size is announced (`Content-Length`) or not (a chunked body is kept up to the limit,
/// never further). Either way the rest of the body, up to [`DRAIN_LIMIT`], is read and discarded first.
pub async fn limit_body<E: poem::Endpoint>(next: Arc<E>, mut req: poem::Request) -> poem::Result<poem::Response> {
    let limit = body_limit(req.content_type());
    let too_large = || ApiError::too_large("request body", limit);
    let announced =
        req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    let chunked = req.headers().contains_key(header::TRANSFER_ENCODING);
    // A POST without a body (`curl -X POST .../propose`) is an empty JSON body: routes whose body is optional
    // take it, the others refuse it as a missing body (400) rather than as a missing media type.
    if req.method() == Method::POST
        && req.content_type().is_none()
        && (announced == Some(0) || (announced.is_none() && !chunked))
    {
        req.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    match announced {
        Some(n) if n > limit as u64 => {
            if n <= DRAIN_LIMIT {
                drain(req.take_body().into_async_read().take(n)).await;
            }
            return Err(too_large().into());
        }
        Some(_) => {}
        None if chunked => {
            let mut reader = req.take_body().into_async_read();
            let mut kept = Vec::new();
            // A body that breaks off is refused whole: half a CSV file must not import as if it were all of it.
            if let Err(e) = (&mut reader).take(limit as u64 + 1).read_to_end(&mut kept).await {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid",
                    format!("the request body could not be read to its end: {e}"),
                )
                .into());
            }
            if kept.len() > limit {
                drain(reader.take(DRAIN_LIMIT)).await;
                return Err(too_large().into());
            }
            req.set_body(kept);
        }
        None => {}
    }
    next.call(req).await.map(poem::IntoResponse::into_response)
}

/// Reads `body` to its end and throws it away; a read error ends it early (the answer is a refusal anyway).
/// A slow client is given this long, then the connection is closed without reading further.
async fn drain(mut body: impl tokio::io::AsyncRead + Unpin) {
    const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(30);
    let _ = tokio::time::timeout(DRAIN_TIME, tokio::io::copy(&mut body, &mut tokio::io::sink())).await;
}
