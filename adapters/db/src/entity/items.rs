//! `items`: the inventory. Lists and documents (measurements, faults, ...) are JSON text of the domain's serde
//! types; the words (condition, intent, ...) are the domain's `as_str` words.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "items")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub name: String,
    pub item_type: String,
    pub profile: String,
    pub condition: String,
    pub intent: String,
    pub availability: String,
    /// The project holding the item while it is reserved or in use.
    pub project_id: Option<i64>,
    pub gone_reason: Option<String>,
    pub gone_at: Option<DateTimeUtc>,
    pub gone_note: Option<String>,
    pub measurements: String,
    pub faults: String,
    pub tests_done: String,
    pub accessories: String,
    pub components: String,
    /// The place the item is in; its path is the item's `location`.
    pub place_id: Option<i64>,
    /// Unique per household when set, so a re-import updates instead of duplicating.
    pub import_ref: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// Bumped by every write; writes are conditional on it.
    pub version: i64,
    /// The names of the place's path, for the full-text index (`crate::search`); written with the item and
    /// when a place above it is renamed or moved.
    pub search_place: String,
    /// The gone note, the faults' texts, the tests' names and notes, and the item's notes, tags and serial, for
    /// the full-text index.
    pub search_notes: String,
    /// Like units (1 for a single thing).
    pub quantity: i64,
    pub min_quantity: Option<i64>,
    /// A JSON list of the tags.
    pub tags: String,
    /// A JSON document of `ItemDetails`.
    pub details: String,
    /// Units of a stock held by accepted projects; kept by the project lifecycle's writes only.
    pub units_held: i64,
    /// Units of a stock out on loan; kept by lending and returning only.
    pub units_lent: i64,
    /// JSON of the open loan the item shows (`trove_domain::loan::OnLoan`), kept with the loans.
    pub loan: Option<String>,
    /// A JSON list of the item's codes, `{kind, value}` (`trove_domain::code::Codes`); `item_codes` indexes them.
    pub codes: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
