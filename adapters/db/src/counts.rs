//! The totals of listings, kept per household and filter while the household's item revision is unchanged.
//!
//! `households.item_revision` moves on in the same transaction as every write of an item or a place of the
//! household (triggers, `m0008_search`), so a total read at one revision is the total of every later listing
//! until the revision moves, in this process or any other sharing the database. A listing then reads one row
//! instead of counting every matching item for every page.

use std::collections::HashMap;
use std::sync::Mutex;

/// Totals kept before the cache starts over: a household rarely lists with more filters than this between two
/// writes, and each entry is a few dozen bytes.
const ENTRIES_MAX: usize = 4_096;

/// A total, the revision it was counted at, by household and filter.
#[derive(Debug, Default)]
pub(crate) struct CountCache {
    /// (household, the filter written out) to (revision, total).
    totals: Mutex<HashMap<(i64, String), (i64, u64)>>,
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
}
