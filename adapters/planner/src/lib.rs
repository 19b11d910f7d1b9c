//! The local planner: a [`ModelPort`] with no network and no cost.
//!
//! It plays the model's part in the proposal loop, so the loop in `trove-application` runs unchanged against it
//! and its steps, tool calls and spend entries are those a model would cause:
//!
//! 1. unless the input holds `list_inventory` and `template_catalog` answered (the loop answers them before the
//!    first step), it calls them;
//! 2. with both answered, it allocates the household's spare items to the templates' requirements by the
//!    domain's rule ([`allocation::allocate`]: never one item to two proposals) and calls `item_details` for
//!    every chosen item;
//! 3. with the details, it allocates again, now seeing the faults of the items it asked about (a requirement may
//!    disqualify them), asks for the details of newly chosen items once more if it must, and answers a
//!    `message` whose text is the ProposalSet JSON.
//!
//! What it plans from is domain data read through the ports, for the household the request names
//! ([`ModelRequest::household`]): the templates from the [`TemplateRepo`], the items from the [`InventoryRepo`]
//! (read again only when the household's item revision moved). It never reads the tools' text back. Like a model, it
//! knows an item's faults only once it asked for its details, so it asks exactly what the seed's loop would. From
//! the input it reads only the owner's wish, its own earlier calls and which of them were answered, so it keeps
//! no state between calls and is deterministic. It cannot search the web, read images or transcribe audio: those
//! calls fail with [`ModelError::NotConfigured`] naming `MODEL_API_KEY`, the setting that enables the real Model
//! API.

mod proposal;
mod transcript;

use async_trait::async_trait;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;
use trove_application::contracts::proposal as contract;
use trove_application::ports::model::{
    Capabilities, ModelError, ModelPort, ModelRequest, ModelResponse, OutputItem, OutputView, RawJson, Transcript,
};
use trove_application::ports::{InventoryRepo, TemplateRepo};
use trove_application::propose::MAX_STEPS;
use trove_application::revision_cache::RevisionCache;
use trove_application::tools::{ITEM_DETAILS, LIST_INVENTORY, TEMPLATE_CATALOG};
use trove_domain::allocation::{self, SpareItem, Stock};
use trove_domain::item::{Item, ItemLine};
use trove_domain::project::ProposalSet;
use trove_domain::spend::{CallKind, Usage};
use trove_domain::{HouseholdId, ItemId};

use crate::transcript::Transcript as Steps;

/// The model id spend is recorded under.
pub const MODEL_NAME: &str = "local-planner";

/// The setting that enables what the local planner cannot do.
pub const ENABLING_SETTING: &str = "MODEL_API_KEY";

/// The local planner: reads the household's templates and items through the ports.
#[derive(Clone)]
pub struct LocalPlanner {
    /// Where the items are read from.
    items: Arc<dyn InventoryRepo>,
    /// Where the templates, with the machine checks the catalogue's text does not show, are read from.
    templates: Arc<dyn TemplateRepo>,
    /// Each household's buildable items as `list_inventory` shows them (lines: no faults, no history beyond the
    /// measurements, no profile kept), read again only when the household's item revision moved: reading every item is
    /// most of a proposal's cost, a run plans at two or three steps, and owners ask again and again. Lines, not
    /// whole items, so that 100,000 items stay a few tens of MB.
    spare: Arc<RevisionCache<Vec<ItemLine>>>,
}

impl fmt::Debug for LocalPlanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalPlanner").finish_non_exhaustive()
    }
}

impl LocalPlanner {
    /// A planner reading the household's items from `items` and its templates from `templates`.
    pub fn new(items: Arc<dyn InventoryRepo>, templates: Arc<dyn TemplateRepo>) -> Self {
        Self { items, templates, spare: Arc::default() }
    }

    /// The household's buildable items ([`Item::buildable`]) as lines, in id order.
    async fn spare_items(&self, household: HouseholdId) -> Result<Arc<Vec<ItemLine>>, ModelError> {
        let items = self.items.clone();
        self.spare
            .get(self.items.as_ref(), household, || async move {
                let mut present = items.lines(household).await?;
                present.retain(ItemLine::is_buildable);
                // The planner never reads the profile; what it shows comes from the name.
                for line in &mut present {
                    line.profile = String::new();
                }
                present.shrink_to_fit();
                Ok(present)
            })
            .await
            .map_err(|e| failed(format!("the local planner could not read the inventory: {e}")))
    }

    /// The spare items whose details the planner asked for, whole (their faults are known to it now), in id
    /// order: those of `detailed` that are among `spare`.
    async fn detailed_items(
        &self,
        household: HouseholdId,
        spare: &[ItemLine],
        detailed: &BTreeSet<ItemId>,
    ) -> Result<Vec<Item>, ModelError> {
        let ids: Vec<ItemId> =
            detailed.iter().copied().filter(|id| spare.binary_search_by_key(id, |l| l.id).is_ok()).collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut items = self
            .items
            .get_many(household, &ids)
            .await
            .map_err(|e| failed(format!("the local planner could not read the inventory: {e}")))?;
        items.retain(|i| ids.binary_search(&i.id).is_ok());
        Ok(items)
    }
}

/// A failure of the planner's own reads: nothing was billed.
fn failed(message: String) -> ModelError {
    ModelError::Failed { message, usage: Usage::default() }
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
        CallKind::ReadReceipt => "reading a receipt",
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
    Ok(response(vec![message(step, contract::write(set))]))
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
        if !steps.listed() {
            return Ok(response(vec![
                function_call(step, 1, LIST_INVENTORY, "{}".to_owned()),
                function_call(step, 2, TEMPLATE_CATALOG, "{}".to_owned()),
            ]));
        }
        let Some(household) = request.household else {
            return Err(failed("the local planner plans for a household, and the request names none".to_owned()));
        };
        let templates = self
            .templates
            .list(household)
            .await
            .map_err(|e| failed(format!("the local planner could not read templates: {e}")))?;
        let spare = self.spare_items(household).await?;
        if spare.is_empty() || templates.is_empty() {
            return answer(step, &ProposalSet { proposals: Vec::new() });
        }
        let detailed = steps.detailed();
        // The loop's last step must call no tool, so the planner answers with the items it has seen in full.
        let last = step >= MAX_STEPS;
        let seen = self.detailed_items(household, &spare, &detailed).await?;
        let stock = Stock::of(as_listed(&spare, &seen, last));
        let relevance: Vec<u32> = templates.iter().map(|t| steps.wish().map_or(0, |wish| t.relevance(wish))).collect();
        let chosen = allocation::allocate(&templates, &stock, &relevance);

        let undetailed = proposal::undetailed(&chosen, &detailed);
        if !undetailed.is_empty() && !last {
            let calls = undetailed
                .iter()
                .enumerate()
                .map(|(n, id)| function_call(step, n + 1, ITEM_DETAILS, format!("{{\"item_id\":{id}}}")))
                .collect();
            return Ok(response(calls));
        }
        let set = proposal::proposal_set(&templates, &chosen, &relevance);
        tracing::debug!(step, proposals = set.proposals.len(), "local planner answers");
        answer(step, &set)
    }

    async fn transcribe(&self, _wav: &[u8]) -> Result<Transcript, ModelError> {
        Err(not_configured(CallKind::Transcribe))
    }
}

/// What the planner plans on: the items it has seen in full (`seen`, with their faults), and, but on the last
/// step, which plans only on items seen in full, every other spare item as `list_inventory` shows it (its faults
/// not known yet). Both in id order.
fn as_listed<'a>(spare: &'a [ItemLine], seen: &'a [Item], last: bool) -> impl Iterator<Item = SpareItem<'a>> {
    let listed =
        spare.iter().filter(move |l| !last && seen.binary_search_by_key(&l.id, |i| i.id).is_err()).map(SpareItem::from);
    seen.iter().map(SpareItem::from).chain(listed)
}

#[cfg(test)]
mod tests;
