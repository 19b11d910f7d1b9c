//! DTOs of pricing, drafts, share texts and spend.

use crate::dto::{Condition, RunSpendDto};
use chrono::{DateTime, Utc};
use poem_openapi::Object;
use std::collections::BTreeMap;
use trove_application::spend_report::{SpendReport, Totals};
use trove_domain::listing::ListingDraft;
use trove_domain::pricing::PriceReport;

/// A comparable the rules kept: its page was among the search results or citations.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ComparableDto {
    pub title: String,
    pub url: String,
    /// Integer minor units (pence, cents).
    pub price: i64,
    pub currency: String,
    pub condition: Option<Condition>,
    pub sold: bool,
    pub note: Option<String>,
}

/// A comparable the rules dropped.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct DroppedComparableDto {
    pub url: String,
    pub title: String,
    pub reason: String,
}

/// Low, typical and high, in integer minor units.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct EstimateDto {
    pub low: i64,
    pub typical: i64,
    pub high: i64,
    pub currency: String,
}

/// A price report.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PriceReportDto {
    pub item_id: i64,
    pub at: DateTime<Utc>,
    pub comparables: Vec<ComparableDto>,
    pub dropped: Vec<DroppedComparableDto>,
    /// `null`: too little evidence.
    pub estimate: Option<EstimateDto>,
    pub searches: u32,
    /// What the call cost (only in the answer to `POST .../price`).
    pub spend: Option<RunSpendDto>,
}

impl From<&PriceReport> for PriceReportDto {
    fn from(r: &PriceReport) -> Self {
        Self {
            item_id: r.item_id.0,
            at: r.at,
            comparables: r
                .comparables
                .iter()
                .map(|c| ComparableDto {
                    title: c.title.clone(),
                    url: c.url.clone(),
                    price: c.price.minor,
                    currency: c.price.currency.to_string(),
                    condition: c.condition.map(Into::into),
                    sold: c.sold,
                    note: c.note.clone(),
                })
                .collect(),
            dropped: r
                .dropped
                .iter()
                .map(|d| DroppedComparableDto { url: d.url.clone(), title: d.title.clone(), reason: d.reason.clone() })
                .collect(),
            estimate: r.estimate.map(|e| EstimateDto {
                low: e.low,
                typical: e.typical,
                high: e.high,
                currency: e.currency.to_string(),
            }),
            searches: r.searches,
            spend: None,
        }
    }
}

/// Price history, newest first.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PriceHistory {
    pub prices: Vec<PriceReportDto>,
}

/// A listing draft.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct DraftDto {
    /// At most 80 characters.
    pub title: String,
    pub condition: Condition,
    pub description: String,
    /// The typical price of the latest estimate, in minor units; `null` if never priced.
    pub price: Option<i64>,
    pub currency: Option<String>,
}

impl From<&ListingDraft> for DraftDto {
    fn from(d: &ListingDraft) -> Self {
        Self {
            title: d.title.clone(),
            condition: d.condition.into(),
            description: d.description.clone(),
            price: d.price,
            currency: d.currency.map(|c| c.to_string()),
        }
    }
}

/// A give-away post.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ShareDto {
    /// At most 500 characters.
    pub text: String,
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct SpendEntryDto {
    pub at: DateTime<Utc>,
    pub kind: String,
    pub model: String,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub searches: u32,
    pub cost_micro_usd: i64,
}

/// Totals of some entries.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct TotalsDto {
    pub calls: u64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub searches: u64,
    pub cost_micro_usd: i64,
}

impl From<&Totals> for TotalsDto {
    fn from(t: &Totals) -> Self {
        Self {
            calls: t.calls,
            input_tokens: t.input_tokens,
            cached_tokens: t.cached_tokens,
            output_tokens: t.output_tokens,
            searches: t.searches,
            cost_micro_usd: t.cost.0,
        }
    }
}

/// Totals overall, by kind and by month.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct SpendTotalsDto {
    pub all: TotalsDto,
    pub by_kind: BTreeMap<String, TotalsDto>,
    pub by_month: BTreeMap<String, TotalsDto>,
}

/// The spend ledger.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct SpendDto {
    pub entries: Vec<SpendEntryDto>,
    pub totals: SpendTotalsDto,
    /// `SPEND_MONTHLY_LIMIT_USD` in micro-USD, if set.
    pub monthly_limit_micro_usd: Option<i64>,
    pub this_month_micro_usd: i64,
}

impl From<&SpendReport> for SpendDto {
    fn from(r: &SpendReport) -> Self {
        Self {
            entries: r
                .entries
                .iter()
                .map(|e| SpendEntryDto {
                    at: e.at,
                    kind: e.kind.to_string(),
                    model: e.model.clone(),
                    input_tokens: e.input_tokens,
                    cached_tokens: e.cached_tokens,
                    output_tokens: e.output_tokens,
                    searches: e.searches,
                    cost_micro_usd: e.cost.0,
                })
                .collect(),
            totals: SpendTotalsDto {
                all: (&r.total).into(),
                by_kind: r.by_kind.iter().map(|(k, t)| (k.clone(), t.into())).collect(),
                by_month: r.by_month.iter().map(|(k, t)| (k.clone(), t.into())).collect(),
            },
            monthly_limit_micro_usd: r.monthly_limit.map(|m| m.0),
            this_month_micro_usd: r.this_month.0,
        }
    }
}
