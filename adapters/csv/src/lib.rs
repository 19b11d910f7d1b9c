//! Trove's item sheets as CSV: our own export (read back by our import), and the import of a Homebox CSV
//! export. Implements [`ItemSheet`].
//!
//! Our format has one row per item: `id, name, item_type, profile, condition, intent, availability, location,
//! gone_reason, accessories, faults, tests`, what is recorded by hand (`quantity, min_quantity, tags, notes,
//! serial, purchase_date, purchase_price, purchase_currency, purchase_vendor, warranty_until, asking_price,
//! asking_currency`: prices in minor units, days as `YYYY-MM-DD`; a sheet written before these columns imports
//! as one unit with nothing recorded), its `codes` (`kind:code` joined by `;`, `gtin:4006381333931;isbn:
//! 9780306406157`; a code alone is read as its text reads, and a wrong check digit refuses the row), then one column `field.<key>` per measured field, holding the
//! current value as `value unit` ("3400 mAh"). Lists (accessories, faults, tests) are JSON arrays in their cell,
//! so any text round-trips. On import:
//! - the `id` becomes the import reference `trove:<id>`, so importing the same file again updates instead of
//!   duplicating;
//! - a gone item is history and is skipped (counted);
//! - `reserved` and `in_use` come back as `available` (the projects that held them do not travel);
//! - fields are dated at the import and recorded as `manual`; components (ids of this store) are not kept.
//!
//! Cells are safe to open in a spreadsheet (OWASP's advice on CSV injection): a text cell that starts with `=`,
//! `+`, `-`, `@`, a tab or a carriage return, which a spreadsheet would run as a formula, is written with a `'`
//! in front, and so is one that starts with `'` itself. On import, a cell that starts with `'` followed by one
//! of those characters (or another `'`) loses that first `'`, so a round trip gives back exactly what was
//! exported, and a hand-written `'Tis` keeps its apostrophe. Numbers are not text: the `id` and the
//! `field.<key>` cells (`-40 °C`) are written from numbers and a unit symbol, never from free text, so they are
//! written as they are and a leading `-` stays a sign (an escaped field cell is read too).
//!
//! A Homebox export (`HB.*` columns) maps as: name from `HB.name`; profile from manufacturer and model number,
//! description, serial (`serial X`, so matching finds it), custom fields that are not quantities, and notes;
//! `item_type` from a custom field `type`/`item_type`/`kind`/`category` or the first label, to lower_snake_case,
//! else `other`; condition from a custom field `condition`, else `good`; intent `keep`; location from
//! `HB.location`; custom fields that read as quantities ("5 V", "2TB") become measurements; `HB.quantity` is the
//! quantity, `HB.labels` the tags, `HB.notes` the notes, `HB.serial_number` the serial (and in the profile, so
//! matching finds it), `HB.purchase_time`/`HB.purchase_from` the purchase's day and vendor, `HB.warranty_expires`
//! the warranty's end; `HB.purchase_price` is kept only with a `HB.purchase_currency` column (Homebox's sheet has
//! no currency, and none is guessed); the import reference is `HB.import_ref`, else `hb-asset:<HB.asset_id>`. Archived and sold rows
//! are history and are skipped.

mod value;
pub use value::{CsvValueSheet, VALUE_COLUMNS, write_value};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use trove_application::ports::sheet::{ItemSheet, RowRead, SheetError, SheetItems, SheetPreview, SheetRow};
use trove_domain::Timestamp;
use trove_domain::code::Codes;
use trove_domain::item::{
    self as di, Availability, Condition, Fault, FieldKey, Intent, Item, ItemName, ItemType, Measurement,
    MeasurementSource, NewItem, Severity, TestDone, TestResult,
};
use trove_domain::text::{clip, to_snake_case};
use trove_domain::units::{self, Quantity};

/// The fixed columns of our format, in order; `field.<key>` columns follow.
pub const COLUMNS: [&str; 25] = [
    "id",
    "name",
    "item_type",
    "profile",
    "condition",
    "intent",
    "availability",
    "location",
    "gone_reason",
    "accessories",
    "faults",
    "tests",
    "quantity",
    "min_quantity",
    "tags",
    "notes",
    "serial",
    "purchase_date",
    "purchase_price",
    "purchase_currency",
    "purchase_vendor",
    "warranty_until",
    "asking_price",
    "asking_currency",
    "codes",
];
/// The prefix of a field column.
pub const FIELD_PREFIX: &str = "field.";

/// The first characters that make a spreadsheet read a cell as a formula (OWASP), and the escape itself.
const FORMULA_START: [char; 7] = ['=', '+', '-', '@', '\t', '\r', '\''];

/// A text cell as written: with a `'` in front when it starts with one of [`FORMULA_START`].
///
/// ```
/// assert_eq!(trove_csv::escape_cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
/// assert_eq!(trove_csv::escape_cell("'Tis"), "''Tis");
/// assert_eq!(trove_csv::escape_cell("Pi 4"), "Pi 4");
/// ```
pub fn escape_cell(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(FORMULA_START) { format!("'{text}").into() } else { text.into() }
}

/// A cell as read: [`escape_cell`] undone. Only a `'` before one of [`FORMULA_START`] is an escape.
///
/// ```
/// assert_eq!(trove_csv::unescape_cell("'=1+1"), "=1+1");
/// assert_eq!(trove_csv::unescape_cell("''Tis"), "'Tis");
/// assert_eq!(trove_csv::unescape_cell("'Tis"), "'Tis");
/// ```
pub fn unescape_cell(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if rest.starts_with(FORMULA_START) => rest,
        _ => cell,
    }
}

/// The CSV item sheet.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvSheet;

impl ItemSheet for CsvSheet {
    fn preview(&self, bytes: &[u8], at: Timestamp) -> Result<SheetPreview, SheetError> {
        preview(bytes, at)
    }

    fn read(&self, bytes: &[u8], at: Timestamp) -> Result<SheetItems, SheetError> {
        read(bytes, at, &mut |_| {})
    }

    fn write(&self, items: &[Item]) -> anyhow::Result<Vec<u8>> {
        write(items)
    }
}

/// Writes items in our format.
///
/// # Errors
/// Only when the CSV writer fails.
pub fn write(items: &[Item]) -> anyhow::Result<Vec<u8>> {
    let keys: BTreeSet<String> = items
        .iter()
        .flat_map(|i| i.current_fields().into_keys().map(ToString::to_string).collect::<Vec<_>>())
        .collect();
    let mut out = csv::Writer::from_writer(Vec::with_capacity(items.len() * 200 + 256));
    let header: Vec<String> =
        COLUMNS.iter().map(|c| (*c).to_owned()).chain(keys.iter().map(|k| format!("{FIELD_PREFIX}{k}"))).collect();
    out.write_record(&header)?;
    for item in items {
        let fields = item.current_fields();
        let faults: Vec<Value> =
            item.faults.iter().map(|f| json!({"text": f.text, "severity": f.severity.as_str()})).collect();
        let tests: Vec<Value> = item
            .tests_done
            .iter()
            .map(|t| {
                json!({"name": t.name, "result": t.result.as_str(), "value": t.value.map(|q| q.to_string()),
                       "at": t.at.to_rfc3339(), "note": t.note})
            })
            .collect();
        let texts = [
            item.name.to_string(),
            item.item_type.to_string(),
            item.profile.clone(),
            item.condition.as_str().to_owned(),
            item.intent.as_str().to_owned(),
            item.availability.as_str().to_owned(),
            item.location().unwrap_or_default(),
            item.gone.as_ref().map(|g| g.reason.as_str().to_owned()).unwrap_or_default(),
            list_cell(&item.accessories.iter().map(|a| json!(a)).collect::<Vec<_>>()),
            list_cell(&faults),
            list_cell(&tests),
        ];
        // The id, the counts, the prices, the days and the field cells are numbers or dates, written as they are;
        // every other cell is text, escaped.
        let mut row: Vec<String> = vec![item.id.0.to_string()];
        row.extend(texts.iter().map(|t| escape_cell(t).into_owned()));
        let d = &item.details;
        let purchase = d.purchase.as_ref();
        let price = purchase.and_then(|p| p.price);
        row.extend([
            item.quantity.to_string(),
            item.min_quantity.map(|q| q.to_string()).unwrap_or_default(),
            escape_cell(&list_cell(&item.tags.as_slice().iter().map(|t| json!(t)).collect::<Vec<_>>())).into_owned(),
            escape_cell(&d.notes).into_owned(),
            escape_cell(d.serial.as_deref().unwrap_or_default()).into_owned(),
            purchase.and_then(|p| p.date).map(|d| d.to_string()).unwrap_or_default(),
            price.map(|m| m.minor.to_string()).unwrap_or_default(),
            price.map(|m| m.currency.to_string()).unwrap_or_default(),
            escape_cell(purchase.and_then(|p| p.vendor.as_deref()).unwrap_or_default()).into_owned(),
            d.warranty_until.map(|d| d.to_string()).unwrap_or_default(),
            d.asking_price.map(|m| m.minor.to_string()).unwrap_or_default(),
            d.asking_price.map(|m| m.currency.to_string()).unwrap_or_default(),
            escape_cell(&item.codes.joined()).into_owned(),
        ]);
        for key in &keys {
            let value = fields.iter().find(|(k, _)| k.as_str() == key).map(|(_, m)| m.quantity().to_string());
            row.push(value.unwrap_or_default());
        }
        out.write_record(&row)?;
    }
    out.into_inner().map_err(|e| anyhow::anyhow!("finishing the csv: {e}"))
}

/// A list as a JSON array in one cell; empty for an empty list.
fn list_cell(values: &[Value]) -> String {
    if values.is_empty() { String::new() } else { Value::Array(values.to_vec()).to_string() }
}

/// The format a header tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Trove,
    Homebox,
}

/// One row by column name.
struct Row<'a> {
    columns: &'a HashMap<String, usize>,
    record: &'a csv::StringRecord,
}

impl Row<'_> {
    /// The trimmed cell of a column, its escape undone ([`unescape_cell`]); empty when the column or the cell
    /// is missing.
    fn get(&self, column: &str) -> &str {
        self.columns.get(column).and_then(|i| self.record.get(*i)).map_or("", |c| unescape_cell(c.trim()))
    }

    fn given(&self, column: &str) -> Option<&str> {
        Some(self.get(column)).filter(|v| !v.is_empty())
    }
}

/// Reads a sheet of either format, calling `progress` with the count of rows read so far every 1,000 rows and
/// at the end.
///
/// # Errors
/// A [`SheetError`] with the line of the first bad row, or line 1 for a header of neither format.
pub fn read(bytes: &[u8], at: Timestamp, progress: &mut dyn FnMut(u64)) -> Result<SheetItems, SheetError> {
    read_from(bytes, at, progress)
}

/// Reads a sheet of either format from `source` as [`read`] does, a buffer at a time: the file is never held
/// whole, only the items read from it.
///
/// # Errors
/// A [`SheetError`] with the line of the first bad row, or line 1 for a header of neither format or a source
/// that cannot be read.
pub fn read_from(
    source: impl std::io::Read,
    at: Timestamp,
    progress: &mut dyn FnMut(u64),
) -> Result<SheetItems, SheetError> {
    let mut items = Vec::new();
    let mut skipped = 0;
    let format = scan(source, at, progress, &mut |line, read| match read {
        Ok(Some(item)) => {
            items.push(item);
            Ok(())
        }
        Ok(None) => {
            skipped += 1;
            Ok(())
        }
        Err(message) => Err(SheetError { line, message }),
    })?;
    Ok(SheetItems { items, skipped, format })
}

/// What an import of `bytes` would read, row by row, without stopping at a bad row: each row's line and what it
/// is (an item, a gone row left out, or refused with the reason).
///
/// # Errors
/// A [`SheetError`] for a header of neither format or a file that is not CSV (bad UTF-8, a broken quote): no
/// row can be told apart then.
pub fn preview(bytes: &[u8], at: Timestamp) -> Result<SheetPreview, SheetError> {
    let mut rows = Vec::new();
    let format = scan(bytes, at, &mut |_| {}, &mut |line, read| {
        rows.push(SheetRow {
            line,
            read: match read {
                Ok(Some(item)) => RowRead::Item(Box::new(item)),
                Ok(None) => RowRead::Gone,
                Err(reason) => RowRead::Refused(reason),
            },
        });
        Ok(())
    })?;
    Ok(SheetPreview { format, rows })
}

/// Reads a sheet of either format from `source`, a buffer at a time, giving each row that is not blank to
/// `row` with its line; answers the format read.
fn scan(
    source: impl std::io::Read,
    at: Timestamp,
    progress: &mut dyn FnMut(u64),
    row: &mut dyn FnMut(u64, Result<Option<NewItem>, String>) -> Result<(), SheetError>,
) -> Result<&'static str, SheetError> {
    use std::io::BufRead as _;
    let mut source = std::io::BufReader::with_capacity(64 * 1024, source);
    let start =
        source.fill_buf().map_err(|e| SheetError { line: 1, message: format!("cannot read the sheet: {e}") })?;
    if start.starts_with(b"\xEF\xBB\xBF") {
        source.consume(3);
    }
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(source);
    let header = reader.headers().map_err(|e| csv_error(&e, 1))?.clone();
    // The first of two columns of the same name wins.
    let mut columns: HashMap<String, usize> = HashMap::new();
    for (i, h) in header.iter().enumerate() {
        columns.entry(h.trim().to_owned()).or_insert(i);
    }
    let format = if columns.contains_key("HB.name") {
        Format::Homebox
    } else if columns.contains_key("name") && columns.contains_key("item_type") {
        Format::Trove
    } else {
        return Err(SheetError {
            line: 1,
            message: "the header is neither our export (id, name, item_type, ...) nor a Homebox export (HB.name, ...)"
                .into(),
        });
    };
    let mut record = csv::StringRecord::new();
    let mut rows = 0u64;
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(&e, rows + 2)),
        }
        rows += 1;
        let line = record.position().map_or(rows + 1, csv::Position::line);
        if record.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        let cells = Row { columns: &columns, record: &record };
        let read = match format {
            Format::Trove => trove_row(&cells, at),
            Format::Homebox => homebox_row(&cells, at),
        };
        row(line, read)?;
        if rows.is_multiple_of(1000) {
            progress(rows);
        }
    }
    progress(rows);
    Ok(if format == Format::Trove { "trove" } else { "homebox" })
}

/// A CSV error as a sheet error at its line (or `fallback`).
fn csv_error(e: &csv::Error, fallback: u64) -> SheetError {
    let line = e.position().map_or(fallback, csv::Position::line);
    let message = match e.kind() {
        csv::ErrorKind::Utf8 { .. } => "the row is not valid UTF-8".to_owned(),
        _ => format!("the row is not valid csv: {e}"),
    };
    SheetError { line, message }
}

/// A lower_snake_case item type from free text.
fn item_type(raw: &str) -> Option<ItemType> {
    to_snake_case(raw).and_then(|t| ItemType::new(clip(&t, 64).trim_end_matches('_')).ok())
}

fn condition(raw: &str) -> Result<Condition, String> {
    if raw.is_empty() {
        return Ok(Condition::Good);
    }
    to_snake_case(raw)
        .and_then(|w| Condition::parse(&w))
        .ok_or_else(|| format!("condition {raw:?} is not one of new, like_new, good, fair, poor, for_parts"))
}

/// A JSON list cell; blank is empty. Accessories may also be written `a; b; c`.
fn list(raw: &str, column: &str) -> Result<Vec<Value>, String> {
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    if !raw.starts_with('[') && column == "accessories" {
        return Ok(raw.split(';').map(str::trim).filter(|a| !a.is_empty()).map(|a| json!(a)).collect());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Array(values)) => Ok(values),
        _ => Err(format!("{column} must be a JSON array")),
    }
}

fn text<'a>(v: &'a Value, key: &str, column: &str) -> Result<&'a str, String> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| format!("{column}: each entry needs a text {key}"))
}

/// A whole number of a column, or `None` when its cell is empty.
fn whole(row: &Row<'_>, column: &str) -> Result<Option<i64>, String> {
    row.given(column).map(|c| c.parse::<i64>().map_err(|_| format!("{column} {c:?} is not a whole number"))).transpose()
}

/// A day of a column, written `YYYY-MM-DD` (Homebox may add a time after it), or `None` for an empty cell or
/// Homebox's zero day (`0001-01-01`).
fn day(row: &Row<'_>, column: &str) -> Result<Option<chrono::NaiveDate>, String> {
    match row.given(column).map(|c| c.get(..10).unwrap_or(c)) {
        None | Some("0001-01-01") => Ok(None),
        Some(d) => chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .map(Some)
            .map_err(|_| format!("{column} {d:?} is not a day written YYYY-MM-DD")),
    }
}

/// The last day a warranty covers, from a column ([`day`], within the domain's years).
fn warranty(row: &Row<'_>, column: &'static str) -> Result<Option<chrono::NaiveDate>, String> {
    day(row, column)?.map(|d| di::check_day(column, d).map_err(|e| e.to_string())).transpose()
}

/// What our format carries of what a household records by hand (a sheet without these columns, written before
/// they existed, leaves the defaults: one unit, nothing recorded).
fn record_by_hand(row: &Row<'_>, item: &mut NewItem) -> Result<(), String> {
    let err = |e: di::ItemError| e.to_string();
    if let Some(q) = whole(row, "quantity")? {
        item.quantity = di::check_quantity("quantity", q).map_err(err)?;
    }
    item.min_quantity =
        whole(row, "min_quantity")?.map(|q| di::check_quantity("min_quantity", q)).transpose().map_err(err)?;
    let tags: Vec<String> = list(row.get("tags"), "tags")?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| "tags: each entry must be a text".to_owned()))
        .collect::<Result<_, _>>()?;
    item.tags = di::Tags::new(&tags).map_err(err)?;
    item.codes = Codes::read_joined(row.get("codes")).map_err(|e| err(e.into()))?;
    item.details.notes = di::notes(row.get("notes")).map_err(err)?;
    item.details.serial = di::serial(row.get("serial")).map_err(err)?;
    item.details.purchase = di::Purchase::new(
        day(row, "purchase_date")?,
        whole(row, "purchase_price")?,
        row.given("purchase_currency"),
        row.given("purchase_vendor"),
    )
    .map_err(err)?;
    item.details.warranty_until = warranty(row, "warranty_until")?;
    item.details.asking_price = whole(row, "asking_price")?
        .map(|a| di::money("asking_price", a, row.given("asking_currency")))
        .transpose()
        .map_err(err)?;
    Ok(())
}

/// One row of our format; `None` for a gone item.
fn trove_row(row: &Row<'_>, at: Timestamp) -> Result<Option<NewItem>, String> {
    if row.given("gone_reason").is_some() {
        return Ok(None);
    }
    let name = ItemName::new(row.get("name")).map_err(|e| e.to_string())?;
    let kind = row.get("item_type");
    let kind = item_type(kind).ok_or_else(|| format!("item_type {kind:?} is not a kind (e.g. power_supply)"))?;
    let profile = di::profile(row.get("profile")).map_err(|e| e.to_string())?;
    let intent = match row.get("intent") {
        "" => Intent::Keep,
        w => Intent::parse(w).ok_or_else(|| format!("intent {w:?} is not one of keep, sell, give"))?,
    };
    let mut item = NewItem::new(name, kind, profile, condition(row.get("condition"))?, intent);
    item.availability = match row.get("availability") {
        "lent" => Availability::Lent,
        "" | "available" | "reserved" | "in_use" => Availability::Available,
        w => return Err(format!("availability {w:?} is not one of available, reserved, in_use, lent")),
    };
    item.location = di::location(row.given("location")).map_err(|e| e.to_string())?;
    let accessories: Vec<String> = list(row.get("accessories"), "accessories")?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| "accessories: each entry must be a text".to_owned()))
        .collect::<Result<_, _>>()?;
    item.accessories = di::accessories(&accessories).map_err(|e| e.to_string())?;
    for f in list(row.get("faults"), "faults")? {
        let severity = text(&f, "severity", "faults")?;
        let severity = Severity::parse(severity)
            .ok_or_else(|| format!("faults: severity {severity:?} is not one of minor, major, blocking"))?;
        item.faults.push(Fault::new(text(&f, "text", "faults")?, severity).map_err(|e| e.to_string())?);
    }
    for t in list(row.get("tests"), "tests")? {
        let result = text(&t, "result", "tests")?;
        let result =
            TestResult::parse(result).ok_or_else(|| format!("tests: result {result:?} is not pass or fail"))?;
        let value: Option<Quantity> = match t.get("value").and_then(Value::as_str) {
            Some(v) => Some(units::parse(v).map_err(|e| format!("tests: {e}"))?),
            None => None,
        };
        let when = match t.get("at").and_then(Value::as_str) {
            Some(s) => DateTime::parse_from_rfc3339(s)
                .map_err(|_| format!("tests: at {s:?} is not an RFC 3339 time"))?
                .with_timezone(&Utc),
            None => at,
        };
        let note = t.get("note").and_then(Value::as_str);
        item.tests_done
            .push(TestDone::new(text(&t, "name", "tests")?, result, value, when, note).map_err(|e| e.to_string())?);
    }
    for (column, index) in row.columns {
        let Some(key) = column.strip_prefix(FIELD_PREFIX) else { continue };
        let cell = row.record.get(*index).map_or("", |c| unescape_cell(c.trim()));
        if cell.is_empty() {
            continue;
        }
        item.measurements.push(field(key, cell, at)?);
    }
    item.measurements.sort_by(|a, b| a.key.cmp(&b.key));
    record_by_hand(row, &mut item)?;
    item.import_ref = row.given("id").map(trove_application::exchange::own_ref);
    item.check_texts().map_err(|e| e.to_string())?;
    Ok(Some(item))
}

/// A field cell (`value unit`) as a measurement.
fn field(key: &str, cell: &str, at: Timestamp) -> Result<Measurement, String> {
    let key = FieldKey::new(key).map_err(|e| e.to_string())?;
    let q = units::parse(cell).map_err(|e| format!("{FIELD_PREFIX}{key}: {e}"))?;
    Ok(Measurement { key, value: q.value, unit: q.unit, at, source: MeasurementSource::Manual })
}

/// True for a Homebox yes ("true", "yes", "1").
fn yes(cell: &str) -> bool {
    matches!(cell.to_lowercase().as_str(), "true" | "yes" | "1")
}

/// The custom fields that name the kind or the condition of an item.
const TYPE_FIELDS: [&str; 4] = ["type", "item_type", "kind", "category"];

/// One row of a Homebox export; `None` for an archived or sold item.
fn homebox_row(row: &Row<'_>, at: Timestamp) -> Result<Option<NewItem>, String> {
    if yes(row.get("HB.archived"))
        || ["HB.sold_to", "HB.sold_time", "HB.sold_date"].iter().any(|c| row.given(c).is_some())
    {
        return Ok(None);
    }
    let name = ItemName::new(row.get("HB.name")).map_err(|e| format!("HB.name: {e}"))?;

    // Custom fields by their key.
    let mut custom: BTreeMap<String, (&str, &str)> = BTreeMap::new();
    for (column, index) in row.columns {
        let Some(label) = column.strip_prefix("HB.field.") else { continue };
        let cell = row.record.get(*index).map_or("", |c| unescape_cell(c.trim()));
        if let (Some(key), false) = (to_snake_case(label), cell.is_empty()) {
            custom.insert(key, (label, cell));
        }
    }
    let labels = row.given("HB.labels").or_else(|| row.given("HB.tags")).unwrap_or("");
    let kind = TYPE_FIELDS
        .iter()
        .find_map(|k| custom.get(*k).and_then(|(_, v)| item_type(v)))
        .or_else(|| labels.split(';').find_map(item_type))
        .unwrap_or_else(|| ItemType::new("other").expect("other is a kind"));
    let condition = match custom.get("condition") {
        Some((_, v)) => condition(v).map_err(|e| format!("HB.field.Condition: {e}"))?,
        None => Condition::Good,
    };

    let mut measurements = Vec::new();
    let mut facts: Vec<String> = Vec::new();
    for (key, (label, value)) in &custom {
        if TYPE_FIELDS.contains(&key.as_str()) || key == "condition" {
            continue;
        }
        match units::parse(value) {
            Ok(q) if FieldKey::new(clip(key, 64).trim_end_matches('_')).is_ok() => measurements.push(Measurement {
                key: FieldKey::new(clip(key, 64).trim_end_matches('_')).map_err(|e| e.to_string())?,
                value: q.value,
                unit: q.unit,
                at,
                source: MeasurementSource::Manual,
            }),
            _ => facts.push(format!("{label}: {value}")),
        }
    }
    let quantity = match row.get("HB.quantity") {
        "" => 1,
        q => match q.parse::<f64>() {
            // Homebox writes whole counts, sometimes as "12.0".
            Ok(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => {
                di::check_quantity("HB.quantity", n as i64).map_err(|e| e.to_string())?
            }
            _ => return Err(format!("HB.quantity {q:?} is not a whole number of units")),
        },
    };

    let maker: Vec<&str> =
        [row.get("HB.manufacturer"), row.get("HB.model_number")].into_iter().filter(|s| !s.is_empty()).collect();
    let mut parts: Vec<String> = Vec::new();
    if !maker.is_empty() {
        parts.push(maker.join(" "));
    }
    if let Some(d) = row.given("HB.description") {
        parts.push(d.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    if let Some(s) = row.given("HB.serial_number") {
        parts.push(format!("serial {s}"));
    }
    parts.extend(facts);
    let profile = clip(&parts.join(", "), di::PROFILE_MAX);

    let mut item = NewItem::new(name, kind, profile, condition, Intent::Keep);
    item.location = row.given("HB.location").map(|l| clip(l, di::SHORT_TEXT_MAX));
    item.measurements = measurements;
    item.quantity = quantity;
    // What Homebox records by hand: its labels are tags, its notes, serial, purchase and warranty ours. A
    // purchase price has no currency in Homebox's sheet: kept only with `HB.purchase_currency` (none is guessed).
    let tags: Vec<String> =
        labels.split(';').map(str::trim).filter(|l| !l.is_empty()).map(|l| clip(l, di::TAG_MAX)).collect();
    item.tags = di::Tags::new(&tags[..tags.len().min(di::TAGS_MAX)]).map_err(|e| format!("HB.labels: {e}"))?;
    item.details.notes = di::notes(&clip(row.get("HB.notes"), di::NOTES_MAX)).map_err(|e| format!("HB.notes: {e}"))?;
    item.details.serial =
        di::serial(&clip(row.get("HB.serial_number"), di::SERIAL_MAX)).map_err(|e| format!("HB.serial_number: {e}"))?;
    let paid = match (row.given("HB.purchase_price"), row.given("HB.purchase_currency")) {
        (Some(p), Some(c)) => {
            let amount: f64 = p.parse().map_err(|_| format!("HB.purchase_price {p:?} is not a number"))?;
            let currency = trove_domain::money::Currency::new(&c.to_ascii_uppercase())
                .map_err(|e| format!("HB.purchase_currency: {e}"))?;
            let money = trove_domain::money::Money::from_major(amount, currency)
                .map_err(|e| format!("HB.purchase_price: {e}"))?;
            Some((money.minor, c))
        }
        _ => None,
    };
    item.details.purchase = di::Purchase::new(
        day(row, "HB.purchase_time")?,
        paid.map(|(m, _)| m),
        paid.map(|(_, c)| c),
        row.given("HB.purchase_from").map(|v| clip(v, di::VENDOR_MAX)).as_deref(),
    )
    .map_err(|e| e.to_string())?;
    item.details.warranty_until = warranty(row, "HB.warranty_expires")?;
    item.import_ref = row
        .given("HB.import_ref")
        .map(str::to_owned)
        .or_else(|| row.given("HB.asset_id").map(|a| format!("hb-asset:{a}")));
    item.check_texts().map_err(|e| e.to_string())?;
    Ok(Some(item))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;
    use trove_domain::ItemId;

    fn at() -> Timestamp {
        Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap()
    }

    fn stored(id: i64, new: NewItem) -> Item {
        new.stored(ItemId(id), at())
    }

    fn sample() -> Vec<Item> {
        let mut a = NewItem::new(
            ItemName::new("Anker PowerCore, \"10000\"").unwrap(),
            ItemType::new("power_bank").unwrap(),
            "Anker A1263; serial AK1234\nsecond line".into(),
            Condition::Fair,
            Intent::Sell,
        );
        a.accessories = vec!["USB-C cable".into(), "pouch; grey".into()];
        a.faults = vec![Fault::new("scuffed, \"badly\"", Severity::Minor).unwrap()];
        a.tests_done = vec![
            TestDone::new("capacity test", TestResult::Pass, Some(units::parse("9.1 Ah").unwrap()), at(), Some("slow"))
                .unwrap(),
        ];
        a.measurements = vec![
            Measurement::new("capacity", 10.0, "Ah", at(), MeasurementSource::Label).unwrap(),
            Measurement::new("weight", 180.5, "g", at(), MeasurementSource::Manual).unwrap(),
        ];
        let b = NewItem::new(
            ItemName::new("Pi 4").unwrap(),
            ItemType::new("single_board_computer").unwrap(),
            String::new(),
            Condition::Good,
            Intent::Keep,
        );
        let mut a = stored(7, a);
        a.place_path = trove_domain::testing::path("drawer 3");
        vec![a, stored(9, b)]
    }

    #[test]
    fn our_format_round_trips() {
        let items = sample();
        let bytes = write(&items).unwrap();
        let read = CsvSheet.read(&bytes, at()).unwrap();
        assert_eq!(read.format, "trove");
        assert_eq!(read.items.len(), 2);
        // Read back, each item in the place its `location` text names.
        let again: Vec<Item> = read
            .items
            .into_iter()
            .enumerate()
            .map(|(i, n)| {
                let place = n.location.as_deref().and_then(trove_domain::testing::path);
                Item { place_path: place, ..stored(i as i64 + 7, n) }
            })
            .collect();
        for (a, b) in items.iter().zip(&again) {
            assert_eq!(
                (&a.name, &a.item_type, &a.profile, a.condition, a.intent),
                (&b.name, &b.item_type, &b.profile, b.condition, b.intent)
            );
            assert_eq!(
                (a.location(), &a.accessories, &a.faults, &a.tests_done),
                (b.location(), &b.accessories, &b.faults, &b.tests_done)
            );
            assert_eq!(a.fields_line(), b.fields_line());
        }
        assert_eq!(again[0].fields_line(), "capacity: 10000 mAh, weight: 180.5 g");
        assert_eq!(write(&again).unwrap(), write(&items).unwrap().replace_id(9, 8));
    }

    /// Renumbers the id column of the second row, for comparing two exports.
    trait ReplaceId {
        fn replace_id(self, from: i64, to: i64) -> Vec<u8>;
    }

    impl ReplaceId for Vec<u8> {
        fn replace_id(self, from: i64, to: i64) -> Vec<u8> {
            String::from_utf8(self).unwrap().replace(&format!("\n{from},"), &format!("\n{to},")).into_bytes()
        }
    }

    /// Checks that a sheet is refused at `line` with a message containing `says`.
    fn refused(sheet: &str, line: u64, says: &str) {
        let e = CsvSheet.read(sheet.as_bytes(), at()).unwrap_err();
        assert_eq!(e.line, line, "{e}");
        assert!(e.message.contains(says), "{e}");
    }

    #[test]
    fn bad_rows_name_their_line() {
        let head = "id,name,item_type,condition,field.capacity\n";
        refused(&format!("{head}1,Pi,sbc,good,\n2,,sbc,good,\n"), 3, "name must not be empty");
        refused(&format!("{head}1,Pi,sbc,shiny,\n"), 2, "condition \"shiny\"");
        // A cell of several lines counts its lines; a name holds one.
        let with_profile = "id,name,item_type,profile,field.capacity\n";
        refused(&format!("{with_profile}1,Pi,sbc,\"Pi\nB\",\n2,Cell,cell,,3 parsecs\n"), 4, "unknown unit");
        refused(&format!("{head}1,\"Pi\nB\",sbc,good,\n"), 2, "name must not contain control characters");
        refused("what,ever\n1,2\n", 1, "neither our export");
        // A wrong check digit names the code and the digit it should be, on the row's line.
        let with_codes = "id,name,item_type,condition,codes\n";
        refused(
            &format!(
                "{with_codes}1,Pi,sbc,good,gtin:4006381333931\n2,Drill,drill,good,isbn:9780306406157;4006381333932\n"
            ),
            3,
            "codes[1]: the check digit of gtin 4006381333932 is wrong: it should be 1",
        );
        refused(&format!("{head}1,Pi,sbc,good,\"unterminated\n"), 2, "field.capacity: no number in \"unterminated");
    }

    #[test]
    fn formulas_are_escaped_and_read_back() {
        let mut items = sample();
        items[1].name = ItemName::new("=HYPERLINK(\"https://evil.example\",\"click\")").unwrap();
        items[1].profile = "+1 555 0100".into();
        items[1].place_path = trove_domain::testing::path("@SUM(A1)");
        items[1].accessories = vec!["-cable".into()];
        let bytes = write(&items).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let row = text.lines().find(|l| l.starts_with("9,")).unwrap();
        assert!(
            row.starts_with(
                "9,\"'=HYPERLINK(\"\"https://evil.example\"\",\"\"click\"\")\",single_board_computer,'+1 555 0100,"
            ),
            "{row}"
        );
        assert!(row.contains(",'@SUM(A1),"), "{row}");
        // No cell of the sheet starts a formula.
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        for record in reader.records() {
            for cell in &record.unwrap() {
                assert!(!cell.starts_with(['=', '+', '@', '\t', '\r']), "{cell:?}");
            }
        }
        let read = CsvSheet.read(&bytes, at()).unwrap();
        assert_eq!(read.items[1].name, items[1].name);
        assert_eq!(read.items[1].profile, items[1].profile);
        assert_eq!(read.items[1].location, items[1].location());
        assert_eq!(read.items[1].accessories, items[1].accessories);
        // A negative number in a field cell is a number, not escaped.
        let mut cold = items[1].clone();
        cold.measurements =
            vec![Measurement::new("temperature", -40.0, "°C", at(), MeasurementSource::Manual).unwrap()];
        let text = String::from_utf8(write(&[cold]).unwrap()).unwrap();
        assert!(text.trim_end().ends_with(",-40 C"), "{text}");
        // An apostrophe of a hand-written sheet that escapes nothing is kept.
        let read = CsvSheet.read("name,item_type,profile\n'Tis a box,box,'-5 V rail\n".as_bytes(), at()).unwrap();
        assert_eq!((read.items[0].name.as_str(), read.items[0].profile.as_str()), ("'Tis a box", "-5 V rail"));
    }

    #[test]
    fn control_characters_are_refused_on_their_line() {
        refused("name,item_type\nPi,sbc\n\"Pi\u{0}\",sbc\n", 3, "name must not contain control characters");
        refused("name,item_type,location\nPi,sbc,\"a\u{1b}b\"\n", 2, "location must not contain control characters");
        refused(
            "HB.name,HB.location,HB.import_ref\nPi,Garage,\"r\u{0}\"\n",
            2,
            "import_ref must not contain control characters",
        );
        refused("HB.name,HB.notes\nPi,\"n\u{7}\"\n", 2, "HB.notes: notes must not contain control characters");
    }

    /// A text that starts the way a formula, an escape or nothing special does.
    fn tricky(required: bool) -> impl Strategy<Value = String> {
        let start = prop_oneof![
            Just(""),
            Just("="),
            Just("+"),
            Just("-"),
            Just("@"),
            Just("'"),
            Just("''"),
            Just("'="),
            Just("=HYPERLINK(\"https://x.example\")"),
        ];
        (start, "[a-zA-Z0-9 ,;\"'=+@-]{0,12}")
            .prop_map(|(a, b)| format!("{a}{b}").trim().to_owned())
            .prop_filter("a name is not blank", move |t| !required || !t.is_empty())
    }

    proptest! {
        /// Export then import gives back every text exactly, whatever it starts with.
        #[test]
        fn texts_round_trip_whatever_they_start_with(
            name in tricky(true),
            profile in tricky(false),
            location in tricky(true),
            accessory in tricky(true),
            fault in tricky(true),
        ) {
            let mut item = sample().remove(1);
            item.name = ItemName::new(&name).unwrap();
            item.profile = profile;
            item.place_path = trove_domain::testing::path(&location);
            item.accessories = vec![accessory];
            item.faults = vec![Fault::new(&fault, Severity::Minor).unwrap()];
            let read = CsvSheet.read(&write(std::slice::from_ref(&item)).unwrap(), at()).unwrap();
            let back = &read.items[0];
            prop_assert_eq!(&back.name, &item.name);
            prop_assert_eq!(&back.profile, &item.profile);
            prop_assert_eq!(&back.location, &item.location());
            prop_assert_eq!(&back.accessories, &item.accessories);
            prop_assert_eq!(&back.faults, &item.faults);
        }

        /// Unescaping undoes escaping for any text at all.
        #[test]
        fn escaping_is_undone_exactly(text in "\\PC{0,12}", start in "[='+@\t\r-]?") {
            let text = format!("{start}{text}");
            let escaped = escape_cell(&text);
            prop_assert_eq!(unescape_cell(&escaped), text.as_str());
        }
    }

    #[test]
    fn gone_items_are_skipped_and_accessories_may_be_plain() {
        let sheet = "id,name,item_type,gone_reason,accessories\n1,Old,laptop,sold,\n2,New,laptop,,a; b;\n";
        let read = CsvSheet.read(sheet.as_bytes(), at()).unwrap();
        assert_eq!(read.skipped, 1);
        assert_eq!(read.items[0].accessories, vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(read.items[0].import_ref.as_deref(), Some("trove:2"));
    }

    #[test]
    fn homebox_rows_map_into_items() {
        let sheet = "\u{feff}HB.import_ref,HB.location,HB.labels,HB.asset_id,HB.archived,HB.name,HB.quantity,HB.description,HB.manufacturer,HB.model_number,HB.serial_number,HB.notes,HB.sold_to,HB.field.Type,HB.field.Output Voltage,HB.field.Colour\n\
            ref-1,Garage / Shelf 2,Power;Tools,000-001,false,Bench supply,1,\"30V 5A linear\",Korad,KA3005D,KD123456,works,,power supply,30V,black\n\
            ,Attic,Cables,000-002,false,USB cables,12,,,,,,,,,\n\
            ref-3,Attic,,000-003,true,Archived thing,1,,,,,,,,,\n";
        let read = CsvSheet.read(sheet.as_bytes(), at()).unwrap();
        assert_eq!(read.format, "homebox");
        assert_eq!(read.skipped, 1);
        let a = &read.items[0];
        assert_eq!(a.item_type.as_str(), "power_supply");
        assert_eq!(a.profile, "Korad KA3005D, 30V 5A linear, serial KD123456, Colour: black");
        assert_eq!((a.details.notes.as_str(), a.details.serial.as_deref()), ("works", Some("KD123456")));
        assert_eq!(a.tags.as_slice(), ["Power", "Tools"]);
        assert_eq!(a.location.as_deref(), Some("Garage / Shelf 2"));
        assert_eq!(a.import_ref.as_deref(), Some("ref-1"));
        assert_eq!(a.measurements[0].quantity().to_string(), "30 V");
        assert_eq!(a.condition, Condition::Good);
        let b = &read.items[1];
        assert_eq!(b.item_type.as_str(), "cables");
        assert_eq!(b.import_ref.as_deref(), Some("hb-asset:000-002"));
        assert!(b.measurements.is_empty(), "a count is the quantity, not a measurement");
        assert_eq!(b.quantity, 12);
    }

    #[test]
    fn homebox_purchases_and_warranties_are_kept() {
        let sheet = "HB.name,HB.quantity,HB.purchase_time,HB.purchase_from,HB.purchase_price,HB.purchase_currency,HB.warranty_expires\n\
            Drill,1,2024-05-17,Hornbach,129.99,eur,2027-05-16\n\
            Saw,2.0,0001-01-01,,,,\n";
        let read = CsvSheet.read(sheet.as_bytes(), at()).unwrap();
        let p = read.items[0].details.purchase.clone().unwrap();
        assert_eq!(
            (p.date.map(|d| d.to_string()), p.price.map(|m| m.to_string()), p.vendor.as_deref()),
            (Some("2024-05-17".into()), Some("EUR 129.99".into()), Some("Hornbach"))
        );
        assert_eq!(read.items[0].details.warranty_until.map(|d| d.to_string()).as_deref(), Some("2027-05-16"));
        assert_eq!((read.items[1].quantity, read.items[1].details.purchase.clone()), (2, None));
        let bad = CsvSheet.read("HB.name,HB.quantity\nX,2.5\n".as_bytes(), at()).unwrap_err();
        assert!(bad.to_string().contains("HB.quantity"), "{bad}");
    }

    #[test]
    fn what_is_recorded_by_hand_round_trips() {
        let mut item = NewItem::new(
            ItemName::new("Drill").unwrap(),
            ItemType::new("drill").unwrap(),
            String::new(),
            Condition::Good,
            Intent::Sell,
        )
        .stored(ItemId(5), at());
        item.quantity = 3;
        item.min_quantity = Some(1);
        item.tags = di::Tags::new(&["=garage".into(), "18 V".into()]).unwrap();
        item.codes = Codes::read_joined("036000291452;isbn:0-306-40615-2;other:=B-7").unwrap();
        item.details = di::ItemDetails {
            notes: "two lines\n-and a dash".into(),
            serial: Some("SN 1".into()),
            purchase: di::Purchase::new(
                Some(chrono::NaiveDate::from_ymd_opt(2024, 5, 17).unwrap()),
                Some(12999),
                Some("EUR"),
                Some("+vendor"),
            )
            .unwrap(),
            warranty_until: chrono::NaiveDate::from_ymd_opt(2027, 5, 16),
            asking_price: Some(di::money("asking_price", 6000, Some("GBP")).unwrap()),
        }
        .into();
        let read = CsvSheet.read(&write(std::slice::from_ref(&item)).unwrap(), at()).unwrap();
        let back = &read.items[0];
        assert_eq!((back.quantity, back.min_quantity, &back.tags, &back.codes), (3, Some(1), &item.tags, &item.codes));
        assert_eq!(back.details, item.details);
        // A sheet written before these columns imports as one unit with nothing recorded.
        let old = CsvSheet.read("id,name,item_type,profile,condition,intent\n1,Pi,sbc,,good,keep\n".as_bytes(), at());
        let old = old.unwrap();
        assert_eq!((old.items[0].quantity, old.items[0].tags.is_empty()), (1, true));
    }
}
