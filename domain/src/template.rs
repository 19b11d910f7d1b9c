//! Templates (projects that may be proposed) and their requirements, with the machine check the model never
//! sees.

use crate::ids::TemplateId;
use crate::item::{Condition, FieldKey, Item, ItemLine, ItemType, Severity};
use crate::text::{self, ControlCharacter, Lines};
use crate::units::{self, Quantity, Unit, format_number};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("{0} must not be empty")]
    Empty(&'static str),
    #[error("{what} is longer than {max} characters")]
    TooLong { what: &'static str, max: usize },
    #[error("requirement key {0:?} must be lower_snake_case (e.g. controller)")]
    BadKey(String),
    #[error("requirement key {0:?} appears twice")]
    DuplicateKey(String),
    #[error("requirement {0} must accept at least one item_type")]
    NoItemTypes(String),
    #[error("requirement {key}: {reason}")]
    BadRequirement { key: String, reason: String },
    #[error("a template needs at least one requirement")]
    NoRequirements,
    #[error("a template needs at least one non-optional requirement")]
    AllOptional,
    #[error("{what} may have at most {max} entries")]
    TooMany { what: String, max: usize },
    #[error(transparent)]
    ControlCharacter(#[from] ControlCharacter),
}

/// Most requirements a template has.
pub const REQUIREMENTS_MAX: usize = 50;
/// Most steps a template has.
pub const STEPS_MAX: usize = 50;
/// Most entries of each list of a requirement: its item types, its field bounds, its disqualifying faults.
pub const LIST_MAX: usize = 20;

/// A bound on one field of an item, compared after unit normalisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldBound {
    pub key: FieldKey,
    /// Inclusive lower bound in `unit`.
    pub min: Option<f64>,
    /// Inclusive upper bound in `unit`.
    pub max: Option<f64>,
    /// The canonical unit the bounds are in.
    pub unit: Unit,
}

impl FieldBound {
    /// Builds a bound from values in any unit spelling; they are normalised to the canonical unit.
    ///
    /// # Errors
    /// [`TemplateError::BadRequirement`] for a bad key, an unknown unit, no bound at all or `min > max`.
    pub fn new(key: &str, min: Option<f64>, max: Option<f64>, unit: &str) -> Result<Self, TemplateError> {
        let bad = |reason: String| TemplateError::BadRequirement { key: key.to_owned(), reason };
        let key_checked = FieldKey::new(key).map_err(|e| bad(e.to_string()))?;
        let norm = |v: f64| units::normalise(v, unit).map_err(|e| bad(e.to_string()));
        let min_q = min.map(norm).transpose()?;
        let max_q = max.map(norm).transpose()?;
        let unit_c = match (min_q, max_q) {
            (None, None) => return Err(bad("a field bound needs min or max".into())),
            (Some(q), _) | (None, Some(q)) => q.unit,
        };
        if let (Some(a), Some(b)) = (min_q, max_q)
            && a.value > b.value
        {
            return Err(bad(format!("min {} above max {}", a, b)));
        }
        Ok(Self { key: key_checked, min: min_q.map(|q| q.value), max: max_q.map(|q| q.value), unit: unit_c })
    }
}

/// Requirement keys: lower_snake_case, unique within a template.
pub type RequirementKey = FieldKey;

/// One thing a template needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Requirement {
    pub key: RequirementKey,
    /// What the model is shown ("a single-board computer with HDMI out").
    pub label: String,
    /// Accepted item types; an item of any other type fails the check.
    pub item_types: Vec<ItemType>,
    /// The worst condition still accepted; `None` accepts any.
    pub min_condition: Option<Condition>,
    /// An optional requirement is never listed as missing.
    pub optional: bool,
    /// Fault severities that disqualify an item.
    pub disqualifying_faults: Vec<Severity>,
    /// Bounds on the item's current fields.
    pub fields: Vec<FieldBound>,
    /// How many like units it takes ("4 x AA cell"), from one stock item or several: 1 for one thing.
    #[serde(default = "one")]
    pub count: u32,
}

fn one() -> u32 {
    1
}

/// Most units one requirement asks for.
pub const COUNT_MAX: u32 = 10_000;

/// Default for [`Requirement::disqualifying_faults`]: a major or blocking fault keeps an item out of a build.
pub const DEFAULT_DISQUALIFYING: [Severity; 2] = [Severity::Major, Severity::Blocking];

/// Why an item fails a requirement's machine check. Its `Display` is the reason reported for a dropped
/// allocation.
#[derive(Debug, Clone, PartialEq)]
pub enum RequirementMiss {
    ItemType(ItemType),
    Condition { have: Condition, min: Condition },
    Fault { text: String, severity: Severity },
    FieldMissing(FieldKey),
    FieldBelow { key: FieldKey, have: Quantity, min: Quantity },
    FieldAbove { key: FieldKey, have: Quantity, max: Quantity },
    FieldUnit { key: FieldKey, have: Unit, want: Unit },
}

impl fmt::Display for RequirementMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequirementMiss::ItemType(t) => write!(f, "item_type {t} not accepted"),
            RequirementMiss::Condition { have, min } => write!(f, "condition {have} below {min}"),
            RequirementMiss::Fault { text, severity } => write!(f, "{severity} fault: {text}"),
            RequirementMiss::FieldMissing(k) => write!(f, "field {k} not measured"),
            RequirementMiss::FieldBelow { key, have, min } => write!(f, "{key} {have} below {min}"),
            RequirementMiss::FieldAbove { key, have, max } => write!(f, "{key} {have} above {max}"),
            RequirementMiss::FieldUnit { key, have, want } => {
                write!(f, "{key} is in {have}, not {want}")
            }
        }
    }
}

/// Which part of the machine check an item fails, without the details: small and `Copy`, so a check that says
/// no allocates nothing. [`Requirement::check`] turns it into the [`RequirementMiss`] it reports.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Miss {
    ItemType,
    Condition(Condition),
    /// A disqualifying fault; [`Requirement::check`] finds the first one to name it.
    Fault,
    /// The index of the bound among the requirement's fields, and the item's current value where it has one.
    FieldMissing(usize),
    FieldUnit(usize, Quantity),
    /// The bound's index, the item's value and the bound it is below.
    FieldBelow(usize, Quantity, f64),
    /// The bound's index, the item's value and the bound it is above.
    FieldAbove(usize, Quantity, f64),
}

/// What the machine check reads of an item, for one requirement: an [`Item`] answers it directly
/// ([`Requirement::check`], [`Requirement::fits`]); the allocation's stock answers it from its index
/// (`allocation::Stock`), with the requirement's types and field keys looked up once, not once per item.
pub(crate) trait Facts {
    /// Whether the item's type is one the requirement accepts.
    fn type_accepted(&self) -> bool;
    fn condition(&self) -> Condition;
    /// Whether one of the item's faults has one of `severities`.
    fn has_fault(&self, severities: &[Severity]) -> bool;
    /// The item's current value of the field the requirement's bound `n` is on.
    fn field(&self, n: usize) -> Option<Quantity>;
}

/// An item's facts for a requirement.
struct ItemFacts<'r, 'i> {
    requirement: &'r Requirement,
    item: &'i Item,
}

impl Facts for ItemFacts<'_, '_> {
    fn type_accepted(&self) -> bool {
        self.requirement.item_types.contains(&self.item.item_type)
    }

    fn condition(&self) -> Condition {
        self.item.condition
    }

    fn has_fault(&self, severities: &[Severity]) -> bool {
        self.item.faults.iter().any(|f| severities.contains(&f.severity))
    }

    fn field(&self, n: usize) -> Option<Quantity> {
        self.item.field(self.requirement.fields[n].key.as_str())
    }
}

/// A listed item's facts for a requirement: a line carries no faults, so none is known to disqualify it.
struct LineFacts<'r, 'i> {
    requirement: &'r Requirement,
    line: &'i ItemLine,
}

impl Facts for LineFacts<'_, '_> {
    fn type_accepted(&self) -> bool {
        self.requirement.item_types.contains(&self.line.item_type)
    }

    fn condition(&self) -> Condition {
        self.line.condition
    }

    fn has_fault(&self, _severities: &[Severity]) -> bool {
        false
    }

    fn field(&self, n: usize) -> Option<Quantity> {
        self.line.field(self.requirement.fields[n].key.as_str())
    }
}

impl Requirement {
    /// The machine check on what a listing shows of an item (type, condition, fields; its faults are not read):
    /// `false` only for an item the check refuses whatever its faults, so an item no requirement of the
    /// catalogue may take can be left out of `list_inventory` (no build can use it), and one it may take is
    /// never left out.
    ///
    /// ```
    /// use trove_domain::item::{Condition, Intent, ItemLine, ItemName, ItemType, NewItem};
    /// use trove_domain::template::requirement;
    /// use trove_domain::{ItemId, Timestamp};
    ///
    /// let board = requirement("board", "a board", &["single_board_computer"], Some(Condition::Good), false, vec![]);
    /// let board = board.unwrap();
    /// let line = |item_type, condition| {
    ///     let name = ItemName::new("Raspberry Pi 4").unwrap();
    ///     let item = NewItem::new(name, ItemType::new(item_type).unwrap(), String::new(), condition, Intent::Keep);
    ///     ItemLine::from(&item.stored(ItemId(1), Timestamp::default()))
    /// };
    /// assert!(board.may_fit(&line("single_board_computer", Condition::Good)));
    /// assert!(!board.may_fit(&line("single_board_computer", Condition::Poor)));
    /// assert!(!board.may_fit(&line("monitor", Condition::New)));
    /// ```
    pub fn may_fit(&self, line: &ItemLine) -> bool {
        self.first_miss(&LineFacts { requirement: self, line }).is_none()
    }

    /// The machine check: does `item` meet this requirement? Buildability is a separate rule
    /// ([`Item::buildable`]); this only looks at type, condition, faults and fields.
    ///
    /// # Errors
    /// The first [`RequirementMiss`] found, in that order.
    pub fn check(&self, item: &Item) -> Result<(), RequirementMiss> {
        let Some(miss) = self.first_miss(&ItemFacts { requirement: self, item }) else { return Ok(()) };
        let key = |n: usize| self.fields[n].key.clone();
        let in_unit = |n: usize, value: f64| Quantity { value, unit: self.fields[n].unit };
        Err(match miss {
            Miss::ItemType => RequirementMiss::ItemType(item.item_type.clone()),
            Miss::Condition(min) => RequirementMiss::Condition { have: item.condition, min },
            Miss::Fault => {
                let fault = item.faults.iter().find(|f| self.disqualifying_faults.contains(&f.severity));
                let fault = fault.expect("the check found a disqualifying fault");
                RequirementMiss::Fault { text: fault.text.clone(), severity: fault.severity }
            }
            Miss::FieldMissing(n) => RequirementMiss::FieldMissing(key(n)),
            Miss::FieldUnit(n, have) => {
                RequirementMiss::FieldUnit { key: key(n), have: have.unit, want: self.fields[n].unit }
            }
            Miss::FieldBelow(n, have, min) => RequirementMiss::FieldBelow { key: key(n), have, min: in_unit(n, min) },
            Miss::FieldAbove(n, have, max) => RequirementMiss::FieldAbove { key: key(n), have, max: in_unit(n, max) },
        })
    }

    /// The machine check's yes or no, without building the reason: what a planner asks of every candidate item.
    /// The same rule as [`Requirement::check`].
    ///
    /// ```
    /// use trove_domain::item::{Condition, Intent, ItemName, ItemType, NewItem};
    /// use trove_domain::template::requirement;
    /// use trove_domain::{ItemId, Timestamp};
    ///
    /// let board = requirement("board", "a board", &["single_board_computer"], Some(Condition::Good), false, vec![]);
    /// let board = board.unwrap();
    /// let item = |condition| {
    ///     let name = ItemName::new("Raspberry Pi 4").unwrap();
    ///     let item_type = ItemType::new("single_board_computer").unwrap();
    ///     NewItem::new(name, item_type, String::new(), condition, Intent::Keep).stored(ItemId(1), Timestamp::default())
    /// };
    /// assert!(board.fits(&item(Condition::LikeNew)));
    /// assert!(!board.fits(&item(Condition::Poor)));
    /// ```
    pub fn fits(&self, item: &Item) -> bool {
        self.first_miss(&ItemFacts { requirement: self, item }).is_none()
    }

    /// True when `other` runs the same machine check: the same accepted types, worst condition, disqualifying
    /// faults and field bounds, so the two accept the same items and order them the same way, whatever their
    /// keys, labels and optionality. Every field is named, so a new one must be placed on a side.
    ///
    /// ```
    /// use trove_domain::template::requirement;
    /// let a = requirement("board", "a board", &["single_board_computer"], None, false, vec![]).unwrap();
    /// let b = requirement("brain", "a computer", &["single_board_computer"], None, true, vec![]).unwrap();
    /// let c = requirement("board", "a board", &["microcontroller"], None, false, vec![]).unwrap();
    /// assert!(a.same_check(&b));
    /// assert!(!a.same_check(&c));
    /// ```
    pub fn same_check(&self, other: &Requirement) -> bool {
        let Requirement {
            key: _,
            label: _,
            optional: _,
            count: _,
            item_types,
            min_condition,
            disqualifying_faults,
            fields,
        } = self;
        *item_types == other.item_types
            && *min_condition == other.min_condition
            && *disqualifying_faults == other.disqualifying_faults
            && *fields == other.fields
    }

    /// The machine check's yes or no over facts read elsewhere (the allocation's index): the same rule.
    pub(crate) fn fits_facts(&self, facts: &impl Facts) -> bool {
        self.first_miss(facts).is_none()
    }

    /// **The** machine check: the first part the item fails, if any.
    fn first_miss(&self, item: &impl Facts) -> Option<Miss> {
        if !item.type_accepted() {
            return Some(Miss::ItemType);
        }
        if let Some(min) = self.min_condition
            && !item.condition().is_at_least(min)
        {
            return Some(Miss::Condition(min));
        }
        if item.has_fault(&self.disqualifying_faults) {
            return Some(Miss::Fault);
        }
        for (n, bound) in self.fields.iter().enumerate() {
            let Some(have) = item.field(n) else { return Some(Miss::FieldMissing(n)) };
            if have.unit != bound.unit {
                return Some(Miss::FieldUnit(n, have));
            }
            if let Some(min) = bound.min
                && have.value < min
            {
                return Some(Miss::FieldBelow(n, have, min));
            }
            if let Some(max) = bound.max
                && have.value > max
            {
                return Some(Miss::FieldAbove(n, have, max));
            }
        }
        None
    }

    /// The check in words, for the build pack and people ("laptop or mini_pc, good or better, capacity at least
    /// 3000 mAh").
    pub fn describe_check(&self) -> String {
        let mut parts = vec![self.item_types.iter().map(ItemType::as_str).collect::<Vec<_>>().join(" or ")];
        if let Some(min) = self.min_condition {
            parts.push(format!("{} or better", min.human()));
        }
        for b in &self.fields {
            match (b.min, b.max) {
                (Some(lo), Some(hi)) => {
                    parts.push(format!("{} {}-{} {}", b.key, format_number(lo), format_number(hi), b.unit))
                }
                (Some(lo), None) => parts.push(format!("{} at least {} {}", b.key, format_number(lo), b.unit)),
                (None, Some(hi)) => parts.push(format!("{} at most {} {}", b.key, format_number(hi), b.unit)),
                (None, None) => {}
            }
        }
        parts.join(", ")
    }
}

/// A project that may be proposed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Template {
    pub id: TemplateId,
    pub label: String,
    /// One sentence.
    pub goal: String,
    /// "an afternoon", "2 weekends".
    pub effort: String,
    /// Ordered short steps, for the build pack.
    pub steps: Vec<String>,
    pub requirements: Vec<Requirement>,
}

impl Template {
    pub fn requirement(&self, key: &str) -> Option<&Requirement> {
        self.requirements.iter().find(|r| r.key.as_str() == key)
    }

    /// How well the template answers an owner's wish, by the words they share: 0 when none. A wish word found in
    /// the label counts 3, one found only in the goal, the steps or a requirement (label, key, item types) counts
    /// 1; each wish word counts once. Words are compared lower-case and singular ("stations" is "station"), and
    /// the words any wish has ("build", "something", "want") count for nothing. Lexical only: the Model API
    /// reads a wish for its meaning; this is what a planner without a model can honestly do with it.
    ///
    /// ```
    /// use trove_domain::catalogue;
    /// let weather = catalogue::builtin().into_iter().find(|t| t.label == "Weather station").unwrap();
    /// let weather = weather.with_id(trove_domain::TemplateId(1));
    /// assert_eq!(weather.relevance("I want to build a weather station for the garden"), 6);
    /// assert_eq!(weather.relevance("something for the kids"), 0);
    /// ```
    pub fn relevance(&self, wish: &str) -> u32 {
        let label = wish_words(&self.label);
        let mut rest = wish_words(&self.goal);
        for step in &self.steps {
            rest.extend(wish_words(step));
        }
        for r in &self.requirements {
            rest.extend(wish_words(&r.label));
            rest.extend(wish_words(&r.key.as_str().replace('_', " ")));
            for t in &r.item_types {
                rest.extend(wish_words(&t.as_str().replace('_', " ")));
            }
        }
        let mut asked = wish_words(wish);
        asked.sort_unstable();
        asked.dedup();
        asked.iter().map(|w| if label.contains(w) { 3 } else { u32::from(rest.contains(w)) }).sum()
    }
}

/// Words every wish may hold that say nothing about which project: compared as [`wish_words`] gives them.
const WISH_FILLER: [&str; 24] = [
    "build",
    "make",
    "project",
    "something",
    "thing",
    "want",
    "would",
    "like",
    "need",
    "use",
    "my",
    "me",
    "some",
    "can",
    "could",
    "what",
    "which",
    "new",
    "old",
    "spare",
    "it",
    "is",
    "be",
    "that",
];

/// The words of a text as a wish is compared: [`crate::matching::words`], singular, without [`WISH_FILLER`] and
/// without bare numbers (a "5" or a "12" would match any template that mentions 5 V or 12 V).
fn wish_words(text: &str) -> Vec<String> {
    crate::matching::words(text)
        .into_iter()
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(|w| singular(&w))
        .filter(|w| !WISH_FILLER.contains(&w.as_str()))
        .collect()
}

/// A crude singular of an English word: "batteries" is "battery", "stations" is "station"; "glass" and short
/// words stay.
fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies").filter(|s| s.chars().count() >= 2) {
        return format!("{stem}y");
    }
    match word.strip_suffix('s') {
        Some(stem) if stem.chars().count() >= 3 && !stem.ends_with('s') && !stem.ends_with('u') => stem.to_owned(),
        _ => word.to_owned(),
    }
}

/// A template before the store gives it an id, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTemplate {
    pub label: String,
    pub goal: String,
    pub effort: String,
    pub steps: Vec<String>,
    pub requirements: Vec<Requirement>,
}

/// A text of one line: trimmed, not empty, at most `max` characters, no control character.
fn bounded(raw: &str, what: &'static str, max: usize) -> Result<String, TemplateError> {
    let t = raw.trim();
    if t.is_empty() {
        return Err(TemplateError::Empty(what));
    }
    if t.chars().count() > max {
        return Err(TemplateError::TooLong { what, max });
    }
    text::check(what, t, Lines::One)?;
    Ok(t.to_owned())
}

/// Refuses a list of more than `max` entries.
fn at_most(what: impl FnOnce() -> String, len: usize, max: usize) -> Result<(), TemplateError> {
    if len > max { Err(TemplateError::TooMany { what: what(), max }) } else { Ok(()) }
}

impl NewTemplate {
    /// Validates a template: non-empty texts of one line within limits, at least one non-optional requirement,
    /// at most [`REQUIREMENTS_MAX`] requirements and [`STEPS_MAX`] steps, unique keys, each requirement with at
    /// least one item type and at most [`LIST_MAX`] entries in each of its lists.
    ///
    /// # Errors
    /// The first [`TemplateError`] found.
    pub fn new(
        label: &str,
        goal: &str,
        effort: &str,
        steps: &[String],
        requirements: Vec<Requirement>,
    ) -> Result<Self, TemplateError> {
        let label = bounded(label, "label", 120)?;
        let goal = bounded(goal, "goal", 500)?;
        let effort = bounded(effort, "effort", 60)?;
        at_most(|| "steps".to_owned(), steps.len(), STEPS_MAX)?;
        let steps = steps.iter().map(|s| bounded(s, "step", 300)).collect::<Result<Vec<_>, _>>()?;
        at_most(|| "requirements".to_owned(), requirements.len(), REQUIREMENTS_MAX)?;
        if requirements.is_empty() {
            return Err(TemplateError::NoRequirements);
        }
        if requirements.iter().all(|r| r.optional) {
            return Err(TemplateError::AllOptional);
        }
        for (i, r) in requirements.iter().enumerate() {
            if requirements[..i].iter().any(|o| o.key == r.key) {
                return Err(TemplateError::DuplicateKey(r.key.to_string()));
            }
            if r.item_types.is_empty() {
                return Err(TemplateError::NoItemTypes(r.key.to_string()));
            }
            for (list, len) in [
                ("item_types", r.item_types.len()),
                ("fields", r.fields.len()),
                ("disqualifying_faults", r.disqualifying_faults.len()),
            ] {
                at_most(|| format!("requirement {}: {list}", r.key), len, LIST_MAX)?;
            }
            bounded(&r.label, "requirement label", 200)?;
        }
        Ok(Self { label, goal, effort, steps, requirements })
    }

    pub fn with_id(self, id: TemplateId) -> Template {
        Template {
            id,
            label: self.label,
            goal: self.goal,
            effort: self.effort,
            steps: self.steps,
            requirements: self.requirements,
        }
    }
}

/// Builds a requirement from plain words, for the catalogue and for callers that already validated their input.
///
/// # Errors
/// [`TemplateError::BadKey`] for a bad key, [`TemplateError::BadRequirement`] for a bad item type.
pub fn requirement(
    key: &str,
    label: &str,
    item_types: &[&str],
    min_condition: Option<Condition>,
    optional: bool,
    fields: Vec<FieldBound>,
) -> Result<Requirement, TemplateError> {
    let key_checked = FieldKey::new(key).map_err(|_| TemplateError::BadKey(key.to_owned()))?;
    let item_types = item_types
        .iter()
        .map(|t| {
            ItemType::new(t).map_err(|e| TemplateError::BadRequirement { key: key.to_owned(), reason: e.to_string() })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Requirement {
        key: key_checked,
        label: label.trim().to_owned(),
        item_types,
        min_condition,
        optional,
        disqualifying_faults: DEFAULT_DISQUALIFYING.to_vec(),
        fields,
        count: 1,
    })
}

impl Requirement {
    /// The requirement asking for `count` like units (1 to [`COUNT_MAX`]).
    ///
    /// ```
    /// use trove_domain::template::requirement;
    /// let cells = requirement("cells", "AA cells", &["aa_cell"], None, false, vec![]).unwrap();
    /// assert_eq!(cells.clone().with_count(4).unwrap().count, 4);
    /// assert_eq!(cells.with_count(0).unwrap_err().to_string(), "requirement cells: count must be from 1 to 10000, not 0");
    /// ```
    ///
    /// # Errors
    /// [`TemplateError::BadRequirement`] outside that range.
    pub fn with_count(mut self, count: u32) -> Result<Self, TemplateError> {
        if !(1..=COUNT_MAX).contains(&count) {
            return Err(TemplateError::BadRequirement {
                key: self.key.to_string(),
                reason: format!("count must be from 1 to {COUNT_MAX}, not {count}"),
            });
        }
        self.count = count;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn relevance_counts_shared_words_label_first() {
        let t = NewTemplate::new(
            "Retro game console",
            "Play classic games on the TV with 2 pads.",
            "an evening",
            &["Flash RetroPie onto the card.".to_owned()],
            vec![
                requirement(
                    "board",
                    "a single-board computer with HDMI",
                    &["single_board_computer"],
                    None,
                    false,
                    vec![],
                )
                .unwrap(),
            ],
        )
        .unwrap()
        .with_id(TemplateId(7));
        assert_eq!(t.relevance("retro games"), 6, "both words in the label, 'games' as 'game'");
        assert_eq!(t.relevance("something on the TV"), 1, "a goal word counts 1; filler counts nothing");
        assert_eq!(t.relevance("a single board computer project"), 3, "requirement words and item types count 1");
        assert_eq!(t.relevance("game game GAME"), 3, "each wish word once");
        assert_eq!(t.relevance("I want to build something"), 0);
        assert_eq!(t.relevance("2 5 12"), 0, "bare numbers say nothing");
        assert_eq!(t.relevance("retro 2"), 3);
        assert_eq!(t.relevance(""), 0);
    }

    #[test]
    fn singular_forms() {
        for (word, want) in [
            ("stations", "station"),
            ("batteries", "battery"),
            ("glass", "glass"),
            ("gps", "gps"),
            ("bus", "bus"),
            ("pis", "pis"),
            ("games", "game"),
        ] {
            assert_eq!(singular(word), want, "{word}");
        }
    }

    use super::*;
    use crate::item::Fault;
    use crate::testing::{item, measure};

    fn psu_requirement() -> Requirement {
        requirement(
            "power",
            "a 12 V supply of at least 2 A",
            &["power_supply", "power_adapter"],
            Some(Condition::Fair),
            false,
            vec![
                FieldBound::new("output_voltage", Some(11.5), Some(12.5), "V").unwrap(),
                FieldBound::new("output_current", Some(2.0), None, "A").unwrap(),
            ],
        )
        .unwrap()
    }

    fn check(setup: &dyn Fn(&mut Item), want: Result<(), &str>) {
        let mut i = item(4, "power_supply", Condition::Good);
        measure(&mut i, "output_voltage", 12.0, "V", 1);
        measure(&mut i, "output_current", 3000.0, "mA", 1);
        setup(&mut i);
        let got = psu_requirement().check(&i).map_err(|m| m.to_string());
        assert_eq!(psu_requirement().fits(&i), got.is_ok(), "fits and check agree");
        assert_eq!(got, want.map_err(str::to_owned));
    }

    #[test]
    fn machine_check() {
        check(&|_| {}, Ok(()));
        check(&|i| i.item_type = ItemType::new("laptop").unwrap(), Err("item_type laptop not accepted"));
        check(&|i| i.condition = Condition::Poor, Err("condition poor below fair"));
        check(&|i| i.condition = Condition::Fair, Ok(()));
        check(&|i| i.faults.push(Fault::new("scuffed case", Severity::Minor).unwrap()), Ok(()));
        check(
            &|i| i.faults.push(Fault::new("no output", Severity::Blocking).unwrap()),
            Err("blocking fault: no output"),
        );
        check(&|i| i.measurements.clear(), Err("field output_voltage not measured"));
        check(&|i| measure(i, "output_current", 1.5, "A", 2), Err("output_current 1500 mA below 2000 mA"));
        check(&|i| measure(i, "output_voltage", 19.5, "V", 2), Err("output_voltage 19.5 V above 12.5 V"));
        check(&|i| measure(i, "output_voltage", 12000.0, "mV", 2), Ok(()));
        check(&|i| measure(i, "output_current", 3.0, "pcs", 2), Err("output_current is in pcs, not mA"));
    }

    #[test]
    fn bounds_are_normalised_and_validated() {
        let b = FieldBound::new("capacity", Some(3.0), None, "Ah").unwrap();
        assert_eq!((b.min, b.unit), (Some(3000.0), Unit::MilliampHour));
        assert!(FieldBound::new("capacity", None, None, "mAh").is_err());
        assert!(FieldBound::new("capacity", Some(5.0), Some(1.0), "mAh").is_err());
        assert!(FieldBound::new("capacity", Some(5.0), None, "furlongs").is_err());
    }

    #[test]
    fn templates_are_validated() {
        let r = psu_requirement();
        assert!(NewTemplate::new("Bench supply", "A supply.", "an afternoon", &[], vec![r.clone()]).is_ok());
        assert_eq!(NewTemplate::new(" ", "g", "e", &[], vec![r.clone()]), Err(TemplateError::Empty("label")));
        assert_eq!(
            NewTemplate::new("l", "g", "e", &[], vec![r.clone(), r.clone()]),
            Err(TemplateError::DuplicateKey("power".into()))
        );
        let mut opt = r.clone();
        opt.optional = true;
        assert_eq!(NewTemplate::new("l", "g", "e", &[], vec![opt]), Err(TemplateError::AllOptional));
        assert_eq!(NewTemplate::new("l", "g", "e", &[], vec![]), Err(TemplateError::NoRequirements));
        assert!(matches!(
            NewTemplate::new("l\u{0}", "g", "e", &[], vec![r.clone()]),
            Err(TemplateError::ControlCharacter(e)) if e.field == "label"
        ));
        assert!(matches!(
            NewTemplate::new("l", "g", "e", &["cut\u{1b}[2J".to_owned()], vec![r.clone()]),
            Err(TemplateError::ControlCharacter(e)) if e.field == "step"
        ));
    }

    /// A template of `n` requirements, each with `types` item types and `bounds` field bounds.
    fn sized(n: usize, types: usize, bounds: usize, steps: usize) -> Result<NewTemplate, TemplateError> {
        let kinds: Vec<String> = (0..types).map(|i| format!("kind_{i}")).collect();
        let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
        let requirements = (0..n)
            .map(|i| {
                let fields = (0..bounds).map(|b| FieldBound::new(&format!("f_{b}"), Some(1.0), None, "V").unwrap());
                requirement(&format!("r_{i}"), "a thing", &kinds, None, false, fields.collect()).unwrap()
            })
            .collect();
        let steps = vec!["a step".to_owned(); steps];
        NewTemplate::new("l", "g", "e", &steps, requirements)
    }

    #[test]
    fn templates_are_capped() {
        let too_many = |what: &str, max| Err(TemplateError::TooMany { what: what.into(), max });
        assert!(sized(REQUIREMENTS_MAX, LIST_MAX, LIST_MAX, STEPS_MAX).is_ok());
        assert_eq!(sized(REQUIREMENTS_MAX + 1, 1, 0, 0), too_many("requirements", 50));
        assert_eq!(sized(1, LIST_MAX + 1, 0, 0), too_many("requirement r_0: item_types", 20));
        assert_eq!(sized(1, 1, LIST_MAX + 1, 0), too_many("requirement r_0: fields", 20));
        assert_eq!(sized(1, 1, 0, STEPS_MAX + 1), too_many("steps", 50));
        let mut faults = sized(1, 1, 0, 0).unwrap().requirements;
        faults[0].disqualifying_faults = vec![Severity::Minor; LIST_MAX + 1];
        assert_eq!(NewTemplate::new("l", "g", "e", &[], faults), too_many("requirement r_0: disqualifying_faults", 20));
        assert_eq!(
            sized(REQUIREMENTS_MAX + 1, 1, 0, 0).unwrap_err().to_string(),
            "requirements may have at most 50 entries"
        );
    }

    #[test]
    fn check_in_words() {
        assert_eq!(
            psu_requirement().describe_check(),
            "power_supply or power_adapter, fair or better, output_voltage 11.5-12.5 V, output_current at least 2000 mA"
        );
    }
}
