//! ProposeProjects: the tool-calling loop of the seed, and the rules writing projects from its answer.
//!
//! Each step resends the brief, the output items so far (reasoning items only when they can be replayed) and
//! one `function_call_output` per call, matched by `call_id`. The loop ends with the first answer that calls no
//! tool; a fourth answer that still calls tools fails the run. Tools only read. What the model is told and what
//! it may answer (instructions, tools, the `ProposalSet` schema and its wire type) is its contract,
//! [`crate::contracts::proposal`].

use crate::Error;
use crate::contracts::proposal;
use crate::metered::{Metered, RunSpend};
use crate::ports::model::{InputItem, ModelRequest, ModelResponse, OutputView, RawJson};
use crate::ports::{InventoryRepo, ProjectRepo, TemplateRepo};
use crate::progress::{Progress, ProgressSink, Unwatched};
use crate::recorder::{Actor, Recorder};
use crate::revision_cache::RevisionCache;
use crate::tools;
use std::collections::HashMap;
use std::sync::Arc;
use trove_domain::history::Action;
use trove_domain::item::Item;
use trove_domain::project::{self, Dropped, Project, ProjectStatus, ProposalSet};
use trove_domain::spend::CallKind;
use trove_domain::template::Template;
use trove_domain::text::clip;
use trove_domain::{HouseholdId, ItemId};

/// How the owner's wish opens the first input message; [`wish_of`] reads it back.
pub const WISH_PREFIX: &str = "The owner's wish: ";

/// The owner's wish in a run's first input message, as [`ProposeProjects::run`] writes it.
pub fn wish_of(first_message: &str) -> Option<&str> {
    first_message.strip_prefix(WISH_PREFIX).map(str::trim).filter(|w| !w.is_empty())
}

/// The most steps (model calls) a run may take.
pub const MAX_STEPS: u32 = 4;
/// Longest owner's wish accepted, in characters.
pub const BRIEF_MAX: usize = 2000;
/// The output budget of each step: reasoning counts against it, so it is generous.
pub const MAX_OUTPUT_TOKENS: u32 = 16_000;

/// What a successful run answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposeOutcome {
    /// The projects written (status `proposed`).
    pub projects: Vec<Project>,
    /// Allocations (or whole proposals) the rules refused, with reasons.
    pub dropped: Vec<Dropped>,
    /// Model calls made.
    pub steps: u32,
    pub spend: RunSpend,
}

/// What one step's answer asks of the loop.
enum Step {
    /// The final answer: the proposals to judge.
    Answer(ProposalSet),
    /// Tool calls (call id, name, arguments) to answer before the next step.
    Tools(ModelResponse, Vec<(String, String, String)>),
}

/// The use case.
#[derive(Clone)]
pub struct ProposeProjects {
    model: Metered,
    items: Arc<dyn InventoryRepo>,
    templates: Arc<dyn TemplateRepo>,
    projects: Arc<dyn ProjectRepo>,
    /// The `list_inventory` output per household, rebuilt only when the inventory changed: reading and
    /// formatting every item is most of a step's cost, and owners ask again and again.
    listings: Arc<RevisionCache<(Vec<Template>, String)>>,
    /// Where each project written is recorded (`create`) with who asked.
    recorder: Recorder,
}

impl std::fmt::Debug for ProposeProjects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProposeProjects").field("model", &self.model).finish_non_exhaustive()
    }
}

/// What the tools read, loaded at most once per run: tools only read, and a run is short.
struct ToolCache {
    /// The catalogue the listing was made for, and the listing.
    listing: Arc<(Vec<Template>, String)>,
}

/// The `call_id`s of the two calls answered before the first step.
pub const LISTED_CALL_ID: &str = "call_list_inventory";
pub const CATALOGUED_CALL_ID: &str = "call_template_catalog";

/// A `function_call` input item for a call the loop answers itself (no `id`: no model output item stands behind
/// it, so there is no reasoning item to go with it).
fn answered_call(call_id: &str, name: &str) -> RawJson {
    RawJson(
        serde_json::json!({"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}).to_string(),
    )
}

impl ProposeProjects {
    pub fn new(
        model: Metered,
        items: Arc<dyn InventoryRepo>,
        templates: Arc<dyn TemplateRepo>,
        projects: Arc<dyn ProjectRepo>,
        recorder: Recorder,
    ) -> Self {
        Self { model, items, templates, projects, listings: Arc::default(), recorder }
    }

    /// Runs the loop for the household of `actor` with the owner's optional wish, then writes what the rules
    /// keep; each call's spend entry and each project written name the member who asked.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a wish over [`BRIEF_MAX`] characters or with a control character (but tab and line
    /// breaks); [`Error::Budget`] before the first call when
    /// the budget is spent; [`Error::ModelFailed`] when a call fails, the answer does not parse, or the fourth
    /// answer still calls tools (nothing is written, the spend is recorded).
    pub async fn run(&self, actor: Actor, brief: Option<&str>) -> Result<ProposeOutcome, Error> {
        self.run_watched(actor, brief, &Unwatched).await
    }

    /// [`ProposeProjects::run`], reporting each step and each tool's answer to `progress` as the run goes.
    ///
    /// # Errors
    /// As [`ProposeProjects::run`].
    pub async fn run_watched(
        &self,
        actor: Actor,
        brief: Option<&str>,
        progress: &dyn ProgressSink,
    ) -> Result<ProposeOutcome, Error> {
        let household = actor.household;
        let wish = brief.map(str::trim).filter(|b| !b.is_empty());
        if wish.is_some_and(|b| b.chars().count() > BRIEF_MAX) {
            return Err(Error::Invalid(format!("brief is longer than {BRIEF_MAX} characters")));
        }
        let lines = trove_domain::text::Lines::Many;
        trove_domain::text::check("brief", wish.unwrap_or_default(), lines)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let first = match wish {
            Some(w) => format!("{WISH_PREFIX}{w}"),
            None => "Propose projects I can build from my inventory.".to_owned(),
        };
        // The two calls every run makes are answered before the first step, ahead of the wish: the request then
        // opens with the same instructions, tools, catalogue and listing from one proposal to the next while the
        // catalogue and the inventory are unchanged, a prefix the provider serves from its cache. The catalogue
        // comes first: it changes less often than the inventory, so a change of an item leaves the instructions,
        // tools and catalogue cached.
        let templates = self.templates.list(household).await?;
        let listing = self.listing(household, &templates).await?;
        let mut input = Vec::with_capacity(8);
        for (call_id, name, output) in [
            (CATALOGUED_CALL_ID, tools::TEMPLATE_CATALOG, tools::catalog_output(&templates)),
            (LISTED_CALL_ID, tools::LIST_INVENTORY, listing.1.clone()),
        ] {
            input.push(InputItem::Replay(answered_call(call_id, name)));
            input.push(InputItem::FunctionCallOutput { call_id: call_id.to_owned(), output });
        }
        input.push(InputItem::UserText(first));
        let mut run = RunSpend::default();
        let cache = ToolCache { listing };
        for step in 1..=MAX_STEPS {
            // The input moves into the request and back after the call: the inventory's listing in it (megabytes
            // at 100,000 items) is never copied per step.
            let request = ModelRequest {
                kind: CallKind::Propose,
                instructions: proposal::INSTRUCTIONS.into(),
                input: std::mem::take(&mut input),
                tools: proposal::tools(),
                output_schema: Some(proposal::output_schema()),
                max_output_tokens: MAX_OUTPUT_TOKENS,
                max_tool_calls: None,
                include_search_results: false,
                household: Some(household),
            };
            let answer = self
                .model
                .respond_and_read_watched(actor, &request, &mut run, progress, |response| {
                    let calls: Vec<(String, String, String)> = response
                        .function_calls()
                        .map(|(id, name, args)| (id.to_owned(), name.to_owned(), args.to_owned()))
                        .collect();
                    if calls.is_empty() {
                        let text = response.final_text().ok_or("the model's final answer holds no message")?;
                        let set = proposal::read(text)
                            .map_err(|e| format!("the model's answer is not a ProposalSet: {e}"))?;
                        return Ok(Step::Answer(set));
                    }
                    if step == MAX_STEPS {
                        return Err(format!("the model still called tools after {MAX_STEPS} steps"));
                    }
                    Ok(Step::Tools(response, calls))
                })
                .await;
            input = request.input;
            let (response, calls) = match answer? {
                Step::Answer(set) => {
                    progress.report(Progress::Step { number: step, max: MAX_STEPS, tools: Vec::new() });
                    return self.write(actor, &set, step, run).await;
                }
                Step::Tools(response, calls) => (response, calls),
            };
            progress.report(Progress::Step {
                number: step,
                max: MAX_STEPS,
                tools: calls.iter().map(|(_, name, _)| name.clone()).collect(),
            });
            for item in response.output {
                if !matches!(item.view, OutputView::Reasoning { replayable: false }) {
                    input.push(InputItem::Replay(item.raw));
                }
            }
            for (call_id, name, arguments) in calls {
                let output = self.tool(household, &name, &arguments, &cache).await?;
                progress.report(Progress::Tool { name, output_bytes: output.len() });
                input.push(InputItem::FunctionCallOutput { call_id, output });
            }
        }
        unreachable!("the loop returns at step {MAX_STEPS}")
    }

    /// The `list_inventory` output for the household's items and `templates`: the cached one while neither the
    /// inventory nor the catalogue changed.
    async fn listing(
        &self,
        household: HouseholdId,
        templates: &[Template],
    ) -> Result<Arc<(Vec<Template>, String)>, Error> {
        let items = self.items.clone();
        self.listings
            .get_matching(
                self.items.as_ref(),
                household,
                |(cached, _)| cached.as_slice() == templates,
                || async move {
                    let present = items.lines(household).await?;
                    let text = tools::inventory_output(present.iter().filter(|i| i.is_buildable()), templates);
                    Ok((templates.to_vec(), text))
                },
            )
            .await
    }

    /// Answers one tool call. Tools only read.
    async fn tool(
        &self,
        household: HouseholdId,
        name: &str,
        arguments: &str,
        cache: &ToolCache,
    ) -> Result<String, Error> {
        Ok(match name {
            tools::LIST_INVENTORY => cache.listing.1.clone(),
            tools::TEMPLATE_CATALOG => tools::catalog_output(&cache.listing.0),
            tools::ITEM_DETAILS => match proposal::item_id_argument(arguments) {
                Err(message) => tools::error_output(&message),
                Ok(id) => match self.items.get(household, ItemId(id)).await {
                    Ok(item) => tools::details_output(&item),
                    Err(crate::RepoError::NotFound) => tools::error_output("no such item"),
                    Err(e) => return Err(e.into()),
                },
            },
            other => tools::error_output(&format!("no tool named {}", clip(other, 64))),
        })
    }

    /// The rules decide what of the answer is written; the projects are stored in one transaction.
    async fn write(
        &self,
        actor: Actor,
        set: &ProposalSet,
        steps: u32,
        spend: RunSpend,
    ) -> Result<ProposeOutcome, Error> {
        let household = actor.household;
        let templates = self.templates.list(household).await?.into_iter().map(|t| (t.id, t)).collect();
        let named = project::named_items(set);
        let items: HashMap<ItemId, Item> =
            self.items.get_many(household, &named).await?.into_iter().map(|i| (i.id, i)).collect();
        let decision = project::decide(set, &templates, &items);
        // A proposal equal to an open one (same template, same allocations) refreshes it instead of adding a copy;
        // the answer keeps the planner's order.
        let open: Vec<Project> = if decision.projects.is_empty() {
            Vec::new()
        } else {
            self.projects.list(household).await?.into_iter().filter(|p| p.status == ProjectStatus::Proposed).collect()
        };
        // For each proposal, in order: the open project it refreshed, or `None` for one inserted below.
        let mut refreshed: Vec<Option<Project>> = Vec::with_capacity(decision.projects.len());
        let mut fresh = Vec::new();
        let refresh = self.recorder.recording(actor, Action::Refresh);
        for new in decision.projects {
            let Some(old) = open.iter().find(|o| new.repeats(o)) else {
                refreshed.push(None);
                fresh.push(new);
                continue;
            };
            let again = self.projects.refresh(household, old.id, &new.title, &new.reason, &refresh).await?;
            refreshed.push(Some(again));
        }
        let inserted = if fresh.is_empty() {
            Vec::new()
        } else {
            self.projects.insert_many(household, fresh, &self.recorder.recording(actor, Action::Create)).await?
        };
        // The store answers the inserted ones in the order given: they fill the gaps in order.
        let mut inserted = inserted.into_iter();
        let projects = refreshed.into_iter().filter_map(|p| p.or_else(|| inserted.next())).collect();
        Ok(ProposeOutcome { projects, dropped: decision.dropped, steps, spend })
    }
}

#[cfg(test)]
mod tests;
