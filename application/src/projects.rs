//! The project lifecycle: accept (reserve the items atomically), build, drop; and the build pack. Each step is
//! recorded: the project's event (its status, and the items it holds) and one event per item it changed.

use crate::error::{Refusal, named};
use crate::ports::{InventoryRepo, ProjectRepo, TemplateRepo};
use crate::recorder::{Actor, Recorder};
use crate::{Error, RepoError};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use trove_domain::history::{Action, ObjectKind};
use trove_domain::item::Item;
use trove_domain::pack::{self, BuildPack};
use trove_domain::project::{self, Project, ProjectStatus};
use trove_domain::{HouseholdId, ItemId, ProjectId};

/// The lifecycle use cases.
#[derive(Clone)]
pub struct Projects {
    projects: Arc<dyn ProjectRepo>,
    items: Arc<dyn InventoryRepo>,
    templates: Arc<dyn TemplateRepo>,
    /// Where every step of a project, and what it did to its items, is recorded with who asked.
    recorder: Recorder,
}

impl std::fmt::Debug for Projects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Projects").finish_non_exhaustive()
    }
}

fn no_project(id: ProjectId) -> impl Fn(RepoError) -> Error {
    named(ObjectKind::Project, id.0)
}

impl Projects {
    pub fn new(
        projects: Arc<dyn ProjectRepo>,
        items: Arc<dyn InventoryRepo>,
        templates: Arc<dyn TemplateRepo>,
        recorder: Recorder,
    ) -> Self {
        Self { projects, items, templates, recorder }
    }

    /// The household's projects, newest first: every one, or those in `status`.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn list(&self, household: HouseholdId, status: Option<ProjectStatus>) -> Result<Vec<Project>, Error> {
        let mut projects = self.projects.list(household).await?;
        if let Some(status) = status {
            projects.retain(|p| p.status == status);
        }
        Ok(projects)
    }

    /// One project.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming it.
    pub async fn get(&self, household: HouseholdId, id: ProjectId) -> Result<Project, Error> {
        self.projects.get(household, id).await.map_err(no_project(id))
    }

    /// The names of the items `projects` allocate, in one read, so a client shows them without asking item by
    /// item; an item no longer in the household has none.
    ///
    /// # Errors
    /// `Unexpected` only.
    pub async fn item_names(
        &self,
        household: HouseholdId,
        projects: &[Project],
    ) -> Result<HashMap<ItemId, String>, Error> {
        let ids: Vec<ItemId> = projects.iter().flat_map(|p| p.allocations.iter().map(|a| a.item_id)).collect();
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let items = self.items.get_many(household, &ids).await?;
        Ok(items.into_iter().map(|i| (i.id, i.name.to_string())).collect())
    }

    async fn allocated_items(&self, household: HouseholdId, project: &Project) -> Result<Vec<Item>, Error> {
        let ids: Vec<ItemId> = project.allocations.iter().map(|a| a.item_id).collect();
        Ok(self.items.get_many(household, &ids).await?)
    }

    /// Accepts a proposed project: the rules check every item is still buildable with the units the project
    /// takes still available, then the store takes them all in one transaction (a single thing reserved if
    /// unchanged since the check, units of a stock if still available). Recorded (`accept`) with
    /// what it did to them.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Lifecycle`] naming the item that is no longer buildable, or when the
    /// project is not proposed; [`Refusal::ChangedWhileAccepting`] naming the item another writer took in between.
    pub async fn accept(&self, actor: Actor, id: ProjectId) -> Result<Project, Error> {
        let household = actor.household;
        let project = self.get(household, id).await?;
        let items: BTreeMap<ItemId, Item> =
            self.allocated_items(household, &project).await?.into_iter().map(|i| (i.id, i)).collect();
        let holds = project::check_accept(&project, &items).map_err(Refusal::from)?;
        let rec = self.recorder.recording(actor, Action::Accept);
        let accepted = match self.projects.accept(household, id, &holds, &rec).await {
            Ok(p) => p,
            Err(RepoError::Stale(item)) => {
                // Another writer got there first: the rules over the items as they are now say what is wrong
                // (too few units left, no longer buildable), else the item changed in another way.
                let now: BTreeMap<ItemId, Item> =
                    self.allocated_items(household, &project).await?.into_iter().map(|i| (i.id, i)).collect();
                project::check_accept(&project, &now).map_err(Refusal::from)?;
                return Err(Refusal::ChangedWhileAccepting(item).into());
            }
            Err(e) => return Err(no_project(id)(e)),
        };
        Ok(accepted)
    }

    /// Marks an accepted project built; its single things become in use, the units it holds of a stock are
    /// consumed (the stock's quantity goes down, recorded in its history). Recorded (`build`) with what it did to them.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Lifecycle`] unless accepted.
    pub async fn build(&self, actor: Actor, id: ProjectId) -> Result<Project, Error> {
        let household = actor.household;
        let project = self.get(household, id).await?;
        project::check_build(&project).map_err(Refusal::from)?;
        let rec = self.recorder.recording(actor, Action::Build);
        self.projects.build(household, id, &rec).await.map_err(no_project(id))
    }

    /// Drops a proposed or accepted project; what it held becomes available again. Recorded (`drop`) with what
    /// it did to them.
    ///
    /// # Errors
    /// [`Error::NotFound`]; [`Refusal::Lifecycle`] when built or already dropped.
    pub async fn drop_project(&self, actor: Actor, id: ProjectId) -> Result<Project, Error> {
        let household = actor.household;
        let project = self.get(household, id).await?;
        project::check_drop(&project).map_err(Refusal::from)?;
        let rec = self.recorder.recording(actor, Action::Drop);
        self.projects.drop_project(household, id, &rec).await.map_err(no_project(id))
    }

    /// The build pack of a project.
    ///
    /// # Errors
    /// [`Error::NotFound`] for the project (or its template, if it was removed).
    pub async fn pack(&self, household: HouseholdId, id: ProjectId) -> Result<BuildPack, Error> {
        let project = self.get(household, id).await?;
        let template = self
            .templates
            .get(household, project.template_id)
            .await
            .map_err(named(ObjectKind::Template, project.template_id.0))?;
        let items = self.allocated_items(household, &project).await?;
        Ok(pack::build_pack(&project, &template, &items))
    }
}
