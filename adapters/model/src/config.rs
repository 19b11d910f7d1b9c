//! How the adapter reaches the Model API: where, with which key and model, and how patiently.

use crate::profile::{Profile, Provider};
use std::fmt;
use std::time::Duration;

/// The Model API's public base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.meta.ai/v1";
/// The current Muse Spark model.
pub const DEFAULT_MODEL: &str = "muse-spark-1.3";
/// The speech-to-text model of `/asr/transcribe`.
pub const DEFAULT_TRANSCRIBE_MODEL: &str = "muse-voice-transcribe-1.0";

/// Settings of [`crate::ModelApi`], built once at start-up by the composition root.
///
/// The switches exist because the reference marks `strict` on function tools and `max_tool_calls` as
/// unconfirmed on Meta's service, and the provider rejects an unsupported field with 400: if it turns out to reject
/// one, the operator turns it off without a new build. `profile` decides what may be sent at all.
#[derive(Clone, PartialEq, Eq)]
pub struct ModelApiConfig {
    /// The provider's defaults and capabilities (`MODEL_PROVIDER`).
    pub profile: Profile,
    /// The API base, without the trailing `/responses` (`MODEL_API_URL`).
    pub base_url: String,
    /// Sent as `Authorization: Bearer KEY` (`MODEL_API_KEY`); never printed by `Debug`.
    pub api_key: String,
    /// The model of every Responses call, also the name spend is recorded under (`MODEL_NAME`).
    pub model: String,
    /// The model of `/asr/transcribe`.
    pub transcribe_model: String,
    /// The longest wait for the next byte of an answer (`MODEL_IDLE_TIMEOUT_SECS`): an answer streams as it is
    /// written, so a long one that keeps coming is never cut, and a stalled one is found within this.
    pub idle_timeout: Duration,
    /// Ask for the answer as a stream of server-sent events (`MODEL_STREAM`, on by default).
    pub stream: bool,
    /// Attempts in all, the first included (at least one is always made).
    pub max_attempts: u32,
    /// The first retry waits about this long; each further retry doubles it.
    pub backoff_base: Duration,
    /// No computed backoff waits longer than this.
    pub backoff_cap: Duration,
    /// The longest `Retry-After` waited out within a request: a provider asking for more is not tried again
    /// early (the wait is never cut short); the request fails as rate limited and the client is told the wait.
    pub retry_after_cap: Duration,
    /// Send `"strict": true` on function tools.
    pub strict_tools: bool,
    /// Send the request's `max_tool_calls` when it has one (and the profile takes it).
    pub send_max_tool_calls: bool,
    /// Ask for `reasoning.encrypted_content` on tool-calling requests and replay reasoning items verbatim, so a
    /// function call never travels without its reasoning (`MODEL_REPLAY_REASONING`). Off: nothing is asked for
    /// and replayed reasoning items are dropped, for a provider that refuses the include value.
    pub replay_reasoning: bool,
}

impl ModelApiConfig {
    /// The defaults of the reference (Meta's base URL, `muse-spark-1.3`, five attempts from 0.5 s up to 8 s)
    /// with `api_key`.
    pub fn new(api_key: impl Into<String>) -> Self {
        Self::for_provider(Provider::Meta, api_key)
    }

    /// The defaults of `provider`'s profile (base URL, models, what it takes), with the reference's patience
    /// (five attempts from 0.5 s up to 8 s) and `api_key`.
    pub fn for_provider(provider: Provider, api_key: impl Into<String>) -> Self {
        let profile = provider.profile();
        Self {
            base_url: profile.base_url.to_owned(),
            api_key: api_key.into(),
            model: profile.model.to_owned(),
            transcribe_model: profile.transcribe_model.to_owned(),
            idle_timeout: Duration::from_secs(60),
            stream: true,
            max_attempts: 5,
            backoff_base: Duration::from_millis(500),
            backoff_cap: Duration::from_secs(8),
            retry_after_cap: Duration::from_secs(60),
            // A server of one's own is sent `strict` only when switched on.
            strict_tools: provider != Provider::Compatible,
            send_max_tool_calls: profile.max_tool_calls,
            replay_reasoning: true,
            profile,
        }
    }

    /// The same settings against another base URL (a proxy, or a fake API in tests).
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Whether reasoning items are replayed from the provider's stored state: a reasoning model (or one not in
    /// the table) whose reasoning is not asked back encrypted (`MODEL_REPLAY_REASONING=false`) on a provider
    /// that keeps responses. Its requests are sent `store: true` and its reasoning items replayed as they came
    /// (by id, without encrypted content), so a function call never goes back without its reasoning, which a
    /// reasoning model refuses.
    pub fn reasoning_stored(&self) -> bool {
        !self.replay_reasoning && self.profile.store && crate::models::known(&self.model).is_none_or(|m| m.reasons)
    }

    /// The URL of `path` under the base, however the base's trailing slash was written.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url.trim_end_matches('/'), path.trim_start_matches('/'))
    }
}

impl fmt::Debug for ModelApiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelApiConfig")
            .field("provider", &self.profile.provider)
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("transcribe_model", &self.transcribe_model)
            .field("idle_timeout", &self.idle_timeout)
            .field("stream", &self.stream)
            .field("max_attempts", &self.max_attempts)
            .field("backoff_base", &self.backoff_base)
            .field("backoff_cap", &self.backoff_cap)
            .field("retry_after_cap", &self.retry_after_cap)
            .field("strict_tools", &self.strict_tools)
            .field("send_max_tool_calls", &self.send_max_tool_calls)
            .field("replay_reasoning", &self.replay_reasoning)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_reference() {
        let c = ModelApiConfig::new("k");
        assert_eq!(c.base_url, "https://api.meta.ai/v1");
        assert_eq!(c.model, "muse-spark-1.3");
        assert_eq!(c.transcribe_model, "muse-voice-transcribe-1.0");
        assert_eq!(c.max_attempts, 5);
        assert_eq!(c.backoff_base, Duration::from_millis(500));
        assert_eq!(c.backoff_cap, Duration::from_secs(8));
        assert!(c.strict_tools);
        assert!(c.send_max_tool_calls);
        assert!(c.replay_reasoning);
        assert_eq!(c.profile.provider, Provider::Meta);
    }

    #[test]
    fn each_provider_brings_its_defaults() {
        let openai = ModelApiConfig::for_provider(Provider::OpenAi, "k");
        assert_eq!((openai.base_url.as_str(), openai.model.as_str()), ("https://api.openai.com/v1", "gpt-5-mini"));
        let local = ModelApiConfig::for_provider(Provider::Compatible, "k");
        assert_eq!(local.base_url, "http://localhost:11434/v1");
        assert!(!local.send_max_tool_calls);
    }

    #[test]
    fn urls_ignore_a_trailing_slash() {
        assert_eq!(ModelApiConfig::new("k").url("responses"), "https://api.meta.ai/v1/responses");
        let c = ModelApiConfig::new("k").with_base_url("http://127.0.0.1:9/v1/");
        assert_eq!(c.url("/asr/transcribe"), "http://127.0.0.1:9/v1/asr/transcribe");
    }

    #[test]
    fn debug_hides_the_key() {
        let shown = format!("{:?}", ModelApiConfig::new("sk-secret"));
        assert!(!shown.contains("sk-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
