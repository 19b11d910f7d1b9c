//! The spend report: the ledger's entries and totals by kind and by month.

use crate::Error;
use crate::metered::SpendPolicy;
use crate::ports::{Clock, SpendLedger};
use std::collections::BTreeMap;
use std::sync::Arc;
use trove_domain::money::MicroUsd;
use trove_domain::spend::{self, CallOutcome, SpendEntry};
use trove_domain::{HouseholdId, Timestamp};

/// Totals of a set of entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Every call, failed ones included.
    pub calls: u64,
    /// The calls that failed (counted in `calls` too), whether or not they cost anything.
    pub failed_calls: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub searches: u64,
    pub cost: MicroUsd,
}

impl Totals {
    fn add(&mut self, e: &SpendEntry) {
        self.calls += 1;
        self.failed_calls += u64::from(e.outcome == CallOutcome::Failed);
        self.input_tokens += e.input_tokens;
        self.cached_tokens += e.cached_tokens;
        self.output_tokens += e.output_tokens;
        self.searches += u64::from(e.searches);
        self.cost = self.cost + e.cost;
    }
}

/// The report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpendReport {
    pub entries: Vec<SpendEntry>,
    pub total: Totals,
    /// By kind ("propose", "price", ...).
    pub by_kind: BTreeMap<String, Totals>,
    /// By month ("2026-11").
    pub by_month: BTreeMap<String, Totals>,
    /// The monthly budget, if one is set.
    pub monthly_limit: Option<MicroUsd>,
    /// Spent in the current month (whatever the filters).
    pub this_month: MicroUsd,
}

/// The spend report use case.
#[derive(Clone)]
pub struct Spend {
    ledger: Arc<dyn SpendLedger>,
    clock: Arc<dyn Clock>,
    policy: SpendPolicy,
}

impl std::fmt::Debug for Spend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spend").field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl Spend {
    pub fn new(ledger: Arc<dyn SpendLedger>, clock: Arc<dyn Clock>, policy: SpendPolicy) -> Self {
        Self { ledger, clock, policy }
    }

    /// The entries with `from <= at < to` and their totals.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `from` is after `to`.
    pub async fn report(
        &self,
        household: HouseholdId,
        from: Option<Timestamp>,
        to: Option<Timestamp>,
    ) -> Result<SpendReport, Error> {
        if let (Some(f), Some(t)) = (from, to)
            && f > t
        {
            return Err(Error::Invalid("from must not be after to".into()));
        }
        let entries = self.ledger.entries(household, from, to).await?;
        let mut total = Totals::default();
        let mut by_kind: BTreeMap<String, Totals> = BTreeMap::new();
        let mut by_month: BTreeMap<String, Totals> = BTreeMap::new();
        for e in &entries {
            total.add(e);
            by_kind.entry(e.kind.to_string()).or_default().add(e);
            by_month.entry(spend::month_key(e.at)).or_default().add(e);
        }
        let this_month = self.ledger.total_since(household, spend::month_start(self.clock.now())).await?;
        Ok(SpendReport { entries, total, by_kind, by_month, monthly_limit: self.policy.monthly_limit, this_month })
    }
}
