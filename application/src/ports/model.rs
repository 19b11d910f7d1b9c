//! The model: one call of the Model API's Responses surface (or of a stand-in with the same contract), and
//! speech to text.
//!
//! Output items are kept twice: as the raw JSON text the provider sent (replayed verbatim in the next step of a
//! loop, as the provider requires) and as a typed view the use cases read.

use async_trait::async_trait;
use trove_domain::HouseholdId;
use trove_domain::spend::{CallKind, Usage};

/// The verbatim JSON text of one output item, as the provider sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawJson(pub String);

/// One item of a request's `input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputItem {
    /// A user message of text.
    UserText(String),
    /// A user message of a text and an image (a `data:` URL).
    UserImage { text: String, image_data_url: String },
    /// A user message of a text and a file (a PDF, as a `data:` URL, with its file name).
    UserFile { text: String, filename: String, file_data_url: String },
    /// An earlier output item, replayed verbatim.
    Replay(RawJson),
    /// The answer to a function call, matched by `call_id`.
    FunctionCallOutput { call_id: String, output: String },
}

/// How much context a web search gathers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchContextSize {
    Low,
    Medium,
    High,
}

impl SearchContextSize {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchContextSize::Low => "low",
            SearchContextSize::Medium => "medium",
            SearchContextSize::High => "high",
        }
    }

    pub fn parse(word: &str) -> Option<Self> {
        match word.trim() {
            "low" => Some(Self::Low),
            "medium" => Some(Self::Medium),
            "high" => Some(Self::High),
            _ => None,
        }
    }
}

/// The owner's approximate location, for web search. Members not given are left out of the request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApproximateLocation {
    pub country: Option<String>,
    pub region: Option<String>,
    pub city: Option<String>,
    pub timezone: Option<String>,
}

impl ApproximateLocation {
    /// True when no member is given: the whole `user_location` is then omitted.
    pub fn is_empty(&self) -> bool {
        self.country.is_none() && self.region.is_none() && self.city.is_none() && self.timezone.is_none()
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tool {
    /// A strict function tool; `parameters` is its JSON schema as text.
    Function { name: String, description: String, parameters: String },
    /// The provider's built-in web search.
    WebSearch { context_size: SearchContextSize, location: Option<ApproximateLocation> },
}

/// A strict JSON schema the final answer must follow (`text.format`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSchema {
    pub name: String,
    /// The schema as JSON text.
    pub schema: String,
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRequest {
    /// What the call is for; a backend may refuse kinds it cannot serve.
    pub kind: CallKind,
    pub instructions: String,
    pub input: Vec<InputItem>,
    pub tools: Vec<Tool>,
    pub output_schema: Option<OutputSchema>,
    pub max_output_tokens: u32,
    /// Caps the built-in tool calls (web searches) of the response.
    pub max_tool_calls: Option<u32>,
    /// Ask for the pages each web search returned (`web_search_call.results`).
    pub include_search_results: bool,
    /// The household whose data the call is about, when a backend may read it itself: the local planner plans
    /// from the household's store through the ports (the proposal loop sets it). The Model API never sends it;
    /// `None` for calls that carry everything in their input.
    pub household: Option<HouseholdId>,
}

/// Tokens an image costs in an estimate, whatever its bytes (a photo is billed by its tiles, not its size).
pub const IMAGE_TOKENS_ESTIMATE: u64 = 1_500;

impl ModelRequest {
    /// About how many input tokens the request sends: its texts (instructions, messages, replayed items, tool
    /// outputs, tools' and schema's definitions) at four characters a token, and a flat count per image or file.
    /// For budget checks before sending, not for the bill.
    pub fn estimated_input_tokens(&self) -> u64 {
        let mut chars = self.instructions.len();
        let mut flat = 0;
        for item in &self.input {
            chars += match item {
                InputItem::UserText(t) => t.len(),
                InputItem::UserImage { text, .. } => {
                    flat += IMAGE_TOKENS_ESTIMATE;
                    text.len()
                }
                InputItem::UserFile { text, file_data_url, .. } => text.len() + file_data_url.len() / 8,
                InputItem::Replay(raw) => raw.0.len(),
                InputItem::FunctionCallOutput { output, .. } => output.len(),
            };
        }
        for tool in &self.tools {
            if let Tool::Function { name, description, parameters } = tool {
                chars += name.len() + description.len() + parameters.len();
            }
        }
        if let Some(schema) = &self.output_schema {
            chars += schema.schema.len();
        }
        (chars as u64).div_ceil(4) + flat
    }

    /// The web searches the request may make: its cap, else one when it has the web search tool.
    pub fn searches_at_most(&self) -> u32 {
        let searches = self.tools.iter().any(|t| matches!(t, Tool::WebSearch { .. }));
        match self.max_tool_calls {
            Some(n) if searches => n,
            _ => u32::from(searches),
        }
    }
}

/// A page a web search returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    pub url: String,
    pub title: Option<String>,
}

/// A `url_citation` annotation of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    pub url: String,
    pub title: Option<String>,
}

/// The typed view of one output item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputView {
    /// A reasoning item; `replayable` when it carries its encrypted content (else it must not be replayed).
    Reasoning { replayable: bool },
    /// The model calls a function tool; `arguments` is the JSON text it sent.
    FunctionCall { call_id: String, name: String, arguments: String },
    /// A message of the assistant: its output text joined, and its citations.
    Message { text: String, citations: Vec<Citation> },
    /// A web search that ran: its action (if the provider says), the action's sources and the result pages.
    WebSearchCall { action: Option<String>, query: Option<String>, sources: Vec<SearchPage>, results: Vec<SearchPage> },
    /// Anything else, by its `type`.
    Other { kind: String },
}

/// One output item: raw for replay, typed for reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputItem {
    pub raw: RawJson,
    pub view: OutputView,
}

/// A completed response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelResponse {
    pub output: Vec<OutputItem>,
    /// Tokens as reported; `searches` counts the response's web searches (each `web_search_call` item, of action
    /// type `search` when an action is given).
    pub usage: Usage,
}

impl ModelResponse {
    /// The function calls of this response, in order.
    pub fn function_calls(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.output.iter().filter_map(|o| match &o.view {
            OutputView::FunctionCall { call_id, name, arguments } => {
                Some((call_id.as_str(), name.as_str(), arguments.as_str()))
            }
            _ => None,
        })
    }

    /// The text of the last message, if any.
    pub fn final_text(&self) -> Option<&str> {
        self.output.iter().rev().find_map(|o| match &o.view {
            OutputView::Message { text, .. } => Some(text.as_str()),
            _ => None,
        })
    }
}

/// A transcription of audio.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    pub text: String,
    /// How long the audio was, as the provider billed it (or as long as it plays, when its answer does not say).
    pub audio_ms: u64,
}

/// What a backend can do besides function tools and text. A use case asks before it sends anything
/// ([`Capabilities::require`]), so a capability the backend lacks costs nothing and is said plainly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// The provider's built-in web search (pricing).
    pub web_search: bool,
    /// Images in the input (reading a label photo).
    pub images: bool,
    /// Speech to text (reading a voice note given as audio).
    pub audio: bool,
    /// A remote Model API, whose provider profile decides what it offers; `false` for the local planner, whose
    /// missing capabilities are the Model API's (set `MODEL_API_KEY`).
    pub remote: bool,
}

/// One thing a backend may or may not offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    WebSearch,
    Images,
    Audio,
}

impl Capability {
    /// The capability's name, as an error names it ("web_search", "images", "audio_transcription").
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::WebSearch => "web_search",
            Capability::Images => "images",
            Capability::Audio => "audio_transcription",
        }
    }

    /// What the backend's refusal says when it lacks this capability: what it cannot do, what needs it, and a
    /// provider that has it.
    pub fn lacking(self) -> ModelError {
        let message = match self {
            Capability::WebSearch => {
                "this model backend cannot search the web; pricing needs a provider with web search, \
                 e.g. MODEL_PROVIDER=meta"
            }
            Capability::Images => {
                "this model backend cannot read images; reading a label photo needs a provider that reads images, \
                 e.g. MODEL_PROVIDER=meta"
            }
            Capability::Audio => {
                "this model backend cannot transcribe audio; send the voice note as a transcript, or use a provider \
                 with transcription, e.g. MODEL_PROVIDER=meta"
            }
        };
        ModelError::Unavailable { capability: self.as_str(), message: message.to_owned() }
    }

    /// What the use case that needs this capability is called, for the local planner's refusal.
    fn needed_by(self) -> &'static str {
        match self {
            Capability::WebSearch => "pricing with web search",
            Capability::Images => "reading a label photo",
            Capability::Audio => "reading a voice note",
        }
    }
}

impl Capabilities {
    /// Whether the backend offers `capability`.
    pub fn has(&self, capability: Capability) -> bool {
        match capability {
            Capability::WebSearch => self.web_search,
            Capability::Images => self.images,
            Capability::Audio => self.audio,
        }
    }

    /// The refusal of a call that needs `capability`, before anything is sent.
    ///
    /// # Errors
    /// When the backend lacks it: `Unavailable` naming it for a remote Model API (its provider profile lacks
    /// it), `NotConfigured` asking for `MODEL_API_KEY` for the local planner.
    pub fn require(&self, capability: Capability) -> Result<(), ModelError> {
        if self.has(capability) {
            Ok(())
        } else if self.remote {
            Err(capability.lacking())
        } else {
            Err(ModelError::NotConfigured { what: capability.needed_by().to_owned(), setting: "MODEL_API_KEY" })
        }
    }
}

/// Why a model call failed. Variants carrying `usage` were billed: the caller records their spend.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The backend cannot do this (the local planner asked to search the web); `setting` enables it.
    #[error("{what} needs the Model API: set {setting}")]
    NotConfigured { what: String, setting: &'static str },
    /// The configured Model API's provider does not offer `capability` (a local server without web search);
    /// refused before anything is sent.
    #[error("{message}")]
    Unavailable { capability: &'static str, message: String },
    /// The response stopped early (`status: incomplete`).
    #[error("the model's answer is incomplete ({reason})")]
    Incomplete { reason: String, usage: Usage },
    /// The response failed (`status: failed`).
    #[error("the model failed: {message}")]
    Failed { message: String, usage: Usage },
    /// The model refused to answer.
    #[error("the model refused: {refusal}")]
    Refused { refusal: String, usage: Usage },
    /// The provider answered with an HTTP error (after retries where they apply).
    #[error("the Model API answered {status}: {message}")]
    Http { status: u16, message: String },
    /// No answer: timeout or connection failure (after retries).
    #[error("the Model API could not be reached: {0}")]
    Unreachable(String),
    /// The call was sent and no whole answer came back (no byte for the idle timeout, a broken connection or
    /// stream) after the retries allowed: `estimate` is what it may have cost (the input sent, the output that had
    /// streamed back).
    #[error("the Model API gave no whole answer: {reason}")]
    Unanswered { reason: String, estimate: Usage },
    /// The provider is rate limiting (429) beyond the retries, or asks to wait longer than a request may:
    /// the same request may succeed after `retry_after` (when the provider said).
    #[error("the model provider is rate limiting requests: {message}")]
    RateLimited { message: String, retry_after: Option<std::time::Duration> },
    /// The provider's answer is not the shape the reference gives.
    /// The input cannot be sent as it is (an audio file the transcription does not take); nothing was sent.
    #[error("{0}")]
    BadInput(String),
    /// `usage` is what the answer still says was billed (a `200` whose output cannot be read), when it says so.
    #[error("the Model API's answer could not be read: {message}")]
    BadResponse { message: String, usage: Option<Usage> },
}

impl ModelError {
    /// An answer that could not be read, with nothing known about its cost.
    pub fn bad_response(message: impl Into<String>) -> Self {
        ModelError::BadResponse { message: message.into(), usage: None }
    }

    /// Whether the call went out before it failed (and so is a spend entry). `NotConfigured`, `Unavailable` and
    /// `BadInput` are refusals before anything is sent.
    pub fn was_sent(&self) -> bool {
        !matches!(self, ModelError::NotConfigured { .. } | ModelError::Unavailable { .. } | ModelError::BadInput(_))
    }

    /// The usage billed for a failed call, when the provider reported one.
    pub fn usage(&self) -> Option<Usage> {
        match self {
            ModelError::Incomplete { usage, .. }
            | ModelError::Failed { usage, .. }
            | ModelError::Refused { usage, .. } => Some(*usage),
            ModelError::BadResponse { usage, .. } => *usage,
            ModelError::Unanswered { estimate, .. } => Some(*estimate),
            _ => None,
        }
    }
}

/// One attempt of a call that was sent and gave no usable answer, and was tried again: what it cost, as the
/// provider said (a `failed` answer's usage) or as estimated (no whole answer came back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub usage: Usage,
    /// `true` when `usage` is an estimate: the input sent and the output that had streamed back.
    pub estimated: bool,
    /// Why it did not answer, for the log.
    pub reason: String,
}

/// What the provider has streamed back of an answer so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streamed {
    /// Output tokens so far, about (four characters a token of the text, reasoning summaries and call arguments).
    pub output_tokens: u64,
}

/// What a backend tells while a call runs: the answer's progress as the provider streams it, and each attempt
/// sent that did not answer and is tried again (so the ledger holds every attempt, not only the last).
pub trait CallWatch: Send + Sync {
    fn streamed(&self, progress: Streamed);
    fn retried(&self, attempt: Attempt);
}

tokio::task_local! {
    /// The watch of the call running on this task, set by [`watching`].
    static WATCH: std::sync::Arc<dyn CallWatch>;
}

/// Runs `call` (a backend's [`ModelPort::respond`]) with `watch` told what happens meanwhile: the one metered
/// wrapper sets it around every call, and every backend reaches it through [`watch`] without the port's
/// signature carrying it.
pub async fn watching<F: Future>(watch: std::sync::Arc<dyn CallWatch>, call: F) -> F::Output {
    WATCH.scope(watch, call).await
}

/// The watch of the call running on this task, if any.
pub fn watch() -> Option<std::sync::Arc<dyn CallWatch>> {
    WATCH.try_with(std::sync::Arc::clone).ok()
}

/// A model backend: the remote Model API, the local planner, or a mock.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait ModelPort: Send + Sync {
    /// The model id a call of `kind` is made with and its spend recorded under ("muse-spark-1.3",
    /// "muse-voice-transcribe-1.0" for a transcription, "local-planner").
    fn model_name(&self, kind: CallKind) -> String;

    /// What this backend can do.
    fn capabilities(&self) -> Capabilities;

    /// One call: sends `request`, answers the completed response.
    ///
    /// # Errors
    /// MUST return `Incomplete`, `Failed` or `Refused` (with the usage) for a response of that status or with a
    /// refusal part; `Http` for an error status after retries (never retrying 400, 401, 403, 404);
    /// `Unreachable` after retried timeouts and connection errors; `NotConfigured` (the local planner) or
    /// `Unavailable` (a provider that lacks it) for a request this backend cannot serve, before anything is sent.
    async fn respond(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError>;

    /// Checks a voice note and converts it into the audio [`ModelPort::transcribe`] sends (the Model API's takes
    /// any uncompressed WAV to mono 16-bit PCM). CPU work, synchronous so the caller schedules it: `Intake` runs it
    /// under its limit of concurrent jobs. The default keeps the bytes as they are.
    ///
    /// # Errors
    /// `BadInput` for audio the backend would refuse to send (damaged, compressed, too long).
    fn prepare_audio(&self, wav: &[u8]) -> Result<Vec<u8>, ModelError> {
        Ok(wav.to_vec())
    }

    /// Speech to text of audio made by [`ModelPort::prepare_audio`].
    ///
    /// # Errors
    /// As [`ModelPort::respond`]; `NotConfigured` or `Unavailable` when the backend has no speech to text.
    async fn transcribe(&self, wav: &[u8]) -> Result<Transcript, ModelError>;
}
