//! `TemplateRepo`: the built-in catalogue and households' own templates.

use crate::Store;
use crate::entity::templates;
use crate::mapping::{self, to_json};
use anyhow::Context as _;
use async_trait::async_trait;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use std::collections::HashSet;
use trove_application::RepoError;
use trove_application::ports::TemplateRepo;
use trove_domain::template::{NewTemplate, Template};
use trove_domain::{HouseholdId, TemplateId};

fn row(household: Option<HouseholdId>, t: &NewTemplate) -> anyhow::Result<templates::ActiveModel> {
    Ok(templates::ActiveModel {
        household_id: Set(household.map(|h| h.0)),
        label: Set(t.label.clone()),
        goal: Set(t.goal.clone()),
        effort: Set(t.effort.clone()),
        steps: Set(to_json(&t.steps, "steps")?),
        requirements: Set(to_json(&t.requirements, "requirements")?),
        ..Default::default()
    })
}

/// Built-in templates and the household's own.
fn visible_to(household: HouseholdId) -> sea_orm::Condition {
    sea_orm::Condition::any()
        .add(templates::Column::HouseholdId.is_null())
        .add(templates::Column::HouseholdId.eq(household.0))
}

#[async_trait]
impl TemplateRepo for Store {
    async fn list(&self, household: HouseholdId) -> Result<Vec<Template>, RepoError> {
        let rows = templates::Entity::find()
            .filter(visible_to(household))
            .order_by_asc(templates::Column::Id)
            .all(&self.db)
            .await
            .context("list templates")?;
        Ok(rows.into_iter().map(mapping::template).collect::<anyhow::Result<Vec<_>>>()?)
    }

    async fn get(&self, household: HouseholdId, id: TemplateId) -> Result<Template, RepoError> {
        let row = templates::Entity::find_by_id(id.0)
            .filter(visible_to(household))
            .one(&self.db)
            .await
            .with_context(|| format!("read template {id}"))?;
        Ok(mapping::template(row.ok_or(RepoError::NotFound)?)?)
    }

    async fn get_any(&self, id: TemplateId) -> Result<Template, RepoError> {
        let row =
            templates::Entity::find_by_id(id.0).one(&self.db).await.with_context(|| format!("read template {id}"))?;
        Ok(mapping::template(row.ok_or(RepoError::NotFound)?)?)
    }

    async fn insert(&self, household: HouseholdId, template: NewTemplate) -> Result<Template, RepoError> {
        let txn = self.begin_write().await.context("begin a template")?;
        let stored = row(Some(household), &template)?.insert(&txn).await.context("insert template")?;
        txn.commit().await.context("commit a template")?;
        Ok(mapping::template(stored)?)
    }

    async fn seed_builtin(&self, catalogue: Vec<NewTemplate>) -> Result<(), RepoError> {
        let txn = self.begin_write().await.context("begin the catalogue seeding")?;
        // On PostgreSQL, seeders in several processes take turns (the lock conflicts with itself but not with
        // readers), so each one sees the labels the one before it wrote. On SQLite the write lock does the same.
        if txn.get_database_backend() == DbBackend::Postgres {
            txn.execute_unprepared("LOCK TABLE templates IN SHARE ROW EXCLUSIVE MODE")
                .await
                .context("lock the templates table")?;
        }
        let mut labels: HashSet<String> = templates::Entity::find()
            .select_only()
            .column(templates::Column::Label)
            .filter(templates::Column::HouseholdId.is_null())
            .into_tuple()
            .all(&txn)
            .await
            .context("read the built-in labels")?
            .into_iter()
            .collect();
        let rows = catalogue
            .iter()
            .filter(|t| labels.insert(t.label.clone()))
            .map(|t| row(None, t))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if !rows.is_empty() {
            templates::Entity::insert_many(rows).exec(&txn).await.context("insert the new built-in templates")?;
        }
        txn.commit().await.context("commit the catalogue seeding")?;
        Ok(())
    }
}
