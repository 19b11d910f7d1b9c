//! Metered model calls: the budget is checked before anything is sent, and every call, failed or not, writes
//! one spend entry naming the member who asked (the [`Actor`]; none for the command line).

use crate::Error;
use crate::ports::model::{
    Attempt, CallWatch, Capabilities, Capability, ModelError, ModelRequest, ModelResponse, Streamed, Transcript,
    watching,
};
use crate::ports::{Clock, ModelPort, SpendLedger};
use crate::progress::{Progress, ProgressSink, Unwatched};
use crate::recorder::Actor;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use trove_domain::HouseholdId;
use trove_domain::money::MicroUsd;
use trove_domain::spend::{self, CallKind, CallOutcome, Rates, SpendEntry, Usage};

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
    /// Output budgets set per call kind (`MODEL_MAX_OUTPUT_TOKENS`), replacing the use cases' own.
    output_budgets: Arc<HashMap<CallKind, u32>>,
    /// What each household's calls in flight may still cost (their estimates, until their real cost is in the
    /// ledger), so concurrent runs cannot together cross the budget.
    reserved: Arc<Mutex<HashMap<HouseholdId, i64>>>,
}

/// A call's estimate held against its household's budget until its real cost is recorded (or it fails).
struct Reservation {
    reserved: Arc<Mutex<HashMap<HouseholdId, i64>>>,
    household: HouseholdId,
    amount: i64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut all = self.reserved.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(held) = all.get_mut(&self.household) {
            *held -= self.amount;
            if *held <= 0 {
                all.remove(&self.household);
            }
        }
    }
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
        Self { model, ledger, clock, policy, output_budgets: Arc::default(), reserved: Arc::default() }
    }

    /// The same, with the output budget of each call kind in `budgets` set (`MODEL_MAX_OUTPUT_TOKENS`).
    #[must_use]
    pub fn with_output_budgets(self, budgets: HashMap<CallKind, u32>) -> Self {
        Self { output_budgets: Arc::new(budgets), ..self }
    }

    pub fn policy(&self) -> SpendPolicy {
        self.policy
    }

    /// The output budget a call of `kind` is sent with: the one set for its kind (`MODEL_MAX_OUTPUT_TOKENS`), else
    /// the use case's own `default`.
    pub fn output_budget(&self, kind: CallKind, default: u32) -> u32 {
        self.output_budgets.get(&kind).copied().unwrap_or(default)
    }

    /// What the backend can do (web search, images, audio), asked before a call that needs it.
    pub fn capabilities(&self) -> Capabilities {
        self.model.capabilities()
    }

    /// What the backend offers, use case by use case, with why not where it does not (nothing is sent).
    pub fn offer(&self) -> crate::offer::Offer {
        crate::offer::Offer::of(self.model.capabilities(), self.model.model_name(CallKind::Propose))
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

    /// The step rule before sending `request`: what it may cost (its estimated input and its whole output budget,
    /// its searches, at the rates) must fit in what is left of the month's budget after the spend and what calls
    /// in flight have reserved; it is then reserved until the call's real cost is recorded.
    ///
    /// # Errors
    /// [`Error::Budget`] naming what the call may cost.
    async fn reserve(&self, household: HouseholdId, request: &ModelRequest) -> Result<Option<Reservation>, Error> {
        let Some(limit) = self.policy.monthly_limit else { return Ok(None) };
        let usage = Usage {
            input_tokens: request.estimated_input_tokens(),
            output_tokens: u64::from(request.max_output_tokens),
            searches: request.searches_at_most(),
            ..Usage::default()
        };
        let estimate = spend::cost(&self.policy.rates, &usage);
        let spent = self.ledger.total_since(household, spend::month_start(self.clock.now())).await?;
        let mut all = self.reserved.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let held = all.get(&household).copied().unwrap_or(0);
        spend::check_step(spent, MicroUsd(held), estimate, Some(limit))?;
        *all.entry(household).or_insert(0) += estimate.0;
        Ok(Some(Reservation { reserved: self.reserved.clone(), household, amount: estimate.0 }))
    }

    /// Refuses, before anything is sent, a call that needs a capability the backend lacks.
    ///
    /// # Errors
    /// [`Error::Unavailable`] naming the capability when the configured provider lacks it;
    /// [`Error::NotConfigured`] for the local planner (it needs the Model API).
    pub fn require(&self, capability: Capability) -> Result<(), Error> {
        self.model.capabilities().require(capability).map_err(unsent)
    }

    async fn record(
        &self,
        actor: Actor,
        kind: CallKind,
        usage: &Usage,
        outcome: CallOutcome,
        run: &mut RunSpend,
    ) -> Result<(), Error> {
        let model = self.model.model_name(kind);
        let entry = SpendEntry {
            member: actor.member,
            ..SpendEntry::new(self.clock.now(), kind, &model, usage, &self.policy.rates, outcome)
        };
        run.add(&entry);
        self.ledger.record(actor.household, &entry).await?;
        Ok(())
    }

    /// Records a call that failed after it was sent (with the usage the provider reported, or the estimate of
    /// what an unanswered call cost, zero if neither) and turns its error into [`Error::ModelFailed`]; an error
    /// from before sending is answered as it is, unrecorded.
    async fn failed(&self, actor: Actor, kind: CallKind, error: ModelError, run: &mut RunSpend) -> Error {
        if !error.was_sent() {
            return unsent(error);
        }
        let usage = error.usage().unwrap_or_default();
        let outcome =
            if matches!(error, ModelError::Unanswered { .. }) { CallOutcome::Unanswered } else { CallOutcome::Failed };
        if let Err(e) = self.record(actor, kind, &usage, outcome, run).await {
            return e;
        }
        match error {
            // Load, not a broken call: the client is told when to try again, as for a busy server.
            ModelError::RateLimited { retry_after, .. } => Error::ModelBusy {
                reason: error.to_string(),
                retry_after_s: retry_after.map_or(RATE_LIMITED_RETRY_S, |d| d.as_secs().max(1)),
                spend: *run,
            },
            _ => Error::ModelFailed { reason: error.to_string(), spend: *run },
        }
    }

    /// One call: budget, send, record. A failed call is recorded with the usage the provider reported (zero if
    /// none) and turned into [`Error::ModelFailed`] carrying the run's spend so far.
    ///
    /// # Errors
    /// [`Error::Budget`] before sending; [`Error::NotConfigured`] or [`Error::Unavailable`] when the backend
    /// cannot serve the request (nothing sent, nothing recorded); [`Error::ModelFailed`] when the call failed
    /// (recorded with the outcome `failed`).
    pub async fn respond(
        &self,
        actor: Actor,
        request: &ModelRequest,
        run: &mut RunSpend,
    ) -> Result<ModelResponse, Error> {
        self.respond_watched(actor, request, run, &Unwatched).await
    }

    /// [`Metered::respond`], reporting the answer's progress to `progress` as the provider streams it.
    ///
    /// # Errors
    /// As [`Metered::respond`].
    pub async fn respond_watched(
        &self,
        actor: Actor,
        request: &ModelRequest,
        run: &mut RunSpend,
        progress: &dyn ProgressSink,
    ) -> Result<ModelResponse, Error> {
        let (response, _held) = self.send(actor, request, run, progress).await?;
        self.record(actor, request.kind, &response.usage, CallOutcome::Ok, run).await?;
        Ok(response)
    }

    /// Calls the backend with a watch around the call: the provider's progress goes to `progress` as it streams,
    /// and each attempt the backend tried again is recorded, failed (with the usage the provider reported) or
    /// unanswered (with its estimate), before the call's own outcome.
    async fn call(
        &self,
        actor: Actor,
        request: &ModelRequest,
        run: &mut RunSpend,
        progress: &dyn ProgressSink,
    ) -> Result<Result<ModelResponse, ModelError>, Error> {
        let (tx, mut streamed) = tokio::sync::mpsc::unbounded_channel();
        let watch = Arc::new(Watch { streamed: tx, retried: Mutex::default() });
        let call = watching(watch.clone(), self.model.respond(request));
        tokio::pin!(call);
        let answer = loop {
            tokio::select! {
                answer = &mut call => break answer,
                Some(s) = streamed.recv() => progress.report(Progress::Writing { output_tokens: s.output_tokens }),
            }
        };
        // What came with the answer's last poll is told too, in order.
        while let Ok(s) = streamed.try_recv() {
            progress.report(Progress::Writing { output_tokens: s.output_tokens });
        }
        self.record_retried(actor, request.kind, &watch, run).await?;
        Ok(answer)
    }

    /// Records each attempt the backend told `watch` it tried again: failed (the usage the provider reported) or
    /// unanswered (its estimate).
    async fn record_retried(
        &self,
        actor: Actor,
        kind: CallKind,
        watch: &Watch,
        run: &mut RunSpend,
    ) -> Result<(), Error> {
        let retried = std::mem::take(&mut *watch.retried.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for attempt in retried {
            let outcome = if attempt.estimated { CallOutcome::Unanswered } else { CallOutcome::Failed };
            tracing::warn!(kind = kind.as_str(), reason = %attempt.reason, %outcome, "a model call's attempt gave no answer and was tried again");
            self.record(actor, kind, &attempt.usage, outcome, run).await?;
        }
        Ok(())
    }

    /// Sends `request` after the step rule ([`Metered::reserve`]); an answer cut short by its output budget
    /// (`incomplete`, `max_output_tokens`) is recorded as the failed attempt it is and sent once more with twice
    /// the budget (at most [`OUTPUT_TOKENS_MAX`]) if the month's budget still allows. The answer is not recorded
    /// yet: its reservation is answered with it, held until it is.
    async fn send(
        &self,
        actor: Actor,
        request: &ModelRequest,
        run: &mut RunSpend,
        progress: &dyn ProgressSink,
    ) -> Result<(ModelResponse, Option<Reservation>), Error> {
        let budgeted;
        let request = match self.output_budgets.get(&request.kind) {
            Some(&max) if max != request.max_output_tokens => {
                budgeted = ModelRequest { max_output_tokens: max, ..request.clone() };
                &budgeted
            }
            _ => request,
        };
        let held = self.reserve(actor.household, request).await?;
        match self.call(actor, request, run, progress).await? {
            Ok(response) => Ok((response, held)),
            Err(ModelError::Incomplete { reason, usage })
                if reason == INCOMPLETE_OUTPUT && request.max_output_tokens < OUTPUT_TOKENS_MAX =>
            {
                self.record(actor, request.kind, &usage, CallOutcome::Failed, run).await?;
                drop(held);
                let larger = ModelRequest {
                    max_output_tokens: request.max_output_tokens.saturating_mul(2).min(OUTPUT_TOKENS_MAX),
                    ..request.clone()
                };
                let held = self.reserve(actor.household, &larger).await?;
                tracing::info!(
                    kind = request.kind.as_str(),
                    from = request.max_output_tokens,
                    to = larger.max_output_tokens,
                    "the answer ran out of output tokens; asking once more with a larger budget"
                );
                match self.call(actor, &larger, run, progress).await? {
                    Ok(response) => Ok((response, held)),
                    Err(e) => Err(self.failed(actor, request.kind, e, run).await),
                }
            }
            Err(e) => Err(self.failed(actor, request.kind, e, run).await),
        }
    }

    /// One call whose answer `read` turns into what the use case needs: budget, send, read, record. An answer
    /// `read` refuses (no message, not the asked-for document, a loop that will not end) is recorded with the
    /// outcome `failed`, like a call that failed, and answered as [`Error::ModelFailed`] with `read`'s reason.
    ///
    /// # Errors
    /// As [`Metered::respond`], and [`Error::ModelFailed`] when `read` refuses the answer.
    pub async fn respond_and_read<T>(
        &self,
        actor: Actor,
        request: &ModelRequest,
        run: &mut RunSpend,
        read: impl FnOnce(ModelResponse) -> Result<T, String>,
    ) -> Result<T, Error> {
        self.respond_and_read_watched(actor, request, run, &Unwatched, read).await
    }

    /// [`Metered::respond_and_read`], reporting the answer's progress to `progress` as the provider streams it.
    ///
    /// # Errors
    /// As [`Metered::respond_and_read`].
    pub async fn respond_and_read_watched<T>(
        &self,
        actor: Actor,
        request: &ModelRequest,
        run: &mut RunSpend,
        progress: &dyn ProgressSink,
        read: impl FnOnce(ModelResponse) -> Result<T, String>,
    ) -> Result<T, Error> {
        let (response, _held) = self.send(actor, request, run, progress).await?;
        let usage = response.usage;
        match read(response) {
            Ok(answer) => {
                self.record(actor, request.kind, &usage, CallOutcome::Ok, run).await?;
                Ok(answer)
            }
            Err(reason) => {
                self.record(actor, request.kind, &usage, CallOutcome::Failed, run).await?;
                Err(Error::ModelFailed { reason, spend: *run })
            }
        }
    }

    /// The backend's [`ModelPort::prepare_audio`], as a function to run on a blocking thread (no spend: nothing
    /// is sent).
    pub fn audio_preparer(&self) -> impl FnOnce(&[u8]) -> Result<Vec<u8>, ModelError> + Send + 'static {
        let model = self.model.clone();
        move |wav| model.prepare_audio(wav)
    }

    /// Speech to text, metered as a `transcribe` entry costed per second of audio.
    ///
    /// # Errors
    /// As [`Metered::respond`].
    pub async fn transcribe(&self, actor: Actor, wav: &[u8], run: &mut RunSpend) -> Result<Transcript, Error> {
        self.check_budget(actor.household).await?;
        let (tx, _streamed) = tokio::sync::mpsc::unbounded_channel();
        let watch = Arc::new(Watch { streamed: tx, retried: Mutex::default() });
        let answer = watching(watch.clone(), self.model.transcribe(wav)).await;
        self.record_retried(actor, CallKind::Transcribe, &watch, run).await?;
        match answer {
            Ok(t) => {
                let usage = Usage { audio_ms: t.audio_ms, ..Usage::default() };
                self.record(actor, CallKind::Transcribe, &usage, CallOutcome::Ok, run).await?;
                Ok(t)
            }
            Err(e) => Err(self.failed(actor, CallKind::Transcribe, e, run).await),
        }
    }
}

/// The watch [`Metered`] sets around each call: progress goes out as it comes, retried attempts are kept to be
/// recorded when the call returns.
struct Watch {
    streamed: tokio::sync::mpsc::UnboundedSender<Streamed>,
    retried: Mutex<Vec<Attempt>>,
}

impl CallWatch for Watch {
    fn streamed(&self, progress: Streamed) {
        // The receiver lives as long as the call: a send fails only after it returned, when no one listens.
        let _ = self.streamed.send(progress);
    }

    fn retried(&self, attempt: Attempt) {
        self.retried.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(attempt);
    }
}

/// The reason of an answer cut short by its output budget.
const INCOMPLETE_OUTPUT: &str = "max_output_tokens";

/// The largest output budget an answer cut short is given when it is asked once more.
pub const OUTPUT_TOKENS_MAX: u32 = 64_000;

/// The wait a client is told when the provider rate limits without saying how long.
pub const RATE_LIMITED_RETRY_S: u64 = 30;

/// A model error from before anything was sent, as the use case's error: nothing was billed, nothing recorded.
fn unsent(error: ModelError) -> Error {
    match error {
        ModelError::NotConfigured { what, setting } => Error::NotConfigured { what, setting },
        ModelError::Unavailable { capability, message } => Error::Unavailable { capability, message },
        ModelError::BadInput(m) => Error::Invalid(m),
        other => Error::ModelFailed { reason: other.to_string(), spend: RunSpend::default() },
    }
}

#[cfg(test)]
mod tests;
