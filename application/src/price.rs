//! PriceItem: one model call with the web search tool, then the grounding rule and the estimate; plus the
//! price history, the listing draft and the share text. What the price call is told and may answer is its
//! contract, [`crate::contracts::comparables`].

use crate::contracts::comparables as contract;
use crate::error::{Refusal, named};
use crate::metered::{Metered, RunSpend};
use crate::ports::model::{
    ApproximateLocation, Capability, InputItem, ModelRequest, OutputView, SearchContextSize, Tool,
};
use crate::ports::{Clock, InventoryRepo, PriceRepo};
use crate::progress::{Progress, ProgressSink, Unwatched};
use crate::recorder::Actor;
use crate::{Error, RepoError};
use std::sync::Arc;
use trove_domain::history::ObjectKind;
use trove_domain::item::Item;
use trove_domain::listing::{self, ListingDraft};
use trove_domain::money::Currency;
use trove_domain::pricing::{self, GroundingPages, PriceReport};
use trove_domain::spend::CallKind;
use trove_domain::{HouseholdId, ItemId};

/// The output budget of a price call: reasoning and the comparables it writes.
pub const PRICE_MAX_OUTPUT_TOKENS: u32 = 16_000;

/// The pricing settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceSettings {
    /// `PRICE_SEARCH_CONTEXT`.
    pub context_size: SearchContextSize,
    /// `PRICE_MAX_SEARCHES`: the call's `max_tool_calls`.
    pub max_searches: u32,
    /// `TROVE_LOCATION`; also gives the pick-up area of share texts.
    pub location: ApproximateLocation,
    /// The currency estimates prefer (from the location's country when known).
    pub currency: Option<Currency>,
}

impl Default for PriceSettings {
    fn default() -> Self {
        Self {
            context_size: SearchContextSize::Medium,
            max_searches: 4,
            location: ApproximateLocation::default(),
            currency: None,
        }
    }
}

/// The use cases of selling and giving.
#[derive(Clone)]
pub struct Selling {
    model: Metered,
    items: Arc<dyn InventoryRepo>,
    prices: Arc<dyn PriceRepo>,
    clock: Arc<dyn Clock>,
    settings: PriceSettings,
}

impl std::fmt::Debug for Selling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Selling").field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// A price report and what the call cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Priced {
    pub report: PriceReport,
    pub spend: RunSpend,
}

fn no_item(id: ItemId) -> impl Fn(RepoError) -> Error {
    named(ObjectKind::Item, id.0)
}

/// The item as the price call describes it: name, profile, condition, faults, accessories, current fields.
pub fn describe_for_pricing(item: &Item) -> String {
    let mut out = format!("Item: {}\nType: {}\nCondition: {}", item.name, item.item_type, item.condition.human());
    if !item.profile.is_empty() {
        out.push_str(&format!("\nProfile: {}", item.profile));
    }
    let fields = item.fields_line();
    if !fields.is_empty() {
        out.push_str(&format!("\nMeasured: {fields}"));
    }
    if !item.faults.is_empty() {
        let f: Vec<String> = item.faults.iter().map(|f| format!("{} ({})", f.text, f.severity)).collect();
        out.push_str(&format!("\nFaults: {}", f.join("; ")));
    }
    if !item.accessories.is_empty() {
        out.push_str(&format!("\nComes with: {}", item.accessories.join(", ")));
    }
    out
}

impl Selling {
    pub fn new(
        model: Metered,
        items: Arc<dyn InventoryRepo>,
        prices: Arc<dyn PriceRepo>,
        clock: Arc<dyn Clock>,
        settings: PriceSettings,
    ) -> Self {
        Self { model, items, prices, clock, settings }
    }

    async fn item(&self, household: HouseholdId, id: ItemId) -> Result<Item, Error> {
        self.items.get(household, id).await.map_err(no_item(id))
    }

    /// How many web searches one price call may run (`PRICE_MAX_SEARCHES`).
    pub fn max_searches(&self) -> u32 {
        self.settings.max_searches
    }

    /// The request of the price call.
    pub fn price_request(&self, item: &Item) -> ModelRequest {
        let location = Some(self.settings.location.clone()).filter(|l| !l.is_empty());
        ModelRequest {
            kind: CallKind::Price,
            instructions: contract::INSTRUCTIONS.into(),
            input: vec![InputItem::UserText(describe_for_pricing(item))],
            tools: vec![Tool::WebSearch { context_size: self.settings.context_size, location }],
            output_schema: Some(contract::output_schema()),
            max_output_tokens: PRICE_MAX_OUTPUT_TOKENS,
            max_tool_calls: Some(self.settings.max_searches),
            include_search_results: true,
            household: None,
        }
    }

    /// Prices an item: one call with web search; the rules keep only grounded comparables and estimate from
    /// them; the report is stored as price history. The call's spend entry names the member who asked.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::NotPriceable`] for a gone item; [`Error::NotConfigured`] without the Model
    /// API; [`Error::Budget`]; [`Error::ModelFailed`] (nothing stored but the spend).
    pub async fn price(&self, actor: Actor, id: ItemId) -> Result<Priced, Error> {
        self.price_watched(actor, id, &Unwatched).await
    }

    /// [`Selling::price`], reporting to `progress` when the search starts.
    ///
    /// # Errors
    /// As [`Selling::price`].
    pub async fn price_watched(&self, actor: Actor, id: ItemId, progress: &dyn ProgressSink) -> Result<Priced, Error> {
        let household = actor.household;
        let item = self.item(household, id).await?;
        pricing::check_priceable(&item).map_err(Refusal::from)?;
        self.model.require(Capability::WebSearch)?;
        let mut run = RunSpend::default();
        progress.report(Progress::Searching { max_searches: self.settings.max_searches });
        let response = self.model.respond_watched(actor, &self.price_request(&item), &mut run, progress).await?;
        let mut pages: Vec<&str> = Vec::new();
        for o in &response.output {
            match &o.view {
                OutputView::WebSearchCall { sources, results, .. } => {
                    pages.extend(sources.iter().chain(results).map(|p| p.url.as_str()));
                }
                OutputView::Message { citations, .. } => pages.extend(citations.iter().map(|c| c.url.as_str())),
                _ => {}
            }
        }
        let text = response
            .final_text()
            .ok_or_else(|| Error::ModelFailed { reason: "the model's answer holds no message".into(), spend: run })?;
        let answer = contract::read(text).map_err(|e| Error::ModelFailed {
            reason: format!("the model's answer is not a Comparables document: {e}"),
            spend: run,
        })?;
        let report = pricing::price_report(
            &item,
            self.clock.now(),
            &answer,
            &GroundingPages::new(pages),
            self.settings.currency,
            response.usage.searches,
        );
        self.prices.add(household, &report).await?;
        Ok(Priced { report, spend: run })
    }

    /// The item's price reports, newest first.
    ///
    /// # Errors
    /// [`Error::NotFound`].
    pub async fn history(&self, household: HouseholdId, id: ItemId) -> Result<Vec<PriceReport>, Error> {
        self.item(household, id).await?;
        // Read under the URL rule: a report stored before it may hold a URL that is not http(s).
        Ok(self.prices.history(household, id).await?.into_iter().map(PriceReport::web_urls_only).collect())
    }

    /// The listing draft of an item meant for sale, priced from its latest estimate.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Listing`] unless the intent is `sell`.
    pub async fn draft(&self, household: HouseholdId, id: ItemId) -> Result<ListingDraft, Error> {
        let item = self.item(household, id).await?;
        let history = self.prices.history(household, id).await?;
        let latest = history.iter().find_map(|r| r.estimate.as_ref());
        Ok(listing::draft(&item, latest).map_err(Refusal::from)?)
    }

    /// The give-away post of an item meant to be given.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Listing`] unless the intent is `give`.
    pub async fn share(&self, household: HouseholdId, id: ItemId) -> Result<String, Error> {
        let item = self.item(household, id).await?;
        Ok(listing::share_text(&item, self.settings.location.city.as_deref()).map_err(Refusal::from)?)
    }
}
