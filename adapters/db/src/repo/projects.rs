//! `ProjectRepo`: projects and the lifecycle writes that move items with them. Each lifecycle write is one
//! transaction of conditional updates: the project's status changes only from the status expected, and items
//! move only when they are still as the caller read them.

use crate::Store;
use crate::entity::{items, projects};
use crate::mapping::{self, to_json};
use crate::repo::history::insert_events;
use crate::repo::inventory::item_rows_by_id;
use anyhow::{Context as _, anyhow};
use async_trait::async_trait;
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter,
    QueryOrder,
};
use trove_application::ports::ProjectRepo;
use trove_application::{Conflict, RepoError};
use trove_domain::history::{ObjectKind, Recording, project_fields};
use trove_domain::item::{Availability, Hold, Intent, Item};
use trove_domain::project::{NewProject, Project, ProjectStatus};
use trove_domain::{HouseholdId, ProjectId, Timestamp};

async fn find_project<C: ConnectionTrait>(
    db: &C,
    household: HouseholdId,
    id: ProjectId,
) -> anyhow::Result<Option<Project>> {
    let row = projects::Entity::find_by_id(id.0)
        .filter(projects::Column::HouseholdId.eq(household.0))
        .one(db)
        .await
        .with_context(|| format!("read project {id}"))?;
    row.map(mapping::project).transpose()
}

/// Moves the project from one of `from` to `to`, conditional on its stored status. When no row changed, rolls
/// back and says why: `NotFound` or `Conflict` naming the status it is in.
async fn move_project(
    txn: DatabaseTransaction,
    household: HouseholdId,
    id: ProjectId,
    from: &[ProjectStatus],
    to: ProjectStatus,
    at: Timestamp,
) -> Result<DatabaseTransaction, RepoError> {
    let written = projects::Entity::update_many()
        .col_expr(projects::Column::Status, Expr::val(to.as_str()))
        .col_expr(projects::Column::UpdatedAt, Expr::val(at))
        .filter(projects::Column::Id.eq(id.0))
        .filter(projects::Column::HouseholdId.eq(household.0))
        .filter(projects::Column::Status.is_in(from.iter().map(|s| s.as_str())))
        .exec(&txn)
        .await
        .with_context(|| format!("set project {id} {to}"))?;
    if written.rows_affected == 1 {
        return Ok(txn);
    }
    let current = find_project(&txn, household, id).await?;
    txn.rollback().await.context("roll back the project change")?;
    match current {
        None => Err(RepoError::NotFound),
        Some(p) => {
            Err(RepoError::Conflict(Conflict::ProjectStatus { project: id, is: p.status, expected: from.to_vec() }))
        }
    }
}

/// Moves every item the project holds in `from` to `to` (and optionally releases it), bumping versions.
async fn move_held_items(
    txn: &DatabaseTransaction,
    household: HouseholdId,
    project: ProjectId,
    from: Availability,
    to: Availability,
    release: bool,
    at: Timestamp,
) -> anyhow::Result<()> {
    let mut update = items::Entity::update_many()
        .col_expr(items::Column::Availability, Expr::val(to.as_str()))
        .col_expr(items::Column::Version, Expr::col(items::Column::Version).add(1))
        .col_expr(items::Column::UpdatedAt, Expr::val(at))
        .filter(items::Column::HouseholdId.eq(household.0))
        .filter(items::Column::ProjectId.eq(project.0))
        .filter(items::Column::Availability.eq(from.as_str()));
    if release {
        update = update.col_expr(items::Column::ProjectId, Expr::val(None::<i64>));
    }
    update.exec(txn).await.with_context(|| format!("move the items of project {project} to {to}"))?;
    Ok(())
}

/// Gives back the units of stocks an accepted project holds (every allocated item it does not hold whole), and
/// when `consume`, takes them out of the stock's quantity too (the project is built with them).
async fn move_held_units(
    txn: &DatabaseTransaction,
    household: HouseholdId,
    project: &Project,
    consume: bool,
    at: Timestamp,
) -> anyhow::Result<()> {
    let mut units = project.units_by_item();
    units.sort_unstable();
    for (item, units) in units {
        let units = i64::from(units);
        let mut update = items::Entity::update_many()
            .col_expr(items::Column::UnitsHeld, Expr::col(items::Column::UnitsHeld).sub(units))
            .col_expr(items::Column::Version, Expr::col(items::Column::Version).add(1))
            .col_expr(items::Column::UpdatedAt, Expr::val(at))
            .filter(items::Column::Id.eq(item.0))
            .filter(items::Column::HouseholdId.eq(household.0))
            // An item the project holds whole was moved by `move_held_items`.
            .filter(Expr::col(items::Column::ProjectId).if_null(0).ne(project.id.0))
            .filter(items::Column::UnitsHeld.gte(units));
        if consume {
            update = update.col_expr(items::Column::Quantity, Expr::col(items::Column::Quantity).sub(units));
        }
        update
            .exec(txn)
            .await
            .with_context(|| format!("give back the units of item {item} held by project {}", project.id))?;
    }
    Ok(())
}

/// A project and its allocated items as a step found them, read in its transaction before it writes.
struct Before {
    project: Project,
    items: Vec<Item>,
}

/// Reads the project and, for a step that moves them (`moves_items`), its allocated items in the transaction,
/// before the step; `None` when it does not exist (the step's conditional write then says so). The items' rows
/// only: a step never moves an item between places, so the diff needs no place path.
async fn before(
    txn: &DatabaseTransaction,
    household: HouseholdId,
    id: ProjectId,
    moves_items: bool,
) -> anyhow::Result<Option<Before>> {
    let Some(project) = find_project(txn, household, id).await? else { return Ok(None) };
    let items = if moves_items {
        let ids: Vec<_> = project.allocations.iter().map(|a| a.item_id).collect();
        // Locked, so what the step's events say it changed is what it changed (no other writer in between).
        item_rows_by_id(txn, household, &ids, true).await?
    } else {
        Vec::new()
    };
    Ok(Some(Before { project, items }))
}

/// Reads the project back inside the transaction, writes the step's events (the project's, then each changed
/// item's, against `before`) and commits.
async fn finish(
    txn: DatabaseTransaction,
    household: HouseholdId,
    id: ProjectId,
    before: Option<Before>,
    rec: &Recording,
) -> Result<Project, RepoError> {
    let project =
        find_project(&txn, household, id).await?.ok_or_else(|| anyhow!("project {id} vanished during its change"))?;
    let before = before.ok_or_else(|| anyhow!("project {id} appeared during its change"))?;
    let fields = (Some(project_fields(&before.project)), Some(project_fields(&project)));
    let mut events: Vec<_> = rec.object(ObjectKind::Project, id.0, fields.0, fields.1).into_iter().collect();
    let ids: Vec<_> = before.items.iter().map(|i| i.id).collect();
    for after in item_rows_by_id(&txn, household, &ids, false).await? {
        if let Some(old) = before.items.iter().find(|i| i.id == after.id) {
            events.extend(rec.item_changed(old, &after));
        }
    }
    insert_events(&txn, household, &events).await?;
    txn.commit().await.with_context(|| format!("commit the change of project {id}"))?;
    Ok(project)
}

#[async_trait]
impl ProjectRepo for Store {
    async fn insert_many(
        &self,
        household: HouseholdId,
        projects: Vec<NewProject>,
        rec: &Recording,
    ) -> Result<Vec<Project>, RepoError> {
        let at = rec.at;
        if projects.is_empty() {
            return Ok(Vec::new());
        }
        let txn = self.begin_write().await.context("begin the project insert")?;
        let mut out = Vec::with_capacity(projects.len());
        for p in projects {
            let row = projects::ActiveModel {
                household_id: Set(household.0),
                template_id: Set(p.template_id.0),
                title: Set(p.title),
                reason: Set(p.reason),
                status: Set(ProjectStatus::Proposed.as_str().to_owned()),
                allocations: Set(to_json(&p.allocations, "allocations")?),
                missing: Set(to_json(&p.missing, "missing")?),
                created_at: Set(at),
                updated_at: Set(at),
                ..Default::default()
            };
            let model = row.insert(&txn).await.context("insert project")?;
            out.push(mapping::project(model)?);
        }
        let events: Vec<_> =
            out.iter().filter_map(|p| rec.object(ObjectKind::Project, p.id.0, None, Some(project_fields(p)))).collect();
        insert_events(&txn, household, &events).await?;
        txn.commit().await.context("commit the project insert")?;
        Ok(out)
    }

    async fn refresh(
        &self,
        household: HouseholdId,
        id: ProjectId,
        title: &str,
        reason: &str,
        rec: &Recording,
    ) -> Result<Project, RepoError> {
        let txn = self.begin_write().await.context("begin the refresh")?;
        let before = before(&txn, household, id, false).await?;
        let proposed = [ProjectStatus::Proposed];
        let txn = move_project(txn, household, id, &proposed, ProjectStatus::Proposed, rec.at).await?;
        projects::Entity::update_many()
            .col_expr(projects::Column::Title, Expr::val(title))
            .col_expr(projects::Column::Reason, Expr::val(reason))
            .filter(projects::Column::Id.eq(id.0))
            .filter(projects::Column::HouseholdId.eq(household.0))
            .exec(&txn)
            .await
            .with_context(|| format!("refresh project {id}"))?;
        finish(txn, household, id, before, rec).await
    }

    async fn get(&self, household: HouseholdId, id: ProjectId) -> Result<Project, RepoError> {
        find_project(&self.db, household, id).await?.ok_or(RepoError::NotFound)
    }

    async fn list(&self, household: HouseholdId) -> Result<Vec<Project>, RepoError> {
        let rows = projects::Entity::find()
            .filter(projects::Column::HouseholdId.eq(household.0))
            .order_by_desc(projects::Column::CreatedAt)
            .order_by_desc(projects::Column::Id)
            .all(&self.db)
            .await
            .context("list projects")?;
        Ok(rows.into_iter().map(mapping::project).collect::<anyhow::Result<Vec<_>>>()?)
    }

    async fn accept(
        &self,
        household: HouseholdId,
        id: ProjectId,
        holds: &[Hold],
        rec: &Recording,
    ) -> Result<Project, RepoError> {
        let at = rec.at;
        let txn = self.begin_write().await.context("begin the accept")?;
        let before = before(&txn, household, id, true).await?;
        let txn = move_project(txn, household, id, &[ProjectStatus::Proposed], ProjectStatus::Accepted, at).await?;
        // Items in id order, so that two accepts sharing items lock them in the same order and never deadlock.
        let mut holds = holds.to_vec();
        holds.sort_unstable_by_key(Hold::item);
        for hold in holds {
            let item = hold.item();
            let update = items::Entity::update_many()
                .col_expr(items::Column::Version, Expr::col(items::Column::Version).add(1))
                .col_expr(items::Column::UpdatedAt, Expr::val(at))
                .filter(items::Column::Id.eq(item.0))
                .filter(items::Column::HouseholdId.eq(household.0))
                .filter(items::Column::Availability.eq(Availability::Available.as_str()));
            let update = match hold {
                Hold::Whole { version, .. } => update
                    .col_expr(items::Column::Availability, Expr::val(Availability::Reserved.as_str()))
                    .col_expr(items::Column::ProjectId, Expr::val(id.0))
                    .filter(items::Column::Version.eq(version)),
                // The rule of `Item::units`, in the statement: still buildable, and the units neither held nor lent cover
                // these. The row's lock (or SQLite's one writer) makes the check and the write one step.
                Hold::Units { units, .. } => update
                    .col_expr(items::Column::UnitsHeld, Expr::col(items::Column::UnitsHeld).add(i64::from(units)))
                    .filter(items::Column::Intent.eq(Intent::Keep.as_str()))
                    .filter(items::Column::GoneReason.is_null())
                    .filter(
                        Expr::col(items::Column::Quantity)
                            .sub(Expr::col(items::Column::UnitsHeld))
                            .sub(Expr::col(items::Column::UnitsLent))
                            .gte(i64::from(units)),
                    ),
            };
            let written = update.exec(&txn).await.with_context(|| format!("take item {item} for project {id}"))?;
            if written.rows_affected != 1 {
                txn.rollback().await.context("roll back the accept")?;
                return Err(RepoError::Stale(item));
            }
        }
        finish(txn, household, id, before, rec).await
    }

    async fn build(&self, household: HouseholdId, id: ProjectId, rec: &Recording) -> Result<Project, RepoError> {
        let at = rec.at;
        let txn = self.begin_write().await.context("begin the build")?;
        let before = before(&txn, household, id, true).await?;
        let txn = move_project(txn, household, id, &[ProjectStatus::Accepted], ProjectStatus::Built, at).await?;
        move_held_items(&txn, household, id, Availability::Reserved, Availability::InUse, false, at).await?;
        let project = find_project(&txn, household, id).await?.ok_or_else(|| anyhow!("project {id} vanished"))?;
        move_held_units(&txn, household, &project, true, at).await?;
        finish(txn, household, id, before, rec).await
    }

    async fn drop_project(&self, household: HouseholdId, id: ProjectId, rec: &Recording) -> Result<Project, RepoError> {
        let at = rec.at;
        let txn = self.begin_write().await.context("begin the drop")?;
        let before = before(&txn, household, id, true).await?;
        let from = [ProjectStatus::Proposed, ProjectStatus::Accepted];
        // Only an accepted project holds units; a proposed one gives nothing back.
        let accepted = before.as_ref().map(|b| b.project.clone()).filter(|p| p.status == ProjectStatus::Accepted);
        let txn = move_project(txn, household, id, &from, ProjectStatus::Dropped, at).await?;
        // Units first: an item held whole is told apart by its project, which releasing it clears.
        if let Some(project) = accepted {
            move_held_units(&txn, household, &project, false, at).await?;
        }
        move_held_items(&txn, household, id, Availability::Reserved, Availability::Available, true, at).await?;
        finish(txn, household, id, before, rec).await
    }
}
