//! `SpendLedger`: one entry per model call.

use crate::Store;
use crate::entity::spend_entries;
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use trove_application::RepoError;
use trove_application::ports::SpendLedger;
use trove_application::ports::spend::SpendTotal;
use trove_domain::money::MicroUsd;
use trove_domain::people::MemberId;
use trove_domain::spend::{CallKind, CallOutcome, SpendEntry};
use trove_domain::{HouseholdId, Timestamp};

fn count(n: u64, what: &str) -> anyhow::Result<i64> {
    i64::try_from(n).map_err(|_| anyhow!("{what} {n} does not fit the ledger"))
}

fn unsigned(n: i64, what: &str, row: i64) -> anyhow::Result<u64> {
    u64::try_from(n).map_err(|_| anyhow!("negative {what} in spend entry {row}"))
}

fn entry(m: spend_entries::Model) -> anyhow::Result<SpendEntry> {
    let id = m.id;
    Ok(SpendEntry {
        at: m.at,
        kind: CallKind::parse(&m.kind).ok_or_else(|| anyhow!("unknown call kind {:?} in spend entry {id}", m.kind))?,
        model: m.model,
        input_tokens: unsigned(m.input_tokens, "input tokens", id)?,
        cached_tokens: unsigned(m.cached_tokens, "cached tokens", id)?,
        output_tokens: unsigned(m.output_tokens, "output tokens", id)?,
        searches: u32::try_from(m.searches).map_err(|_| anyhow!("bad search count in spend entry {id}"))?,
        cost: MicroUsd(m.cost_micro_usd),
        outcome: CallOutcome::parse(&m.outcome)
            .ok_or_else(|| anyhow!("unknown outcome {:?} in spend entry {id}", m.outcome))?,
        member: m.member_id.map(MemberId),
    })
}

#[async_trait]
impl SpendLedger for Store {
    async fn record(&self, household: HouseholdId, e: &SpendEntry) -> Result<(), RepoError> {
        spend_entries::Entity::insert(spend_entries::ActiveModel {
            household_id: Set(household.0),
            at: Set(e.at),
            kind: Set(e.kind.as_str().to_owned()),
            model: Set(e.model.clone()),
            input_tokens: Set(count(e.input_tokens, "input tokens")?),
            cached_tokens: Set(count(e.cached_tokens, "cached tokens")?),
            output_tokens: Set(count(e.output_tokens, "output tokens")?),
            searches: Set(i64::from(e.searches)),
            cost_micro_usd: Set(e.cost.0),
            outcome: Set(e.outcome.as_str().to_owned()),
            member_id: Set(e.member.map(|m| m.0)),
            ..Default::default()
        })
        .exec_without_returning(&self.db)
        .await
        .context("record spend entry")?;
        Ok(())
    }

    async fn entries(
        &self,
        household: HouseholdId,
        from: Option<Timestamp>,
        to: Option<Timestamp>,
    ) -> Result<Vec<SpendEntry>, RepoError> {
        let mut select = spend_entries::Entity::find().filter(spend_entries::Column::HouseholdId.eq(household.0));
        if let Some(from) = from {
            select = select.filter(spend_entries::Column::At.gte(from));
        }
        if let Some(to) = to {
            select = select.filter(spend_entries::Column::At.lt(to));
        }
        let rows = select
            .order_by_asc(spend_entries::Column::At)
            .order_by_asc(spend_entries::Column::Id)
            .all(&self.db)
            .await
            .context("read spend entries")?;
        Ok(rows.into_iter().map(entry).collect::<anyhow::Result<Vec<_>>>()?)
    }

    async fn total_since(&self, household: HouseholdId, since: Timestamp) -> Result<MicroUsd, RepoError> {
        // SUM of a BIGINT is NUMERIC on PostgreSQL: cast it back so both backends answer an integer.
        let total: Option<i64> = spend_entries::Entity::find()
            .select_only()
            .column_as(Expr::cust("CAST(COALESCE(SUM(cost_micro_usd), 0) AS BIGINT)"), "total")
            .filter(spend_entries::Column::HouseholdId.eq(household.0))
            .filter(spend_entries::Column::At.gte(since))
            .into_tuple()
            .one(&self.db)
            .await
            .context("sum spend")?;
        Ok(MicroUsd(total.unwrap_or(0)))
    }

    async fn totals(&self) -> Result<Vec<SpendTotal>, RepoError> {
        let rows: Vec<(String, String, i64, i64)> = spend_entries::Entity::find()
            .select_only()
            .column(spend_entries::Column::Kind)
            .column(spend_entries::Column::Outcome)
            .column_as(Expr::cust("CAST(COUNT(*) AS BIGINT)"), "calls")
            .column_as(Expr::cust("CAST(COALESCE(SUM(cost_micro_usd), 0) AS BIGINT)"), "cost")
            .group_by(spend_entries::Column::Kind)
            .group_by(spend_entries::Column::Outcome)
            .into_tuple()
            .all(&self.db)
            .await
            .context("count spend by kind and outcome")?;
        let totals = rows
            .into_iter()
            .map(|(kind, outcome, calls, cost)| {
                Ok(SpendTotal {
                    kind: CallKind::parse(&kind).ok_or_else(|| anyhow!("unknown call kind {kind:?} in the ledger"))?,
                    outcome: CallOutcome::parse(&outcome)
                        .ok_or_else(|| anyhow!("unknown outcome {outcome:?} in the ledger"))?,
                    calls: u64::try_from(calls).context("a count")?,
                    cost: MicroUsd(cost),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(totals)
    }
}
