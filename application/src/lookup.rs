//! Looking a scanned or typed code up (`GET /api/lookup/{code}`), in order: one of our own labels' links, an item
//! of the household carrying the code, the instance's cache, then the providers, asked in parallel within a total
//! budget. A code no provider can know ([`Code::unknowable`]) is never sent anywhere; a hit is cached for
//! [`HIT_KEPT`], a miss (every provider asked answered that it knows nothing) for [`MISS_KEPT`], and an answer
//! with a failure in it and no candidate is not cached at all.

use crate::Error;
use crate::labels::{Labels, Scanned};
use crate::ports::{
    CachedLookup, Clock, InventoryRepo, ItemQuery, LookupCache, ProductSource, ProviderFailed, SourcedCandidate,
};
use std::sync::Arc;
use std::time::Duration;
use trove_domain::code::{Code, CodeKind, Unknowable};
use trove_domain::label::PublicUrl;
use trove_domain::{HouseholdId, ItemId};

/// How long a hit is kept in the cache.
pub const HIT_KEPT: chrono::TimeDelta = chrono::TimeDelta::days(90);
/// How long a miss is kept in the cache.
pub const MISS_KEPT: chrono::TimeDelta = chrono::TimeDelta::days(7);
/// The most candidates an answer offers.
pub const CANDIDATES_MAX: usize = 3;
/// The default budget of all the providers together.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(4);

/// What a lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Looked {
    /// The text is one of our labels' links: the item or place it names.
    Label(Scanned),
    /// An item of the household carries the code.
    Item { id: ItemId, name: String, code: Code },
    /// The products known under the code (none: nothing found).
    Products(Products),
}

/// The products known under a code, and who was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Products {
    pub code: Code,
    /// At most [`CANDIDATES_MAX`], in the providers' order.
    pub candidates: Vec<SourcedCandidate>,
    /// The providers asked (for this answer, or for the cached one it repeats).
    pub asked: Vec<String>,
    /// Whether the answer came from the cache.
    pub cached: bool,
    /// Why the code was sent to no provider, if it was not.
    pub withheld: Option<Unknowable>,
}

/// The lookup use case.
#[derive(Clone)]
pub struct Lookup {
    /// Our labels: their links are read first, and answered as the item or place they name.
    labels: Labels,
    /// Where our labels' links point (`TROVE_PUBLIC_URL`).
    url: PublicUrl,
    /// The household's items, searched by code.
    items: Arc<dyn InventoryRepo>,
    /// The instance's cache of what providers answered.
    cache: Arc<dyn LookupCache>,
    /// The providers `TROVE_LOOKUP` allows, in the order their candidates are offered (none: `off`).
    sources: Vec<Arc<dyn ProductSource>>,
    clock: Arc<dyn Clock>,
    /// How long all the providers together may take.
    budget: Duration,
}

impl std::fmt::Debug for Lookup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.sources.iter().map(|s| s.name()).collect();
        f.debug_struct("Lookup").field("sources", &names).field("budget", &self.budget).finish_non_exhaustive()
    }
}

impl Lookup {
    pub fn new(
        labels: Labels,
        url: PublicUrl,
        items: Arc<dyn InventoryRepo>,
        cache: Arc<dyn LookupCache>,
        sources: Vec<Arc<dyn ProductSource>>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self { labels, url, items, cache, sources, clock, budget: DEFAULT_BUDGET }
    }

    /// The same lookup with another total budget for the providers.
    #[must_use]
    pub fn with_budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Looks `raw` up for `household`: our label's link, the household's item carrying the code, the cache, the
    /// providers.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the problem for a text that is no product code (letters, a wrong check digit,
    /// too many digits); [`Error::NotFound`] for a label of another household's object; `Unexpected` when the
    /// store fails. A provider failing is no error: it gives no candidate.
    pub async fn look_up(&self, household: HouseholdId, raw: &str) -> Result<Looked, Error> {
        if let Some(target) = self.url.read(raw.trim()) {
            return Ok(Looked::Label(self.labels.scanned(household, target).await?));
        }
        let code = product_code(raw)?;
        let query = ItemQuery {
            q: Some(code.shown().to_owned()),
            code: Some(code.key().to_owned()),
            limit: 5,
            ..ItemQuery::default()
        };
        let page = self.items.list(household, &query).await?;
        if let Some(item) = page.items.into_iter().find(|i| i.codes.find(code.key()).is_some()) {
            return Ok(Looked::Item { id: item.id, name: item.name.to_string(), code });
        }
        if let Some(why) = code.unknowable() {
            return Ok(Looked::Products(Products {
                code,
                candidates: Vec::new(),
                asked: Vec::new(),
                cached: false,
                withheld: Some(why),
            }));
        }
        let now = self.clock.now();
        if let Some(kept) = self.cache.cached(code.key(), now).await? {
            return Ok(Looked::Products(Products {
                code,
                candidates: kept.candidates.into_iter().take(CANDIDATES_MAX).collect(),
                asked: kept.asked,
                cached: true,
                withheld: None,
            }));
        }
        let (candidates, asked, failed) = self.ask(&code).await;
        let fetched_at = self.clock.now();
        let kept_for = if !candidates.is_empty() {
            Some(HIT_KEPT)
        } else if !asked.is_empty() && !failed {
            Some(MISS_KEPT)
        } else {
            None
        };
        if let Some(kept_for) = kept_for {
            let lookup = CachedLookup { candidates: candidates.clone(), asked: asked.clone(), fetched_at };
            // The cache is only a saving: failing to keep an answer does not fail the lookup.
            if let Err(e) = self.cache.keep(code.key(), lookup, fetched_at + kept_for).await {
                tracing::warn!(error = %e, "keeping a lookup in the cache failed");
            }
        }
        Ok(Looked::Products(Products {
            code,
            candidates: candidates.into_iter().take(CANDIDATES_MAX).collect(),
            asked,
            cached: false,
            withheld: None,
        }))
    }

    /// Asks every provider that can know `code`, in parallel, for at most the budget: their candidates in the
    /// providers' order, the providers asked, and whether any of them gave no answer (failed, waiting, or past
    /// the budget).
    async fn ask(&self, code: &Code) -> (Vec<SourcedCandidate>, Vec<String>, bool) {
        let asking: Vec<Arc<dyn ProductSource>> = self.sources.iter().filter(|s| s.knows(code)).cloned().collect();
        let asked: Vec<String> = asking.iter().map(|s| s.name()).collect();
        let mut set = tokio::task::JoinSet::new();
        for (index, source) in asking.into_iter().enumerate() {
            let code = code.clone();
            let clock = self.clock.clone();
            set.spawn(async move { (index, source.look_up(&code).await, clock.now()) });
        }
        let mut answers: Vec<Option<(Vec<SourcedCandidate>, bool)>> = vec![None; asked.len()];
        let deadline = tokio::time::Instant::now() + self.budget;
        loop {
            match tokio::time::timeout_at(deadline, set.join_next()).await {
                Ok(Some(Ok((index, answer, fetched_at)))) => {
                    let source = &asked[index];
                    answers[index] = Some(match answer {
                        Ok(found) => (
                            found
                                .into_iter()
                                .map(|candidate| SourcedCandidate { source: source.clone(), candidate, fetched_at })
                                .collect(),
                            false,
                        ),
                        Err(e @ (ProviderFailed::Waiting { .. } | ProviderFailed::Failed { .. })) => {
                            tracing::info!(provider = %source, error = %e, "a lookup provider gave no answer");
                            (Vec::new(), true)
                        }
                    });
                }
                Ok(Some(Err(e))) => tracing::warn!(error = %e, "a lookup provider's task failed"),
                Ok(None) => break,
                Err(_) => {
                    tracing::info!(budget = ?self.budget, "lookup providers past the budget were not waited for");
                    break;
                }
            }
        }
        // Dropping the set stops the providers still asking.
        drop(set);
        let failed = answers.iter().any(|a| a.as_ref().is_none_or(|(_, failed)| *failed));
        let candidates = answers.into_iter().flatten().flat_map(|(found, _)| found).collect();
        (candidates, asked, failed)
    }
}

/// Reads `raw` as a product code (a GTIN or an ISBN; a shop's own code too, which is never sent anywhere).
///
/// # Errors
/// [`Error::Invalid`] naming the problem: letters in a number, a wrong check digit, too many or too few digits.
fn product_code(raw: &str) -> Result<Code, Error> {
    let invalid = |e: trove_domain::code::CodeError| Error::Invalid(e.to_string());
    let code = Code::parse(None, raw).map_err(invalid)?;
    if code.kind() == CodeKind::Other {
        // Letters, or too few digits: read as a GTIN, for the error that names what is wrong.
        Code::parse(Some(CodeKind::Gtin), raw).map_err(invalid)?;
    }
    Ok(code)
}

#[cfg(test)]
mod tests;
