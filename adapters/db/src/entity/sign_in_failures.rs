//! `sign_in_failures`: one row per failed sign-in, for the throttle shared by every process.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sign_in_failures")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The lower-cased name typed (cut to the throttle's longest key).
    pub name_key: String,
    /// The client address, or its IPv6 /64.
    pub address: String,
    pub at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
