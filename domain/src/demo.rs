//! The demo inventory: about forty items of a maker's household, so a fresh install shows what Trove does.
//!
//! It holds several complete kits for built-in templates (retro console, NAS, power bank, bench supply,
//! ad-blocker, LED strip lighting, home server, backup box, weather station), some near-misses (a cell below the
//! capacity a power bank needs, a board with a blocking fault), items meant for sale or giving away with faults
//! and tests (so listing drafts and share texts have something to say), a laptop with its battery as a component,
//! and two items already gone.
//!
//! The items are content, not code: they live in `domain/data/demo.toml`, embedded in the program with
//! `include_str!` and read here through the item constructors ([`ItemName::new`], [`ItemType::new`],
//! [`Measurement::new`], [`Fault::new`], [`TestDone::new`], ...). Adding an item is an edit of that file.

use crate::Timestamp;
use crate::ids::ItemId;
use crate::item::{
    self, Condition, Fault, Gone, GoneReason, Intent, Item, ItemError, ItemName, ItemType, Measurement,
    MeasurementSource, NewItem, Severity, TestDone, TestResult,
};
use crate::units;
use chrono::TimeDelta;
use serde::Deserialize;

/// The demo inventory as shipped: `domain/data/demo.toml`.
const DEMO_TOML: &str = include_str!("../data/demo.toml");

/// One item of the demo inventory.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoItem {
    pub item: NewItem,
    /// Indices into the list [`inventory`] returns of the items this one is made of; the seeder turns them into
    /// ids once the store has given them.
    pub components: Vec<usize>,
    /// Set for an item that already left the inventory: why, and a note.
    pub gone: Option<(GoneReason, String)>,
}

/// Why the demo inventory does not load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DemoError {
    /// The file is not TOML of the expected shape (an unknown key, a missing one, a wrong type).
    #[error("demo.toml does not read: {0}")]
    Parse(String),
    /// A value of an item is refused by its constructor.
    #[error("demo item {name:?}: {source}")]
    Item { name: String, source: ItemError },
    /// A test's reading is not a quantity ("2430 mAh").
    #[error("demo item {name:?}: test value {value:?}: {reason}")]
    TestValue { name: String, value: String, reason: String },
    #[error("demo item name {0:?} appears twice")]
    DuplicateName(String),
    /// `made_of` names no other item of the file.
    #[error("demo item {name:?}: no other item {component:?} to be made of")]
    NoSuchComponent { name: String, component: String },
}

/// `demo.toml`: the items, in the order they are seeded (the store gives ids in this order).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DemoFile {
    item: Vec<ItemEntry>,
}

/// One `[[item]]`, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ItemEntry {
    name: String,
    item_type: String,
    profile: String,
    condition: Condition,
    /// `keep` when left out.
    intent: Option<Intent>,
    location: Option<String>,
    #[serde(default)]
    measurements: Vec<MeasurementEntry>,
    #[serde(default)]
    faults: Vec<FaultEntry>,
    #[serde(default)]
    tests: Vec<TestEntry>,
    #[serde(default)]
    accessories: Vec<String>,
    /// Names of other items of the file this one is made of.
    #[serde(default)]
    made_of: Vec<String>,
    gone: Option<GoneEntry>,
}

/// A reading: `label` (off the label or the box) and `manual` (from the spec sheet) are dated when the item came
/// in, `test` (measured by the owner, so newer and the current field) when it was tested.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeasurementEntry {
    key: String,
    value: f64,
    unit: String,
    source: MeasurementSource,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultEntry {
    text: String,
    severity: Severity,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TestEntry {
    name: String,
    result: TestResult,
    /// The reading the test gave, as text ("2430 mAh").
    value: Option<String>,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GoneEntry {
    reason: GoneReason,
    note: String,
}

impl ItemEntry {
    /// The item, its measurements dated `labelled` or `tested`; components are resolved by the caller.
    fn build(&self, labelled: Timestamp, tested: Timestamp) -> Result<DemoItem, DemoError> {
        let bad = |source: ItemError| DemoError::Item { name: self.name.clone(), source };
        let mut new = NewItem::new(
            ItemName::new(&self.name).map_err(bad)?,
            ItemType::new(&self.item_type).map_err(bad)?,
            item::profile(&self.profile).map_err(bad)?,
            self.condition,
            self.intent.unwrap_or(Intent::Keep),
        );
        new.location = item::location(self.location.as_deref()).map_err(bad)?;
        for m in &self.measurements {
            let at = if m.source == MeasurementSource::Test { tested } else { labelled };
            new.measurements.push(Measurement::new(&m.key, m.value, &m.unit, at, m.source).map_err(bad)?);
        }
        for f in &self.faults {
            new.faults.push(Fault::new(&f.text, f.severity).map_err(bad)?);
        }
        for t in &self.tests {
            let value = t
                .value
                .as_deref()
                .map(|v| {
                    units::parse(v).map_err(|e| DemoError::TestValue {
                        name: self.name.clone(),
                        value: v.to_owned(),
                        reason: e.to_string(),
                    })
                })
                .transpose()?;
            new.tests_done.push(TestDone::new(&t.name, t.result, value, tested, t.note.as_deref()).map_err(bad)?);
        }
        new.accessories = item::accessories(&self.accessories).map_err(bad)?;
        let gone = match &self.gone {
            Some(g) => Some((g.reason, item::short_text(&g.note, "gone note").map_err(bad)?)),
            None => None,
        };
        Ok(DemoItem { item: new, components: Vec::new(), gone })
    }
}

/// The demo inventory, dated relative to `at` (labels read three months before, tests two weeks before).
///
/// ```
/// use chrono::{TimeZone, Utc};
/// let items = trove_domain::demo::inventory(Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap());
/// assert!((35..=50).contains(&items.len()));
/// ```
pub fn inventory(at: Timestamp) -> Vec<DemoItem> {
    match try_inventory(at) {
        Ok(items) => items,
        // The demo inventory is a constant of the program: an invalid entry is a bug caught by the unit tests.
        Err(e) => panic!("the demo inventory is invalid: {e}"),
    }
}

/// The demo inventory, or the first error in it.
///
/// # Errors
/// [`DemoError`]: the file does not read, a value is refused (the item named), two items share a name or
/// `made_of` names no other item.
pub fn try_inventory(at: Timestamp) -> Result<Vec<DemoItem>, DemoError> {
    parse(DEMO_TOML, at)
}

/// Reads a demo file's text.
fn parse(text: &str, at: Timestamp) -> Result<Vec<DemoItem>, DemoError> {
    let file: DemoFile = toml::from_str(text).map_err(|e| DemoError::Parse(e.to_string()))?;
    let (labelled, tested) = (at - TimeDelta::days(90), at - TimeDelta::days(14));
    let mut items: Vec<DemoItem> = Vec::with_capacity(file.item.len());
    for entry in &file.item {
        let demo = entry.build(labelled, tested)?;
        if items.iter().any(|d| d.item.name == demo.item.name) {
            return Err(DemoError::DuplicateName(demo.item.name.to_string()));
        }
        items.push(demo);
    }
    for (i, entry) in file.item.iter().enumerate() {
        for component in &entry.made_of {
            let found = items.iter().position(|d| d.item.name.as_str() == component.trim()).filter(|c| *c != i);
            let c = found
                .ok_or_else(|| DemoError::NoSuchComponent { name: entry.name.clone(), component: component.clone() })?;
            items[i].components.push(c);
        }
    }
    Ok(items)
}

/// The demo inventory as a store would hold it after seeding an empty household: ids 1, 2, ... in list order,
/// components and gone records resolved. For tests of the rules and of the planner against realistic data.
pub fn stored(at: Timestamp) -> Vec<Item> {
    inventory(at)
        .into_iter()
        .enumerate()
        .map(|(i, d)| Item {
            gone: d.gone.map(|(reason, note)| Gone { reason, at, note: Some(note) }),
            components: d.components.iter().map(|c| ItemId(*c as i64 + 1)).collect(),
            ..d.item.stored(ItemId(i as i64 + 1), at)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;
    use crate::ids::TemplateId;
    use crate::item::Availability;
    use crate::template::Template;
    use chrono::{TimeZone, Utc};
    use std::collections::HashSet;

    /// Types that no template uses but that a household plausibly sells, gives away or has already disposed of.
    const SELL_OR_GIVE_ONLY: &[&str] = &["graphics_card", "printer", "lead_acid_battery"];

    fn at() -> Timestamp {
        Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
    }

    fn stored() -> Vec<Item> {
        super::stored(at())
    }

    fn templates() -> Vec<Template> {
        catalogue::builtin().into_iter().enumerate().map(|(i, t)| t.with_id(TemplateId(i as i64 + 1))).collect()
    }

    #[test]
    fn about_forty_items_of_every_kind() {
        let items = stored();
        assert!((38..=46).contains(&items.len()), "{} items", items.len());
        let names: HashSet<&str> = items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names.len(), items.len(), "names are unique");
        assert!(items.iter().filter(|i| i.intent == Intent::Sell && i.gone.is_none()).count() >= 2);
        assert!(items.iter().any(|i| i.intent == Intent::Give));
        assert!((1..=2).contains(&items.iter().filter(|i| i.gone.is_some()).count()));
        assert!(items.iter().any(|i| i.faults.iter().any(|f| f.severity == Severity::Blocking) && i.gone.is_none()));
        assert!(items.iter().any(|i| i.faults.iter().any(|f| f.severity == Severity::Major)));
        assert!(items.iter().filter(|i| !i.tests_done.is_empty()).count() >= 5);
        assert!(items.iter().all(|i| i.availability == Availability::Available));
        let sold: Vec<&Item> = items.iter().filter(|i| i.intent == Intent::Sell && i.gone.is_none()).collect();
        assert!(
            sold.iter().all(|i| !i.faults.is_empty() && !i.tests_done.is_empty()),
            "sale items have faults and tests"
        );
    }

    #[test]
    fn every_item_type_has_a_use() {
        let used: HashSet<String> = templates()
            .iter()
            .flat_map(|t| t.requirements.iter().flat_map(|r| r.item_types.iter().map(|ty| ty.to_string())))
            .collect();
        for item in stored() {
            let ty = item.item_type.as_str();
            assert!(
                used.contains(ty)
                    || (SELL_OR_GIVE_ONLY.contains(&ty) && (item.intent != Intent::Keep || item.gone.is_some())),
                "{}: item_type {ty} is used by no template",
                item.name
            );
        }
    }

    #[test]
    fn components_point_at_other_items() {
        let demo = inventory(at());
        for (i, d) in demo.iter().enumerate() {
            for c in &d.components {
                assert!(*c < demo.len() && *c != i, "{}: component {c}", d.item.name);
            }
        }
        let laptop = demo.iter().find(|d| d.item.item_type.as_str() == "laptop").unwrap();
        assert_eq!(demo[laptop.components[0]].item.item_type.as_str(), "battery_pack");
    }

    #[test]
    fn current_fields_prefer_the_owners_test() {
        let items = stored();
        let cell = items.iter().find(|i| i.name.as_str() == "Samsung 25R 18650 cell").unwrap();
        assert_eq!(cell.field("capacity").map(|q| q.value), Some(2430.0));
    }

    /// A greedy assignment: each template in turn takes, for each non-optional requirement, the first buildable
    /// unused item that passes the check; a template that is fully covered keeps its items.
    #[test]
    fn several_templates_can_be_built_from_the_demo_kits() {
        let items = stored();
        let mut used: HashSet<ItemId> = HashSet::new();
        let mut built: Vec<String> = Vec::new();
        for t in templates() {
            let mut taken: Vec<ItemId> = Vec::new();
            let complete = t.requirements.iter().filter(|r| !r.optional).all(|r| {
                let pick = items.iter().find(|i| {
                    i.is_buildable() && !used.contains(&i.id) && !taken.contains(&i.id) && r.check(i).is_ok()
                });
                pick.map(|i| taken.push(i.id)).is_some()
            });
            if complete {
                used.extend(taken);
                built.push(t.label.clone());
            }
        }
        assert!(built.len() >= 5, "{built:?}");
    }

    /// Each named kit is complete on its own: every non-optional requirement has its own buildable item.
    #[test]
    fn each_kit_is_complete_on_its_own() {
        let items = stored();
        for label in [
            "Retro game console",
            "Home NAS",
            "Power bank from 18650 cells",
            "Bench power supply from an ATX unit",
            "Network ad-blocker (Pi-hole)",
            "12 V LED strip lighting",
            "Laptop to home server",
            "Spare-drive backup box",
            "Weather station",
        ] {
            let t = templates().into_iter().find(|t| t.label == label).unwrap();
            let mut taken: Vec<ItemId> = Vec::new();
            for r in t.requirements.iter().filter(|r| !r.optional) {
                let pick = items.iter().find(|i| i.is_buildable() && !taken.contains(&i.id) && r.check(i).is_ok());
                let pick = pick.unwrap_or_else(|| panic!("{label}: nothing for {}", r.key));
                taken.push(pick.id);
            }
        }
    }

    #[test]
    fn the_ad_blocker_kit_is_complete_on_its_own() {
        let items = stored();
        let t = templates().into_iter().find(|t| t.label.starts_with("Network ad-blocker")).unwrap();
        let kit = ["Raspberry Pi Zero W", "Kingston Canvas Select 16GB microSD", "Micro-USB 5V 2.5A power adapter"];
        for (r, name) in t.requirements.iter().filter(|r| !r.optional).zip(kit) {
            let item = items.iter().find(|i| i.name.as_str() == name).unwrap();
            assert_eq!(r.check(item), Ok(()), "{name} for {}", r.key);
        }
    }

    #[test]
    fn every_item_reads_and_none_is_lost() {
        let demo = try_inventory(at()).unwrap();
        assert!(demo.len() >= 46, "items were lost: {} of the 46 shipped", demo.len());
        let names: HashSet<&str> = demo.iter().map(|d| d.item.name.as_str()).collect();
        assert_eq!(names.len(), demo.len(), "names are unique");
    }

    /// A bound of the catalogue and a measurement with the same key of a demo item the requirement accepts are in
    /// the same canonical unit, so the bound compares like with like.
    #[test]
    fn catalogue_bounds_and_demo_fields_agree_on_units() {
        let items = stored();
        for t in templates() {
            for r in &t.requirements {
                for b in &r.fields {
                    for i in items.iter().filter(|i| r.item_types.contains(&i.item_type)) {
                        for m in i.measurements.iter().filter(|m| m.key == b.key) {
                            assert_eq!(m.unit, b.unit, "{}: {}: {} of {}", t.label, r.key, b.key, i.name);
                        }
                    }
                }
            }
        }
    }

    const LAMP: &str =
        "[[item]]\nname = \"Lamp\"\nitem_type = \"lamp\"\nprofile = \"brass desk lamp\"\ncondition = \"good\"\n";

    #[test]
    fn an_item_file_reads_through_the_constructors() {
        let text = format!(
            "{LAMP}measurements = [\n  {{ key = \"power\", value = 0.04, unit = \"kW\", source = \"label\" }},\n  \
             {{ key = \"power\", value = 35, unit = \"W\", source = \"test\" }},\n]\n\
             tests = [{{ name = \"lights\", result = \"pass\", value = \"35 W\" }}]\n\
             accessories = [\"bulb\", \"Bulb\"]\n\n\
             [[item]]\nname = \"Bulb\"\nitem_type = \"bulb\"\nprofile = \"\"\ncondition = \"new\"\nintent = \"give\"\n\
             made_of = [\"Lamp\"]\ngone = {{ reason = \"given\", note = \"to a neighbour\" }}\n"
        );
        let demo = parse(&text, at()).unwrap();
        let lamp = &demo[0].item;
        assert_eq!(lamp.intent, Intent::Keep);
        assert_eq!(lamp.measurements[0].value, 40.0, "normalised to W");
        assert_eq!(lamp.measurements[0].at, at() - TimeDelta::days(90));
        assert_eq!(lamp.measurements[1].at, at() - TimeDelta::days(14));
        assert_eq!(lamp.accessories, vec!["bulb".to_owned()], "duplicates kept once");
        assert_eq!(lamp.tests_done[0].value.map(|q| q.value), Some(35.0));
        assert_eq!(demo[1].components, vec![0]);
        assert_eq!(demo[1].gone, Some((GoneReason::Given, "to a neighbour".to_owned())));
    }

    #[test]
    fn a_bad_item_is_named() {
        let err = |extra: &str| parse(&format!("{LAMP}{extra}"), at()).unwrap_err();
        assert!(matches!(
            err("measurements = [{ key = \"power\", value = 5, unit = \"furlongs\", source = \"label\" }]"),
            DemoError::Item { ref name, source: ItemError::BadMeasurement { .. } } if name == "Lamp"
        ));
        assert!(matches!(err("faults = [{ text = \" \", severity = \"minor\" }]"), DemoError::Item { .. }));
        assert!(matches!(
            err("tests = [{ name = \"lights\", result = \"pass\", value = \"bright\" }]"),
            DemoError::TestValue { .. }
        ));
        assert_eq!(
            err("made_of = [\"Lamp\"]"),
            DemoError::NoSuchComponent { name: "Lamp".into(), component: "Lamp".into() }
        );
        assert!(matches!(err("colour = \"brass\""), DemoError::Parse(ref e) if e.contains("colour")));
        assert!(matches!(err("intent = \"hoard\""), DemoError::Parse(_)));
        assert_eq!(parse(&format!("{LAMP}\n{LAMP}"), at()), Err(DemoError::DuplicateName("Lamp".into())));
        let bad_type = LAMP.replace("item_type = \"lamp\"", "item_type = \"12\"");
        assert!(matches!(parse(&bad_type, at()), Err(DemoError::Item { source: ItemError::BadItemType(_), .. })));
    }
}
