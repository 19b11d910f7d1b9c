//! `notification_settings`: a member's reminder channels, lead time and calendar key.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "notification_settings")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub member_id: i64,
    pub household_id: i64,
    pub email: Option<String>,
    /// A JSON list of notification URLs.
    pub urls: String,
    pub lead_days: i64,
    /// The secret of the member's calendar feed (a read-only capability, shown to them again).
    pub calendar_key: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
