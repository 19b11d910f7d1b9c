//! `media`: the photos, receipts, manuals and other files kept on items (or pending, on no item). The bytes are
//! in the media store, named by `sha256`; the words (`kind`, `media_type`) are the domain's.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "media")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    /// `None` while pending: kept from intake, on no item yet.
    pub item_id: Option<i64>,
    pub kind: String,
    pub media_type: String,
    pub bytes: i64,
    pub width: Option<i32>,
    pub height: Option<i32>,
    /// The blob's SHA-256 in lower-case hex.
    pub sha256: String,
    /// The thumbnail's blob, once made.
    pub thumb_sha256: Option<String>,
    pub caption: Option<String>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
