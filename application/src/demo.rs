//! Seeding the demo inventory, through the same use case as any item (`Inventory`): every item, every place its
//! `location` makes, its parts and its leaving are recorded in the history as changes of the command line.

use crate::Error;
use crate::items::Inventory;
use crate::items::ItemPatch;
use crate::ports::ItemQuery;
use crate::recorder::Actor;
use trove_domain::{HouseholdId, ItemId};

/// Seeds the demo inventory into `household` when it holds no item yet; answers how many items were added
/// (0 when it already had some).
///
/// # Errors
/// [`Error::Unexpected`] only (the demo inventory passes every rule, which the domain's tests check).
pub async fn seed(inventory: &Inventory, household: HouseholdId, now: trove_domain::Timestamp) -> Result<usize, Error> {
    let any = ItemQuery { include_gone: true, limit: 1, ..ItemQuery::default() };
    if inventory.list(household, &any).await?.total > 0 {
        return Ok(0);
    }
    let actor = Actor::command_line(household);
    let demo = trove_domain::demo::inventory(now);
    let mut ids: Vec<ItemId> = Vec::with_capacity(demo.len());
    for d in &demo {
        ids.push(inventory.create(actor, d.item.clone()).await?.id);
    }
    for (d, id) in demo.iter().zip(&ids) {
        if !d.components.is_empty() {
            let components = d.components.iter().filter_map(|i| ids.get(*i).copied()).collect();
            inventory
                .patch(actor, *id, ItemPatch { components: Some(components), ..ItemPatch::default() }, None)
                .await?;
        }
        if let Some((reason, note)) = &d.gone {
            inventory.mark_gone(actor, *id, *reason, Some(note.clone())).await?;
        }
    }
    Ok(ids.len())
}
