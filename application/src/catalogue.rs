//! The template catalogue's use cases.

use crate::Error;
use crate::error::named;
use crate::ports::{InventoryRepo, TemplateRepo};
use std::sync::Arc;
use trove_domain::history::ObjectKind;
use trove_domain::item::{TypeCount, type_counts};
use trove_domain::template::{NewTemplate, Template};
use trove_domain::{HouseholdId, TemplateId};

/// The types a form suggests (`GET /api/item-types`): the catalogue's and the household's own.
#[derive(Clone)]
pub struct ItemTypes {
    items: Arc<dyn InventoryRepo>,
    templates: Arc<dyn TemplateRepo>,
}

impl std::fmt::Debug for ItemTypes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemTypes").finish_non_exhaustive()
    }
}

impl ItemTypes {
    pub fn new(items: Arc<dyn InventoryRepo>, templates: Arc<dyn TemplateRepo>) -> Self {
        Self { items, templates }
    }

    /// Every type a requirement of the household's catalogue accepts and every type its present items have,
    /// with how many items have it ([`type_counts`]).
    ///
    /// # Errors
    /// [`Error::Unexpected`] only.
    pub async fn list(&self, household: HouseholdId) -> Result<Vec<TypeCount>, Error> {
        let templates = self.templates.list(household).await?;
        let held = self.items.type_counts(household).await?;
        let accepted = templates.into_iter().flat_map(|t| t.requirements).flat_map(|r| r.item_types);
        Ok(type_counts(accepted, held))
    }
}

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
        self.templates.get(household, id).await.map_err(named(ObjectKind::Template, id.0))
    }

    /// Adds one of the household's own.
    ///
    /// # Errors
    /// [`Error::Unexpected`] only (the template was validated when it was built).
    pub async fn create(&self, household: HouseholdId, template: NewTemplate) -> Result<Template, Error> {
        Ok(self.templates.insert(household, template).await?)
    }
}

#[cfg(test)]
mod item_type_tests {
    use super::*;
    use crate::ports::inventory::MockInventoryRepo;
    use crate::ports::templates::MockTemplateRepo;
    use trove_domain::TemplateId;
    use trove_domain::item::ItemType;

    #[tokio::test]
    async fn the_catalogues_types_and_the_households_come_with_their_counts() {
        let mut templates = MockTemplateRepo::new();
        templates.expect_list().returning(|_| {
            Ok(trove_domain::catalogue::builtin()
                .into_iter()
                .take(1)
                .map(|t| Template {
                    id: TemplateId(1),
                    label: t.label,
                    goal: t.goal,
                    effort: t.effort,
                    steps: t.steps,
                    requirements: t.requirements,
                })
                .collect())
        });
        let wanted: Vec<ItemType> =
            trove_domain::catalogue::builtin()[0].requirements.iter().flat_map(|r| r.item_types.clone()).collect();
        let mut items = MockInventoryRepo::new();
        let held = wanted[0].clone();
        items
            .expect_type_counts()
            .returning(move |_| Ok(vec![(held.clone(), 4), (ItemType::new("Zither").unwrap(), 1)]));
        let list = ItemTypes::new(Arc::new(items), Arc::new(templates)).list(HouseholdId(1)).await.unwrap();
        let count = |t: &ItemType| list.iter().find(|c| &c.item_type == t).map(|c| c.items);
        assert_eq!(count(&wanted[0]), Some(4));
        assert_eq!(count(&ItemType::new("zither").unwrap()), Some(1));
        for t in &wanted[1..] {
            assert!(count(t).is_some(), "{t} is offered");
        }
        let labels: Vec<&str> = list.iter().map(|c| c.label.as_str()).collect();
        let mut sorted = labels.clone();
        sorted.sort_unstable();
        assert_eq!(labels, sorted, "ordered by label");
    }
}
