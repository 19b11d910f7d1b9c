//! `events`: the history, one row per change; `changes` is the JSON list of field changes.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub at: DateTimeUtc,
    /// `None`: the command line.
    pub member_id: Option<i64>,
    pub action: String,
    pub object_kind: String,
    pub object_id: i64,
    /// `[{"field", "before", "after"}]`.
    pub changes: String,
    pub version_after: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
