//! The function tools of the proposal loop and their compact outputs.
//!
//! Tool outputs are resent at every step of the loop, so their size is paid for again and again: one line per
//! item, `|`-separated columns named once in a header, items grouped under their type so the type is written
//! once, and fields as `key=value unit`. The parsers below read the same format back; the local planner uses
//! them, and tests use them to show nothing is lost.

use trove_domain::item::{Condition, Item, Severity};
use trove_domain::template::Template;
use trove_domain::units::{self, Quantity};

/// Name of the tool listing every buildable item.
pub const LIST_INVENTORY: &str = "list_inventory";
/// Name of the tool listing the templates.
pub const TEMPLATE_CATALOG: &str = "template_catalog";
/// Name of the tool giving one item in full.
pub const ITEM_DETAILS: &str = "item_details";

/// The JSON schema of a tool without parameters (strict).
pub const NO_PARAMETERS: &str = r#"{"type":"object","properties":{},"required":[],"additionalProperties":false}"#;
/// The JSON schema of `item_details` (strict).
pub const ITEM_DETAILS_PARAMETERS: &str = r#"{"type":"object","properties":{"item_id":{"type":"integer","description":"the id of an item from list_inventory"}},"required":["item_id"],"additionalProperties":false}"#;

const INVENTORY_HEADER: &str = "buildable items (all intent keep, availability available), grouped by #item_type; id|name|condition|profile|fields";
const CATALOG_HEADER: &str = "templates; id|label|goal|effort|requirements as key: label (key? = optional)";

/// Makes a free text safe for one column: no column separator, no line break.
fn cell(text: &str) -> String {
    text.replace(['|', '\n', '\r'], " ").trim().to_owned()
}

fn fields(item: &Item) -> String {
    item.current_fields().iter().map(|(k, m)| format!("{k}={}", m.quantity())).collect::<Vec<_>>().join(";")
}

/// The output of `list_inventory` for `items` (the caller passes only buildable ones).
///
/// ```text
/// buildable items (...); id|name|condition|profile|fields
/// #single_board_computer
/// 12|Raspberry Pi 4 Model B 4GB|good|BCM2711, 4GB RAM|ram=4 GB
/// ```
pub fn inventory_output<'a>(items: impl IntoIterator<Item = &'a Item>) -> String {
    let mut sorted: Vec<&Item> = items.into_iter().collect();
    sorted.sort_by(|a, b| a.item_type.cmp(&b.item_type).then(a.id.cmp(&b.id)));
    let mut out = String::with_capacity(64 + sorted.len() * 80);
    out.push_str(INVENTORY_HEADER);
    let mut current_type = "";
    for item in sorted {
        if item.item_type.as_str() != current_type {
            current_type = item.item_type.as_str();
            out.push_str("\n#");
            out.push_str(current_type);
        }
        out.push('\n');
        out.push_str(&format!(
            "{}|{}|{}|{}|{}",
            item.id,
            cell(item.name.as_str()),
            item.condition,
            cell(&item.profile),
            fields(item)
        ));
    }
    out
}

/// The output of `template_catalog`.
pub fn catalog_output(templates: &[Template]) -> String {
    let mut out = String::from(CATALOG_HEADER);
    for t in templates {
        let reqs = t
            .requirements
            .iter()
            .map(|r| format!("{}{}: {}", r.key, if r.optional { "?" } else { "" }, cell(&r.label).replace(';', ",")))
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
        fields(item)
    );
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

/// One line of `list_inventory`, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct InventoryLine {
    pub id: i64,
    pub name: String,
    pub item_type: String,
    pub condition: Condition,
    pub profile: String,
    pub fields: Vec<(String, Quantity)>,
}

fn parse_fields(raw: &str) -> Vec<(String, Quantity)> {
    raw.split(';')
        .filter_map(|f| {
            let (k, v) = f.split_once('=')?;
            Some((k.trim().to_owned(), units::parse(v).ok()?))
        })
        .collect()
}

/// Reads a `list_inventory` output back; lines that do not parse are skipped.
pub fn parse_inventory(output: &str) -> Vec<InventoryLine> {
    let mut item_type = String::new();
    let mut out = Vec::new();
    for line in output.lines().skip(1) {
        if let Some(t) = line.strip_prefix('#') {
            item_type = t.trim().to_owned();
            continue;
        }
        let cols: Vec<&str> = line.splitn(5, '|').collect();
        let [id, name, condition, profile, fields] = cols[..] else { continue };
        let (Ok(id), Some(condition)) = (id.trim().parse(), Condition::parse(condition.trim())) else { continue };
        out.push(InventoryLine {
            id,
            name: name.to_owned(),
            item_type: item_type.clone(),
            condition,
            profile: profile.to_owned(),
            fields: parse_fields(fields),
        });
    }
    out
}

/// One line of `template_catalog`, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogLine {
    pub id: i64,
    pub label: String,
    /// `(key, optional)` of each requirement.
    pub requirements: Vec<(String, bool)>,
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
                    let key = key.trim();
                    Some(match key.strip_suffix('?') {
                        Some(k) => (k.to_owned(), true),
                        None => (key.to_owned(), false),
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

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use trove_domain::item::{
        Availability, Fault, Intent, ItemName, ItemType, Measurement, MeasurementSource, TestDone, TestResult,
    };
    use trove_domain::template::{NewTemplate, requirement};
    use trove_domain::{ItemId, TemplateId};

    fn item(id: i64, name: &str, item_type: &str) -> Item {
        let at = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        Item {
            id: ItemId(id),
            name: ItemName::new(name).unwrap(),
            item_type: ItemType::new(item_type).unwrap(),
            profile: "Brand | Model\nline two".into(),
            condition: Condition::LikeNew,
            intent: Intent::Keep,
            availability: Availability::Available,
            project: None,
            gone: None,
            measurements: vec![
                Measurement::new("capacity", 3.4, "Ah", at, MeasurementSource::Label).unwrap(),
                Measurement::new("voltage", 3.7, "V", at, MeasurementSource::Label).unwrap(),
            ],
            faults: vec![Fault::new("dent", Severity::Minor).unwrap()],
            tests_done: vec![
                TestDone::new("capacity test", TestResult::Pass, units::parse("3300 mAh").ok(), at, None).unwrap(),
            ],
            accessories: vec!["case".into()],
            components: vec![ItemId(4)],
            location: None,
            created_at: at,
            updated_at: at,
            version: 1,
        }
    }

    #[test]
    fn inventory_round_trips_and_groups_by_type() {
        let items = [
            item(2, "Cell B", "lithium_cell"),
            item(1, "Pi", "single_board_computer"),
            item(3, "Cell A", "lithium_cell"),
        ];
        let out = inventory_output(&items);
        assert_eq!(
            out.lines().skip(1).collect::<Vec<_>>(),
            vec![
                "#lithium_cell",
                "2|Cell B|like_new|Brand   Model line two|capacity=3400 mAh;voltage=3.7 V",
                "3|Cell A|like_new|Brand   Model line two|capacity=3400 mAh;voltage=3.7 V",
                "#single_board_computer",
                "1|Pi|like_new|Brand   Model line two|capacity=3400 mAh;voltage=3.7 V",
            ]
        );
        let back = parse_inventory(&out);
        assert_eq!(
            back.iter().map(|l| (l.id, l.item_type.as_str())).collect::<Vec<_>>(),
            vec![(2, "lithium_cell"), (3, "lithium_cell"), (1, "single_board_computer")]
        );
        assert_eq!(back[0].fields[0].0, "capacity");
        assert_eq!(back[0].fields[0].1.value, 3400.0);
        assert_eq!(back[0].condition, Condition::LikeNew);
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
                requirement("pad", "a pad", &["gamepad"], None, true, vec![]).unwrap(),
            ],
        )
        .unwrap()
        .with_id(TemplateId(7));
        let out = catalog_output(&[t]);
        assert_eq!(
            out.lines().nth(1).unwrap(),
            "7|Console|Play   games|an afternoon|controller: an SBC, with HDMI; pad?: a pad"
        );
        let back = parse_catalog(&out);
        assert_eq!(
            back,
            vec![CatalogLine {
                id: 7,
                label: "Console".into(),
                requirements: vec![("controller".into(), false), ("pad".into(), true)]
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
    }

    #[test]
    fn error_output_is_json() {
        assert_eq!(error_output("no tool named fly"), r#"{"error":"no tool named fly"}"#);
    }
}
