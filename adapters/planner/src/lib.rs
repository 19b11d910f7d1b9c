//! The local planner: a [`ModelPort`] with no network and no cost.
//!
//! It plays the model's part in the proposal loop exactly as the Model API would, so the loop in
//! `trove-application` runs unchanged against it:
//!
//! 1. with no tool output in the input yet, it calls `list_inventory` and `template_catalog`;
//! 2. with both outputs, it reads them back, loads each listed template's machine checks, assigns buildable items
//!    to requirements (never one item to two proposals) and calls `item_details` for every chosen item;
//! 3. with the details, it drops items whose faults a requirement disqualifies, re-picks from the remaining
//!    candidates (asking for their details once more if it must), and answers a `message` whose text is the
//!    ProposalSet JSON.
//!
//! It decides only from what the input holds, so it keeps no state between calls and is deterministic. It cannot
//! search the web, read images or transcribe audio: those calls fail with [`ModelError::NotConfigured`] naming
//! `MODEL_API_KEY`, the setting that enables the real Model API.

mod assignment;
mod transcript;

use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;
use trove_application::RepoError;
use trove_application::contracts::proposal;
use trove_application::ports::TemplateRepo;
use trove_application::ports::model::{
    Capabilities, ModelError, ModelPort, ModelRequest, ModelResponse, OutputItem, OutputView, RawJson, Transcript,
};
use trove_application::propose::MAX_STEPS;
use trove_application::tools::{ITEM_DETAILS, LIST_INVENTORY, TEMPLATE_CATALOG, parse_catalog, parse_inventory};
use trove_domain::TemplateId;
use trove_domain::project::ProposalSet;
use trove_domain::spend::{CallKind, Usage};
use trove_domain::template::Template;

use crate::transcript::Transcript as Steps;

/// The model id spend is recorded under.
pub const MODEL_NAME: &str = "local-planner";

/// The setting that enables what the local planner cannot do.
pub const ENABLING_SETTING: &str = "MODEL_API_KEY";

/// The local planner. Holds only the template store, to read the machine checks of the templates
/// `template_catalog` showed it (the catalogue's text gives keys and labels, not the checks).
#[derive(Clone)]
pub struct LocalPlanner {
    /// Where the machine checks of the listed templates are read from.
    templates: Arc<dyn TemplateRepo>,
}

impl fmt::Debug for LocalPlanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalPlanner").finish_non_exhaustive()
    }
}

impl LocalPlanner {
    /// A planner reading the machine checks of templates from `templates`.
    pub fn new(templates: Arc<dyn TemplateRepo>) -> Self {
        Self { templates }
    }

    /// Loads the machine checks of the templates the catalogue output listed, in the order listed. A template
    /// that no longer exists is skipped.
    async fn load_templates(&self, ids: impl Iterator<Item = i64>) -> Result<Vec<Template>, ModelError> {
        let mut out = Vec::new();
        for id in ids {
            match self.templates.get_any(TemplateId(id)).await {
                Ok(t) => out.push(t),
                Err(RepoError::NotFound) => tracing::debug!(template = id, "listed template is gone; skipped"),
                Err(e) => {
                    return Err(ModelError::Failed {
                        message: format!("the local planner could not read template {id}: {e}"),
                        usage: Usage::default(),
                    });
                }
            }
        }
        Ok(out)
    }
}

/// What a call of `kind` is, in words, for the error of a backend that cannot make it.
fn what(kind: CallKind) -> &'static str {
    match kind {
        CallKind::Propose => "proposing projects",
        CallKind::Price => "pricing with web search",
        CallKind::ReadLabel => "reading a label photo",
        CallKind::ReadListing => "reading a listing's text",
        CallKind::ReadVoice => "reading a voice note",
        CallKind::Transcribe => "speech to text",
    }
}

fn not_configured(kind: CallKind) -> ModelError {
    ModelError::NotConfigured { what: what(kind).to_owned(), setting: ENABLING_SETTING }
}

/// A `function_call` output item as the provider writes it. The step is written into the ids so a later step
/// knows how far the loop has gone from the replayed items alone.
fn function_call(step: u32, n: usize, name: &str, arguments: String) -> OutputItem {
    let call_id = format!("call_{step}_{n}");
    let raw = serde_json::json!({
        "type": "function_call",
        "id": format!("fc_{step}_{n}"),
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    });
    OutputItem {
        raw: RawJson(raw.to_string()),
        view: OutputView::FunctionCall { call_id, name: name.to_owned(), arguments },
    }
}

/// An assistant `message` output item carrying `text`.
fn message(step: u32, text: String) -> OutputItem {
    let raw = serde_json::json!({
        "type": "message",
        "id": format!("msg_{step}"),
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    });
    OutputItem { raw: RawJson(raw.to_string()), view: OutputView::Message { text, citations: Vec::new() } }
}

fn response(output: Vec<OutputItem>) -> ModelResponse {
    ModelResponse { output, usage: Usage::default() }
}

fn answer(step: u32, set: &ProposalSet) -> Result<ModelResponse, ModelError> {
    Ok(response(vec![message(step, proposal::write(set))]))
}

#[async_trait]
impl ModelPort for LocalPlanner {
    fn model_name(&self, _kind: CallKind) -> String {
        MODEL_NAME.to_owned()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { web_search: false, images: false, audio: false, remote: false }
    }

    async fn respond(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if request.kind != CallKind::Propose {
            return Err(not_configured(request.kind));
        }
        let steps = Steps::read(&request.input);
        let step = steps.step();
        if step == 1 {
            return Ok(response(vec![
                function_call(step, 1, LIST_INVENTORY, "{}".to_owned()),
                function_call(step, 2, TEMPLATE_CATALOG, "{}".to_owned()),
            ]));
        }

        let lines = steps.output_of(LIST_INVENTORY).map(parse_inventory).unwrap_or_default();
        let catalog = steps.output_of(TEMPLATE_CATALOG).map(parse_catalog).unwrap_or_default();
        if lines.is_empty() || catalog.is_empty() {
            return answer(step, &ProposalSet { proposals: Vec::new() });
        }
        let templates = self.load_templates(catalog.iter().map(|c| c.id)).await?;
        let details = steps.details();
        // The loop's last step must call no tool, so the planner answers with what it knows by then.
        let last = step >= MAX_STEPS;
        let items = assignment::candidates(&lines, &details, last);
        let relevance: Vec<u32> = templates.iter().map(|t| steps.wish().map_or(0, |wish| t.relevance(wish))).collect();
        let chosen = assignment::assign(&templates, &items, &relevance);

        let undetailed = assignment::undetailed(&chosen, &items, &details);
        if !undetailed.is_empty() && !last {
            let calls = undetailed
                .iter()
                .enumerate()
                .map(|(n, id)| function_call(step, n + 1, ITEM_DETAILS, format!("{{\"item_id\":{id}}}")))
                .collect();
            return Ok(response(calls));
        }
        let set = assignment::proposal_set(&templates, &items, &chosen, &relevance);
        tracing::debug!(step, proposals = set.proposals.len(), "local planner answers");
        answer(step, &set)
    }

    async fn transcribe(&self, _wav: &[u8]) -> Result<Transcript, ModelError> {
        Err(not_configured(CallKind::Transcribe))
    }
}

#[cfg(test)]
mod tests;
