//! `members`: the people of households.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "members")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub name: String,
    /// Unique across the instance: the domain's `MemberName::key` (the name in lower case).
    pub name_key: String,
    /// `owner`, `member` or `viewer`.
    pub role: String,
    /// Argon2id PHC string; null for a member made by the command line.
    pub password_hash: Option<String>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
