//! `oidc_sign_ins`: each single sign-on sent to the provider and not yet back, by the hash of its `state`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "oidc_sign_ins")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Unique: the sign-in is found by the hash of the `state` the provider sends back.
    pub state_hash: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// The PKCE code verifier the code is exchanged with.
    pub verifier: String,
    /// The hash of the invitation's code, when the sign-in joins a household from one.
    pub invitation_hash: Option<String>,
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
