//! Bulk changes: one set of changes (a place, an intent, a condition) applied to many items at once, each
//! through the same rules as a single change ([`Item::apply`]). All or nothing: one refused item refuses the
//! whole change, naming the item and the reason.

use crate::ids::{ItemId, PlaceId};
use crate::item::{ChangeRefused, Condition, Intent, Item, ItemChanges};

/// Most items one bulk change may touch.
pub const BULK_MAX: usize = 1000;

/// What a bulk change sets on every item; `None` leaves a field as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BulkSet {
    /// `Some(None)` takes the items out of any place.
    pub place_id: Option<Option<PlaceId>>,
    pub intent: Option<Intent>,
    pub condition: Option<Condition>,
}

impl BulkSet {
    /// True when it would change nothing.
    pub fn is_empty(&self) -> bool {
        self.place_id.is_none() && self.intent.is_none() && self.condition.is_none()
    }

    /// The same change as a single item's change.
    pub fn changes(&self) -> ItemChanges {
        ItemChanges {
            place_id: self.place_id,
            intent: self.intent,
            condition: self.condition,
            ..ItemChanges::default()
        }
    }
}

/// Why a bulk change was refused: the first item the rules refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct BulkRefused {
    pub item: ItemId,
    pub reason: ChangeRefused,
}

/// Applies `set` to every item by the rules of a single change and answers the items as changed; the items
/// given are left as they were.
///
/// # Errors
/// [`BulkRefused`] for the first item (in the order given) the rules refuse.
pub fn apply_all(items: &[Item], set: &BulkSet) -> Result<Vec<Item>, BulkRefused> {
    let changes = set.changes();
    items
        .iter()
        .map(|item| {
            let mut changed = item.clone();
            changed.apply(&changes).map_err(|reason| BulkRefused { item: item.id, reason })?;
            Ok(changed)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProjectId;
    use crate::item::{Availability, Gone, GoneReason};
    use crate::testing::{at, item};

    #[test]
    fn every_item_goes_through_the_rules_of_a_single_change() {
        let free = item(1, "laptop", Condition::Good);
        let mut held = item(2, "laptop", Condition::Good);
        held.availability = Availability::Reserved;
        held.project = Some(ProjectId(4));
        let mut gone = item(3, "laptop", Condition::Good);
        gone.gone = Some(Gone { reason: GoneReason::Sold, at: at(2), note: None });

        let check = |items: &[Item], set: BulkSet, want: Result<(), &str>| {
            let got = apply_all(items, &set);
            assert_eq!(got.as_ref().map(|_| ()).map_err(ToString::to_string), want.map_err(str::to_owned));
            if let Ok(changed) = got {
                let single: Vec<Item> = items
                    .iter()
                    .map(|i| {
                        let mut i = i.clone();
                        i.apply(&set.changes()).unwrap();
                        i
                    })
                    .collect();
                assert_eq!(changed, single, "a bulk change is the single change, item by item");
            }
        };
        let move_to = |p| BulkSet { place_id: Some(Some(PlaceId(p))), ..BulkSet::default() };
        let sell = BulkSet { intent: Some(Intent::Sell), ..BulkSet::default() };
        check(&[free.clone(), held.clone()], move_to(7), Ok(()));
        check(std::slice::from_ref(&free), sell, Ok(()));
        check(&[free.clone(), held.clone()], sell, Err("\"item 2\" is reserved by project 4; drop that project first"));
        check(&[free.clone(), gone.clone()], move_to(7), Err("item 3 is gone; it is history and cannot change"));
        check(
            &[free.clone(), held.clone()],
            BulkSet { intent: Some(Intent::Keep), condition: Some(Condition::Fair), ..BulkSet::default() },
            Ok(()),
        );
        let refused = apply_all(&[gone.clone(), held], &sell).unwrap_err();
        assert_eq!(refused.item, ItemId(3), "the first refused item, in the order given");

        let moved = apply_all(&[free], &move_to(7)).unwrap();
        assert_eq!(moved[0].place_id, Some(PlaceId(7)));
        assert!(BulkSet::default().is_empty() && !sell.is_empty());
    }
}
