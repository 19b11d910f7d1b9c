//! `passkey_ceremonies`: the server's half of each passkey ceremony in progress, by the hash of its id.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "passkey_ceremonies")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Unique: a ceremony is found by the hash of the id its start answered.
    pub id_hash: String,
    /// `sign_up`, `sign_in` or `add`.
    pub purpose: String,
    /// The member signing in (`sign_in`, null for an unknown name) or adding a passkey (`add`).
    pub member_id: Option<i64>,
    /// The hash of the invitation's code (`sign_up`).
    pub invitation_hash: Option<String>,
    /// The new member's name (`sign_up`), the name typed (`sign_in`) or the new passkey's name (`add`).
    pub name: Option<String>,
    pub user_handle: Option<String>,
    /// The WebAuthn adapter's serialised state (the challenge).
    pub state: String,
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
