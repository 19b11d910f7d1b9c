//! The value report as CSV: a row per item, for a spreadsheet or an insurer's form. Amounts are decimals in
//! major units ("129.99") beside their currency, never converted; days are `YYYY-MM-DD`; text cells are escaped
//! against formulas like every sheet we write.

use crate::escape_cell;
use trove_application::ports::{ValueDocument, ValueSheet};
use trove_domain::money::Money;
use trove_domain::report::ValueSource;

/// The columns, in order.
pub const VALUE_COLUMNS: [&str; 15] = [
    "id",
    "name",
    "place",
    "room",
    "item_type",
    "quantity",
    "serial",
    "purchase_date",
    "vendor",
    "paid",
    "paid_currency",
    "value_each",
    "value_total",
    "value_currency",
    "value_source",
];

/// The CSV of a value report.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvValueSheet;

impl ValueSheet for CsvValueSheet {
    fn csv(&self, doc: &ValueDocument) -> anyhow::Result<Vec<u8>> {
        write_value(doc)
    }
}

fn amount(m: Option<Money>) -> String {
    m.map(|m| m.amount()).unwrap_or_default()
}

/// Writes `doc` as CSV: a header row of [`VALUE_COLUMNS`], then a row per line of the report, in its order. The
/// value's source is `estimate YYYY-MM-DD` or `by hand YYYY-MM-DD`, empty for an item without a value.
///
/// # Errors
/// Only when the CSV writer fails.
pub fn write_value(doc: &ValueDocument) -> anyhow::Result<Vec<u8>> {
    let mut out = csv::Writer::from_writer(Vec::with_capacity(doc.report.lines.len() * 160 + 256));
    out.write_record(VALUE_COLUMNS)?;
    for line in &doc.report.lines {
        let item = doc.item(line.item);
        let text = |t: &str| escape_cell(t).into_owned();
        let source = line.current.map(|c| match c.source {
            ValueSource::Estimate { at } => format!("estimate {}", at.date_naive()),
            ValueSource::Hand { at } => format!("by hand {}", at.date_naive()),
        });
        out.write_record([
            line.item.0.to_string(),
            text(&item.name),
            text(item.place.as_deref().unwrap_or_default()),
            text(line.room.as_deref().unwrap_or_default()),
            text(&line.item_type),
            line.quantity.to_string(),
            text(item.serial.as_deref().unwrap_or_default()),
            item.purchased.map(|d| d.to_string()).unwrap_or_default(),
            text(item.vendor.as_deref().unwrap_or_default()),
            amount(line.paid),
            line.paid.map(|m| m.currency.to_string()).unwrap_or_default(),
            amount(line.current.map(|c| c.each)),
            amount(line.current_total),
            line.current_total.map(|m| m.currency.to_string()).unwrap_or_default(),
            source.unwrap_or_default(),
        ])?;
    }
    out.into_inner().map_err(|e| anyhow::anyhow!("finishing the csv: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use trove_application::ports::ValuedItem;
    use trove_domain::ItemId;
    use trove_domain::item::Condition;
    use trove_domain::money::Currency;
    use trove_domain::pricing::hand_value;
    use trove_domain::report::value_report;
    use trove_domain::testing::{at, item, path};

    #[test]
    fn a_row_per_item_with_amounts_in_major_units_and_formulas_escaped() {
        let eur = Currency::new("EUR").unwrap();
        let mut drill = item(1, "drill", Condition::Good);
        drill.name = trove_domain::item::ItemName::new("=cmd|' /C calc'!A0").unwrap();
        drill.place_path = path("Garage / Shelf 2");
        drill.quantity = 2;
        let lamp = item(2, "lamp", Condition::Good);
        let latest = HashMap::from([(ItemId(1), hand_value(ItemId(1), at(3), Money { minor: 4_550, currency: eur }))]);
        let report = value_report(&[drill.clone(), lamp.clone()], &latest);
        let facts = |i: &trove_domain::item::Item| ValuedItem {
            name: i.name.to_string(),
            place: i.location(),
            serial: None,
            purchased: None,
            vendor: None,
            photo: None,
            receipts: Vec::new(),
        };
        let doc = ValueDocument {
            household: "Home".into(),
            at: at(4),
            within: None,
            report,
            items: HashMap::from([(ItemId(1), facts(&drill)), (ItemId(2), facts(&lamp))]),
        };
        let bytes = write_value(&doc).unwrap();
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        assert_eq!(reader.headers().unwrap().iter().collect::<Vec<_>>(), VALUE_COLUMNS);
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(rows.len(), 2);
        let cell = |r: usize, c: &str| rows[r][VALUE_COLUMNS.iter().position(|k| *k == c).unwrap()].to_owned();
        assert_eq!(cell(0, "name"), "'=cmd|' /C calc'!A0", "a formula is escaped");
        assert_eq!((cell(0, "place"), cell(0, "room")), ("Garage / Shelf 2".into(), "Garage".into()));
        assert_eq!(
            (cell(0, "value_each"), cell(0, "value_total"), cell(0, "value_currency")),
            ("45.50".into(), "91.00".into(), "EUR".into())
        );
        assert_eq!(cell(0, "value_source"), format!("by hand {}", at(3).date_naive()));
        assert_eq!((cell(1, "value_total"), cell(1, "value_source")), (String::new(), String::new()), "no value");
    }
}
