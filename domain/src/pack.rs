//! The build pack: everything needed to build a project, in one printable document. Which item fills which
//! requirement, where it is, what state it is in, what to test before trusting it, what is still missing, and a
//! checklist to work through.

use crate::ids::{ItemId, ProjectId, TemplateId};
use crate::item::{Condition, Item};
use crate::listing::{one_line, test_in_words};
use crate::project::{Project, ProjectStatus};
use crate::template::Template;
use serde::Serialize;

/// The build pack of one project. Served as JSON and, through [`BuildPack::to_markdown`], as Markdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildPack {
    pub project_id: ProjectId,
    pub title: String,
    pub template_id: TemplateId,
    /// The template's label ("Retro game console").
    pub template: String,
    pub goal: String,
    pub effort: String,
    pub status: ProjectStatus,
    /// Why the project was proposed, as the proposal said.
    pub reason: String,
    pub steps: Vec<String>,
    /// One entry per allocation, in the project's order.
    pub allocations: Vec<PackAllocation>,
    /// The non-optional requirements no item covers: a shopping list.
    pub missing: Vec<MissingPart>,
    /// Gather, test, build, buy: one line per thing to do.
    pub checklist: Vec<String>,
}

/// One requirement and the item that fills it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackAllocation {
    pub requirement: String,
    /// What the requirement asks for, in words ("a single-board computer with HDMI out").
    pub label: String,
    /// The machine check in words ([`crate::template::Requirement::describe_check`]).
    pub check: String,
    pub item_id: ItemId,
    /// How many of the item's units it takes: 1 for a single thing.
    pub units: u32,
    /// `None` when the item is no longer in the inventory.
    pub item: Option<PackItem>,
    /// Something that stands in the way of using the item: missing from the inventory, gone.
    pub problem: Option<String>,
}

/// What the builder needs to know about one allocated item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PackItem {
    pub id: ItemId,
    pub name: String,
    pub item_type: String,
    pub location: Option<String>,
    pub condition: Condition,
    /// The current fields as `key: value unit`.
    pub fields: Vec<String>,
    pub accessories: Vec<String>,
    /// Known faults as `text (severity)`.
    pub faults: Vec<String>,
    /// Tests done, in words with result and reading.
    pub tests_done: Vec<String>,
    /// Sensible checks for this kind of item not done yet ([`tests_still_advisable`]).
    pub tests_advisable: Vec<String>,
}

/// A requirement no item covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingPart {
    pub requirement: String,
    pub label: String,
    pub check: String,
}

/// The checks worth running on an item of this type before building it in; empty for types with none known
/// (lumber needs no test).
///
/// ```
/// use trove_domain::pack::advisable_tests;
/// assert_eq!(advisable_tests("lithium_cell"), ["capacity test", "internal resistance"]);
/// assert!(advisable_tests("lumber").is_empty());
/// ```
pub fn advisable_tests(item_type: &str) -> &'static [&'static str] {
    match item_type {
        "power_supply" | "power_adapter" | "atx_power_supply" | "bench_power_supply" | "psu" => {
            &["output voltage under load"]
        }
        "lithium_cell" | "battery_cell" => &["capacity test", "internal resistance"],
        "battery" | "battery_pack" | "power_bank" => &["capacity test"],
        "charger" => &["charges a known-good battery"],
        "hard_drive" | "ssd" => &["SMART self-test"],
        "sd_card" | "memory_card" | "usb_flash_drive" => &["full write and verify"],
        "ram" | "memory_module" => &["memory test"],
        "single_board_computer" => &["boots from a fresh card"],
        "microcontroller" | "microcontroller_board" | "development_board" => &["uploads a blink sketch"],
        "laptop" => &["boots and charges", "battery health"],
        "desktop_pc" | "mini_pc" => &["boots and runs a stress test"],
        "graphics_card" | "gpu" => &["stress test"],
        "monitor" | "display" | "tv" | "lcd_panel" => &["shows a picture on every input", "dead pixel check"],
        "led_strip" | "led_panel" => &["every LED lights in every colour"],
        "fan" => &["spins up quietly"],
        "motor" | "stepper_motor" | "servo" => &["turns smoothly under power"],
        "router" | "network_switch" | "access_point" => &["links on every port"],
        "usb_hub" => &["every port enumerates a device"],
        "keyboard" | "gamepad" | "controller" => &["every key and button registers"],
        "speaker" | "amplifier" => &["plays without distortion"],
        "camera" | "webcam" => &["captures a sharp picture"],
        "solar_panel" => &["open-circuit voltage in sun"],
        "sensor" => &["gives plausible readings"],
        "3d_printer" => &["prints a calibration cube"],
        "soldering_iron" => &["reaches temperature"],
        _ => &[],
    }
}

/// The [`advisable_tests`] of the item's type minus those already done, whatever their result. A done test
/// matches ignoring case, spacing and punctuation ("smart self test" is "SMART self-test").
///
/// ```
/// # use trove_domain::{ids::ItemId, item::*, Timestamp};
/// # let at = Timestamp::UNIX_EPOCH;
/// # let mut cell = Item { id: ItemId(7), name: ItemName::new("Samsung 30Q").unwrap(),
/// #     item_type: ItemType::new("lithium_cell").unwrap(), profile: String::new(), condition: Condition::Good,
/// #     intent: Intent::Keep, availability: Availability::Available, project: None, gone: None,
/// #     measurements: vec![], faults: vec![], tests_done: vec![], accessories: vec![], components: vec![],
/// #     quantity: 1, min_quantity: None, units_held: 0, units_lent: 0, loan: None, tags: Tags::default(), codes: Default::default(), details: Default::default(),
/// #     place_path: None, place_id: None, cover: None, created_at: at, updated_at: at, version: 1 };
/// cell.tests_done.push(TestDone::new("Capacity Test", TestResult::Fail, None, at, None).unwrap());
/// assert_eq!(trove_domain::pack::tests_still_advisable(&cell), ["internal resistance"]);
/// ```
pub fn tests_still_advisable(item: &Item) -> Vec<String> {
    let squash = |s: &str| s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect::<String>();
    let done: Vec<String> = item.tests_done.iter().map(|t| squash(&t.name)).collect();
    advisable_tests(item.item_type.as_str())
        .iter()
        .filter(|test| !done.contains(&squash(test)))
        .map(|test| (*test).to_owned())
        .collect()
}

/// **The build pack rule.** For `project` (built from `template`), with `items` holding the allocated items:
/// one entry per allocation with the requirement's label and check and the item's name, location, condition,
/// current fields, accessories, known faults, tests done and tests still advisable; the missing requirements;
/// and a checklist: gather each item, run the advisable tests, follow each step, buy the missing parts. An
/// allocated item absent from `items` is shown as missing from the inventory; a requirement the template no
/// longer has is shown by its key. Nothing here can panic on inconsistent input.
///
/// ```
/// # use trove_domain::{ids::*, project::*, template::*, Timestamp};
/// # let at = Timestamp::UNIX_EPOCH;
/// # let template = NewTemplate::new("Pi-hole", "Block ads on the network.", "an evening", &["Flash the card".into()],
/// #     vec![requirement("controller", "a Pi", &["single_board_computer"], None, false, vec![]).unwrap()])
/// #     .unwrap().with_id(TemplateId(1));
/// # let project = Project { id: ProjectId(3), template_id: TemplateId(1), title: "Ad-blocker".into(),
/// #     reason: "spare Pi".into(), status: ProjectStatus::Proposed,
/// #     allocations: vec![Allocation { requirement: "controller".into(), item_id: ItemId(12), units: 1 }],
/// #     missing: vec![], created_at: at, updated_at: at };
/// let pack = trove_domain::pack::build_pack(&project, &template, &[]);
/// assert_eq!(pack.allocations[0].problem.as_deref(), Some("item 12 is missing from the inventory"));
/// assert!(pack.to_markdown().starts_with("# Ad-blocker\n"));
/// ```
pub fn build_pack(project: &Project, template: &Template, items: &[Item]) -> BuildPack {
    let mut checklist: Vec<String> = Vec::new();
    let mut tests: Vec<String> = Vec::new();
    let mut allocations: Vec<PackAllocation> = Vec::new();
    for a in &project.allocations {
        let (label, check) = requirement_words(template, &a.requirement);
        let item = items.iter().find(|i| i.id == a.item_id);
        let problem = match item {
            None => Some(format!("item {} is missing from the inventory", a.item_id)),
            Some(i) => i.gone.as_ref().map(|g| format!("item {} is gone ({})", i.id, g.reason)),
        };
        match (item, &problem) {
            (Some(i), None) => {
                let place = i.location().as_deref().map(one_line).filter(|l| !l.is_empty());
                let name = one_line(i.name.as_str());
                let name = if a.units > 1 { format!("{} x {name}", a.units) } else { name };
                checklist.push(match place {
                    Some(l) => format!("Gather {name} (item {}) from {l}, for {}", i.id, a.requirement),
                    None => format!("Gather {name} (item {}), for {}", i.id, a.requirement),
                });
                tests.extend(tests_still_advisable(i).iter().map(|t| format!("Test {name} (item {}): {t}", i.id)));
            }
            _ => checklist.push(format!("Find another item for {}: {label}", a.requirement)),
        }
        allocations.push(PackAllocation {
            requirement: a.requirement.clone(),
            label,
            check,
            item_id: a.item_id,
            units: a.units,
            item: item.map(pack_item),
            problem,
        });
    }
    checklist.extend(tests);
    checklist.extend(template.steps.iter().map(|s| one_line(s)));
    let missing: Vec<MissingPart> = project
        .missing
        .iter()
        .map(|key| {
            let (label, check) = requirement_words(template, key);
            MissingPart { requirement: key.clone(), label, check }
        })
        .collect();
    checklist.extend(missing.iter().map(|m| format!("Buy or find {} ({}): {}", m.requirement, m.label, m.check)));
    BuildPack {
        project_id: project.id,
        title: project.title.clone(),
        template_id: template.id,
        template: template.label.clone(),
        goal: template.goal.clone(),
        effort: template.effort.clone(),
        status: project.status,
        reason: project.reason.clone(),
        steps: template.steps.clone(),
        allocations,
        missing,
        checklist,
    }
}

/// A requirement's label and check in words; a key the template no longer has is shown as such.
fn requirement_words(template: &Template, key: &str) -> (String, String) {
    match template.requirement(key) {
        Some(r) => (r.label.clone(), r.describe_check()),
        None => (key.to_owned(), "no longer in the template".to_owned()),
    }
}

fn pack_item(item: &Item) -> PackItem {
    PackItem {
        id: item.id,
        name: item.name.to_string(),
        item_type: item.item_type.to_string(),
        location: item.location(),
        condition: item.condition,
        fields: item.current_fields().iter().map(|(k, m)| format!("{k}: {}", m.quantity().for_people())).collect(),
        accessories: item.accessories.clone(),
        faults: item.faults.iter().map(|f| format!("{} ({})", f.text, f.severity)).collect(),
        tests_done: item.tests_done.iter().map(test_in_words).collect(),
        tests_advisable: tests_still_advisable(item),
    }
}

impl BuildPack {
    /// The pack as a printable Markdown document: the project and its goal, one section per requirement with
    /// its item, the missing parts, the steps, and the checklist as `- [ ]` lines. Owner text is kept on one line
    /// so it cannot break the document's structure.
    pub fn to_markdown(&self) -> String {
        let mut md: Vec<String> = vec![format!("# {}", one_line(&self.title)), String::new()];
        md.push(format!("**Template:** {}  ", one_line(&self.template)));
        md.push(format!("**Effort:** {}  ", one_line(&self.effort)));
        md.push(format!("**Status:** {}", self.status));
        md.push(String::new());
        md.push(one_line(&self.goal));
        if !self.reason.trim().is_empty() {
            md.push(String::new());
            md.push(format!("Why: {}", one_line(&self.reason)));
        }
        md.push(String::new());
        md.push("## Parts".to_owned());
        if self.allocations.is_empty() {
            md.push(String::new());
            md.push("No part is allocated yet.".to_owned());
        }
        for a in &self.allocations {
            md.push(String::new());
            md.push(format!("### {}: {}", a.requirement, one_line(&a.label)));
            md.push(String::new());
            md.push(format!("Needs: {}", a.check));
            md.push(String::new());
            if let Some(p) = &a.problem {
                md.push(format!("**Problem:** {p}."));
                md.push(String::new());
            }
            if a.units > 1 {
                md.push(format!("Takes {} units.", a.units));
                md.push(String::new());
            }
            match &a.item {
                Some(i) => item_markdown(&mut md, i),
                None => md.push(format!("Item {}: not in the inventory.", a.item_id)),
            }
        }
        if !self.missing.is_empty() {
            md.push(String::new());
            md.push("## Missing".to_owned());
            md.push(String::new());
            md.extend(
                self.missing.iter().map(|m| format!("- **{}**: {} ({})", m.requirement, one_line(&m.label), m.check)),
            );
        }
        if !self.steps.is_empty() {
            md.push(String::new());
            md.push("## Steps".to_owned());
            md.push(String::new());
            md.extend(self.steps.iter().enumerate().map(|(n, s)| format!("{}. {}", n + 1, one_line(s))));
        }
        md.push(String::new());
        md.push("## Checklist".to_owned());
        md.push(String::new());
        md.extend(self.checklist.iter().map(|c| format!("- [ ] {}", one_line(c))));
        md.push(String::new());
        md.join("\n")
    }
}

fn item_markdown(md: &mut Vec<String>, i: &PackItem) {
    let place = i.location.as_deref().map(one_line).filter(|l| !l.is_empty());
    let place = place.map(|l| format!(", at {l}")).unwrap_or_default();
    md.push(format!("**{}** (item {}, {}){place}", one_line(&i.name), i.id, i.item_type));
    md.push(String::new());
    md.push(format!("- Condition: {}", i.condition.human()));
    let list = |title: &str, entries: &[String], none: &str| {
        let text = if entries.is_empty() {
            none.to_owned()
        } else {
            entries.iter().map(|e| one_line(e)).collect::<Vec<_>>().join("; ")
        };
        format!("- {title}: {text}")
    };
    md.push(list("Measurements", &i.fields, "none recorded"));
    md.push(list("Accessories", &i.accessories, "none"));
    md.push(list("Known faults", &i.faults, "none"));
    md.push(list("Tests done", &i.tests_done, "none"));
    md.push(list("Tests still advisable", &i.tests_advisable, "none"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::{Fault, Gone, GoneReason, ItemName, Severity, TestDone, TestResult};
    use crate::project::Allocation;
    use crate::template::{FieldBound, NewTemplate, requirement};
    use crate::testing::{at, item, measure};

    fn template() -> Template {
        NewTemplate::new(
            "Bench power supply",
            "A 12 V bench supply from a spare power supply.",
            "an afternoon",
            &["Check the supply under load".into(), "Fit the binding posts".into()],
            vec![
                requirement(
                    "power",
                    "a 12 V supply of at least 2 A",
                    &["power_supply"],
                    Some(Condition::Fair),
                    false,
                    vec![FieldBound::new("output_voltage", Some(11.5), Some(12.5), "V").unwrap()],
                )
                .unwrap(),
                requirement("meter", "a panel voltmeter", &["panel_meter"], None, false, vec![]).unwrap(),
                requirement("fan", "a 12 V fan", &["fan"], None, true, vec![]).unwrap(),
                requirement("enclosure", "a box to hold it", &["enclosure"], None, false, vec![]).unwrap(),
            ],
        )
        .unwrap()
        .with_id(TemplateId(4))
    }

    fn supply() -> Item {
        let mut i = item(21, "power_supply", Condition::Good);
        i.name = ItemName::new("Mean Well LRS-50-12").unwrap();
        i.place_path = crate::place::PlacePath::new(vec![crate::place::PlaceStep {
            id: crate::PlaceId(4),
            name: crate::place::PlaceName::new("shelf B2").unwrap(),
        }]);
        measure(&mut i, "output_voltage", 12.1, "V", 2);
        measure(&mut i, "output_current", 4.2, "A", 2);
        i.accessories = vec!["mains lead".into()];
        i.faults.push(Fault::new("scratched cover", Severity::Minor).unwrap());
        i
    }

    fn fan() -> Item {
        let mut i = item(22, "fan", Condition::Fair);
        i.name = ItemName::new("Noctua 80 mm").unwrap();
        i.tests_done.push(TestDone::new("Spins up  quietly", TestResult::Pass, None, at(3), None).unwrap());
        i
    }

    fn project(allocations: &[(&str, i64)], missing: &[&str]) -> Project {
        Project {
            id: ProjectId(9),
            template_id: TemplateId(4),
            title: "Workbench supply".into(),
            reason: "The LRS-50 is spare.".into(),
            status: ProjectStatus::Accepted,
            allocations: allocations
                .iter()
                .map(|(r, i)| Allocation { requirement: (*r).into(), item_id: ItemId(*i), units: 1 })
                .collect(),
            missing: missing.iter().map(|m| (*m).to_owned()).collect(),
            created_at: at(1),
            updated_at: at(1),
        }
    }

    #[test]
    fn advisable_tests_leave_out_what_was_done() {
        fn check(input: (&str, &[&str]), expected: &[&str]) {
            let mut i = item(1, input.0, Condition::Good);
            for name in input.1 {
                i.tests_done.push(TestDone::new(name, TestResult::Pass, None, at(2), None).unwrap());
            }
            assert_eq!(tests_still_advisable(&i), expected, "{input:?}");
        }
        check(("power_supply", &[]), &["output voltage under load"]);
        check(("power_supply", &["Output voltage under load"]), &[]);
        check(("lithium_cell", &[]), &["capacity test", "internal resistance"]);
        check(("lithium_cell", &["internal-resistance"]), &["capacity test"]);
        check(("lithium_cell", &["capacity"]), &["capacity test", "internal resistance"]);
        check(("hard_drive", &["smart self test"]), &[]);
        check(("hard_drive", &["surface scan"]), &["SMART self-test"]);
        check(("single_board_computer", &[]), &["boots from a fresh card"]);
        check(("lumber", &[]), &[]);
    }

    #[test]
    fn a_pack_shows_each_allocation_and_what_is_missing() {
        let p = project(&[("power", 21), ("fan", 22), ("meter", 99)], &["enclosure"]);
        let pack = build_pack(&p, &template(), &[fan(), supply()]);
        assert_eq!(pack.title, "Workbench supply");
        assert_eq!((pack.template.as_str(), pack.effort.as_str()), ("Bench power supply", "an afternoon"));
        assert_eq!(pack.status, ProjectStatus::Accepted);
        assert_eq!(pack.steps.len(), 2);

        let power = &pack.allocations[0];
        assert_eq!(power.label, "a 12 V supply of at least 2 A");
        assert_eq!(power.check, "power_supply, fair or better, output_voltage 11.5-12.5 V");
        assert_eq!(power.problem, None);
        assert_eq!(
            power.item,
            Some(PackItem {
                id: ItemId(21),
                name: "Mean Well LRS-50-12".into(),
                item_type: "power_supply".into(),
                location: Some("shelf B2".into()),
                condition: Condition::Good,
                fields: vec!["output_current: 4200 mA".into(), "output_voltage: 12.1 V".into()],
                accessories: vec!["mains lead".into()],
                faults: vec!["scratched cover (minor)".into()],
                tests_done: vec![],
                tests_advisable: vec!["output voltage under load".into()],
            })
        );
        let fan = pack.allocations[1].item.as_ref().unwrap();
        assert_eq!(fan.tests_done, vec!["Spins up quietly: passed".to_owned()]);
        assert!(fan.tests_advisable.is_empty());
        let meter = &pack.allocations[2];
        assert_eq!((meter.item_id, meter.item.as_ref()), (ItemId(99), None));
        assert_eq!(meter.problem.as_deref(), Some("item 99 is missing from the inventory"));
        assert_eq!(
            pack.missing,
            vec![MissingPart {
                requirement: "enclosure".into(),
                label: "a box to hold it".into(),
                check: "enclosure".into()
            }]
        );
        assert_eq!(
            pack.checklist,
            vec![
                "Gather Mean Well LRS-50-12 (item 21) from shelf B2, for power",
                "Gather Noctua 80 mm (item 22), for fan",
                "Find another item for meter: a panel voltmeter",
                "Test Mean Well LRS-50-12 (item 21): output voltage under load",
                "Check the supply under load",
                "Fit the binding posts",
                "Buy or find enclosure (a box to hold it): enclosure",
            ]
        );
    }

    #[test]
    fn inconsistent_input_never_panics() {
        fn check(input: (Project, Vec<Item>), expected: Vec<Option<&str>>) {
            let pack = build_pack(&input.0, &template(), &input.1);
            let problems: Vec<Option<&str>> = pack.allocations.iter().map(|a| a.problem.as_deref()).collect();
            assert_eq!(problems, expected);
            assert!(pack.to_markdown().contains("## Checklist"));
        }
        let mut gone = supply();
        gone.gone = Some(Gone { reason: GoneReason::Sold, at: at(4), note: None });
        check((project(&[("power", 21)], &[]), vec![gone]), vec![Some("item 21 is gone (sold)")]);
        check((project(&[("screen", 21)], &["nothing"]), vec![supply()]), vec![None]);
        check((project(&[], &[]), vec![]), vec![]);
        check(
            (project(&[("power", 5), ("power", 5)], &[]), vec![]),
            vec![Some("item 5 is missing from the inventory"); 2],
        );
    }

    #[test]
    fn the_pack_prints_as_markdown() {
        let mut named = supply();
        named.name = ItemName::new("Mean Well # not a heading").unwrap();
        let mut p = project(&[("power", 21), ("meter", 99)], &["enclosure"]);
        // A model's reason may hold lines; the pack keeps it on one, so it never starts a heading.
        p.reason = "The LRS-50\n# is spare.".into();
        let md = build_pack(&p, &template(), &[named]).to_markdown();
        assert_eq!(
            md,
            "# Workbench supply\n\
             \n\
             **Template:** Bench power supply  \n\
             **Effort:** an afternoon  \n\
             **Status:** accepted\n\
             \n\
             A 12 V bench supply from a spare power supply.\n\
             \n\
             Why: The LRS-50 # is spare.\n\
             \n\
             ## Parts\n\
             \n\
             ### power: a 12 V supply of at least 2 A\n\
             \n\
             Needs: power_supply, fair or better, output_voltage 11.5-12.5 V\n\
             \n\
             **Mean Well # not a heading** (item 21, power_supply), at shelf B2\n\
             \n\
             - Condition: good\n\
             - Measurements: output_current: 4200 mA; output_voltage: 12.1 V\n\
             - Accessories: mains lead\n\
             - Known faults: scratched cover (minor)\n\
             - Tests done: none\n\
             - Tests still advisable: output voltage under load\n\
             \n\
             ### meter: a panel voltmeter\n\
             \n\
             Needs: panel_meter\n\
             \n\
             **Problem:** item 99 is missing from the inventory.\n\
             \n\
             Item 99: not in the inventory.\n\
             \n\
             ## Missing\n\
             \n\
             - **enclosure**: a box to hold it (enclosure)\n\
             \n\
             ## Steps\n\
             \n\
             1. Check the supply under load\n\
             2. Fit the binding posts\n\
             \n\
             ## Checklist\n\
             \n\
             - [ ] Gather Mean Well # not a heading (item 21) from shelf B2, for power\n\
             - [ ] Find another item for meter: a panel voltmeter\n\
             - [ ] Test Mean Well # not a heading (item 21): output voltage under load\n\
             - [ ] Check the supply under load\n\
             - [ ] Fit the binding posts\n\
             - [ ] Buy or find enclosure (a box to hold it): enclosure\n"
        );
    }
}
