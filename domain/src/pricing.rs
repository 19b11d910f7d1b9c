//! Pricing: which comparables the web backs (the grounding rule) and what they say an item is worth.

use crate::Timestamp;
use crate::ids::ItemId;
use crate::item::Condition;
use crate::money::{Currency, Money};
use serde::{Deserialize, Serialize};

/// A comparable listing or sale the model found, after its price was read into minor units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparable {
    pub title: String,
    pub url: String,
    pub price: Money,
    /// The comparable's condition, when the page says.
    pub condition: Option<Condition>,
    /// A sold price (true) or an asking price (false).
    pub sold: bool,
    pub note: Option<String>,
}

/// A comparable the rules did not keep, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DroppedComparable {
    pub url: String,
    pub title: String,
    pub reason: String,
}

/// What the kept comparables say an item is worth, in the item's currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimate {
    pub low: i64,
    pub typical: i64,
    pub high: i64,
    pub currency: Currency,
}

/// One pricing of one item: stored as its price history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriceReport {
    pub item_id: ItemId,
    pub at: Timestamp,
    pub comparables: Vec<Comparable>,
    pub dropped: Vec<DroppedComparable>,
    /// `None`: too little evidence.
    pub estimate: Option<Estimate>,
    pub searches: u32,
}
