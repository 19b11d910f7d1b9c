//! `templates`: the built-in catalogue (no household) and households' own templates.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "templates")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// `None` for a built-in template, shared by every household.
    pub household_id: Option<i64>,
    pub label: String,
    pub goal: String,
    pub effort: String,
    /// JSON array of strings.
    pub steps: String,
    /// JSON array of the domain's requirements.
    pub requirements: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
