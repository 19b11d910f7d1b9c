//! Projects that may be proposed: the catalogue of built-in templates and the household's own.

use crate::auth::Member;
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::{Condition, Created, Severity};
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi, Tags};
use trove_domain::TemplateId;
use trove_domain::template::{self as dt, FieldBound, NewTemplate, Template};

#[derive(Tags)]
enum Tag {
    /// Projects that may be proposed.
    Templates,
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
    /// How many like units it takes ("4 x AA cell"), from one stock item or several; 1 for one thing.
    pub count: u32,
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
                    count: r.count,
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
    /// How many like units it takes, 1 to 10,000; default 1.
    pub count: Option<u32>,
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
                Ok(match r.count {
                    Some(n) => req.with_count(n)?,
                    None => req,
                })
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

/// The template routes.
/// A type the forms suggest.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ItemTypeDto {
    /// The type as kept (`power_bank`).
    #[oai(rename = "type")]
    pub item_type: String,
    /// The type as a person reads it ("Power bank").
    pub label: String,
    /// Present items of this type (0 for a type only the catalogue names).
    pub items: u64,
}

/// The types the forms suggest.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ItemTypeList {
    /// Ordered by label.
    pub types: Vec<ItemTypeDto>,
}

pub struct TemplatesApi(pub Services);

#[OpenApi(tag = "Tag::Templates")]
impl TemplatesApi {
    /// The item types to suggest when an item is typed in: every type a template's requirement accepts (with 0
    /// items when none is held) and every type the household's present items have, with their counts, ordered
    /// by label. Any text is accepted as a type: "Power Bank" is kept as `power_bank`.
    #[oai(path = "/item-types", method = "get")]
    async fn item_types(&self, Member(h): Member) -> ApiResult<Json<ItemTypeList>> {
        let types = self.0.item_types.list(h).await.map_err(ApiError::from)?;
        Ok(Json(ItemTypeList {
            types: types
                .into_iter()
                .map(|t| ItemTypeDto { item_type: t.item_type.to_string(), label: t.label, items: t.items })
                .collect(),
        }))
    }

    /// The catalogue: built-in templates and the household's own.
    #[oai(path = "/templates", method = "get")]
    async fn list(&self, Member(h): Member) -> ApiResult<Json<TemplateList>> {
        let templates = self.0.catalogue.list(h).await.map_err(ApiError::from)?;
        Ok(Json(TemplateList { templates: templates.iter().map(Into::into).collect() }))
    }

    /// One template.
    #[oai(path = "/templates/:id", method = "get")]
    async fn get(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<TemplateDto>> {
        Ok(Json((&self.0.catalogue.get(h, TemplateId(id.0)).await.map_err(ApiError::from)?).into()))
    }

    /// Add a template of the household's own.
    #[oai(path = "/templates", method = "post")]
    async fn create(&self, Member(h): Member, body: Json<CreateTemplate>) -> ApiResult<Created<TemplateDto>> {
        let t = self.0.catalogue.create(h, body.0.try_into_domain()?).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json((&t).into())))
    }
}
