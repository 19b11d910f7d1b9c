//! `passkeys`: the WebAuthn credentials members sign in with.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "passkeys")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub member_id: i64,
    /// What the member calls it ("phone").
    pub name: String,
    /// Unique across the instance: base64url, as the browser sends it.
    pub credential_id: String,
    /// The member's WebAuthn user handle (the same on all their passkeys).
    pub user_handle: String,
    /// The key, serialised by the WebAuthn adapter (public key, counter, flags).
    pub passkey: String,
    pub created_at: DateTimeUtc,
    pub last_used_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
