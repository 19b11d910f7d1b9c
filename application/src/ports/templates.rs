//! The template catalogue.

use crate::RepoError;
use async_trait::async_trait;
use trove_domain::template::{NewTemplate, Template};
use trove_domain::{HouseholdId, TemplateId};

/// Built-in templates (shared by every household) and each household's own.
#[cfg_attr(any(test, feature = "testing"), mockall::automock)]
#[async_trait]
pub trait TemplateRepo: Send + Sync {
    /// The built-in templates and the household's own, ordered by id.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn list(&self, household: HouseholdId) -> Result<Vec<Template>, RepoError>;

    /// One template, built-in or the household's own.
    ///
    /// # Errors
    /// MUST return `NotFound` when it is neither.
    async fn get(&self, household: HouseholdId, id: TemplateId) -> Result<Template, RepoError>;

    /// One template by id, whoever owns it. Only for a backend that received the id from a household-scoped
    /// answer (the local planner reads the machine checks of the templates `template_catalog` showed it).
    ///
    /// # Errors
    /// MUST return `NotFound` when no template has this id.
    async fn get_any(&self, id: TemplateId) -> Result<Template, RepoError>;

    /// Stores a household's own template.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn insert(&self, household: HouseholdId, template: NewTemplate) -> Result<Template, RepoError>;

    /// Seeds the built-in catalogue: inserts, in one transaction, every template of `catalogue` whose label no
    /// built-in template has yet, so templates added by a later release reach existing stores; built-ins
    /// already there are left as they are. Safe to call at every start, also from several processes.
    ///
    /// # Errors
    /// `Unexpected` only.
    async fn seed_builtin(&self, catalogue: Vec<NewTemplate>) -> Result<(), RepoError>;
}
