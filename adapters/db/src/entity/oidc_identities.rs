//! `oidc_identities`: the OpenID provider accounts members sign in with, by issuer and subject.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "oidc_identities")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub member_id: i64,
    /// The provider's issuer URL, as its ID tokens name it.
    pub issuer: String,
    /// The account's `sub` at that issuer: with the issuer, unique across the instance.
    pub subject: String,
    /// A mapped group brought the account in (not an invitation): it keeps access only while in one.
    pub by_group: bool,
    pub created_at: DateTimeUtc,
    pub last_used_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
