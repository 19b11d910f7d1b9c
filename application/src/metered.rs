//! Metered model calls: the budget is checked before anything is sent, and every call, failed or not, writes
//! one spend entry.

use crate::Error;
use crate::ports::model::{Capabilities, ModelError, ModelRequest, ModelResponse, Transcript};
use crate::ports::{Clock, ModelPort, SpendLedger};
use serde::Serialize;
use std::sync::Arc;
use trove_domain::HouseholdId;
use trove_domain::money::MicroUsd;
use trove_domain::spend::{self, CallKind, Rates, SpendEntry, Usage};

/// What a run of one or more model calls cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RunSpend {
    pub calls: u32,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub searches: u32,
    pub cost: MicroUsd,
}

impl RunSpend {
    fn add(&mut self, entry: &SpendEntry) {
        self.calls += 1;
        self.input_tokens += entry.input_tokens;
        self.cached_tokens += entry.cached_tokens;
        self.output_tokens += entry.output_tokens;
        self.searches += entry.searches;
        self.cost = self.cost + entry.cost;
    }
}

/// The spend settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpendPolicy {
    pub rates: Rates,
    /// `SPEND_MONTHLY_LIMIT_USD`; `None`: no budget.
    pub monthly_limit: Option<MicroUsd>,
}

/// The model, behind the budget and the ledger.
#[derive(Clone)]
pub struct Metered {
    /// The backend; only this wrapper calls it, so no call goes unmetered.
    model: Arc<dyn ModelPort>,
    ledger: Arc<dyn SpendLedger>,
    clock: Arc<dyn Clock>,
    policy: SpendPolicy,
}

impl std::fmt::Debug for Metered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metered")
            .field("model", &self.model.model_name(CallKind::Propose))
            .field("policy", &self.policy)
            .finish()
    }
}

impl Metered {
    pub fn new(
        model: Arc<dyn ModelPort>,
        ledger: Arc<dyn SpendLedger>,
        clock: Arc<dyn Clock>,
        policy: SpendPolicy,
    ) -> Self {
        Self { model, ledger, clock, policy }
    }

    pub fn policy(&self) -> SpendPolicy {
        self.policy
    }

    /// What the backend can do (web search, images, audio), asked before a call that needs it.
    pub fn capabilities(&self) -> Capabilities {
        self.model.capabilities()
    }

    /// The budget rule, checked before a call is sent.
    ///
    /// # Errors
    /// [`Error::Budget`] when this month's spend reached the limit.
    pub async fn check_budget(&self, household: HouseholdId) -> Result<(), Error> {
        let Some(limit) = self.policy.monthly_limit else { return Ok(()) };
        let spent = self.ledger.total_since(household, spend::month_start(self.clock.now())).await?;
        spend::check_budget(spent, Some(limit))?;
        Ok(())
    }

    async fn record(
        &self,
        household: HouseholdId,
        kind: CallKind,
        usage: &Usage,
        run: &mut RunSpend,
    ) -> Result<(), Error> {
        let entry = SpendEntry::new(self.clock.now(), kind, &self.model.model_name(kind), usage, &self.policy.rates);
        run.add(&entry);
        self.ledger.record(household, &entry).await?;
        Ok(())
    }

    /// One call: budget, send, record. A failed call is recorded with the usage the provider reported (zero if
    /// none) and turned into [`Error::ModelFailed`] carrying the run's spend so far.
    ///
    /// # Errors
    /// [`Error::Budget`] before sending; [`Error::NotConfigured`] when the backend cannot serve the request;
    /// [`Error::ModelFailed`] when the call failed.
    pub async fn respond(
        &self,
        household: HouseholdId,
        request: &ModelRequest,
        run: &mut RunSpend,
    ) -> Result<ModelResponse, Error> {
        self.check_budget(household).await?;
        match self.model.respond(request).await {
            Ok(response) => {
                self.record(household, request.kind, &response.usage, run).await?;
                Ok(response)
            }
            Err(ModelError::NotConfigured { what, setting }) => Err(Error::NotConfigured { what, setting }),
            // Refused before sending: nothing was billed.
            Err(ModelError::BadInput(m)) => Err(Error::Invalid(m)),
            Err(e) => {
                let usage = e.usage().unwrap_or_default();
                self.record(household, request.kind, &usage, run).await?;
                Err(Error::ModelFailed { reason: e.to_string(), spend: *run })
            }
        }
    }

    /// Speech to text, metered as a `transcribe` entry costed per second of audio.
    ///
    /// # Errors
    /// As [`Metered::respond`].
    pub async fn transcribe(
        &self,
        household: HouseholdId,
        wav: &[u8],
        run: &mut RunSpend,
    ) -> Result<Transcript, Error> {
        self.check_budget(household).await?;
        match self.model.transcribe(wav).await {
            Ok(t) => {
                let usage = Usage { audio_ms: t.audio_ms, ..Usage::default() };
                self.record(household, CallKind::Transcribe, &usage, run).await?;
                Ok(t)
            }
            Err(ModelError::NotConfigured { what, setting }) => Err(Error::NotConfigured { what, setting }),
            // Refused before sending: nothing was billed.
            Err(ModelError::BadInput(m)) => Err(Error::Invalid(m)),
            Err(e) => {
                self.record(household, CallKind::Transcribe, &e.usage().unwrap_or_default(), run).await?;
                Err(Error::ModelFailed { reason: e.to_string(), spend: *run })
            }
        }
    }
}

#[cfg(test)]
mod tests;
