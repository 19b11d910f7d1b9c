//! Proposals and the project lifecycle: propose (the model's tool loop), list, accept, build, drop, and the build
//! pack (its DTOs are the domain's `BuildPack` field for field, the same names and shapes as the document's
//! serde form, so the JSON did not change when it became typed).

use crate::auth::{Member, Person};
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::{Condition, Kept, RunSpendDto, mirror_enum, request_json};
use crate::watched::{Watch, Watched};
use chrono::{DateTime, Utc};
use poem_openapi::param::{Header, Path, Query};
use poem_openapi::payload::{Json, PlainText};
use poem_openapi::{ApiResponse, Object, OpenApi, Tags};
use std::collections::HashMap;
use trove_domain::pack::{BuildPack, MissingPart, PackAllocation, PackItem};
use trove_domain::project::{Dropped, Project};
use trove_domain::{HouseholdId, ItemId, ProjectId};

#[derive(Tags)]
enum Tag {
    /// Proposals and the project lifecycle.
    Projects,
}

mirror_enum!(
    /// A project's status.
    ProjectStatus <=> trove_domain::project::ProjectStatus { Proposed, Accepted, Built, Dropped }
);

/// An allocation: this item fills this requirement with this many of its units.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct AllocationDto {
    pub requirement: String,
    pub item_id: i64,
    /// The item's name now, so a client shows it without asking item by item; null when the item is no longer
    /// in the household.
    pub item_name: Option<String>,
    /// Units of the item it takes: 1 for a single thing, more from a stock (`quantity`).
    pub units: u32,
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

impl ProjectDto {
    /// The project, its allocations named from `names` (`Projects::item_names`).
    pub fn new(p: &Project, names: &HashMap<ItemId, String>) -> Self {
        Self {
            id: p.id.0,
            template_id: p.template_id.0,
            title: p.title.clone(),
            reason: p.reason.clone(),
            status: p.status.into(),
            allocations: p
                .allocations
                .iter()
                .map(|a| AllocationDto {
                    requirement: a.requirement.clone(),
                    item_id: a.item_id.0,
                    item_name: names.get(&a.item_id).cloned(),
                    units: a.units,
                })
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

/// What a proposal run answers.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct ProposeResult {
    pub projects: Vec<ProjectDto>,
    pub dropped: Vec<DroppedDto>,
    pub steps: u32,
    pub spend: RunSpendDto,
}

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
    /// Units of the item it takes.
    pub units: u32,
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
            units: a.units,
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

/// The build pack, as JSON or as printable Markdown.
pub enum PackAnswer {
    /// The pack as JSON.
    Json(Json<Box<BuildPackDto>>),
    /// The pack as Markdown (`Accept: text/markdown`).
    Markdown(PlainText<String>),
}

/// The media type of the Markdown pack.
const MARKDOWN: &str = "text/markdown; charset=utf-8";

/// Written by hand rather than derived: both answers are the one `200` of the route, told apart by `Accept`, and
/// the document must list them as two media types of a single response (a derived enum would repeat the `200`
/// key).
impl ApiResponse for PackAnswer {
    fn meta() -> poem_openapi::registry::MetaResponses {
        let mut json = <Json<Box<BuildPackDto>> as ApiResponse>::meta();
        let markdown = <PlainText<String> as ApiResponse>::meta();
        let mut answer = json.responses.remove(0);
        answer.description = "The build pack: JSON, or printable Markdown with `Accept: text/markdown`";
        for mut media in markdown.responses.into_iter().flat_map(|r| r.content) {
            media.content_type = MARKDOWN;
            answer.content.push(media);
        }
        poem_openapi::registry::MetaResponses { responses: vec![answer] }
    }

    fn register(registry: &mut poem_openapi::registry::Registry) {
        <Json<Box<BuildPackDto>> as ApiResponse>::register(registry);
        <PlainText<String> as ApiResponse>::register(registry);
    }
}

impl poem::IntoResponse for PackAnswer {
    fn into_response(self) -> poem::Response {
        match self {
            PackAnswer::Json(json) => json.into_response(),
            PackAnswer::Markdown(PlainText(text)) => {
                poem::IntoResponse::with_content_type(text, MARKDOWN).into_response()
            }
        }
    }
}

/// The project routes.
pub struct ProjectsApi(pub Services);

impl ProjectsApi {
    /// One project as answered, its allocations named.
    async fn named(&self, household: HouseholdId, project: Project) -> ApiResult<Json<ProjectDto>> {
        let names =
            self.0.projects.item_names(household, std::slice::from_ref(&project)).await.map_err(ApiError::from)?;
        Ok(Json(ProjectDto::new(&project, &names)))
    }
}

#[OpenApi(tag = "Tag::Projects")]
impl ProjectsApi {
    /// Run the proposal loop and write what the rules keep. The body (`{"brief"}`) may be left out. With
    /// `Accept: text/event-stream` the answer is a stream of server-sent events while the loop runs: `step`
    /// (`{"number", "max", "tools"}`), `tool` (`{"name", "output_bytes"}`), then `result` (this JSON) or `error`.
    #[oai(path = "/projects/propose", method = "post")]
    async fn propose(
        &self,
        Person(c): Person,
        #[oai(name = "Idempotency-Key")] key: Header<Option<String>>,
        #[oai(name = "Accept")] accept: Header<Option<String>>,
        body: Json<Option<ProposeRequest>>,
    ) -> ApiResult<Watched<ProposeResult>> {
        let (h, actor) = (c.household, trove_application::recorder::Actor::from(&c));
        let body = body.0.unwrap_or_default();
        let services = self.0.clone();
        let work = move |watch: Watch| async move {
            let run = || async {
                let out =
                    services.propose.run_watched(actor, body.brief.as_deref(), &watch).await.map_err(ApiError::from)?;
                let names = services.projects.item_names(h, &out.projects).await.map_err(ApiError::from)?;
                Ok::<_, ApiError>(Kept(ProposeResult {
                    projects: out.projects.iter().map(|p| ProjectDto::new(p, &names)).collect(),
                    dropped: out.dropped.iter().map(Into::into).collect(),
                    steps: out.steps,
                    spend: (&out.spend).into(),
                }))
            };
            let Kept(answer) =
                services.idempotency.once(h, "propose", key.0.as_deref(), &request_json(&body), run).await?;
            Ok(answer)
        };
        Watched::answer(accept.0.as_deref(), work).await
    }

    /// The household's projects, newest first; `status` keeps those in that status.
    #[oai(path = "/projects", method = "get")]
    async fn list(&self, Member(h): Member, status: Query<Option<ProjectStatus>>) -> ApiResult<Json<ProjectList>> {
        let projects = self.0.projects.list(h, status.0.map(Into::into)).await.map_err(ApiError::from)?;
        let names = self.0.projects.item_names(h, &projects).await.map_err(ApiError::from)?;
        Ok(Json(ProjectList { projects: projects.iter().map(|p| ProjectDto::new(p, &names)).collect() }))
    }

    /// One project.
    #[oai(path = "/projects/:id", method = "get")]
    async fn get(&self, Member(h): Member, id: Path<i64>) -> ApiResult<Json<ProjectDto>> {
        let project = self.0.projects.get(h, ProjectId(id.0)).await.map_err(ApiError::from)?;
        self.named(h, project).await
    }

    /// Accept a proposed project: its single things are reserved and the units it takes of a stock held,
    /// atomically (409 naming an item no longer buildable, or a stock with too few units free).
    #[oai(path = "/projects/:id/accept", method = "post")]
    async fn accept(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Json<ProjectDto>> {
        let project = self.0.projects.accept((&c).into(), ProjectId(id.0)).await.map_err(ApiError::from)?;
        self.named(c.household, project).await
    }

    /// Mark an accepted project built: its single things become in use, the units it holds of a stock are
    /// consumed.
    #[oai(path = "/projects/:id/build", method = "post")]
    async fn build(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Json<ProjectDto>> {
        let project = self.0.projects.build((&c).into(), ProjectId(id.0)).await.map_err(ApiError::from)?;
        self.named(c.household, project).await
    }

    /// Drop a project: what it held becomes available again.
    #[oai(path = "/projects/:id/drop", method = "post")]
    async fn drop_project(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Json<ProjectDto>> {
        let project = self.0.projects.drop_project((&c).into(), ProjectId(id.0)).await.map_err(ApiError::from)?;
        self.named(c.household, project).await
    }

    /// The build pack: JSON, or Markdown with `Accept: text/markdown`.
    #[oai(path = "/projects/:id/pack", method = "get")]
    async fn pack(
        &self,
        Member(h): Member,
        id: Path<i64>,
        #[oai(name = "Accept")] accept: Header<Option<String>>,
    ) -> ApiResult<PackAnswer> {
        let pack = self.0.projects.pack(h, ProjectId(id.0)).await.map_err(ApiError::from)?;
        if accept.0.as_deref().is_some_and(|a| a.contains("text/markdown")) {
            return Ok(PackAnswer::Markdown(PlainText(pack.to_markdown())));
        }
        Ok(PackAnswer::Json(Json(Box::new((&pack).into()))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use poem_openapi::types::ToJSON;
    use trove_domain::item::Condition as DomainCondition;
    use trove_domain::project::ProjectStatus as DomainStatus;
    use trove_domain::{ItemId, TemplateId};

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
                    units: 1,
                    item: Some(PackItem { location: None, ..item.clone() }),
                    problem: None,
                },
                PackAllocation {
                    requirement: "display".into(),
                    label: "a display".into(),
                    check: "item_type is monitor".into(),
                    item_id: ItemId(9),
                    units: 1,
                    item: None,
                    problem: Some("item 9 is no longer in the inventory".into()),
                },
                PackAllocation {
                    requirement: "spare".into(),
                    label: "a spare".into(),
                    check: "any".into(),
                    item_id: ItemId(7),
                    units: 1,
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
