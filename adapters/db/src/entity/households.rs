//! `households`: every object belongs to one.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "households")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// Unique: `ensure_household` finds a household by name.
    pub name: String,
    pub created_at: DateTimeUtc,
    /// The key webhook bodies are signed with (hex), made when first needed.
    pub notify_secret: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
