//! The spend ledger: every model call, totals by kind, by month and by member, and the budget.

use crate::auth::Member;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use chrono::{DateTime, Utc};
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::{Enum, Object, OpenApi, Tags};
use std::collections::BTreeMap;
use trove_application::spend_report::{MemberSpend, SpendReport, Totals};
use trove_domain::spend::CallOutcome;

#[derive(Tags)]
enum Tag {
    /// The spend ledger.
    Spend,
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
    /// `ok`, or `failed` for a call that failed (it is an entry even when it cost nothing).
    pub outcome: CallOutcomeDto,
}

/// How a model call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
#[oai(rename_all = "snake_case")]
pub enum CallOutcomeDto {
    Ok,
    Failed,
    /// Sent, and no whole answer came back (timed out, connection broken): its tokens are estimated.
    Unanswered,
}

impl From<CallOutcome> for CallOutcomeDto {
    fn from(o: CallOutcome) -> Self {
        match o {
            CallOutcome::Ok => Self::Ok,
            CallOutcome::Failed => Self::Failed,
            CallOutcome::Unanswered => Self::Unanswered,
        }
    }
}

/// Totals of some entries.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct TotalsDto {
    /// Every call, failed ones included.
    pub calls: u64,
    /// The calls that failed (counted in `calls` too), whether or not they cost anything.
    pub failed_calls: u64,
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
            failed_calls: t.failed_calls,
            input_tokens: t.input_tokens,
            cached_tokens: t.cached_tokens,
            output_tokens: t.output_tokens,
            searches: t.searches,
            cost_micro_usd: t.cost.0,
        }
    }
}

/// The member who asked for calls.
#[derive(Debug, Clone, PartialEq, Eq, Object)]
pub struct SpendMember {
    pub id: i64,
    /// `former member` for one removed since.
    pub name: String,
}

/// What one member's calls cost.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct MemberSpendDto {
    /// `null`: the command line (and calls from before members).
    pub member: Option<SpendMember>,
    #[oai(flatten)]
    pub totals: TotalsDto,
}

impl From<&MemberSpend> for MemberSpendDto {
    fn from(m: &MemberSpend) -> Self {
        Self {
            member: m.member.as_ref().map(|(id, name)| SpendMember { id: id.0, name: name.clone() }),
            totals: (&m.totals).into(),
        }
    }
}

/// Totals overall, by kind, by month and by member.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct SpendTotalsDto {
    pub all: TotalsDto,
    pub by_kind: BTreeMap<String, TotalsDto>,
    pub by_month: BTreeMap<String, TotalsDto>,
    /// By the member who asked: the command line first, then members by id.
    pub by_member: Vec<MemberSpendDto>,
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
                    outcome: e.outcome.into(),
                })
                .collect(),
            totals: SpendTotalsDto {
                all: (&r.total).into(),
                by_kind: r.by_kind.iter().map(|(k, t)| (k.clone(), t.into())).collect(),
                by_month: r.by_month.iter().map(|(k, t)| (k.clone(), t.into())).collect(),
                by_member: r.by_member.iter().map(Into::into).collect(),
            },
            monthly_limit_micro_usd: r.monthly_limit.map(|m| m.0),
            this_month_micro_usd: r.this_month.0,
        }
    }
}

/// The spend route.
pub struct SpendApi(pub Services);

#[OpenApi(tag = "Tag::Spend")]
impl SpendApi {
    /// The spend ledger: entries with `from <= at < to`, totals by kind, by month and by the member who asked
    /// (`totals.by_member`), and the budget.
    #[oai(path = "/spend", method = "get")]
    async fn spend(
        &self,
        Member(h): Member,
        /// The first instant of the entries (inclusive); must not be after `to` (400).
        from: Query<Option<DateTime<Utc>>>,
        /// The end of the entries (exclusive); must not be before `from` (400).
        to: Query<Option<DateTime<Utc>>>,
    ) -> ApiResult<Json<SpendDto>> {
        Ok(Json((&self.0.spend.report(h, from.0, to.0).await.map_err(ApiError::from)?).into()))
    }
}
