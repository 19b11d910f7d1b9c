//! `invitations`: one-time codes into a household, by hash, with who made them and whether they were used or
//! revoked.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "invitations")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    /// Unique: SHA-256 of the code.
    pub code_hash: String,
    pub role: String,
    pub created_by: Option<i64>,
    pub created_at: DateTimeUtc,
    pub used_at: Option<DateTimeUtc>,
    pub used_by: Option<i64>,
    /// When an owner revoked it (`m0014_invitation_revocations`).
    pub revoked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
