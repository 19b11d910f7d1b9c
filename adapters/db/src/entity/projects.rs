//! `projects`: what the rules wrote from proposals, and where each is in its life.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "projects")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub template_id: i64,
    pub title: String,
    pub reason: String,
    /// `proposed`, `accepted`, `built` or `dropped`; lifecycle writes are conditional on it.
    pub status: String,
    /// JSON array of the domain's allocations.
    pub allocations: String,
    /// JSON array of requirement keys.
    pub missing: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
