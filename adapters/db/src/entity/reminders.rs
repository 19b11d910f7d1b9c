//! `reminders`: one reminder per member, thing and channel, and how its delivery went.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "reminders")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub household_id: i64,
    pub member_id: i64,
    /// The thing and the lead time (`trove_domain::loan::Due::key`, then `@lead`).
    pub key: String,
    /// `email:<address>` or the notification URL.
    pub channel: String,
    pub item_id: i64,
    pub subject: String,
    pub body: String,
    /// `pending`, `sent` or `failed` (given up).
    pub status: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub created_at: DateTimeUtc,
    pub next_try_at: DateTimeUtc,
    /// Until when a process that claimed it is delivering it.
    pub claimed_until: Option<DateTimeUtc>,
    pub sent_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
