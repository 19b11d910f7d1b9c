//! "Refresh values": prices again the items that have no estimate or an estimate older than some days, within the
//! spend budget, as a background run with progress that can be stopped.
//!
//! First the plan says how many items it would price and what that is expected to cost (the mean of the last price
//! calls in the ledger, or a typical call at the configured rates when there were none) and how many fit in what
//! is left of the month's budget. A run prices the items one by one through [`Selling::price`] (so every call is
//! metered, grounded and kept in the price history like a price asked for by hand), stops when asked between two
//! items, and stops by itself when the budget is reached. One run per household at a time; its state is kept in
//! memory while the server runs.

use crate::Error;
use crate::error::Refusal;
use crate::metered::Metered;
use crate::ports::model::Capability;
use crate::ports::{Clock, InventoryRepo, PriceRepo, SpendLedger};
use crate::price::Selling;
use crate::recorder::Actor;
use chrono::Duration;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use trove_domain::money::MicroUsd;
use trove_domain::report::to_refresh;
use trove_domain::spend::{self, CallKind, CallOutcome, Expected, Usage};
use trove_domain::{HouseholdId, ItemId, Timestamp};

/// How far back the ledger is read for the expected cost of a price call.
const LEDGER_DAYS: i64 = 90;

/// A typical price call, for the expected cost before any was made: the instructions and the item's description
/// in, the comparables out, every search the call may run.
fn typical_price_call(max_searches: u32) -> Usage {
    Usage { input_tokens: 3_000, cached_tokens: 0, output_tokens: 1_500, searches: max_searches, audio_ms: 0 }
}

/// What a refresh would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshPlan {
    /// Items it would price.
    pub items: u64,
    /// What one price call is expected to cost, and from how many past calls.
    pub each: Expected,
    /// `items` times `each`.
    pub expected: MicroUsd,
    /// The month's budget, if one is set, and what is spent of it.
    pub monthly_limit: Option<MicroUsd>,
    pub spent_this_month: MicroUsd,
    /// How many of `items` the budget lets be priced, each call passing the step rule first (all without one).
    pub affordable: u64,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefreshState {
    Running,
    /// Asked to stop: it stops after the item being priced.
    Stopping,
    /// Every item was priced (or failed).
    Finished,
    /// Stopped when asked.
    Stopped,
    /// Stopped by itself: the month's budget is reached.
    BudgetReached,
    /// Stopped by itself: the model backend cannot price any more (`reason`).
    Failed,
}

impl RefreshState {
    pub fn is_over(self) -> bool {
        !matches!(self, Self::Running | Self::Stopping)
    }
}

/// A run's progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshRun {
    pub state: RefreshState,
    /// Items it set out to price.
    pub total: u64,
    /// Items it is through with (priced, failed or skipped).
    pub done: u64,
    /// Priced with an estimate.
    pub valued: u64,
    /// Priced, but the search found too little evidence for an estimate.
    pub no_estimate: u64,
    /// Whose call failed (recorded in the ledger with what it cost).
    pub failed: u64,
    /// What its calls cost.
    pub spent: MicroUsd,
    /// The item being priced.
    pub current: Option<ItemId>,
    pub started_at: Timestamp,
    pub finished_at: Option<Timestamp>,
    /// Why it stopped before the end, or the last failure.
    pub reason: Option<String>,
}

/// A run and the flag that asks it to stop.
struct Running {
    run: RefreshRun,
    stop: Arc<AtomicBool>,
}

/// The refresh use cases.
#[derive(Clone)]
pub struct ValueRefresh {
    selling: Selling,
    metered: Metered,
    items: Arc<dyn InventoryRepo>,
    prices: Arc<dyn PriceRepo>,
    ledger: Arc<dyn SpendLedger>,
    clock: Arc<dyn Clock>,
    runs: Arc<Mutex<HashMap<HouseholdId, Running>>>,
}

impl std::fmt::Debug for ValueRefresh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ValueRefresh").finish_non_exhaustive()
    }
}

impl ValueRefresh {
    pub fn new(
        selling: Selling,
        metered: Metered,
        items: Arc<dyn InventoryRepo>,
        prices: Arc<dyn PriceRepo>,
        ledger: Arc<dyn SpendLedger>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { selling, metered, items, prices, ledger, clock, runs: Arc::default() }
    }

    /// The items a refresh of estimates older than `older_than_days` would price (at most `limit`), in order.
    async fn wanted(
        &self,
        household: HouseholdId,
        older_than_days: u32,
        limit: Option<u64>,
    ) -> Result<Vec<ItemId>, Error> {
        let items = self.items.all_present(household).await?;
        let latest = self.prices.latest(household).await?;
        let mut ids = to_refresh(&items, &latest, self.clock.now(), Duration::days(i64::from(older_than_days)));
        if let Some(limit) = limit {
            ids.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        Ok(ids)
    }

    /// What refreshing estimates older than `older_than_days` (at most `limit` items) would do and cost.
    ///
    /// # Errors
    /// [`Error::NotConfigured`] or [`Error::Unavailable`] when the model backend cannot search the web.
    pub async fn plan(
        &self,
        household: HouseholdId,
        older_than_days: u32,
        limit: Option<u64>,
    ) -> Result<RefreshPlan, Error> {
        self.metered.require(Capability::WebSearch)?;
        let items = self.wanted(household, older_than_days, limit).await?.len() as u64;
        let now = self.clock.now();
        let past: Vec<MicroUsd> = self
            .ledger
            .entries(household, Some(now - Duration::days(LEDGER_DAYS)), None)
            .await?
            .into_iter()
            .filter(|e| e.kind == CallKind::Price && e.outcome == CallOutcome::Ok)
            .map(|e| e.cost)
            .collect();
        let policy = self.metered.policy();
        let each = spend::expected_cost(&past, &policy.rates, &typical_price_call(self.selling.max_searches()));
        let spent_this_month = self.ledger.total_since(household, spend::month_start(now)).await?;
        let expected = MicroUsd(each.each.0.saturating_mul(i64::try_from(items).unwrap_or(i64::MAX)));
        // What the step rule holds against the budget before each call: its whole output budget and every search.
        let step = spend::cost(
            &policy.rates,
            &Usage {
                output_tokens: u64::from(
                    self.metered.output_budget(CallKind::Price, crate::price::PRICE_MAX_OUTPUT_TOKENS),
                ),
                ..typical_price_call(self.selling.max_searches())
            },
        );
        Ok(RefreshPlan {
            items,
            each,
            expected,
            monthly_limit: policy.monthly_limit,
            spent_this_month,
            affordable: spend::affordable(items, each.each, step, spent_this_month, policy.monthly_limit),
        })
    }

    /// Starts a run for `actor`'s household in the background and answers its first state.
    ///
    /// # Errors
    /// [`Refusal::RefreshRunning`] while another run of the household is going; [`Error::NotConfigured`] or
    /// [`Error::Unavailable`] without web search; [`Error::Budget`] when the month's budget is already spent.
    pub async fn start(&self, actor: Actor, older_than_days: u32, limit: Option<u64>) -> Result<RefreshRun, Error> {
        let household = actor.household;
        self.metered.require(Capability::WebSearch)?;
        self.metered.check_budget(household).await?;
        let ids = self.wanted(household, older_than_days, limit).await?;
        let stop = Arc::new(AtomicBool::new(false));
        let run = RefreshRun {
            state: if ids.is_empty() { RefreshState::Finished } else { RefreshState::Running },
            total: ids.len() as u64,
            done: 0,
            valued: 0,
            no_estimate: 0,
            failed: 0,
            spent: MicroUsd(0),
            current: None,
            started_at: self.clock.now(),
            finished_at: ids.is_empty().then(|| self.clock.now()),
            reason: None,
        };
        {
            let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
            if runs.get(&household).is_some_and(|r| !r.run.state.is_over()) {
                return Err(Refusal::RefreshRunning.into());
            }
            runs.insert(household, Running { run: run.clone(), stop: stop.clone() });
        }
        if !ids.is_empty() {
            let this = self.clone();
            tokio::spawn(async move { this.work(actor, ids, stop).await });
        }
        Ok(run)
    }

    /// The household's current or last run; `None` when none ran since the server started.
    pub fn status(&self, household: HouseholdId) -> Option<RefreshRun> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner).get(&household).map(|r| r.run.clone())
    }

    /// Asks the household's run to stop after the item being priced, and answers its state; a run that is over
    /// is answered as it is.
    pub fn stop(&self, household: HouseholdId) -> Option<RefreshRun> {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let running = runs.get_mut(&household)?;
        if running.run.state == RefreshState::Running {
            running.stop.store(true, Ordering::SeqCst);
            running.run.state = RefreshState::Stopping;
        }
        Some(running.run.clone())
    }

    fn update(&self, household: HouseholdId, change: impl FnOnce(&mut RefreshRun)) {
        if let Some(r) = self.runs.lock().unwrap_or_else(PoisonError::into_inner).get_mut(&household) {
            change(&mut r.run);
        }
    }

    fn finish(&self, household: HouseholdId, state: RefreshState, reason: Option<String>) {
        let now = self.clock.now();
        self.update(household, |r| {
            r.state = state;
            r.current = None;
            r.finished_at = Some(now);
            if reason.is_some() {
                r.reason = reason;
            }
        });
    }

    async fn work(&self, actor: Actor, ids: Vec<ItemId>, stop: Arc<AtomicBool>) {
        let household = actor.household;
        for id in ids {
            if stop.load(Ordering::SeqCst) {
                return self.finish(household, RefreshState::Stopped, Some("stopped when asked".into()));
            }
            self.update(household, |r| r.current = Some(id));
            let outcome = self.selling.price(actor, id).await;
            let mut over = None;
            self.update(household, |r| match &outcome {
                Ok(priced) => {
                    r.done += 1;
                    r.spent = r.spent + priced.spend.cost;
                    if priced.report.estimate.is_some() {
                        r.valued += 1;
                    } else {
                        r.no_estimate += 1;
                    }
                }
                Err(Error::ModelFailed { reason, spend }) => {
                    r.done += 1;
                    r.spent = r.spent + spend.cost;
                    r.failed += 1;
                    r.reason = Some(format!("item {id}: {reason}"));
                }
                // Gone or removed since the plan: nothing to price.
                Err(Error::NotFound { .. } | Error::Refused(_)) => r.done += 1,
                // Nothing was sent for this item: it is not done.
                Err(e @ Error::Budget(_)) => over = Some((RefreshState::BudgetReached, e.to_string())),
                Err(e) => over = Some((RefreshState::Failed, e.to_string())),
            });
            if let Some((state, reason)) = over {
                tracing::warn!(household = household.0, %reason, "refresh values stopped");
                return self.finish(household, state, Some(reason));
            }
        }
        self.finish(household, RefreshState::Finished, None);
    }
}
