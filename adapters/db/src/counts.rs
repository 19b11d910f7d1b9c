//! The totals of listings, kept per household and filter while the household's item revision is unchanged.
//!
//! `households.item_revision` moves on in the same transaction as every write of an item or a place of the
//! household (triggers, `m0008_search`), so a total read at one revision is the total of every later listing
//! until the revision moves, in this process or any other sharing the database. A listing then reads one row
//! instead of counting every matching item for every page. The paths of places are kept the same way: the
//! revision moves with every insert, rename, move and removal of a place too.

use std::collections::HashMap;
use std::sync::Mutex;
use trove_domain::PlaceId;
use trove_domain::place::PlacePath;

/// Totals kept before the cache starts over: a household rarely lists with more filters than this between two
/// writes, and each entry is a few dozen bytes.
const ENTRIES_MAX: usize = 4_096;

/// Paths kept per household before its paths start over, and households kept before all start over: bounds, not
/// an eviction policy (a household's paths are read again in one query).
const PATHS_MAX: usize = 10_000;
const HOUSEHOLDS_MAX: usize = 1_000;

/// The paths of a household's places read at a revision.
type PathsAt = (i64, HashMap<PlaceId, PlacePath>);

/// A total, the revision it was counted at, by household and filter; and the paths of places read at a revision.
#[derive(Debug, Default)]
pub(crate) struct CountCache {
    /// (household, the filter written out) to (revision, total).
    totals: Mutex<HashMap<(i64, String), (i64, u64)>>,
    /// Household to (revision, the paths of the places read at it).
    paths: Mutex<HashMap<i64, PathsAt>>,
}

impl CountCache {
    /// The total of `filter` in `household`, if it was counted at `revision`.
    pub(crate) fn get(&self, household: i64, filter: &str, revision: i64) -> Option<u64> {
        let totals = self.totals.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        totals.get(&(household, filter.to_owned())).filter(|(r, _)| *r == revision).map(|(_, total)| *total)
    }

    /// Keeps a total counted after `revision` was read. The count never saw an older inventory than `revision`
    /// (it ran later), so a newer one kept under it is only ever counted again.
    pub(crate) fn put(&self, household: i64, filter: String, revision: i64, total: u64) {
        let mut totals = self.totals.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if totals.len() >= ENTRIES_MAX {
            totals.clear();
        }
        totals.insert((household, filter), (revision, total));
    }
}

impl CountCache {
    /// The paths of `places` kept at `revision` of `household`, and the places whose paths are not kept.
    pub(crate) fn paths(
        &self,
        household: i64,
        revision: i64,
        places: impl IntoIterator<Item = PlaceId>,
    ) -> (HashMap<PlaceId, PlacePath>, Vec<PlaceId>) {
        let kept = self.paths.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = kept.get(&household).filter(|(r, _)| *r == revision).map(|(_, paths)| paths);
        let (mut found, mut missing) = (HashMap::new(), Vec::new());
        for place in places {
            if found.contains_key(&place) {
                continue;
            }
            match kept.and_then(|paths| paths.get(&place)) {
                Some(path) => {
                    found.insert(place, path.clone());
                }
                None => missing.push(place),
            }
        }
        (found, missing)
    }

    /// Keeps paths read after `revision` of `household` was read (as [`CountCache::put`] keeps totals).
    pub(crate) fn put_paths(&self, household: i64, revision: i64, read: &HashMap<PlaceId, PlacePath>) {
        let mut kept = self.paths.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.len() >= HOUSEHOLDS_MAX && !kept.contains_key(&household) {
            kept.clear();
        }
        let entry = kept.entry(household).or_insert_with(|| (revision, HashMap::new()));
        if entry.0 != revision || entry.1.len() + read.len() > PATHS_MAX {
            *entry = (revision, HashMap::new());
        }
        entry.1.extend(read.iter().map(|(id, path)| (*id, path.clone())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_total_is_kept_for_its_revision_only() {
        let cache = CountCache::default();
        cache.put(1, "q=pi".into(), 7, 3);
        assert_eq!(cache.get(1, "q=pi", 7), Some(3));
        assert_eq!(cache.get(1, "q=pi", 8), None);
        assert_eq!(cache.get(2, "q=pi", 7), None);
        assert_eq!(cache.get(1, "q=pie", 7), None);
        for n in 0..ENTRIES_MAX {
            cache.put(1, format!("f{n}"), 1, 1);
        }
        assert!(cache.totals.lock().unwrap().len() <= ENTRIES_MAX);
    }

    #[test]
    fn paths_are_kept_for_their_revision_only() {
        use trove_domain::place::{PlaceName, PlaceStep};
        let path = |id: i64| {
            PlacePath::new(vec![PlaceStep { id: PlaceId(id), name: PlaceName::new(&format!("P{id}")).unwrap() }])
                .unwrap()
        };
        let cache = CountCache::default();
        cache.put_paths(1, 7, &HashMap::from([(PlaceId(3), path(3))]));
        let (found, missing) = cache.paths(1, 7, [PlaceId(3), PlaceId(4), PlaceId(3)]);
        assert_eq!((found.len(), missing), (1, vec![PlaceId(4)]));
        assert_eq!(cache.paths(1, 8, [PlaceId(3)]).1, vec![PlaceId(3)]);
        assert_eq!(cache.paths(2, 7, [PlaceId(3)]).1, vec![PlaceId(3)]);
        // A newer revision starts the household's paths over.
        cache.put_paths(1, 8, &HashMap::from([(PlaceId(4), path(4))]));
        assert_eq!(cache.paths(1, 8, [PlaceId(3), PlaceId(4)]).1, vec![PlaceId(3)]);
    }
}
