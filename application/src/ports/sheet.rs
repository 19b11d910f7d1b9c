//! Item sheets: the inventory as a file of rows (CSV), read and written. Pure conversion, no I/O: the use case
//! reads the store and the adapter only turns rows into items and back.

use trove_domain::Timestamp;
use trove_domain::item::{Item, NewItem};

/// A row of a sheet that cannot be an item. Nothing of the sheet is imported then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SheetError {
    /// The line of the file the row starts on (the header is line 1).
    pub line: u64,
    pub message: String,
}

/// The items of a sheet, ready to import.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SheetItems {
    /// Every row that is an item, in file order; each with an `import_ref` so a re-import updates it.
    pub items: Vec<NewItem>,
    /// Rows left out on purpose (items that were gone when exported: history is not imported).
    pub skipped: u64,
    /// Which format the sheet was read as ("trove" or "homebox").
    pub format: &'static str,
}

/// What one row of a sheet would be ([`ItemSheet::preview`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RowRead {
    /// An item to import.
    Item(Box<NewItem>),
    /// A row of an item that was gone when exported: left out.
    Gone,
    /// A row that cannot be an item, and why.
    Refused(String),
}

/// One row of a sheet, by the line of the file it starts on (the header is line 1).
#[derive(Debug, Clone, PartialEq)]
pub struct SheetRow {
    pub line: u64,
    pub read: RowRead,
}

/// Every row of a sheet, read without stopping at a bad one.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SheetPreview {
    /// Which format the sheet was read as ("trove" or "homebox").
    pub format: &'static str,
    /// Every row that is not blank, in file order.
    pub rows: Vec<SheetRow>,
}

/// Reads and writes item sheets.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
pub trait ItemSheet: Send + Sync {
    /// Reads every row of `bytes`, whose format the header tells; measurements read are dated `at`.
    ///
    /// # Errors
    /// MUST return a [`SheetError`] naming the line of the first row that cannot be an item (or line 1 for a
    /// header it does not know), having read nothing into the store.
    fn read(&self, bytes: &[u8], at: Timestamp) -> Result<SheetItems, SheetError>;

    /// Reads every row of `bytes` as [`ItemSheet::read`] does, without stopping at a bad row: what an import
    /// would make of each.
    ///
    /// # Errors
    /// MUST return a [`SheetError`] only for what stops every row from being read: a header of neither format,
    /// a file that is not CSV.
    fn preview(&self, bytes: &[u8], at: Timestamp) -> Result<SheetPreview, SheetError>;

    /// Writes `items` as a sheet that [`ItemSheet::read`] reads back to the same items.
    ///
    /// # Errors
    /// Only when writing fails.
    fn write(&self, items: &[Item]) -> anyhow::Result<Vec<u8>>;
}
