//! Product lookup at the edge: the providers a code is asked of ([`OpenFacts`] for Open Food Facts, Open Products
//! Facts and Open Beauty Facts, [`OpenLibrary`] for books, [`UpcItemDb`]'s keyless trial). The cache of what they
//! answered is the database's (`trove_db`).
//!
//! Every provider is asked politely and read warily through one [`Polite`] client: a `User-Agent` naming Trove,
//! its version and a contact; no redirect to another host; a body read at most [`BODY_MAX`] bytes; anything but
//! JSON refused. A 429 or 503 with `Retry-After` (or without: a minute) makes the provider wait that long, and a
//! provider with a rate limit (Open Food Facts: 15 product reads a minute) is not asked past it. Both are kept
//! in this process only: two processes on one database each keep their own.

mod gate;
mod providers;

pub use gate::Gate;
pub use providers::{OpenFacts, OpenLibrary, UpcItemDb};

use reqwest::StatusCode;
use serde_json::Value;
use std::time::Duration;
use trove_application::ports::ProviderFailed;

/// The largest answer body read from a provider, in bytes; a larger one is a failure.
pub const BODY_MAX: usize = 1024 * 1024;

/// The longest a provider's answer is waited for (the use case's budget, 4 s by default, usually ends it first).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a provider waits after a 429 or 503 that says nothing of how long.
const DEFAULT_WAIT: Duration = Duration::from_secs(60);

/// The HTTP client every provider shares: Trove's `User-Agent`, redirects followed only on the same host.
#[derive(Debug, Clone)]
pub struct Polite {
    client: reqwest::Client,
}

impl Polite {
    /// A client whose `User-Agent` is `Trove/<version> (<contact>)`.
    ///
    /// # Errors
    /// When the TLS backend cannot be set up, or `contact` holds characters a header cannot.
    pub fn new(contact: &str) -> anyhow::Result<Self> {
        let agent = format!("Trove/{} ({})", env!("CARGO_PKG_VERSION"), contact.trim());
        let same_host = reqwest::redirect::Policy::custom(|attempt| {
            let first = attempt.previous().first().and_then(|u| u.host_str().map(str::to_owned));
            if attempt.previous().len() > 3 || attempt.url().host_str().map(str::to_owned) != first {
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .user_agent(agent)
            .redirect(same_host)
            .timeout(ANSWER_TIMEOUT)
            .build()
            .map_err(|e| anyhow::anyhow!("building the lookup client: {e}"))?;
        Ok(Self { client })
    }

    /// The JSON `url` answers: `None` for a 404 (the provider does not know the code). The gate is entered
    /// first, and told to wait on a 429 or 503.
    ///
    /// # Errors
    /// [`ProviderFailed::Waiting`] when the gate is closed; [`ProviderFailed::Failed`] for anything but a JSON
    /// answer of at most [`BODY_MAX`] bytes.
    pub async fn json(&self, provider: &str, gate: &Gate, url: &str) -> Result<Option<Value>, ProviderFailed> {
        let failed = |reason: String| ProviderFailed::Failed { provider: provider.to_owned(), reason };
        if !gate.enter() {
            return Err(ProviderFailed::Waiting { provider: provider.to_owned() });
        }
        let response = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| failed(format!("could not be reached: {e}")))?;
        let status = response.status();
        if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE {
            let wait = retry_after(response.headers()).unwrap_or(DEFAULT_WAIT);
            gate.wait(wait);
            return Err(failed(format!("answered {status}; waiting {} s", wait.as_secs())));
        }
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if status.is_redirection() {
            return Err(failed(format!("redirected elsewhere ({status})")));
        }
        if !status.is_success() {
            return Err(failed(format!("answered {status}")));
        }
        let media = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !media.contains("json") {
            return Err(failed(format!("answered {media:?}, not JSON")));
        }
        let body = bounded(response).await.map_err(failed)?;
        serde_json::from_slice(&body).map(Some).map_err(|e| failed(format!("answered no JSON: {e}")))
    }
}

/// Reads at most [`BODY_MAX`] bytes of `response`'s body, chunk by chunk.
async fn bounded(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    if response.content_length().is_some_and(|n| n > BODY_MAX as u64) {
        return Err(format!("answered a body over {BODY_MAX} bytes"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("the answer broke off: {e}"))? {
        if body.len() + chunk.len() > BODY_MAX {
            return Err(format!("answered a body over {BODY_MAX} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `Retry-After` in seconds (an HTTP date is not read: the default wait applies), at most a day.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let secs: u64 = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(secs.min(24 * 60 * 60)))
}

#[cfg(test)]
mod tests;
