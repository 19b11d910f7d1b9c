//! `spend_entries`: one row per model call.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "spend_entries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub at: DateTimeUtc,
    pub kind: String,
    pub model: String,
    pub input_tokens: i64,
    pub cached_tokens: i64,
    pub output_tokens: i64,
    pub searches: i64,
    pub cost_micro_usd: i64,
    /// "ok" or "failed" (`CallOutcome`); rows written before `m0004_spend_outcome` read "ok".
    pub outcome: String,
    /// The member who asked; null for the command line and rows from before `m0009_spend_member`.
    pub member_id: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
