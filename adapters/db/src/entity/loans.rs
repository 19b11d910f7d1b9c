//! `loans`: items lent, open and returned.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "loans")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub item_id: i64,
    pub units: i64,
    /// A borrower of the household, or none (then `borrower_name` names them).
    pub member_id: Option<i64>,
    /// The borrower's name (a member's name as it was when lent).
    pub borrower_name: String,
    pub contact: Option<String>,
    pub since: Date,
    pub due: Option<Date>,
    pub note: Option<String>,
    pub returned_at: Option<DateTimeUtc>,
    pub created_by: Option<i64>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
