//! Documents made of a household's figures: the value report as a PDF an insurer is sent, and as CSV.

use std::collections::HashMap;
use trove_domain::media::Medium;
use trove_domain::report::ValueReport;
use trove_domain::{ItemId, MediaId, Timestamp};

/// What the value report says of one item besides its figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValuedItem {
    pub name: String,
    /// Its place's path ("Garage / Shelf 2"); `None` for an item in no place.
    pub place: Option<String>,
    pub serial: Option<String>,
    pub purchased: Option<chrono::NaiveDate>,
    pub vendor: Option<String>,
    /// Its first photo, if it has one.
    pub photo: Option<MediaId>,
    /// Its receipts, oldest first.
    pub receipts: Vec<Medium>,
}

/// The value report as a document: whose, when, of what, its figures and every item's facts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueDocument {
    /// The household's name.
    pub household: String,
    pub at: Timestamp,
    /// The place the report is limited to (its path), or `None` for the whole household.
    pub within: Option<String>,
    pub report: ValueReport,
    /// The facts of every item of `report.lines`.
    pub items: HashMap<ItemId, ValuedItem>,
}

impl ValueDocument {
    /// The facts of `item`, one of the report's.
    ///
    /// # Panics
    /// For an item not in the report: a document is made with the facts of each of its lines.
    pub fn item(&self, item: ItemId) -> &ValuedItem {
        &self.items[&item]
    }
}

/// Makes the PDF of a value report. Synchronous: it is CPU work, which async callers run on a blocking thread.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait ValuePrinter: Send + Sync {
    /// The report as an insurer is sent it: a cover with the household, the date and the totals per currency; a
    /// section per place with each item's figures and its photo's thumbnail (from `thumbs`, JPEG bytes by item;
    /// an item without one has none); an annex listing every receipt.
    ///
    /// # Errors
    /// Only when a thumbnail is not a JPEG it can read.
    fn pdf(&self, doc: &ValueDocument, thumbs: &HashMap<ItemId, Vec<u8>>) -> anyhow::Result<Vec<u8>>;
}

/// Writes a value report as CSV: a row per item. Synchronous.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait ValueSheet: Send + Sync {
    /// One row per line of the report, in its order, with a header row; amounts in major units with their
    /// currency in a column of their own.
    ///
    /// # Errors
    /// Only when writing fails.
    fn csv(&self, doc: &ValueDocument) -> anyhow::Result<Vec<u8>>;
}
