//! `trove model check`: the smallest call for each capability of the configured model backend, so an owner
//! knows after setting a key what works, what the provider refused and which setting to change.
//!
//! Every call is written to the spend ledger of the default household, failed or not; at the default rates the
//! whole check costs well under one US cent.

use crate::{App, Config, config::names};
use std::fmt::Write as _;
use std::sync::Arc;
use trove_application::ports::model::{
    Capability, InputItem, ModelError, ModelPort, ModelRequest, ModelResponse, OutputSchema, OutputView,
    SearchContextSize, Tool,
};
use trove_application::ports::{HouseholdRepo, InventoryRepo, SpendLedger};
use trove_domain::HouseholdId;
use trove_domain::spend::{CallKind, CallOutcome, SpendEntry, Usage};
use trove_model::ModelApi;

/// How one capability fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The call answered as it should; what it showed.
    Works(String),
    /// The provider refused or the answer was unusable: the provider's own message.
    Refused(String),
    /// The configured provider does not offer it; nothing was sent.
    NotOffered(String),
}

/// One line of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// What was checked ("structured answer", "web search", ...).
    pub capability: &'static str,
    pub verdict: Verdict,
    /// The setting to change when it does not work.
    pub setting: &'static str,
}

/// The result of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCheck {
    /// The provider and address tried ("meta at https://api.meta.ai/v1, model muse-spark-1.3").
    pub backend: String,
    pub rows: Vec<Row>,
    /// Why the check stopped early: the backend could not be reached (the address tried and the connection
    /// error), or the provider rejected the key (its own message).
    pub stopped: Option<String>,
}

impl ModelCheck {
    /// Whether everything the configuration needs works: the backend answered and no offered capability failed.
    pub fn passed(&self) -> bool {
        self.stopped.is_none() && !self.rows.iter().any(|r| matches!(r.verdict, Verdict::Refused(_)))
    }

    /// The report as people read it: the backend, a table of capability, result and setting, and the verdict.
    pub fn render(&self) -> String {
        let mut out = format!("model backend: {}\n", self.backend);
        if let Some(stopped) = &self.stopped {
            let _ = writeln!(out, "{stopped}");
            return out;
        }
        let cells: Vec<(&str, String, &str)> = self
            .rows
            .iter()
            .map(|r| {
                let result = match &r.verdict {
                    Verdict::Works(detail) => format!("works ({detail})"),
                    Verdict::Refused(message) => format!("refused: {message}"),
                    Verdict::NotOffered(why) => format!("not offered ({why})"),
                };
                let setting = if matches!(r.verdict, Verdict::Works(_)) { "" } else { r.setting };
                (r.capability, result, setting)
            })
            .collect();
        let first = cells.iter().map(|c| c.0.len()).max().unwrap_or(0).max("capability".len());
        let second = cells.iter().map(|c| c.1.chars().count()).max().unwrap_or(0).max("result".len());
        let _ = writeln!(out, "{:first$}  {:second$}  setting", "capability", "result");
        for (capability, result, setting) in &cells {
            let line = format!("{capability:first$}  {result:second$}  {setting}");
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out.push_str(if self.passed() {
            "everything this configuration needs works\n"
        } else {
            "something this configuration needs does not work: see the setting to change\n"
        });
        out
    }
}

/// The structured answer every call of the check asks for.
const CHECK_SCHEMA: &str = r#"{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": false}"#;
/// The strict function tool of the check.
const TOOL_SCHEMA: &str =
    r#"{"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false}"#;
/// Enough room for a reasoning model's thinking about a one-line task, and no more.
const MAX_OUTPUT_TOKENS: u32 = 2_000;

/// Runs the check against the configured Model API, recording every call in the default household's ledger.
///
/// # Errors
/// When no Model API is configured (the local planner has nothing to check), or the ledger cannot be written.
pub async fn run(app: &App, config: &Config) -> anyhow::Result<ModelCheck> {
    let Some(settings) = config.model_api() else {
        anyhow::bail!(
            "no model api is configured: the local planner answers, with nothing to check; set {} (or {}=compatible \
             for a server of your own)",
            names::MODEL_API_KEY,
            names::MODEL_PROVIDER
        );
    };
    let mut backend = format!("{} at {}, model {}", settings.profile.provider, settings.base_url, settings.model);
    if config.rates_assumed {
        backend.push_str(&format!(
            " (not in Trove's table of models: its rates are assumed to be the {} profile's; set {}, {} and {} to \
             your bill)",
            settings.profile.provider,
            names::RATE_INPUT_PER_MTOK,
            names::RATE_CACHED_PER_MTOK,
            names::RATE_OUTPUT_PER_MTOK
        ));
    }
    let api = ModelApi::new(settings)?;
    let household = app.store.ensure_household(trove_application::auth::DEFAULT_HOUSEHOLD).await?;
    let check = Checker { api, ledger: app.store.clone(), app, config, household };
    let mut rows = Vec::new();

    // The first call also says whether the backend is there at all and takes the key.
    let structured = check.call(&structured_request()).await?;
    if let Err(e) = &structured
        && let Some(stopped) = stopped(e, &check.api)
    {
        return Ok(ModelCheck { backend, rows, stopped: Some(stopped) });
    }
    rows.push(Row {
        capability: "structured answer",
        verdict: match structured {
            Ok(response) => read_ok(&response),
            Err(e) => Verdict::Refused(e.to_string()),
        },
        setting: names::MODEL_NAME,
    });
    rows.push(Row {
        capability: "strict function tool, call and replay",
        verdict: check.function_tool().await?,
        setting: if check.api.config().strict_tools {
            names::MODEL_STRICT_TOOLS
        } else {
            names::MODEL_REPLAY_REASONING
        },
    });
    rows.push(Row {
        capability: "web search (max_tool_calls 1)",
        verdict: check.web_search().await?,
        setting: if check.api.capabilities().web_search {
            names::MODEL_SEND_MAX_TOOL_CALLS
        } else {
            names::MODEL_PROVIDER
        },
    });
    rows.push(Row {
        capability: "context for this household's listing",
        verdict: check.context().await?,
        setting: CONTEXT_SETTING,
    });
    rows.push(Row {
        capability: "audio transcription (1 s)",
        verdict: check.transcription().await?,
        setting: if check.api.capabilities().audio { names::MODEL_TRANSCRIBE_MODEL } else { names::MODEL_PROVIDER },
    });
    Ok(ModelCheck { backend, rows, stopped: None })
}

/// A failure that makes the other checks pointless, said plainly.
fn stopped(error: &ModelError, api: &ModelApi) -> Option<String> {
    match error {
        ModelError::Unreachable(reason) => Some(format!(
            "the model backend could not be reached at {}: {reason}; check {} and that the server runs",
            api.config().base_url,
            names::MODEL_API_URL
        )),
        ModelError::Http { status: status @ (401 | 403), message } => {
            Some(format!("the provider rejected the key ({status}): {message}; check {}", names::MODEL_API_KEY))
        }
        _ => None,
    }
}

/// Where the context of a server of one's own is set.
const CONTEXT_SETTING: &str = "the server's context length (Ollama: OLLAMA_CONTEXT_LENGTH; vLLM: --max-model-len)";

/// Fewer tokens than this are read whole by any model's context.
const SMALL_LISTING: u64 = 2_000;

/// Whether a provider's message says the input is longer than the model's context.
fn context_exceeded(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["context length", "context_length", "maximum context", "context window", "too many tokens", "prompt is too long"]
        .iter()
        .any(|p| m.contains(p))
}

/// The verdict on a call that sent about `sent` tokens of listing: the provider refused it for its length, read
/// only part of it (Ollama cuts what does not fit, silently, and reports what it read), or read it whole.
fn context_verdict(answer: &Result<ModelResponse, ModelError>, sent: u64, items: usize) -> Verdict {
    match answer {
        Err(ModelError::Http { message, .. }) if context_exceeded(message) => Verdict::Refused(format!(
            "this household's listing ({items} items, about {sent} tokens) does not fit the model's context: {message}"
        )),
        Err(e) => Verdict::Refused(e.to_string()),
        // A listing this short fits any context a model is served with; a server's count may differ from ours.
        Ok(r) if sent < SMALL_LISTING => Verdict::Works(format!(
            "this household's listing is short ({items} items, {} tokens read)",
            r.usage.input_tokens
        )),
        Ok(r) if r.usage.input_tokens < sent / 2 => Verdict::Refused(format!(
            "the model read {} of about {sent} tokens of this household's listing ({items} items): its context is \
             too small for real proposals, and the rest was cut without a word",
            r.usage.input_tokens
        )),
        Ok(r) => Verdict::Works(format!(
            "this household's listing ({items} items, {} tokens read) fits",
            r.usage.input_tokens
        )),
    }
}

struct Checker<'a> {
    api: ModelApi,
    ledger: Arc<dyn SpendLedger>,
    app: &'a App,
    config: &'a Config,
    household: HouseholdId,
}

impl Checker<'_> {
    /// One call, recorded in the ledger (failed calls too; a refusal before sending is not a call).
    async fn call(&self, request: &ModelRequest) -> anyhow::Result<Result<ModelResponse, ModelError>> {
        let answer = self.api.respond(request).await;
        match &answer {
            Ok(r) => self.record(request.kind, r.usage, CallOutcome::Ok).await?,
            Err(e) if e.was_sent() => {
                self.record(request.kind, e.usage().unwrap_or_default(), CallOutcome::Failed).await?;
            }
            Err(_) => {}
        }
        Ok(answer)
    }

    async fn record(&self, kind: CallKind, usage: Usage, outcome: CallOutcome) -> anyhow::Result<()> {
        let model = self.api.model_name(kind);
        let now = self.app.services.clock.now();
        let entry = SpendEntry::new(now, kind, &model, &usage, &self.config.spend.rates, outcome);
        self.ledger.record(self.household, &entry).await?;
        Ok(())
    }

    /// One call the size of this household's real listing (what `list_inventory` answers a proposal), to find a
    /// context too small for real proposals: a refusal for its length, or fewer tokens read than were sent.
    async fn context(&self) -> anyhow::Result<Verdict> {
        let lines = self.app.store.lines(self.household).await?;
        let templates = trove_application::ports::TemplateRepo::list(self.app.store.as_ref(), self.household).await?;
        let buildable = lines.iter().filter(|l| l.is_buildable());
        let listing = trove_application::tools::inventory_output(buildable.clone(), &templates);
        let takers = trove_application::tools::Takers::of(&templates);
        let listed = buildable.filter(|l| takers.may_take(l)).count();
        // About four characters a token: a rough count, enough to tell a whole read from a cut one.
        let sent = (listing.len() as u64 / 4).max(1);
        let request = ModelRequest {
            kind: CallKind::Propose,
            instructions: "Answer with the one word OK.".into(),
            input: vec![InputItem::UserText(listing)],
            tools: vec![],
            output_schema: None,
            max_output_tokens: MAX_OUTPUT_TOKENS,
            max_tool_calls: None,
            include_search_results: false,
            household: None,
        };
        Ok(context_verdict(&self.call(&request).await?, sent, listed))
    }

    /// A strict function tool: the model calls it once, then its call (with its reasoning) is replayed with the
    /// tool's output and the model answers.
    async fn function_tool(&self) -> anyhow::Result<Verdict> {
        let mut request = ModelRequest {
            kind: CallKind::Propose,
            instructions: "Call the tool check_number exactly once with n = 7. When you have its output, answer \
                           with {\"ok\": true}."
                .into(),
            input: vec![InputItem::UserText("check".into())],
            tools: vec![Tool::Function {
                name: "check_number".into(),
                description: "Answers the number it is given.".into(),
                parameters: TOOL_SCHEMA.into(),
            }],
            output_schema: Some(check_schema()),
            max_output_tokens: MAX_OUTPUT_TOKENS,
            max_tool_calls: None,
            include_search_results: false,
            household: None,
        };
        let first = match self.call(&request).await? {
            Ok(r) => r,
            Err(e) => return Ok(Verdict::Refused(e.to_string())),
        };
        let calls: Vec<(String, String)> =
            first.function_calls().map(|(id, _, arguments)| (id.to_owned(), arguments.to_owned())).collect();
        if calls.is_empty() {
            return Ok(Verdict::Refused("the model answered without calling the tool".into()));
        }
        for item in &first.output {
            if !matches!(item.view, OutputView::Reasoning { replayable: false }) {
                request.input.push(InputItem::Replay(item.raw.clone()));
            }
        }
        for (call_id, arguments) in &calls {
            request.input.push(InputItem::FunctionCallOutput { call_id: call_id.clone(), output: arguments.clone() });
        }
        Ok(match self.call(&request).await? {
            Ok(second) => match read_ok(&second) {
                Verdict::Works(_) => Verdict::Works(format!("{} call, replayed", calls.len())),
                other => other,
            },
            Err(e) => Verdict::Refused(format!("the replay failed: {e}")),
        })
    }

    /// One web search at most.
    async fn web_search(&self) -> anyhow::Result<Verdict> {
        let request = ModelRequest {
            kind: CallKind::Price,
            instructions: "Search the web once for \"Raspberry Pi 4\", then answer with {\"ok\": true}.".into(),
            input: vec![InputItem::UserText("check".into())],
            tools: vec![Tool::WebSearch { context_size: SearchContextSize::Low, location: None }],
            output_schema: Some(check_schema()),
            max_output_tokens: MAX_OUTPUT_TOKENS,
            max_tool_calls: Some(1),
            include_search_results: true,
            household: None,
        };
        Ok(match self.call(&request).await? {
            Ok(r) => Verdict::Works(format!("{} search", r.usage.searches)),
            Err(e @ ModelError::Unavailable { .. }) => Verdict::NotOffered(not_offered(&e, &self.api)),
            Err(e) => Verdict::Refused(e.to_string()),
        })
    }

    /// One second of silence.
    async fn transcription(&self) -> anyhow::Result<Verdict> {
        let answer = self.api.transcribe(&silent_wav()).await;
        match &answer {
            Ok(t) => {
                self.record(CallKind::Transcribe, Usage { audio_ms: t.audio_ms, ..Usage::default() }, CallOutcome::Ok)
                    .await?;
            }
            Err(e) if e.was_sent() => {
                self.record(CallKind::Transcribe, e.usage().unwrap_or_default(), CallOutcome::Failed).await?;
            }
            Err(_) => {}
        }
        Ok(match answer {
            Ok(t) => Verdict::Works(format!("{} ms of audio", t.audio_ms)),
            Err(e @ ModelError::Unavailable { .. }) => Verdict::NotOffered(not_offered(&e, &self.api)),
            Err(e) => Verdict::Refused(e.to_string()),
        })
    }
}

/// Why a capability is not offered, naming the provider.
fn not_offered(error: &ModelError, api: &ModelApi) -> String {
    let what = match error {
        ModelError::Unavailable { capability, .. } if *capability == Capability::Audio.as_str() => "transcription",
        _ => "web search",
    };
    format!("{}={} has no {what}", names::MODEL_PROVIDER, api.config().profile.provider)
}

fn check_schema() -> OutputSchema {
    OutputSchema { name: "Check".into(), schema: CHECK_SCHEMA.into() }
}

fn structured_request() -> ModelRequest {
    ModelRequest {
        kind: CallKind::ReadListing,
        instructions: "Answer with {\"ok\": true}.".into(),
        input: vec![InputItem::UserText("check".into())],
        tools: Vec::new(),
        output_schema: Some(check_schema()),
        max_output_tokens: MAX_OUTPUT_TOKENS,
        max_tool_calls: None,
        include_search_results: false,
        household: None,
    }
}

/// Works when the answer is the check's JSON object.
fn read_ok(response: &ModelResponse) -> Verdict {
    let Some(text) = response.final_text() else {
        return Verdict::Refused("the answer holds no message".into());
    };
    match serde_json::from_str::<serde_json::Value>(text.trim()) {
        Ok(v) if v.get("ok").is_some_and(serde_json::Value::is_boolean) => {
            Verdict::Works(format!("{} tokens in, {} out", response.usage.input_tokens, response.usage.output_tokens))
        }
        _ => Verdict::Refused(format!("the answer is not the requested json: {}", clip(text))),
    }
}

fn clip(text: &str) -> String {
    let clipped: String = text.chars().take(80).collect();
    if clipped.len() < text.len() { format!("{clipped}...") } else { clipped }
}

/// One second of silence as a mono 16-bit PCM WAV at 16 kHz: what the transcription takes as it is.
pub fn silent_wav() -> Vec<u8> {
    const RATE: u32 = 16_000;
    let data_len = RATE * 2;
    let mut wav = Vec::with_capacity(44 + data_len as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&(RATE * 2).to_le_bytes()); // bytes per second
    wav.extend_from_slice(&2u16.to_le_bytes()); // block align
    wav.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.resize(44 + data_len as usize, 0);
    wav
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_too_small_is_found_by_a_refusal_or_by_a_cut_read() {
        let answer =
            |input_tokens| Ok(ModelResponse { output: vec![], usage: Usage { input_tokens, ..Usage::default() } });
        assert!(
            matches!(context_verdict(&answer(4_096), 12_000, 46), Verdict::Refused(m) if m.contains("read 4096 of about 12000"))
        );
        assert!(matches!(context_verdict(&answer(11_500), 12_000, 46), Verdict::Works(_)));
        let vllm = Err(ModelError::Http {
            status: 400,
            message: "This model's maximum context length is 4096 tokens. However, you requested 12000 tokens".into(),
        });
        assert!(matches!(context_verdict(&vllm, 12_000, 46), Verdict::Refused(m) if m.contains("does not fit")));
        let other = Err(ModelError::Http { status: 400, message: "unknown parameter".into() });
        assert!(matches!(context_verdict(&other, 12_000, 46), Verdict::Refused(m) if !m.contains("does not fit")));
    }

    #[test]
    fn the_silent_wav_is_one_sendable_second() {
        let bytes = silent_wav();
        let wav = trove_model::wav::Wav::read(&bytes).unwrap();
        assert!(wav.is_sendable(), "{wav:?}");
        assert_eq!((wav.channels, wav.sample_rate, wav.duration_ms()), (1, 16_000, 1000));
    }

    #[test]
    fn the_table_names_the_setting_of_what_fails() {
        let check = ModelCheck {
            backend: "compatible at http://localhost:11434/v1, model gpt-oss:20b".into(),
            rows: vec![
                Row { capability: "structured answer", verdict: Verdict::Works("1 in".into()), setting: "MODEL_NAME" },
                Row { capability: "web search", verdict: Verdict::NotOffered("no".into()), setting: "MODEL_PROVIDER" },
            ],
            stopped: None,
        };
        assert!(check.passed());
        let shown = check.render();
        assert!(shown.contains("structured answer  works (1 in)"), "{shown}");
        assert!(shown.contains("not offered (no)"), "{shown}");
        assert!(shown.ends_with("everything this configuration needs works\n"), "{shown}");

        let mut failed = check.clone();
        failed.rows[0].verdict = Verdict::Refused("invalid_request_error: nope".into());
        assert!(!failed.passed());
        assert!(failed.render().contains("refused: invalid_request_error: nope  MODEL_NAME\n"), "{}", failed.render());
        assert!(failed.render().lines().all(|l| l == l.trim_end()), "{}", failed.render());
    }
}
