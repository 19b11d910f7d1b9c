//! The built-in catalogue: realistic maker projects that Trove may propose on a fresh install, seeded into the
//! store once and shared by every household.
//!
//! The templates are content, not code: they live in `domain/data/catalogue.toml`, embedded in the program with
//! `include_str!` and read here through the same constructors a template from anywhere else goes through
//! ([`requirement`], [`FieldBound::new`], [`NewTemplate::new`]). Adding a template is an edit of that file.
//!
//! Item types follow one lower_snake_case vocabulary (`single_board_computer`, `power_adapter`, `lithium_cell`,
//! `drive_enclosure`, ...), and field bounds use the keys the demo inventory and intake use (`ram`, `capacity`,
//! `output_voltage`, `output_current`, `output_power`, `screen_size`, `voltage`, `max_input_voltage`), so a bound
//! compares like with like after unit normalisation.

use crate::item::Condition;
use crate::template::{FieldBound, NewTemplate, Requirement, TemplateError, requirement};
use serde::Deserialize;

/// The catalogue as shipped: `domain/data/catalogue.toml`.
const CATALOGUE_TOML: &str = include_str!("../data/catalogue.toml");

/// Why the built-in catalogue does not load.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogueError {
    /// The file is not TOML of the expected shape (an unknown key, a missing one, a wrong type).
    #[error("catalogue.toml does not read: {0}")]
    Parse(String),
    /// A template is refused by [`NewTemplate::new`] or one of its requirements by the requirement constructors.
    #[error("template {label:?}: {source}")]
    Template { label: String, source: TemplateError },
    #[error("template label {0:?} appears twice")]
    DuplicateLabel(String),
}

/// `catalogue.toml`: the templates, in the order they are seeded.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueFile {
    template: Vec<TemplateEntry>,
}

/// One `[[template]]`, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TemplateEntry {
    label: String,
    goal: String,
    effort: String,
    steps: Vec<String>,
    requirement: Vec<RequirementEntry>,
}

/// One `[[template.requirement]]`, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequirementEntry {
    key: String,
    label: String,
    item_types: Vec<String>,
    #[serde(default)]
    min_condition: Option<Condition>,
    /// Used when the owner has it, never listed as missing.
    #[serde(default)]
    optional: bool,
    #[serde(default)]
    fields: Vec<BoundEntry>,
    /// How many like units it takes; 1 when not given.
    #[serde(default)]
    count: Option<u32>,
}

/// One bound of `fields = [...]`, in any unit spelling the units module reads.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoundEntry {
    key: String,
    min: Option<f64>,
    max: Option<f64>,
    unit: String,
}

impl RequirementEntry {
    fn build(&self) -> Result<Requirement, TemplateError> {
        let fields = self
            .fields
            .iter()
            .map(|b| FieldBound::new(&b.key, b.min, b.max, &b.unit))
            .collect::<Result<Vec<_>, _>>()?;
        let item_types: Vec<&str> = self.item_types.iter().map(String::as_str).collect();
        let built = requirement(&self.key, &self.label, &item_types, self.min_condition, self.optional, fields)?;
        match self.count {
            Some(n) => built.with_count(n),
            None => Ok(built),
        }
    }
}

impl TemplateEntry {
    fn build(&self) -> Result<NewTemplate, TemplateError> {
        let requirements = self.requirement.iter().map(RequirementEntry::build).collect::<Result<Vec<_>, _>>()?;
        NewTemplate::new(&self.label, &self.goal, &self.effort, &self.steps, requirements)
    }
}

/// The built-in catalogue, in the order it is seeded (the store gives ids in this order).
///
/// Every template validates; [`try_builtin`] says which one does not, should an edit break one.
///
/// ```
/// let catalogue = trove_domain::catalogue::builtin();
/// assert!(catalogue.len() >= 20);
/// assert!(catalogue.iter().any(|t| t.label == "Retro game console"));
/// ```
pub fn builtin() -> Vec<NewTemplate> {
    match try_builtin() {
        Ok(templates) => templates,
        // The catalogue is a constant of the program: an invalid entry is a bug caught by the unit tests.
        Err(e) => panic!("the built-in catalogue is invalid: {e}"),
    }
}

/// The built-in catalogue, or the first error in it.
///
/// # Errors
/// [`CatalogueError`]: the file does not read, a template does not validate (named by its label) or two
/// templates share a label.
pub fn try_builtin() -> Result<Vec<NewTemplate>, CatalogueError> {
    parse(CATALOGUE_TOML)
}

/// Reads a catalogue file's text.
fn parse(text: &str) -> Result<Vec<NewTemplate>, CatalogueError> {
    let file: CatalogueFile = toml::from_str(text).map_err(|e| CatalogueError::Parse(e.to_string()))?;
    let mut templates: Vec<NewTemplate> = Vec::with_capacity(file.template.len());
    for entry in &file.template {
        let template =
            entry.build().map_err(|source| CatalogueError::Template { label: entry.label.clone(), source })?;
        if templates.iter().any(|t| t.label == template.label) {
            return Err(CatalogueError::DuplicateLabel(template.label));
        }
        templates.push(template);
    }
    Ok(templates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::is_snake_case;
    use std::collections::HashSet;

    #[test]
    fn every_template_validates() {
        let catalogue = try_builtin().unwrap();
        assert!(catalogue.len() >= 20, "{} templates", catalogue.len());
        assert!(catalogue.len() >= 25, "templates were lost: {} of the 25 shipped", catalogue.len());
        assert_eq!(builtin().len(), catalogue.len());
    }

    #[test]
    fn labels_are_unique() {
        let catalogue = builtin();
        let labels: HashSet<&str> = catalogue.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels.len(), catalogue.len());
    }

    #[test]
    fn every_item_type_is_lower_snake_case() {
        for t in builtin() {
            for r in &t.requirements {
                for ty in &r.item_types {
                    assert!(is_snake_case(ty.as_str()), "{}: {}: {ty}", t.label, r.key);
                }
            }
        }
    }

    #[test]
    fn every_template_is_concrete() {
        for t in builtin() {
            assert!((4..=8).contains(&t.steps.len()), "{}: {} steps", t.label, t.steps.len());
            assert!(t.goal.ends_with('.'), "{}: goal is one sentence", t.label);
            assert!(t.requirements.iter().all(|r| !r.label.is_empty()), "{}", t.label);
        }
    }

    #[test]
    fn bounds_that_matter_are_set() {
        let catalogue = builtin();
        let req = |label: &str, key: &str| {
            catalogue
                .iter()
                .find(|t| t.label == label)
                .unwrap()
                .requirements
                .iter()
                .find(|r| r.key.as_str() == key)
                .unwrap()
                .describe_check()
        };
        assert_eq!(
            req("Power bank from 18650 cells", "cell_1"),
            "lithium_cell, good or better, capacity at least 2000 mAh"
        );
        assert_eq!(
            req("12 V LED strip lighting", "power"),
            "power_supply or power_adapter, fair or better, output_voltage 11.5-12.5 V, output_current at least 2000 mA"
        );
        assert_eq!(req("Home NAS", "drive"), "hard_drive or ssd, good or better, capacity at least 500 GB");
    }

    /// A one-template file, with `requirement` as its only requirement block.
    fn one(requirement: &str) -> String {
        format!(
            "[[template]]\nlabel = \"Lamp\"\ngoal = \"A lamp.\"\neffort = \"an hour\"\nsteps = [\"Wire it.\"]\n\n\
             [[template.requirement]]\n{requirement}\n"
        )
    }

    #[test]
    fn a_template_file_reads_through_the_constructors() {
        let ok = one(
            "key = \"bulb\"\nlabel = \"a bulb\"\nitem_types = [\"bulb\"]\nfields = [{ key = \"power\", min = 0.005, unit = \"kW\" }]",
        );
        let t = &parse(&ok).unwrap()[0];
        assert_eq!(t.requirements[0].describe_check(), "bulb, power at least 5 W");
        assert_eq!(t.requirements[0].min_condition, None);
        assert!(!t.requirements[0].optional);
    }

    #[test]
    fn a_bad_entry_is_named() {
        let bad_unit = one(
            "key = \"bulb\"\nlabel = \"a bulb\"\nitem_types = [\"bulb\"]\nfields = [{ key = \"power\", min = 5, unit = \"furlongs\" }]",
        );
        assert!(
            matches!(parse(&bad_unit), Err(CatalogueError::Template { ref label, source: TemplateError::BadRequirement { .. } }) if label == "Lamp"),
            "{:?}",
            parse(&bad_unit)
        );
        let bad_type = one("key = \"bulb\"\nlabel = \"a bulb\"\nitem_types = [\"--\"]");
        assert!(matches!(parse(&bad_type), Err(CatalogueError::Template { .. })), "{:?}", parse(&bad_type));
        let all_optional = one("key = \"bulb\"\nlabel = \"a bulb\"\nitem_types = [\"bulb\"]\noptional = true");
        assert_eq!(
            parse(&all_optional),
            Err(CatalogueError::Template { label: "Lamp".into(), source: TemplateError::AllOptional })
        );
        let typo = one("key = \"bulb\"\nlabel = \"a bulb\"\nitem_type = [\"bulb\"]");
        assert!(
            matches!(parse(&typo), Err(CatalogueError::Parse(ref e)) if e.contains("item_type")),
            "{:?}",
            parse(&typo)
        );
        let bad_condition =
            one("key = \"bulb\"\nlabel = \"a bulb\"\nitem_types = [\"bulb\"]\nmin_condition = \"shiny\"");
        assert!(matches!(parse(&bad_condition), Err(CatalogueError::Parse(_))), "{:?}", parse(&bad_condition));
        let ok = one("key = \"bulb\"\nlabel = \"a bulb\"\nitem_types = [\"bulb\"]");
        assert_eq!(parse(&format!("{ok}\n{ok}")), Err(CatalogueError::DuplicateLabel("Lamp".into())));
    }
}
