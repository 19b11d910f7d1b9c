//! `lookup_cache`: what the product providers answered for a code's key, until it expires (derived data, never
//! backed up).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "lookup_cache")]
pub struct Model {
    /// The code's key (`Code::key`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// The candidates and the providers asked, as JSON (`repo::lookup`).
    pub answer: String,
    pub fetched_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
