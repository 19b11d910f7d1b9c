//! `item_codes`: the index of present items' codes by key, unique per household (`m0021_item_codes`).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "item_codes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub item_id: i64,
    /// `gtin`, `isbn` or `other` (`trove_domain::code::CodeKind::as_str`).
    pub kind: String,
    /// `Code::key`: what a household's codes are unique by and searched by.
    pub key: String,
    /// `Code::shown`: the code as a person reads it.
    pub value: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
