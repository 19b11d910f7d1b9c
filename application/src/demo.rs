//! Seeding the demo inventory.

use crate::Error;
use crate::ports::{Clock, InventoryRepo, ItemQuery};
use std::sync::Arc;
use trove_domain::item::Gone;
use trove_domain::{HouseholdId, ItemId};

/// Seeds the demo inventory into `household` when it holds no item yet; answers how many items were added
/// (0 when it already had some).
///
/// # Errors
/// [`Error::Unexpected`] only.
pub async fn seed(
    items: &Arc<dyn InventoryRepo>,
    clock: &Arc<dyn Clock>,
    household: HouseholdId,
) -> Result<usize, Error> {
    let any = ItemQuery { include_gone: true, limit: 1, ..ItemQuery::default() };
    if items.list(household, &any).await?.total > 0 {
        return Ok(0);
    }
    let now = clock.now();
    let demo = trove_domain::demo::inventory(now);
    let mut ids: Vec<ItemId> = Vec::with_capacity(demo.len());
    for d in &demo {
        ids.push(items.insert(household, d.item.clone(), now).await?.id);
    }
    for (d, id) in demo.iter().zip(&ids) {
        if d.components.is_empty() && d.gone.is_none() {
            continue;
        }
        let mut item = items.get(household, *id).await?;
        item.components = d.components.iter().filter_map(|i| ids.get(*i).copied()).collect();
        if let Some((reason, note)) = &d.gone {
            item.gone = Some(Gone { reason: *reason, at: now, note: Some(note.clone()) });
        }
        items.update(household, &item).await?;
    }
    Ok(ids.len())
}
