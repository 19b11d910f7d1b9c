//! The body of `POST /responses`, built from a [`ModelRequest`].
//!
//! The provider rejects any field it does not know with 400, and an empty string is not "unset" to it: every
//! optional field here is left out rather than sent empty.

use crate::config::ModelApiConfig;
use crate::profile::{INCLUDE_REASONING, INCLUDE_SEARCH_RESULTS, INCLUDE_SEARCH_SOURCES};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use trove_application::ports::model::{
    ApproximateLocation, Capability, InputItem, ModelError, ModelRequest, OutputSchema, SearchContextSize, Tool,
};

/// The request body, field for field as the Responses surface takes it.
#[derive(Debug, Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<&'a str>,
    input: Vec<WireInput<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<WireText<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    store: Option<bool>,
    max_output_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tool_calls: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
enum WireInput<'a> {
    Message {
        role: &'static str,
        content: Vec<WireContent<'a>>,
    },
    /// An earlier output item, written out byte for byte as the provider sent it.
    Replay(Box<RawValue>),
    FunctionCallOutput {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        output: &'a str,
    },
}

/// A content part of a user message; the variants are named as the wire's `type`s (`input_text`, ...).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(clippy::enum_variant_names)]
enum WireContent<'a> {
    InputText {
        text: &'a str,
    },
    /// `detail` is required by the schema (its description says it defaults to `auto`): always sent.
    InputImage {
        image_url: &'a str,
        detail: &'static str,
    },
    /// A file given inline (`file_data` a `data:` URL), such as a PDF.
    InputFile {
        filename: &'a str,
        file_data: &'a str,
    },
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireTool<'a> {
    Function {
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        strict: Option<bool>,
        parameters: Box<RawValue>,
    },
    WebSearch {
        search_context_size: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        user_location: Option<WireLocation<'a>>,
    },
}

#[derive(Debug, Serialize)]
struct WireLocation<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    country: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    city: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timezone: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct WireText<'a> {
    format: WireFormat<'a>,
}

#[derive(Debug, Serialize)]
struct WireFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
    schema: Box<RawValue>,
}

/// Builds the body of `request` under `config`'s model, switches and provider profile.
///
/// Tool-calling requests ask for `reasoning.encrypted_content` (when the profile takes it and
/// `replay_reasoning` is on), so that reasoning items come back replayable and a function call is never replayed
/// without its reasoning. With `replay_reasoning` off, a reasoning model on a provider that keeps responses is
/// sent `store: true` and its reasoning items replayed by id ([`ModelApiConfig::reasoning_stored`]); elsewhere
/// replayed reasoning items are dropped. Only the `include` values the profile takes are ever sent.
///
/// # Errors
/// `Unavailable` when the request needs web search and the profile has none (nothing is sent); `BadResponse`
/// when a replayed item, a tool's parameters or the output schema is not JSON: they were meant to come from the
/// provider or from our own schemas, and sending them would only earn a 400.
pub(crate) fn build<'a>(config: &'a ModelApiConfig, request: &'a ModelRequest) -> Result<WireRequest<'a>, ModelError> {
    let searches = request.tools.iter().any(|t| matches!(t, Tool::WebSearch { .. }));
    if searches && !config.profile.web_search {
        return Err(Capability::WebSearch.lacking());
    }
    let input =
        request.input.iter().filter_map(|item| input_item(config, item).transpose()).collect::<Result<_, _>>()?;
    let tools = request.tools.iter().map(|tool| wire_tool(config, tool)).collect::<Result<_, _>>()?;
    // A server of one's own gets `strict` on the output schema only when switched on, as on its tools.
    let strict_schema = (config.profile.provider != crate::Provider::Compatible || config.strict_tools).then_some(true);
    let text = request.output_schema.as_ref().map(|s| wire_text(s, strict_schema)).transpose()?;
    let calls_functions = request.tools.iter().any(|t| matches!(t, Tool::Function { .. }));
    let mut include = Vec::new();
    if request.include_search_results {
        include.push(INCLUDE_SEARCH_RESULTS);
        include.push(INCLUDE_SEARCH_SOURCES);
    }
    if calls_functions && config.replay_reasoning {
        include.push(INCLUDE_REASONING);
    }
    include.retain(|value| config.profile.takes_include(value));
    Ok(WireRequest {
        model: &config.model,
        instructions: given(&request.instructions),
        input,
        tools,
        text,
        store: if config.reasoning_stored() { Some(true) } else { config.profile.store.then_some(false) },
        max_output_tokens: request.max_output_tokens,
        max_tool_calls: request.max_tool_calls.filter(|_| config.send_max_tool_calls),
        include,
        stream: config.stream.then_some(true),
        prompt_cache_key: config.profile.prompt_cache_key.then(|| match request.household {
            Some(h) => format!("trove-{}-{}", request.kind.as_str(), h.0),
            None => format!("trove-{}", request.kind.as_str()),
        }),
    })
}

/// Only the `type` of a replayed item, to tell reasoning items apart.
#[derive(Deserialize)]
struct ItemType<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
}

/// `Some(text)` unless it is empty or blank: the provider must never see an empty string for an unset field.
fn given(text: &str) -> Option<&str> {
    (!text.trim().is_empty()).then_some(text)
}

fn input_item<'a>(config: &ModelApiConfig, item: &'a InputItem) -> Result<Option<WireInput<'a>>, ModelError> {
    Ok(match item {
        InputItem::UserText(text) => given(text).map(|text| user_message(vec![WireContent::InputText { text }])),
        InputItem::UserImage { text, image_data_url } => {
            let mut content: Vec<_> = given(text).map(|text| WireContent::InputText { text }).into_iter().collect();
            content.push(WireContent::InputImage { image_url: image_data_url, detail: "auto" });
            Some(user_message(content))
        }
        InputItem::UserFile { text, filename, file_data_url } => {
            let mut content: Vec<_> = given(text).map(|text| WireContent::InputText { text }).into_iter().collect();
            content.push(WireContent::InputFile { filename, file_data: file_data_url });
            Some(user_message(content))
        }
        InputItem::Replay(raw) => {
            let replay = RawValue::from_string(raw.0.clone())
                .map_err(|e| ModelError::bad_response(format!("a replayed output item is not json: {e}")))?;
            let reasoning =
                serde_json::from_str::<ItemType<'_>>(replay.get()).is_ok_and(|item| item.kind == Some("reasoning"));
            (config.replay_reasoning || config.reasoning_stored() || !reasoning).then_some(WireInput::Replay(replay))
        }
        InputItem::FunctionCallOutput { call_id, output } => {
            Some(WireInput::FunctionCallOutput { kind: "function_call_output", call_id, output })
        }
    })
}

fn user_message(content: Vec<WireContent<'_>>) -> WireInput<'_> {
    WireInput::Message { role: "user", content }
}

fn wire_tool<'a>(config: &ModelApiConfig, tool: &'a Tool) -> Result<WireTool<'a>, ModelError> {
    Ok(match tool {
        Tool::Function { name, description, parameters } => WireTool::Function {
            name,
            description: given(description),
            // Switched off, `strict` is sent as false where the provider takes it (the schema requires the
            // field), else left out (a provider that rejects it would reject `false` too).
            strict: if config.strict_tools { Some(true) } else { config.profile.strict_false_allowed.then_some(false) },
            parameters: json_text(parameters, || format!("the parameters of tool {name}"))?,
        },
        Tool::WebSearch { context_size, location } => WireTool::WebSearch {
            search_context_size: SearchContextSize::as_str(*context_size),
            user_location: location.as_ref().and_then(wire_location),
        },
    })
}

/// The approximate location with only its given members, or `None` (the whole object left out) when none is.
fn wire_location(location: &ApproximateLocation) -> Option<WireLocation<'_>> {
    fn member(m: &Option<String>) -> Option<&str> {
        m.as_deref().and_then(given)
    }
    let wire = WireLocation {
        kind: "approximate",
        country: member(&location.country),
        region: member(&location.region),
        city: member(&location.city),
        timezone: member(&location.timezone),
    };
    let any = wire.country.is_some() || wire.region.is_some() || wire.city.is_some() || wire.timezone.is_some();
    any.then_some(wire)
}

fn wire_text(schema: &OutputSchema, strict: Option<bool>) -> Result<WireText<'_>, ModelError> {
    Ok(WireText {
        format: WireFormat {
            kind: "json_schema",
            name: &schema.name,
            strict,
            schema: json_text(&schema.schema, || format!("the output schema {}", schema.name))?,
        },
    })
}

fn json_text(text: &str, what: impl FnOnce() -> String) -> Result<Box<RawValue>, ModelError> {
    RawValue::from_string(text.trim().to_owned())
        .map_err(|e| ModelError::bad_response(format!("{} is not json: {e}", what())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use trove_domain::spend::CallKind;

    fn request() -> ModelRequest {
        ModelRequest {
            kind: CallKind::ReadLabel,
            instructions: String::new(),
            input: Vec::new(),
            tools: Vec::new(),
            output_schema: None,
            max_output_tokens: 100,
            max_tool_calls: None,
            include_search_results: false,
            household: None,
        }
    }

    fn body(config: &ModelApiConfig, request: &ModelRequest) -> Value {
        serde_json::to_value(build(config, request).unwrap()).unwrap()
    }

    #[test]
    fn blank_text_is_never_sent() {
        let mut r = request();
        r.instructions = "  ".into();
        r.input = vec![
            InputItem::UserText(String::new()),
            InputItem::UserImage { text: String::new(), image_data_url: "data:image/png;base64,AA==".into() },
        ];
        r.tools = vec![Tool::Function { name: "t".into(), description: String::new(), parameters: "{}".into() }];
        let want = json!({
            "model": "muse-spark-1.3",
            "input": [{"role": "user", "content": [
                {"type": "input_image", "image_url": "data:image/png;base64,AA==", "detail": "auto"}]}],
            "tools": [{"type": "function", "name": "t", "strict": true, "parameters": {}}],
            "store": false,
            "max_output_tokens": 100,
            "include": ["reasoning.encrypted_content"],
            "stream": true
        });
        assert_eq!(body(&ModelApiConfig::new("k"), &r), want);
    }

    #[test]
    fn a_file_is_sent_inline_beside_its_text() {
        let mut r = request();
        r.input = vec![InputItem::UserFile {
            text: "Read this receipt.".into(),
            filename: "receipt.pdf".into(),
            file_data_url: "data:application/pdf;base64,JVBERi0=".into(),
        }];
        assert_eq!(
            body(&ModelApiConfig::new("k"), &r)["input"],
            json!([{"role": "user", "content": [
                {"type": "input_text", "text": "Read this receipt."},
                {"type": "input_file", "filename": "receipt.pdf", "file_data": "data:application/pdf;base64,JVBERi0="}]}])
        );
    }

    #[test]
    fn a_location_of_blank_members_is_left_out() {
        let mut r = request();
        let location =
            ApproximateLocation { country: Some(String::new()), city: Some(" ".into()), ..Default::default() };
        r.tools = vec![Tool::WebSearch { context_size: SearchContextSize::High, location: Some(location) }];
        let b = body(&ModelApiConfig::new("k"), &r);
        assert_eq!(b["tools"], json!([{"type": "web_search", "search_context_size": "high"}]));
    }

    #[test]
    fn malformed_json_is_refused_before_sending() {
        let mut r = request();
        r.input = vec![InputItem::Replay(trove_application::ports::model::RawJson("{\"type\":".into()))];
        let config = ModelApiConfig::new("k");
        let err = build(&config, &r).unwrap_err();
        assert!(
            matches!(&err, ModelError::BadResponse { message: m, .. } if m.starts_with("a replayed output item is not json"))
        );

        let mut r = request();
        r.output_schema = Some(OutputSchema { name: "Reading".into(), schema: "nope".into() });
        let err = build(&config, &r).unwrap_err();
        assert!(
            matches!(&err, ModelError::BadResponse { message: m, .. } if m.starts_with("the output schema Reading is not json"))
        );
    }
}
