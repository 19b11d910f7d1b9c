//! `PriceRepo`: each item's price history.

use crate::Store;
use crate::entity::price_reports;
use crate::mapping::to_json;
use anyhow::Context as _;
use async_trait::async_trait;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use std::collections::HashMap;
use trove_application::RepoError;
use trove_application::ports::PriceRepo;
use trove_domain::pricing::PriceReport;
use trove_domain::{HouseholdId, ItemId};

#[async_trait]
impl PriceRepo for Store {
    async fn add(&self, household: HouseholdId, report: &PriceReport) -> Result<(), RepoError> {
        price_reports::Entity::insert(price_reports::ActiveModel {
            household_id: Set(household.0),
            item_id: Set(report.item_id.0),
            at: Set(report.at),
            report: Set(to_json(report, "price report")?),
            ..Default::default()
        })
        .exec_without_returning(&self.db)
        .await
        .with_context(|| format!("store a price report of item {}", report.item_id))?;
        Ok(())
    }

    async fn history(&self, household: HouseholdId, item: ItemId) -> Result<Vec<PriceReport>, RepoError> {
        let rows = price_reports::Entity::find()
            .filter(price_reports::Column::HouseholdId.eq(household.0))
            .filter(price_reports::Column::ItemId.eq(item.0))
            .order_by_desc(price_reports::Column::At)
            .order_by_desc(price_reports::Column::Id)
            .all(&self.db)
            .await
            .with_context(|| format!("read the price history of item {item}"))?;
        rows.into_iter()
            .map(|r| {
                serde_json::from_str(&r.report)
                    .with_context(|| format!("decode price report {}", r.id))
                    .map_err(RepoError::from)
            })
            .collect()
    }

    async fn latest(&self, household: HouseholdId) -> Result<HashMap<ItemId, PriceReport>, RepoError> {
        // Newest first per item; only the first row of each item is decoded.
        let rows = price_reports::Entity::find()
            .filter(price_reports::Column::HouseholdId.eq(household.0))
            .order_by_asc(price_reports::Column::ItemId)
            .order_by_desc(price_reports::Column::At)
            .order_by_desc(price_reports::Column::Id)
            .all(&self.db)
            .await
            .with_context(|| format!("read the latest price reports of household {household}"))?;
        let mut latest = HashMap::new();
        for r in rows {
            if let std::collections::hash_map::Entry::Vacant(slot) = latest.entry(ItemId(r.item_id)) {
                let report: PriceReport =
                    serde_json::from_str(&r.report).with_context(|| format!("decode price report {}", r.id))?;
                slot.insert(report);
            }
        }
        Ok(latest)
    }
}
