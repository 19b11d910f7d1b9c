//! `maintenance`: the log of maintenance done.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "maintenance")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub item_id: i64,
    pub schedule_id: Option<i64>,
    pub title: String,
    pub at: Date,
    pub note: Option<String>,
    pub cost_minor: Option<i64>,
    pub cost_currency: Option<String>,
    pub member_id: Option<i64>,
    pub recorded_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
