//! The template catalogue's use cases.

use crate::Error;
use crate::error::{Object, named};
use crate::ports::TemplateRepo;
use std::sync::Arc;
use trove_domain::template::{NewTemplate, Template};
use trove_domain::{HouseholdId, TemplateId};

/// The catalogue: built-in templates and each household's own.
#[derive(Clone)]
pub struct Catalogue {
    templates: Arc<dyn TemplateRepo>,
}

impl std::fmt::Debug for Catalogue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalogue").finish_non_exhaustive()
    }
}

impl Catalogue {
    pub fn new(templates: Arc<dyn TemplateRepo>) -> Self {
        Self { templates }
    }

    /// Seeds the built-in templates the store does not hold yet (all of them on first start).
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn seed(&self) -> Result<(), Error> {
        Ok(self.templates.seed_builtin(trove_domain::catalogue::builtin()).await?)
    }

    /// Every template the household may use.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn list(&self, household: HouseholdId) -> Result<Vec<Template>, Error> {
        Ok(self.templates.list(household).await?)
    }

    /// One template.
    ///
    /// # Errors
    /// [`Error::NotFound`] naming it.
    pub async fn get(&self, household: HouseholdId, id: TemplateId) -> Result<Template, Error> {
        self.templates.get(household, id).await.map_err(named(Object::Template, id.0))
    }

    /// Adds one of the household's own.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only (the template was validated when it was built).
    pub async fn create(&self, household: HouseholdId, template: NewTemplate) -> Result<Template, Error> {
        Ok(self.templates.insert(household, template).await?)
    }
}
