//! The build pack's DTOs: the domain's `BuildPack` as the API answers it, field for field (the same names and
//! shapes as the document's serde form, so the JSON did not change when it became typed).

use crate::dto::{Condition, ProjectStatus};
use poem_openapi::Object;
use trove_domain::pack::{BuildPack, MissingPart, PackAllocation, PackItem};

/// The build pack of one project: which item fills which requirement, what is still missing, and a checklist.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "BuildPack")]
pub struct BuildPackDto {
    pub project_id: i64,
    pub title: String,
    pub template_id: i64,
    /// The template's label ("Retro game console").
    pub template: String,
    pub goal: String,
    pub effort: String,
    pub status: ProjectStatus,
    /// Why the project was proposed, as the proposal said.
    pub reason: String,
    pub steps: Vec<String>,
    /// One entry per allocation, in the project's order.
    pub allocations: Vec<PackAllocationDto>,
    /// The non-optional requirements no item covers: a shopping list.
    pub missing: Vec<MissingPartDto>,
    /// Gather, test, build, buy: one line per thing to do.
    pub checklist: Vec<String>,
}

/// One requirement and the item that fills it.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "PackAllocation")]
pub struct PackAllocationDto {
    pub requirement: String,
    /// What the requirement asks for, in words ("a single-board computer with HDMI out").
    pub label: String,
    /// The machine check in words.
    pub check: String,
    pub item_id: i64,
    /// `null` when the item is no longer in the inventory.
    pub item: Option<PackItemDto>,
    /// Something that stands in the way of using the item: missing from the inventory, gone.
    pub problem: Option<String>,
}

/// What the builder needs to know about one allocated item.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "PackItem")]
pub struct PackItemDto {
    pub id: i64,
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
    /// Sensible checks for this kind of item not done yet.
    pub tests_advisable: Vec<String>,
}

/// A requirement no item covers.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "MissingPart")]
pub struct MissingPartDto {
    pub requirement: String,
    pub label: String,
    pub check: String,
}

impl From<&BuildPack> for BuildPackDto {
    fn from(p: &BuildPack) -> Self {
        Self {
            project_id: p.project_id.0,
            title: p.title.clone(),
            template_id: p.template_id.0,
            template: p.template.clone(),
            goal: p.goal.clone(),
            effort: p.effort.clone(),
            status: p.status.into(),
            reason: p.reason.clone(),
            steps: p.steps.clone(),
            allocations: p.allocations.iter().map(Into::into).collect(),
            missing: p.missing.iter().map(Into::into).collect(),
            checklist: p.checklist.clone(),
        }
    }
}

impl From<&PackAllocation> for PackAllocationDto {
    fn from(a: &PackAllocation) -> Self {
        Self {
            requirement: a.requirement.clone(),
            label: a.label.clone(),
            check: a.check.clone(),
            item_id: a.item_id.0,
            item: a.item.as_ref().map(Into::into),
            problem: a.problem.clone(),
        }
    }
}

impl From<&PackItem> for PackItemDto {
    fn from(i: &PackItem) -> Self {
        Self {
            id: i.id.0,
            name: i.name.clone(),
            item_type: i.item_type.clone(),
            location: i.location.clone(),
            condition: i.condition.into(),
            fields: i.fields.clone(),
            accessories: i.accessories.clone(),
            faults: i.faults.clone(),
            tests_done: i.tests_done.clone(),
            tests_advisable: i.tests_advisable.clone(),
        }
    }
}

impl From<&MissingPart> for MissingPartDto {
    fn from(m: &MissingPart) -> Self {
        Self { requirement: m.requirement.clone(), label: m.label.clone(), check: m.check.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use poem_openapi::types::ToJSON;
    use trove_domain::item::Condition as DomainCondition;
    use trove_domain::project::ProjectStatus as DomainStatus;
    use trove_domain::{ItemId, ProjectId, TemplateId};

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The typed answer is the domain document's serde form, key for key: with an item present and one gone, a
    /// problem and none, a location and none, and a missing part.
    #[test]
    fn the_typed_pack_is_the_domain_documents_serde_form() {
        let item = PackItem {
            id: ItemId(7),
            name: "Raspberry Pi 4".into(),
            item_type: "single_board_computer".into(),
            location: Some("shelf 2".into()),
            condition: DomainCondition::LikeNew,
            fields: strings(&["ram: 4 GB"]),
            accessories: strings(&["case"]),
            faults: strings(&["scratched lid (minor)"]),
            tests_done: strings(&["boots (pass)"]),
            tests_advisable: strings(&["boots from a fresh card"]),
        };
        let pack = BuildPack {
            project_id: ProjectId(3),
            title: "Retro console".into(),
            template_id: TemplateId(11),
            template: "Retro game console".into(),
            goal: "play old games".into(),
            effort: "an afternoon".into(),
            status: DomainStatus::Accepted,
            reason: "you have a Pi".into(),
            steps: strings(&["flash the card", "plug it in"]),
            allocations: vec![
                PackAllocation {
                    requirement: "sbc".into(),
                    label: "a single-board computer".into(),
                    check: "item_type is single_board_computer".into(),
                    item_id: ItemId(7),
                    item: Some(PackItem { location: None, ..item.clone() }),
                    problem: None,
                },
                PackAllocation {
                    requirement: "display".into(),
                    label: "a display".into(),
                    check: "item_type is monitor".into(),
                    item_id: ItemId(9),
                    item: None,
                    problem: Some("item 9 is no longer in the inventory".into()),
                },
                PackAllocation {
                    requirement: "spare".into(),
                    label: "a spare".into(),
                    check: "any".into(),
                    item_id: ItemId(7),
                    item: Some(item),
                    problem: None,
                },
            ],
            missing: vec![MissingPart {
                requirement: "gamepad".into(),
                label: "a gamepad".into(),
                check: "item_type is gamepad".into(),
            }],
            checklist: strings(&["[ ] gather item 7"]),
        };
        let typed = BuildPackDto::from(&pack).to_json().expect("the pack is JSON");
        let serde = serde_json::to_value(&pack).expect("the pack serialises");
        assert_eq!(typed, serde);
    }
}
