//! Trove's Model API adapter: [`ModelPort`] over the Meta Model API's Responses surface (`POST /responses`) and
//! its speech to text (`POST /asr/transcribe`), with reqwest.
//!
//! What goes over the wire follows `reference/model-api.md`: only the fields a call needs (the provider answers
//! 400 to anything it does not know), output items kept verbatim for replay, and retries of what may succeed
//! later (429, 408, 5xx, timeouts, connection errors) but never of a request the provider refused.

mod config;
pub mod models;
pub mod profile;
mod request;
mod response;
mod retry;
mod stream;
pub mod wav;

pub use config::{DEFAULT_BASE_URL, DEFAULT_MODEL, DEFAULT_TRANSCRIBE_MODEL, ModelApiConfig};
pub use profile::{Profile, Provider, Transcription};

use anyhow::Context as _;
use async_trait::async_trait;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use reqwest::{RequestBuilder, StatusCode, multipart};
use serde::Deserialize;
use std::error::Error as _;
use std::time::Duration;
use trove_application::ports::model::{
    Attempt, CallWatch, Capabilities, Capability, ModelError, ModelPort, ModelRequest, ModelResponse, OutputView,
    Streamed, Transcript,
};
use trove_domain::spend::{CallKind, Usage};

/// The remote Model API as a [`ModelPort`]: the backend used whenever `MODEL_API_KEY` is set.
#[derive(Debug, Clone)]
pub struct ModelApi {
    /// One pooled client for every call, so connections (and TLS sessions) are reused across a tool loop.
    client: reqwest::Client,
    config: ModelApiConfig,
}

/// Why one attempt failed, before deciding whether to try again.
#[derive(Debug)]
enum Failure {
    /// The provider answered with an error status (nothing was billed).
    Status { status: StatusCode, message: String, out_of_quota: bool, retry_after: Option<Duration> },
    /// A `200` that is a failed response of the kind that may succeed later (`server_error`,
    /// `rate_limit_exceeded`); its body is kept, to be read as the failure should no attempt be left, and its
    /// usage was billed.
    FailedAnswer { message: String, body: Vec<u8> },
    /// The request never reached the provider (no connection): nothing was billed.
    Unreached(String),
    /// The request was sent and no whole answer came back (no byte for the idle timeout, a broken connection or
    /// stream, an `error` event): it may have been billed, for its input and what had streamed back.
    Unanswered { reason: String, output_tokens: u64 },
}

/// Output tokens streamed between two progress reports, about.
const PROGRESS_STEP: u64 = 50;

/// The answer of `/asr/transcribe`; `sessionId` and `turns` are not needed.
#[derive(Debug, Deserialize)]
struct WireTranscript {
    transcript: String,
    #[serde(default, rename = "audioDurationMs")]
    audio_duration_ms: Option<u64>,
}

/// The answer of OpenAI's `/audio/transcriptions` (`response_format: json`).
#[derive(Debug, Deserialize)]
struct WireOpenAiTranscript {
    text: String,
    #[serde(default)]
    usage: Option<WireAudioUsage>,
}

/// The usage of a transcription billed by duration (`{"type": "duration", "seconds": 4}`); token-billed models
/// answer another shape, and then the audio's own length is costed.
#[derive(Debug, Deserialize)]
struct WireAudioUsage {
    #[serde(default)]
    seconds: Option<f64>,
}

impl ModelApi {
    /// A client for `config`. No attempt has a total time limit, since a long answer is not a failure: every
    /// read waits at most `config.idle_timeout` for its next byte.
    ///
    /// # Errors
    /// When the HTTP client cannot be built (its TLS setup failed).
    pub fn new(config: ModelApiConfig) -> anyhow::Result<Self> {
        let client = reqwest::Client::builder()
            .read_timeout(config.idle_timeout)
            .connect_timeout(config.idle_timeout.min(Duration::from_secs(30)))
            .user_agent(concat!("trove/", env!("CARGO_PKG_VERSION")))
            .build()
            .context("could not build the http client of the model api")?;
        Ok(Self { client, config })
    }

    /// The settings this client runs with.
    pub fn config(&self) -> &ModelApiConfig {
        &self.config
    }

    /// Sends the request `build` makes, again after each retryable failure, and answers the body of the first
    /// successful answer. `build` is called once per attempt because a multipart body cannot be sent twice.
    /// `retry_answer` says when a `200` body is itself a failure worth another attempt (a failed response); the
    /// body of the last attempt is answered all the same, for the caller to read as the failure it is.
    ///
    /// Error statuses and requests that never reached the provider cost nothing and are tried again up to
    /// `max_attempts`, after a backoff or the provider's `Retry-After`. An attempt that reached the provider and
    /// gave no usable answer (a failed answer, no byte for the idle timeout, a broken stream) may have been
    /// billed: it is tried again at most once, and the call's watch is told of it with what it cost (the failed
    /// answer's usage, or `input_estimate` and the output that had streamed back, marked as an estimate).
    async fn send(
        &self,
        what: &str,
        build: impl Fn() -> RequestBuilder,
        retry_answer: impl Fn(&[u8]) -> Option<String>,
        input_estimate: u64,
    ) -> Result<Vec<u8>, ModelError> {
        let watch = trove_application::ports::model::watch();
        let attempts = self.config.max_attempts.max(1);
        let mut attempt = 0;
        let mut reached_retries = 0;
        loop {
            let request = build();
            // A server of your own may need no key: then no `Authorization` header at all.
            let request =
                if self.config.api_key.is_empty() { request } else { request.bearer_auth(&self.config.api_key) };
            let failure = match request.send().await {
                Ok(answer) => {
                    let status = answer.status();
                    let retry_after = answer
                        .headers()
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| retry::parse_retry_after(v, chrono::Utc::now()));
                    match self.read_body(answer, watch.as_deref()).await {
                        Ok(body) if status.is_success() => match retry_answer(&body) {
                            Some(message) => Failure::FailedAnswer { message, body },
                            None => return Ok(body),
                        },
                        Ok(body) => Failure::Status {
                            status,
                            message: response::http_error_message(status, &body),
                            out_of_quota: response::out_of_quota(&body),
                            retry_after,
                        },
                        Err(failure) => failure,
                    }
                }
                // A request that cannot even be built (a malformed base URL) fails the same way every time.
                Err(e) if e.is_builder() => return Err(ModelError::Unreachable(describe(&e, &self.config))),
                Err(e) if e.is_connect() => Failure::Unreached(describe(&e, &self.config)),
                Err(e) => Failure::Unanswered { reason: describe(&e, &self.config), output_tokens: 0 },
            };
            let reached = matches!(failure, Failure::FailedAnswer { .. } | Failure::Unanswered { .. });
            let (retryable, retry_after) = match &failure {
                // A 429 for an account out of quota is billing, not load: it fails at once.
                Failure::Status { out_of_quota: true, .. } => (false, None),
                Failure::Status { status, retry_after, .. } => (retry::is_retryable(status.as_u16()), *retry_after),
                Failure::Unreached(_) => (true, None),
                // What reached the provider is sent again at most once: a retry is not free.
                Failure::FailedAnswer { .. } | Failure::Unanswered { .. } => (reached_retries < 1, None),
            };
            attempt += 1;
            // A provider that asks to wait longer than a request may is told to the client as it is (never cut
            // short and tried too early).
            let waits_too_long = retry_after.is_some_and(|asked| asked > self.config.retry_after_cap);
            if !retryable || attempt >= attempts || waits_too_long {
                return match failure {
                    Failure::Status { status, message, out_of_quota: true, .. } => Err(ModelError::Http {
                        status: status.as_u16(),
                        message: format!(
                            "the provider account has no quota left ({message}); check the plan, credit and \
                                 billing of your account with the model provider"
                        ),
                    }),
                    Failure::Status { status, message, retry_after, .. } if status == StatusCode::TOO_MANY_REQUESTS => {
                        Err(ModelError::RateLimited { message, retry_after })
                    }
                    Failure::Status { status, message, .. } => {
                        Err(ModelError::Http { status: status.as_u16(), message })
                    }
                    Failure::FailedAnswer { body, .. } => Ok(body),
                    Failure::Unreached(reason) if attempt > 1 => {
                        Err(ModelError::Unreachable(format!("{reason} (after {attempt} attempts)")))
                    }
                    Failure::Unreached(reason) => Err(ModelError::Unreachable(reason)),
                    Failure::Unanswered { reason, output_tokens } => {
                        let reason = if attempt > 1 { format!("{reason} (after {attempt} attempts)") } else { reason };
                        let estimate = Usage { input_tokens: input_estimate, output_tokens, ..Usage::default() };
                        Err(ModelError::Unanswered { reason, estimate })
                    }
                };
            }
            if reached {
                reached_retries += 1;
                let attempt = match &failure {
                    Failure::FailedAnswer { message, body } => Attempt {
                        usage: response::billed(body).unwrap_or_default(),
                        estimated: false,
                        reason: message.clone(),
                    },
                    Failure::Unanswered { reason, output_tokens } => Attempt {
                        usage: Usage {
                            input_tokens: input_estimate,
                            output_tokens: *output_tokens,
                            ..Usage::default()
                        },
                        estimated: true,
                        reason: reason.clone(),
                    },
                    _ => unreachable!("only what reached the provider is counted"),
                };
                if let Some(watch) = &watch {
                    watch.retried(attempt);
                }
            }
            let delay = match retry_after {
                Some(asked) => asked,
                None => retry::backoff(
                    attempt - 1,
                    self.config.backoff_base,
                    self.config.backoff_cap,
                    retry::jitter(self.config.backoff_base),
                ),
            };
            match &failure {
                Failure::Status { status, message, .. } => tracing::warn!(
                    call = what, attempt, of = attempts, status = status.as_u16(), %message, ?delay,
                    "the model api answered an error; retrying"
                ),
                Failure::FailedAnswer { message, .. } => tracing::warn!(
                    call = what, attempt, of = attempts, %message, ?delay,
                    "the model api answered a failed response; retrying once"
                ),
                Failure::Unreached(reason) => tracing::warn!(
                    call = what, attempt, of = attempts, %reason, ?delay,
                    "the model api could not be reached; retrying"
                ),
                Failure::Unanswered { reason, .. } => tracing::warn!(
                    call = what, attempt, of = attempts, %reason, ?delay,
                    "the model api gave no whole answer; retrying once"
                ),
            }
            tokio::time::sleep(delay).await;
        }
    }

    /// The body of an answer: whole, or, for a stream of server-sent events, the response its terminal event
    /// carries, telling `watch` how much the model has written as the events come. Every read waits at most
    /// the idle timeout for its next byte (the client's read timeout), however long the whole answer takes.
    async fn read_body(
        &self,
        mut answer: reqwest::Response,
        watch: Option<&dyn CallWatch>,
    ) -> Result<Vec<u8>, Failure> {
        let streamed = answer
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        if !streamed {
            return answer
                .bytes()
                .await
                .map(|b| b.to_vec())
                .map_err(|e| Failure::Unanswered { reason: describe(&e, &self.config), output_tokens: 0 });
        }
        let mut events = stream::Events::default();
        let mut told = 0;
        loop {
            let fed = match answer.chunk().await {
                Ok(Some(chunk)) => events.feed(&chunk),
                Ok(None) => {
                    return Err(Failure::Unanswered {
                        reason: "the answer's stream ended before the response was complete".into(),
                        output_tokens: events.output_tokens(),
                    });
                }
                Err(e) => {
                    return Err(Failure::Unanswered {
                        reason: describe(&e, &self.config),
                        output_tokens: events.output_tokens(),
                    });
                }
            };
            match fed {
                stream::Fed::More => {
                    let written = events.output_tokens();
                    if written >= told + PROGRESS_STEP {
                        told = written;
                        if let Some(watch) = watch {
                            watch.streamed(Streamed { output_tokens: written });
                        }
                    }
                }
                stream::Fed::Done(body) => return Ok(body),
                stream::Fed::Error(message) => {
                    return Err(Failure::Unanswered {
                        reason: format!("the answer's stream reported an error: {message}"),
                        output_tokens: events.output_tokens(),
                    });
                }
            }
        }
    }
}

/// A transport error in words, with its causes (reqwest's own message rarely says what went wrong).
fn describe(error: &reqwest::Error, config: &ModelApiConfig) -> String {
    if error.is_timeout() {
        return format!("no byte came for {:?}", config.idle_timeout);
    }
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[async_trait]
impl ModelPort for ModelApi {
    fn model_name(&self, kind: CallKind) -> String {
        match kind {
            CallKind::Transcribe => self.config.transcribe_model.clone(),
            _ => self.config.model.clone(),
        }
    }

    fn capabilities(&self) -> Capabilities {
        let profile = &self.config.profile;
        Capabilities {
            web_search: profile.web_search,
            images: true,
            audio: profile.transcription.is_some(),
            remote: true,
        }
    }

    async fn respond(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let body = serde_json::to_vec(&request::build(&self.config, request)?)
            .map_err(|e| ModelError::bad_response(format!("the request could not be written: {e}")))?;
        let url = self.config.url("responses");
        tracing::debug!(kind = %request.kind, model = %self.config.model, bytes = body.len(), "calling the model api");
        let answer = self
            .send(
                "responses",
                || self.client.post(&url).header(CONTENT_TYPE, "application/json").body(body.clone()),
                response::retryable_failure,
                request.estimated_input_tokens(),
            )
            .await?;
        let mut response = response::parse(&answer)?;
        if self.config.reasoning_stored() {
            // The provider keeps the response: its reasoning items go back by id, without encrypted content.
            for item in &mut response.output {
                if let OutputView::Reasoning { replayable } = &mut item.view {
                    *replayable = true;
                }
            }
        }
        tracing::debug!(kind = %request.kind, usage = ?response.usage, items = response.output.len(), "model api answered");
        Ok(response)
    }

    fn prepare_audio(&self, wav: &[u8]) -> Result<Vec<u8>, ModelError> {
        let audio = wav::for_transcription(wav).map_err(|e| ModelError::BadInput(e.to_string()))?;
        Ok(audio.into_owned())
    }

    async fn transcribe(&self, wav: &[u8]) -> Result<Transcript, ModelError> {
        let Some(transcription) = self.config.profile.transcription else {
            return Err(Capability::Audio.lacking());
        };
        // Audio from `prepare_audio` passes through unchanged (a header check); anything else is converted here.
        let audio = wav::for_transcription(wav).map_err(|e| ModelError::BadInput(e.to_string()))?.into_owned();
        let played = wav::Wav::read(&audio).map_err(|e| ModelError::BadInput(e.to_string()))?.duration_ms();
        match transcription {
            Transcription::MetaAsr => self.transcribe_meta(audio, played).await,
            Transcription::OpenAi => self.transcribe_openai(audio, played).await,
        }
    }
}

impl ModelApi {
    /// Meta's `/asr/transcribe` of a checked WAV that plays `played` milliseconds.
    async fn transcribe_meta(&self, audio: Vec<u8>, played: u64) -> Result<Transcript, ModelError> {
        let settings = serde_json::json!({
            "model": self.config.transcribe_model,
            "audioEncoding": "WAV",
            "mode": "PUSH_TO_TALK",
        })
        .to_string();
        let url = self.config.url(Transcription::MetaAsr.path());
        let answer = self
            .send(
                "transcribe",
                || {
                    let form = multipart::Form::new()
                        .part("request", typed_part(multipart::Part::text(settings.clone()), "application/json"))
                        .part(
                            "audio",
                            typed_part(multipart::Part::bytes(audio.clone()).file_name("audio.wav"), "audio/wav"),
                        );
                    self.client.post(&url).multipart(form)
                },
                |_| None,
                0,
            )
            .await?;
        // The audio was billed whatever the answer says: when it does not say how long, its own length is costed.
        let billed = Usage { audio_ms: played, ..Usage::default() };
        let wire: WireTranscript = serde_json::from_slice(&answer).map_err(|e| ModelError::BadResponse {
            message: format!("the transcription is not the expected json: {e}"),
            usage: Some(billed),
        })?;
        if wire.audio_duration_ms.is_none() {
            tracing::warn!(
                "the transcription gave no audioDurationMs; its spend is costed from the audio's own length"
            );
        }
        Ok(Transcript { text: wire.transcript, audio_ms: wire.audio_duration_ms.unwrap_or(played) })
    }

    /// OpenAI's `/audio/transcriptions` of a checked WAV that plays `played` milliseconds.
    async fn transcribe_openai(&self, audio: Vec<u8>, played: u64) -> Result<Transcript, ModelError> {
        let url = self.config.url(Transcription::OpenAi.path());
        let answer = self
            .send(
                "transcribe",
                || {
                    let form = multipart::Form::new()
                        .part(
                            "file",
                            typed_part(multipart::Part::bytes(audio.clone()).file_name("audio.wav"), "audio/wav"),
                        )
                        .text("model", self.config.transcribe_model.clone())
                        .text("response_format", "json");
                    self.client.post(&url).multipart(form)
                },
                |_| None,
                0,
            )
            .await?;
        let billed = Usage { audio_ms: played, ..Usage::default() };
        let wire: WireOpenAiTranscript = serde_json::from_slice(&answer).map_err(|e| ModelError::BadResponse {
            message: format!("the transcription is not the expected json: {e}"),
            usage: Some(billed),
        })?;
        // Billed by the second when it says so; else the audio's own length is costed.
        let seconds = wire.usage.and_then(|u| u.seconds).filter(|s| s.is_finite() && *s >= 0.0);
        let audio_ms = seconds.map_or(played, |s| (s * 1000.0).round() as u64);
        Ok(Transcript { text: wire.text, audio_ms })
    }
}

/// A multipart part of the given content type. Set as a part header rather than by `mime_str`, whose parse of a
/// constant could only fail in theory but would still need a failure path.
fn typed_part(part: multipart::Part, content_type: &'static str) -> multipart::Part {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    part.headers(headers)
}
