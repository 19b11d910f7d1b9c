//! Provider profiles: what each kind of `/v1/responses` server is, by default, and what it can take.
//!
//! A profile gives the defaults (base URL, model, rates, how speech is transcribed) and the capabilities of a
//! backend (web search, `strict` function tools, `max_tool_calls`, the `include` values it accepts, audio
//! transcription), from the providers' documentation (`reference/model-api.md`). Trove sends each backend only
//! what it takes: Meta rejects any field it does not know, vLLM rejects an `include` value outside its list, and
//! Ollama has no web search.

use std::fmt;
use trove_domain::money::MicroUsd;
use trove_domain::spend::Rates;

/// `include` value: the pages each web search returned.
pub const INCLUDE_SEARCH_RESULTS: &str = "web_search_call.results";
/// `include` value: the encrypted content of reasoning items, so they can be replayed statelessly.
pub const INCLUDE_REASONING: &str = "reasoning.encrypted_content";
/// The pages a web search looked at (`web_search_call.action.sources`): on OpenAI's answers, where `results` are
/// not given, what grounds a price's comparables. Unconfirmed on Meta, so not asked of it.
pub const INCLUDE_SEARCH_SOURCES: &str = "web_search_call.action.sources";

/// Which provider a Model API is (`MODEL_PROVIDER`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Provider {
    /// The Meta Model API (Muse Spark): the default.
    #[default]
    Meta,
    /// OpenAI's Responses API.
    OpenAi,
    /// A local or self-hosted server speaking `/v1/responses` (Ollama, vLLM, LM Studio).
    Compatible,
}

impl Provider {
    /// Every provider, in the order the settings list them.
    pub const ALL: [Provider; 3] = [Provider::Meta, Provider::OpenAi, Provider::Compatible];

    /// The provider's word in `MODEL_PROVIDER`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Meta => "meta",
            Provider::OpenAi => "openai",
            Provider::Compatible => "compatible",
        }
    }

    /// The provider of a `MODEL_PROVIDER` word (any case, surrounding blanks ignored).
    pub fn parse(word: &str) -> Option<Self> {
        let word = word.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|p| p.as_str() == word)
    }

    /// The provider's defaults and capabilities.
    pub fn profile(self) -> Profile {
        match self {
            Provider::Meta => Profile {
                provider: self,
                base_url: "https://api.meta.ai/v1",
                model: "muse-spark-1.3",
                transcribe_model: "muse-voice-transcribe-1.0",
                transcription: Some(Transcription::MetaAsr),
                rates: Rates::default(),
                web_search: true,
                // Unconfirmed on Meta and any unknown field is a 400: switched off, `strict` is left out.
                strict_false_allowed: false,
                max_tool_calls: true,
                include: &[INCLUDE_SEARCH_RESULTS, INCLUDE_REASONING],
                store: true,
                // Not in the fields the reference confirms for Meta, and an unknown field is a 400.
                prompt_cache_key: false,
            },
            Provider::OpenAi => Profile {
                provider: self,
                base_url: "https://api.openai.com/v1",
                model: "gpt-5-mini",
                transcribe_model: "gpt-4o-mini-transcribe",
                transcription: Some(Transcription::OpenAi),
                // gpt-5-mini: input 0.25, cached input 0.025, output 2.00 per 1M tokens; web search 10 per 1,000
                // calls; gpt-4o-mini-transcribe 0.003 a minute.
                rates: Rates {
                    input_per_mtok: MicroUsd(250_000),
                    cached_per_mtok: MicroUsd(25_000),
                    output_per_mtok: MicroUsd(2_000_000),
                    per_search: MicroUsd(10_000),
                    transcribe_per_min: MicroUsd(3_000),
                },
                web_search: true,
                strict_false_allowed: true,
                max_tool_calls: true,
                include: &[INCLUDE_SEARCH_RESULTS, INCLUDE_SEARCH_SOURCES, INCLUDE_REASONING],
                store: true,
                prompt_cache_key: true,
            },
            Provider::Compatible => Profile {
                provider: self,
                base_url: "http://localhost:11434/v1",
                model: "gpt-oss:20b",
                transcribe_model: "",
                transcription: None,
                // A server of your own bills nothing per token.
                rates: Rates {
                    input_per_mtok: MicroUsd(0),
                    cached_per_mtok: MicroUsd(0),
                    output_per_mtok: MicroUsd(0),
                    per_search: MicroUsd(0),
                    transcribe_per_min: MicroUsd(0),
                },
                // Ollama treats a `web_search` tool as a function; none of them searches.
                web_search: false,
                // Servers of one's own take only what they implement: no `strict` at all unless
                // `MODEL_STRICT_TOOLS` switches it on (it is off by default for them), no `include`, no `store`.
                strict_false_allowed: false,
                // Ollama drops it; without web search there is nothing for it to cap.
                max_tool_calls: false,
                // vLLM accepts only a fixed list and Ollama ignores it: nothing is asked for.
                include: &[],
                store: false,
                prompt_cache_key: false,
            },
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a provider turns speech into text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transcription {
    /// Meta's `POST /asr/transcribe`: a multipart `request` (JSON settings) and `audio` part; answers
    /// `{"transcript", "audioDurationMs", ...}`.
    MetaAsr,
    /// OpenAI's `POST /audio/transcriptions`: multipart `file` and `model`; answers `{"text", "usage"}`.
    OpenAi,
}

impl Transcription {
    /// The path under the base URL.
    pub fn path(self) -> &'static str {
        match self {
            Transcription::MetaAsr => "asr/transcribe",
            Transcription::OpenAi => "audio/transcriptions",
        }
    }
}

/// The defaults and capabilities of one provider. Every default can be overridden by a setting; the
/// capabilities decide what is sent at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub provider: Provider,
    /// The default `MODEL_API_URL`.
    pub base_url: &'static str,
    /// The default `MODEL_NAME`.
    pub model: &'static str,
    /// The default `MODEL_TRANSCRIBE_MODEL` (empty without transcription).
    pub transcribe_model: &'static str,
    /// How speech is transcribed; `None`: voice notes only as transcripts.
    pub transcription: Option<Transcription>,
    /// The default `RATE_*` settings.
    pub rates: Rates,
    /// The built-in `web_search` tool (pricing).
    pub web_search: bool,
    /// With `MODEL_STRICT_TOOLS=false`, `"strict": false` is sent (the OpenAPI schema requires the field); when
    /// not allowed, the field is left out.
    pub strict_false_allowed: bool,
    /// `max_tool_calls` is taken (and `MODEL_SEND_MAX_TOOL_CALLS` defaults to on).
    pub max_tool_calls: bool,
    /// The `include` values the provider accepts; nothing else is ever asked for.
    pub include: &'static [&'static str],
    /// `store: false` is sent (the provider keeps responses unless told not to); servers of one's own are not
    /// sent the field.
    pub store: bool,
    /// `prompt_cache_key` is taken: requests of one kind for one household carry the same key, so the provider
    /// routes them to the cache holding their shared prefix (the proposal's instructions, tools and listing).
    pub prompt_cache_key: bool,
}

impl Profile {
    /// Whether `value` may be sent in `include`.
    pub fn takes_include(&self, value: &str) -> bool {
        self.include.contains(&value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_read_back() {
        for p in Provider::ALL {
            assert_eq!(Provider::parse(p.as_str()), Some(p));
        }
        assert_eq!(Provider::parse(" OpenAI "), Some(Provider::OpenAi));
        assert_eq!(Provider::parse("ollama"), None);
        assert_eq!(Provider::default(), Provider::Meta);
    }

    #[test]
    fn profiles_follow_the_providers_documentation() {
        let meta = Provider::Meta.profile();
        assert_eq!((meta.base_url, meta.model), ("https://api.meta.ai/v1", "muse-spark-1.3"));
        assert_eq!(meta.transcription.map(Transcription::path), Some("asr/transcribe"));
        assert_eq!(meta.rates, Rates::default());
        assert!(meta.web_search && !meta.strict_false_allowed);

        let openai = Provider::OpenAi.profile();
        assert_eq!(openai.transcription.map(Transcription::path), Some("audio/transcriptions"));
        assert!(openai.web_search && openai.strict_false_allowed && openai.takes_include(INCLUDE_REASONING));

        let compatible = Provider::Compatible.profile();
        assert!(!compatible.web_search && compatible.transcription.is_none() && !compatible.max_tool_calls);
        assert!(!compatible.takes_include(INCLUDE_SEARCH_RESULTS));
        assert_eq!(compatible.rates.output_per_mtok, MicroUsd(0));
    }
}
