//! The API's own DTOs and their conversions to and from the domain. Only this crate knows them.

use crate::error::ApiError;
use chrono::{DateTime, Utc};
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object};
use std::collections::BTreeMap;
use trove_application::metered::RunSpend;
use trove_domain::item::{self as di, Item, ItemName, ItemType, Measurement, MeasurementSource, NewItem};
use trove_domain::project::{Dropped, Project};
use trove_domain::template::{self as dt, FieldBound, NewTemplate, Template};
use trove_domain::{ItemId, units};

macro_rules! mirror_enum {
    ($(#[$doc:meta])* $dto:ident <=> $domain:path { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Enum)]
        #[oai(rename_all = "snake_case")]
        pub enum $dto { $($variant),+ }

        impl From<$dto> for $domain {
            fn from(v: $dto) -> Self {
                match v { $($dto::$variant => <$domain>::$variant),+ }
            }
        }

        impl From<$domain> for $dto {
            fn from(v: $domain) -> Self {
                match v { $(<$domain>::$variant => $dto::$variant),+ }
            }
        }
    };
}

mirror_enum!(
    /// Condition, best first.
    Condition <=> di::Condition { New, LikeNew, Good, Fair, Poor, ForParts }
);
mirror_enum!(
    /// What the owner means to do with the item.
    Intent <=> di::Intent { Keep, Sell, Give }
);
mirror_enum!(
    /// Whether the item is free to use.
    Availability <=> di::Availability { Available, Reserved, InUse, Lent }
);
mirror_enum!(
    /// Why an item left.
    GoneReason <=> di::GoneReason { Sold, Given, Recycled, Lost, Other }
);
mirror_enum!(
    /// How bad a fault is.
    Severity <=> di::Severity { Minor, Major, Blocking }
);
mirror_enum!(
    /// Where a measurement came from.
    Source <=> MeasurementSource { Label, Listing, Voice, Photo, Test, Manual }
);
mirror_enum!(
    /// A test's outcome.
    TestResult <=> di::TestResult { Pass, Fail }
);
mirror_enum!(
    /// A project's status.
    ProjectStatus <=> trove_domain::project::ProjectStatus { Proposed, Accepted, Built, Dropped }
);

/// A value with its unit.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct FieldValue {
    pub value: f64,
    pub unit: String,
}

/// An item gone from the inventory.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct GoneDto {
    pub reason: GoneReason,
    pub at: DateTime<Utc>,
    pub note: Option<String>,
}

/// A fault.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Fault")]
pub struct FaultDto {
    pub text: String,
    pub severity: Severity,
}

/// A test that was run.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Test")]
pub struct TestDto {
    pub name: String,
    pub result: TestResult,
    pub value: Option<FieldValue>,
    pub at: DateTime<Utc>,
    pub note: Option<String>,
}

/// One reading of a field.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Measurement")]
pub struct MeasurementDto {
    pub key: String,
    pub value: f64,
    pub unit: String,
    pub at: DateTime<Utc>,
    pub source: Source,
}

/// An item.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Item")]
pub struct ItemDto {
    pub id: i64,
    pub name: String,
    pub item_type: String,
    pub profile: String,
    pub condition: Condition,
    pub intent: Intent,
    pub availability: Availability,
    /// The project holding the item while reserved or in use.
    pub project_id: Option<i64>,
    pub location: Option<String>,
    pub gone: Option<GoneDto>,
    /// The current fields: the latest measurement per key.
    pub fields: BTreeMap<String, FieldValue>,
    /// Every measurement, oldest first.
    pub measurements: Vec<MeasurementDto>,
    pub faults: Vec<FaultDto>,
    pub tests_done: Vec<TestDto>,
    pub accessories: Vec<String>,
    pub components: Vec<i64>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<&Item> for ItemDto {
    fn from(i: &Item) -> Self {
        Self {
            id: i.id.0,
            name: i.name.to_string(),
            item_type: i.item_type.to_string(),
            profile: i.profile.clone(),
            condition: i.condition.into(),
            intent: i.intent.into(),
            availability: i.availability.into(),
            project_id: i.project.map(|p| p.0),
            location: i.location.clone(),
            gone: i.gone.as_ref().map(|g| GoneDto { reason: g.reason.into(), at: g.at, note: g.note.clone() }),
            fields: i
                .current_fields()
                .into_iter()
                .map(|(k, m)| (k.to_string(), FieldValue { value: m.value, unit: m.unit.symbol().into() }))
                .collect(),
            measurements: i
                .measurements
                .iter()
                .map(|m| MeasurementDto {
                    key: m.key.to_string(),
                    value: m.value,
                    unit: m.unit.symbol().into(),
                    at: m.at,
                    source: m.source.into(),
                })
                .collect(),
            faults: i.faults.iter().map(|f| FaultDto { text: f.text.clone(), severity: f.severity.into() }).collect(),
            tests_done: i
                .tests_done
                .iter()
                .map(|t| TestDto {
                    name: t.name.clone(),
                    result: t.result.into(),
                    value: t.value.map(|q| FieldValue { value: q.value, unit: q.unit.symbol().into() }),
                    at: t.at,
                    note: t.note.clone(),
                })
                .collect(),
            accessories: i.accessories.clone(),
            components: i.components.iter().map(|c| c.0).collect(),
            created_at: i.created_at,
            updated_at: i.updated_at,
        }
    }
}

/// A fault to record.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewFault {
    pub text: String,
    pub severity: Severity,
}

impl NewFault {
    pub fn try_into_domain(self) -> Result<di::Fault, ApiError> {
        Ok(di::Fault::new(&self.text, self.severity.into())?)
    }
}

/// A new item.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct CreateItem {
    pub name: String,
    /// lower_snake_case, e.g. `power_supply`.
    pub item_type: String,
    /// One line of identifying facts: brand, model, key specs, serial if known (may be empty, never left out).
    pub profile: String,
    pub condition: Condition,
    pub intent: Intent,
    pub location: Option<String>,
    pub accessories: Option<Vec<String>>,
    /// Measured values by key, in any unit spelling ("Ah", "mah", "TB"); stored normalised.
    pub fields: Option<BTreeMap<String, FieldValue>>,
    pub components: Option<Vec<i64>>,
    pub faults: Option<Vec<NewFault>>,
    /// Where the fields came from (default `manual`).
    pub source: Option<Source>,
}

/// Reads measured fields given by key into measurements at `at`.
pub fn measurements(
    fields: BTreeMap<String, FieldValue>,
    at: DateTime<Utc>,
    source: MeasurementSource,
) -> Result<Vec<Measurement>, ApiError> {
    fields.into_iter().map(|(k, v)| Ok(Measurement::new(&k, v.value, &v.unit, at, source)?)).collect()
}

impl CreateItem {
    pub fn try_into_domain(self, at: DateTime<Utc>) -> Result<NewItem, ApiError> {
        let mut item = NewItem::new(
            ItemName::new(&self.name)?,
            ItemType::new(&self.item_type)?,
            di::profile(&self.profile)?,
            self.condition.into(),
            self.intent.into(),
        );
        item.location = di::location(self.location.as_deref())?;
        item.accessories = di::accessories(&self.accessories.unwrap_or_default())?;
        let source = self.source.map(Into::into).unwrap_or(MeasurementSource::Manual);
        item.measurements = measurements(self.fields.unwrap_or_default(), at, source)?;
        item.components = self.components.unwrap_or_default().into_iter().map(ItemId).collect();
        item.faults =
            self.faults.unwrap_or_default().into_iter().map(NewFault::try_into_domain).collect::<Result<_, _>>()?;
        Ok(item)
    }
}

/// The fields of an item to change; those left out stay as they are.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct PatchItem {
    pub name: Option<String>,
    pub item_type: Option<String>,
    pub profile: Option<String>,
    pub condition: Option<Condition>,
    pub intent: Option<Intent>,
    /// Only `available` or `lent`: reserving and building go through projects.
    pub availability: Option<Availability>,
    /// `null` clears it.
    pub location: MaybeUndefined<String>,
    pub accessories: Option<Vec<String>>,
    pub components: Option<Vec<i64>>,
}

impl PatchItem {
    pub fn try_into_domain(self) -> Result<trove_application::items::ItemPatch, ApiError> {
        Ok(trove_application::items::ItemPatch {
            name: self.name.as_deref().map(ItemName::new).transpose()?,
            item_type: self.item_type.as_deref().map(ItemType::new).transpose()?,
            profile: self.profile.as_deref().map(di::profile).transpose()?,
            condition: self.condition.map(Into::into),
            intent: self.intent.map(Into::into),
            availability: self.availability.map(Into::into),
            place_id: None,
            location: match self.location {
                MaybeUndefined::Undefined => None,
                MaybeUndefined::Null => Some(None),
                MaybeUndefined::Value(v) => Some(di::location(Some(&v))?),
            },
            accessories: self.accessories.as_deref().map(di::accessories).transpose()?,
            components: self.components.map(|c| c.into_iter().map(ItemId).collect()),
        })
    }
}

/// A measurement to record.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewMeasurement {
    pub key: String,
    pub value: f64,
    /// Any unit spelling ("3.4 Ah" is `value: 3.4, unit: "Ah"`); stored normalised.
    pub unit: String,
    /// Default `manual`.
    pub source: Option<Source>,
    /// Default now.
    pub at: Option<DateTime<Utc>>,
}

/// A test to record.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewTest {
    pub name: String,
    pub result: TestResult,
    /// The reading the test gave, with `unit`.
    pub value: Option<f64>,
    pub unit: Option<String>,
    pub note: Option<String>,
    pub at: Option<DateTime<Utc>>,
}

impl NewTest {
    pub fn try_into_domain(self, now: DateTime<Utc>) -> Result<di::TestDone, ApiError> {
        let value = match (self.value, self.unit.as_deref()) {
            (Some(v), Some(u)) => Some(units::normalise(v, u).map_err(|e| ApiError::bad_request(e.to_string()))?),
            (Some(v), None) => Some(units::normalise(v, "").map_err(|e| ApiError::bad_request(e.to_string()))?),
            (None, Some(_)) => return Err(ApiError::bad_request("unit given without a value")),
            (None, None) => None,
        };
        Ok(di::TestDone::new(&self.name, self.result.into(), value, self.at.unwrap_or(now), self.note.as_deref())?)
    }
}

/// Marking an item gone.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct MarkGone {
    pub reason: GoneReason,
    pub note: Option<String>,
}

/// A page of items.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ItemList {
    pub items: Vec<ItemDto>,
    pub total: u64,
    pub limit: u32,
    pub offset: u64,
}

/// A bound on a field.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "FieldBound", deny_unknown_fields)]
pub struct FieldBoundDto {
    pub key: String,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub unit: String,
}

/// A requirement of a template.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Requirement")]
pub struct RequirementDto {
    pub key: String,
    pub label: String,
    pub item_types: Vec<String>,
    pub min_condition: Option<Condition>,
    pub optional: bool,
    pub disqualifying_faults: Vec<Severity>,
    pub fields: Vec<FieldBoundDto>,
}

/// A template.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Template")]
pub struct TemplateDto {
    pub id: i64,
    pub label: String,
    pub goal: String,
    pub effort: String,
    pub steps: Vec<String>,
    pub requirements: Vec<RequirementDto>,
}

impl From<&Template> for TemplateDto {
    fn from(t: &Template) -> Self {
        Self {
            id: t.id.0,
            label: t.label.clone(),
            goal: t.goal.clone(),
            effort: t.effort.clone(),
            steps: t.steps.clone(),
            requirements: t
                .requirements
                .iter()
                .map(|r| RequirementDto {
                    key: r.key.to_string(),
                    label: r.label.clone(),
                    item_types: r.item_types.iter().map(ToString::to_string).collect(),
                    min_condition: r.min_condition.map(Into::into),
                    optional: r.optional,
                    disqualifying_faults: r.disqualifying_faults.iter().map(|s| (*s).into()).collect(),
                    fields: r
                        .fields
                        .iter()
                        .map(|b| FieldBoundDto {
                            key: b.key.to_string(),
                            min: b.min,
                            max: b.max,
                            unit: b.unit.symbol().into(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// A requirement of a new template.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewRequirement {
    pub key: String,
    pub label: String,
    pub item_types: Vec<String>,
    pub min_condition: Option<Condition>,
    pub optional: Option<bool>,
    /// Default `["major", "blocking"]`.
    pub disqualifying_faults: Option<Vec<Severity>>,
    pub fields: Option<Vec<FieldBoundDto>>,
}

/// A new template.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct CreateTemplate {
    pub label: String,
    pub goal: String,
    pub effort: String,
    pub steps: Option<Vec<String>>,
    pub requirements: Vec<NewRequirement>,
}

impl CreateTemplate {
    pub fn try_into_domain(self) -> Result<NewTemplate, ApiError> {
        let requirements = self
            .requirements
            .into_iter()
            .map(|r| {
                let fields = r
                    .fields
                    .unwrap_or_default()
                    .into_iter()
                    .map(|b| FieldBound::new(&b.key, b.min, b.max, &b.unit))
                    .collect::<Result<Vec<_>, _>>()?;
                let types: Vec<&str> = r.item_types.iter().map(String::as_str).collect();
                let mut req = dt::requirement(
                    &r.key,
                    &r.label,
                    &types,
                    r.min_condition.map(Into::into),
                    r.optional.unwrap_or(false),
                    fields,
                )?;
                if let Some(d) = r.disqualifying_faults {
                    req.disqualifying_faults = d.into_iter().map(Into::into).collect();
                }
                Ok(req)
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        Ok(NewTemplate::new(&self.label, &self.goal, &self.effort, &self.steps.unwrap_or_default(), requirements)?)
    }
}

/// The catalogue.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct TemplateList {
    pub templates: Vec<TemplateDto>,
}

/// An allocation: this item fills this requirement.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct AllocationDto {
    pub requirement: String,
    pub item_id: i64,
}

/// A project.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Project")]
pub struct ProjectDto {
    pub id: i64,
    pub template_id: i64,
    pub title: String,
    pub reason: String,
    pub status: ProjectStatus,
    pub allocations: Vec<AllocationDto>,
    /// Uncovered non-optional requirement keys: a shopping list.
    pub missing: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<&Project> for ProjectDto {
    fn from(p: &Project) -> Self {
        Self {
            id: p.id.0,
            template_id: p.template_id.0,
            title: p.title.clone(),
            reason: p.reason.clone(),
            status: p.status.into(),
            allocations: p
                .allocations
                .iter()
                .map(|a| AllocationDto { requirement: a.requirement.clone(), item_id: a.item_id.0 })
                .collect(),
            missing: p.missing.clone(),
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

/// Projects.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ProjectList {
    pub projects: Vec<ProjectDto>,
}

/// Asking for proposals.
#[derive(Debug, Clone, Default, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct ProposeRequest {
    /// The owner's wish, optional.
    pub brief: Option<String>,
}

/// An allocation (or proposal) the rules refused.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct DroppedDto {
    pub template_id: i64,
    pub requirement: Option<String>,
    pub item_id: Option<i64>,
    pub reason: String,
}

impl From<&Dropped> for DroppedDto {
    fn from(d: &Dropped) -> Self {
        Self {
            template_id: d.template_id,
            requirement: d.requirement.clone(),
            item_id: d.item_id,
            reason: d.reason.clone(),
        }
    }
}

/// What a run of model calls cost.
#[derive(Debug, Clone, PartialEq, Object, serde::Serialize)]
pub struct RunSpendDto {
    pub calls: u32,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub searches: u32,
    pub cost_micro_usd: i64,
    /// The cost in dollars, as text ("0.0041").
    pub cost_usd: String,
}

impl From<&RunSpend> for RunSpendDto {
    fn from(s: &RunSpend) -> Self {
        Self {
            calls: s.calls,
            input_tokens: s.input_tokens,
            cached_tokens: s.cached_tokens,
            output_tokens: s.output_tokens,
            searches: s.searches,
            cost_micro_usd: s.cost.0,
            cost_usd: s.cost.to_usd_string(),
        }
    }
}

/// The spend of a run as JSON, for error bodies.
pub fn spend_json(s: &RunSpend) -> serde_json::Value {
    serde_json::to_value(RunSpendDto::from(s)).unwrap_or_default()
}

/// What a proposal run answers.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ProposeResult {
    pub projects: Vec<ProjectDto>,
    pub dropped: Vec<DroppedDto>,
    pub steps: u32,
    pub spend: RunSpendDto,
}
