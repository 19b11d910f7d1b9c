//! The function tools of the proposal loop and their compact outputs.
//!
//! Tool outputs are resent at every step of the loop, so their size is paid for again and again. The seed's
//! `list_inventory` gives each buildable item's id, name, item_type, profile, condition, intent, availability and
//! current fields as `value unit`; here each of those is written once for all the lines it applies to: intent and
//! availability in the header (they are the same for every buildable item), the type and its fields' names and
//! units in a `#type|key unit|...` line, and one `id+condition name|profile|values` line per item, the condition a
//! letter after the id (none for `good`) and the values space-separated in the type's order. Nothing reads these outputs back but the model: the local planner
//! plans from the stores, and the tests read the format back only to show nothing is lost.

use std::fmt::Write as _;
use trove_domain::item::{Condition, Item, ItemLine, Measurement};
use trove_domain::template::Template;
use trove_domain::units::{Unit, write_number};

/// Name of the tool listing every buildable item.
pub const LIST_INVENTORY: &str = "list_inventory";
/// Name of the tool listing the templates.
pub const TEMPLATE_CATALOG: &str = "template_catalog";
/// Name of the tool giving one item in full.
pub const ITEM_DETAILS: &str = "item_details";

const INVENTORY_HEADER: &str = "buildable items (intent keep, available): #type|field unit|... then per item \
id+condition[xN] name|profile|values (- unmeasured); condition N new, L like_new, F fair, P poor, X for_parts, else \
good; xN: N units available (a stock), else 1";
const CATALOG_HEADER: &str =
    "templates; id|label|goal|effort|requirements as key: label (key? = optional, key xN = N units)";

/// Makes a free text safe for one column: no column separator, no line break.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_cell(&mut out, text);
    out
}

/// The output of `list_inventory` for `items` (the caller passes only buildable ones).
///
/// Items are grouped by type, so the type and its fields' names and units are written once per type; each item
/// line carries its id with its condition's letter (none for `good`), its name, its profile and its values:
///
/// ```text
/// buildable items (...)
/// #lithium_cell|capacity mAh|voltage V
/// 12 Samsung 25R 18650|2500 mAh, 20 A|2500 3.6
/// 14F LG HG2||3000 -
/// ```
pub fn inventory_output<'a>(items: impl IntoIterator<Item = &'a ItemLine>) -> String {
    let mut sorted: Vec<&ItemLine> = items.into_iter().collect();
    sorted.sort_by(|a, b| a.item_type.cmp(&b.item_type).then(a.id.cmp(&b.id)));
    let mut out = String::with_capacity(INVENTORY_HEADER.len() + sorted.len() * 64);
    out.push_str(INVENTORY_HEADER);
    let mut start = 0;
    while start < sorted.len() {
        let item_type = &sorted[start].item_type;
        let end = start + sorted[start..].iter().take_while(|i| &i.item_type == item_type).count();
        let group = &sorted[start..end];
        // Each item's current fields, read once.
        let fields: Vec<Vec<&Measurement>> = group.iter().map(|item| item.current_measurements()).collect();
        // The type's columns: every (key, unit) measured on any of its items. A key measured in two dimensions
        // (capacity in mAh and in Wh) gets two columns, so no value is lost.
        let mut columns: Vec<(&str, Unit)> = Vec::new();
        for m in fields.iter().flatten() {
            if !columns.contains(&(m.key.as_str(), m.unit)) {
                columns.push((m.key.as_str(), m.unit));
            }
        }
        columns.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.symbol().cmp(b.1.symbol())));
        let _ = write!(out, "\n#{item_type}");
        for (key, unit) in &columns {
            let _ = write!(out, "|{key} {unit}");
        }
        for (item, fields) in group.iter().zip(&fields) {
            // `id name`: a space costs nothing (the name's first word takes it), a separator a token per line;
            // the condition is one letter after the id, none for `good`.
            let _ = write!(out, "\n{}{}", item.id, condition_code(item.condition));
            let available = item.units().available;
            if available > 1 {
                let _ = write!(out, "x{available}");
            }
            out.push(' ');
            push_cell(&mut out, item.name.as_str());
            out.push('|');
            push_cell(&mut out, &item.profile);
            if !columns.is_empty() {
                out.push('|');
            }
            for (i, column) in columns.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                match fields.iter().find(|m| (m.key.as_str(), m.unit) == *column) {
                    Some(m) => write_number(&mut out, m.value),
                    None => out.push('-'),
                }
            }
        }
        start = end;
    }
    out
}

/// The condition's letter in the listing; `good`, the most common, has none.
fn condition_code(c: Condition) -> &'static str {
    match c {
        Condition::New => "N",
        Condition::LikeNew => "L",
        Condition::Good => "",
        Condition::Fair => "F",
        Condition::Poor => "P",
        Condition::ForParts => "X",
    }
}

/// Appends a free text as one column: no column separator, no line break.
fn push_cell(out: &mut String, text: &str) {
    out.extend(text.trim().chars().map(|c| if matches!(c, '|' | '\n' | '\r') { ' ' } else { c }));
}

/// The output of `template_catalog`.
pub fn catalog_output(templates: &[Template]) -> String {
    let mut out = String::from(CATALOG_HEADER);
    for t in templates {
        let reqs = t
            .requirements
            .iter()
            .map(|r| {
                let count = if r.count > 1 { format!(" x{}", r.count) } else { String::new() };
                format!("{}{}{count}: {}", r.key, if r.optional { "?" } else { "" }, cell(&r.label).replace(';', ","))
            })
            .collect::<Vec<_>>()
            .join("; ");
        out.push_str(&format!("\n{}|{}|{}|{}|{}", t.id, cell(&t.label), cell(&t.goal), cell(&t.effort), reqs));
    }
    out
}

/// The output of `item_details` for one item: its line (with type, intent and availability, since it may be
/// any item of the household) and its faults, tests, accessories and components.
pub fn details_output(item: &Item) -> String {
    let mut out = format!(
        "id|name|item_type|condition|intent|availability|profile|fields\n{}|{}|{}|{}|{}|{}|{}|{}",
        item.id,
        cell(item.name.as_str()),
        item.item_type,
        item.condition,
        item.intent,
        item.availability,
        cell(&item.profile),
        item.fields_line()
    );
    if item.quantity != 1 {
        let units = item.units();
        let _ = write!(
            out,
            "\nunits: {} in all, {} held by projects, {} available",
            item.quantity, units.held, units.available
        );
    }
    if item.gone.is_some() {
        out.push_str("\ngone: yes");
    }
    let faults = item.faults.iter().map(|f| format!("{}: {}", f.severity, cell(&f.text))).collect::<Vec<_>>();
    out.push_str(&format!("\nfaults: {}", if faults.is_empty() { "none".into() } else { faults.join("; ") }));
    let tests = item
        .tests_done
        .iter()
        .map(|t| {
            let value = t.value.map(|v| format!(" {v}")).unwrap_or_default();
            format!("{} {}{value}", cell(&t.name), t.result)
        })
        .collect::<Vec<_>>();
    out.push_str(&format!("\ntests: {}", if tests.is_empty() { "none".into() } else { tests.join("; ") }));
    let acc = item.accessories.iter().map(|a| cell(a)).collect::<Vec<_>>();
    out.push_str(&format!("\naccessories: {}", if acc.is_empty() { "none".into() } else { acc.join("; ") }));
    let comps = item.components.iter().map(ToString::to_string).collect::<Vec<_>>();
    out.push_str(&format!("\ncomponents: {}", if comps.is_empty() { "none".into() } else { comps.join(", ") }));
    out
}

/// The output of a tool that failed: `{"error": "..."}`.
pub fn error_output(message: &str) -> String {
    serde_json::json!({ "error": message }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use trove_domain::item::Severity;
    use trove_domain::units::{self, Quantity};

    /// One line of `list_inventory`, read back.
    #[derive(Debug, Clone, PartialEq)]
    pub struct InventoryLine {
        pub id: i64,
        pub name: String,
        pub item_type: String,
        pub condition: Condition,
        pub profile: String,
        pub fields: Vec<(String, Quantity)>,
        /// Units available: 1 unless the line says `xN`.
        pub units: u32,
    }

    /// Reads a `list_inventory` output back; lines that do not parse are skipped.
    pub fn parse_inventory(output: &str) -> Vec<InventoryLine> {
        let mut item_type = String::new();
        let mut columns: Vec<(String, String)> = Vec::new();
        let mut out = Vec::new();
        for line in output.lines().skip(1) {
            if let Some(header) = line.strip_prefix('#') {
                let mut parts = header.split('|');
                item_type = parts.next().unwrap_or_default().trim().to_owned();
                columns = parts
                    .filter_map(|c| c.trim().rsplit_once(' ').map(|(k, u)| (k.to_owned(), u.to_owned())))
                    .collect();
                continue;
            }
            let cols: Vec<&str> = line.split('|').collect();
            let values: Vec<&str> = match (cols.len(), columns.len()) {
                (2, 0) => Vec::new(),
                (3, n) if n > 0 => cols[2].split(' ').collect(),
                _ => continue,
            };
            let Some((id, name)) = cols[0].split_once(' ') else { continue };
            if values.len() != columns.len() {
                continue;
            }
            let (id, units) = match id.split_once('x') {
                Some((id, n)) => (id, n.parse().unwrap_or(0)),
                None => (id, 1),
            };
            let digits = id.trim_end_matches(|c: char| c.is_ascii_alphabetic());
            let condition = Condition::ALL.iter().copied().find(|c| condition_code(*c) == &id[digits.len()..]);
            let (Ok(id), Some(condition)) = (digits.parse(), condition) else { continue };
            let fields = columns
                .iter()
                .zip(values)
                .filter(|(_, v)| *v != "-")
                .filter_map(|((k, u), v)| Some((k.clone(), units::normalise(v.parse().ok()?, u).ok()?)))
                .collect();
            out.push(InventoryLine {
                id,
                name: name.to_owned(),
                item_type: item_type.clone(),
                condition,
                profile: cols[1].to_owned(),
                fields,
                units,
            });
        }
        out
    }

    /// One line of `template_catalog`, read back.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct CatalogLine {
        pub id: i64,
        pub label: String,
        /// `(key, optional, count)` of each requirement.
        pub requirements: Vec<(String, bool, u32)>,
    }

    /// Reads a `template_catalog` output back; lines that do not parse are skipped.
    pub fn parse_catalog(output: &str) -> Vec<CatalogLine> {
        output
            .lines()
            .skip(1)
            .filter_map(|line| {
                let cols: Vec<&str> = line.splitn(5, '|').collect();
                let [id, label, _goal, _effort, reqs] = cols[..] else { return None };
                let requirements = reqs
                    .split("; ")
                    .filter_map(|r| {
                        let (key, _) = r.split_once(':')?;
                        let (key, count) = match key.trim().split_once(" x") {
                            Some((key, n)) => (key, n.parse().ok()?),
                            None => (key.trim(), 1),
                        };
                        Some(match key.strip_suffix('?') {
                            Some(k) => (k.to_owned(), true, count),
                            None => (key.to_owned(), false, count),
                        })
                    })
                    .collect();
                Some(CatalogLine { id: id.trim().parse().ok()?, label: label.to_owned(), requirements })
            })
            .collect()
    }

    /// The faults of an `item_details` output, read back.
    pub fn parse_details_faults(output: &str) -> Vec<(Severity, String)> {
        output
            .lines()
            .find_map(|l| l.strip_prefix("faults: "))
            .filter(|f| *f != "none")
            .map(|f| {
                f.split("; ")
                    .filter_map(|x| {
                        let (sev, text) = x.split_once(": ")?;
                        Some((Severity::parse(sev)?, text.to_owned()))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    use chrono::{TimeZone, Utc};
    use trove_domain::item::{
        Fault, Intent, ItemName, ItemType, Measurement, MeasurementSource, NewItem, TestDone, TestResult,
    };
    use trove_domain::template::{NewTemplate, requirement};
    use trove_domain::{ItemId, TemplateId};

    fn item(id: i64, name: &str, item_type: &str) -> Item {
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let (name, item_type) = (ItemName::new(name).unwrap(), ItemType::new(item_type).unwrap());
        let mut new = NewItem::new(name, item_type, "Brand | Model\nline two".into(), Condition::LikeNew, Intent::Keep);
        new.measurements = vec![
            Measurement::new("capacity", 3.4, "Ah", at, MeasurementSource::Label).unwrap(),
            Measurement::new("voltage", 3.7, "V", at, MeasurementSource::Label).unwrap(),
        ];
        new.faults = vec![Fault::new("dent", Severity::Minor).unwrap()];
        new.tests_done =
            vec![TestDone::new("capacity test", TestResult::Pass, units::parse("3300 mAh").ok(), at, None).unwrap()];
        new.accessories = vec!["case".into()];
        new.components = vec![ItemId(4)];
        new.stored(ItemId(id), at)
    }

    fn lines(items: &[Item]) -> Vec<ItemLine> {
        items.iter().map(ItemLine::from).collect()
    }

    #[test]
    fn inventory_round_trips_and_groups_by_type_and_condition() {
        let mut pi = item(1, "Pi", "single_board_computer");
        pi.measurements.clear();
        let mut worn = item(4, "Cell D", "lithium_cell");
        worn.condition = Condition::Fair;
        worn.measurements.retain(|m| m.key.as_str() == "voltage");
        let mut good = item(3, "Cell A", "lithium_cell");
        good.condition = Condition::Good;
        // A stock of 10 with 4 held by a project: 6 available.
        good.quantity = 10;
        good.units_held = 4;
        let items = [good, pi, worn, item(2, "Cell B", "lithium_cell")];
        let out = inventory_output(&lines(&items));
        assert_eq!(
            out.lines().skip(1).collect::<Vec<_>>(),
            vec![
                "#lithium_cell|capacity mAh|voltage V",
                "2L Cell B|Brand   Model line two|3400 3.7",
                "3x6 Cell A|Brand   Model line two|3400 3.7",
                "4F Cell D|Brand   Model line two|- 3.7",
                "#single_board_computer",
                "1L Pi|Brand   Model line two",
            ]
        );
        let back = parse_inventory(&out);
        let summary: Vec<(i64, &str, Condition, usize)> =
            back.iter().map(|l| (l.id, l.item_type.as_str(), l.condition, l.fields.len())).collect();
        assert_eq!(
            summary,
            vec![
                (2, "lithium_cell", Condition::LikeNew, 2),
                (3, "lithium_cell", Condition::Good, 2),
                (4, "lithium_cell", Condition::Fair, 1),
                (1, "single_board_computer", Condition::LikeNew, 0),
            ]
        );
        assert_eq!(back[0].fields[0].0, "capacity");
        assert_eq!(back[0].fields[0].1, Quantity { value: 3400.0, unit: Unit::MilliampHour });
        assert_eq!(back[2].fields, vec![("voltage".to_owned(), Quantity { value: 3.7, unit: Unit::Volt })]);
        assert_eq!(back.iter().map(|l| l.units).collect::<Vec<_>>(), [1, 6, 1, 1]);
        assert_eq!(back[0].name, "Cell B");
        assert_eq!(back[0].profile, "Brand   Model line two");
    }

    #[test]
    fn a_key_measured_in_two_dimensions_keeps_both_values() {
        let mut pack = item(7, "Pack", "battery_pack");
        pack.measurements.retain(|m| m.key.as_str() == "capacity");
        let mut other = item(8, "Other pack", "battery_pack");
        other.measurements =
            vec![Measurement::new("capacity", 99.0, "Wh", pack.created_at, MeasurementSource::Label).unwrap()];
        let out = inventory_output(&lines(&[pack, other]));
        assert_eq!(out.lines().nth(1), Some("#battery_pack|capacity Wh|capacity mAh"), "{out}");
        let back = parse_inventory(&out);
        assert_eq!(back[0].fields, vec![("capacity".to_owned(), Quantity { value: 3400.0, unit: Unit::MilliampHour })]);
        assert_eq!(back[1].fields, vec![("capacity".to_owned(), Quantity { value: 99.0, unit: Unit::WattHour })]);
    }

    #[test]
    fn the_listing_shows_the_current_fields() {
        let mut cell = item(9, "Cell", "lithium_cell");
        let at = |d: u32| Utc.with_ymd_and_hms(2026, 2, d, 0, 0, 0).unwrap();
        cell.measurements = [(3400.0, 2), (3100.0, 5), (2900.0, 3), (3000.0, 5), (2500.0, 1)]
            .iter()
            .map(|(v, d)| Measurement::new("capacity", *v, "mAh", at(*d), MeasurementSource::Test).unwrap())
            .collect();
        let current: Vec<(&str, f64)> = cell.current_fields().iter().map(|(k, m)| (k.as_str(), m.value)).collect();
        assert_eq!(current, vec![("capacity", 3000.0)], "the later recorded of two at the same time");
        let listed: Vec<(&str, f64)> = cell.current_measurements().iter().map(|m| (m.key.as_str(), m.value)).collect();
        assert_eq!(listed, current);
        assert!(inventory_output(&lines(&[cell])).ends_with("|3000"));
    }

    #[test]
    fn catalog_round_trips() {
        let t = NewTemplate::new(
            "Console",
            "Play | games",
            "an afternoon",
            &[],
            vec![
                requirement("controller", "an SBC; with HDMI", &["single_board_computer"], None, false, vec![])
                    .unwrap(),
                requirement("pad", "a pad", &["gamepad"], None, true, vec![]).unwrap().with_count(2).unwrap(),
            ],
        )
        .unwrap()
        .with_id(TemplateId(7));
        let out = catalog_output(&[t]);
        assert_eq!(
            out.lines().nth(1).unwrap(),
            "7|Console|Play   games|an afternoon|controller: an SBC, with HDMI; pad? x2: a pad"
        );
        let back = parse_catalog(&out);
        assert_eq!(
            back,
            vec![CatalogLine {
                id: 7,
                label: "Console".into(),
                requirements: vec![("controller".into(), false, 1), ("pad".into(), true, 2)]
            }]
        );
    }

    #[test]
    fn details_carry_everything_else() {
        let out = details_output(&item(5, "Cell", "lithium_cell"));
        assert!(out.contains("\n5|Cell|lithium_cell|like_new|keep|available|"), "{out}");
        assert!(out.contains("faults: minor: dent"));
        assert!(out.contains("tests: capacity test pass 3300 mAh"));
        assert!(out.contains("accessories: case"));
        assert!(out.contains("components: 4"));
        assert_eq!(parse_details_faults(&out), vec![(Severity::Minor, "dent".to_owned())]);
        assert!(!out.contains("units:"), "a single thing says nothing of units");
        let mut stock = item(6, "AA cell", "aa_cell");
        stock.quantity = 10;
        stock.units_held = 4;
        assert!(details_output(&stock).contains("\nunits: 10 in all, 4 held by projects, 6 available"));
    }

    #[test]
    fn error_output_is_json() {
        assert_eq!(error_output("no tool named fly"), r#"{"error":"no tool named fly"}"#);
    }
}
