//! `tokens`: members' personal API tokens, by hash.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "tokens")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Unique: a token is looked up by its hash.
    pub hash: String,
    pub household_id: i64,
    /// What the token is for ("backup script").
    pub name: String,
    pub created_at: DateTimeUtc,
    /// Null only between the migration's steps: every token belongs to a member.
    pub member_id: Option<i64>,
    /// `read` or `write`.
    pub scope: String,
    pub expires_at: Option<DateTimeUtc>,
    pub last_used_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
