//! Listing answers kept while the inventory they were read from is unchanged.
//!
//! A page of `GET /api/items` is a function of the household, the request's query and the household's items,
//! places and media on items. `households.item_revision` moves on in the same transaction as every write of
//! those (triggers, `m0008_search` and `m0011_media_revision`), in this process or any other sharing the
//! database. So the JSON text of a page written after revision `r` was read is the answer to the same query for
//! as long as the revision is still `r`: a repeated listing reads one row (the revision) and sends bytes it has.
//! A page read after the revision was read never shows an older inventory than `r`; if a write got in between,
//! the revision has moved and the kept page is never served.

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::Mutex;
use trove_domain::HouseholdId;

/// Pages kept before the cache starts over, and the bytes they may hold together: bounds, not an eviction
/// policy (a page not kept is read again).
const ENTRIES_MAX: usize = 512;
const BYTES_MAX: usize = 32 << 20;

/// (household, the request's query text) to (revision, the answer's bytes).
#[derive(Debug, Default)]
pub struct Answers {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    pages: HashMap<(i64, String), (i64, Bytes)>,
    bytes: usize,
}

impl Answers {
    /// The answer kept for `query` in `household` at `revision`.
    pub fn get(&self, household: HouseholdId, query: &str, revision: i64) -> Option<Bytes> {
        let kept = self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.pages.get(&(household.0, query.to_owned())).filter(|(r, _)| *r == revision).map(|(_, b)| b.clone())
    }

    /// Keeps the answer to `query` in `household`, written after `revision` was read.
    pub fn put(&self, household: HouseholdId, query: &str, revision: i64, answer: Bytes) {
        if answer.len() > BYTES_MAX / 8 {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if kept.pages.len() >= ENTRIES_MAX || kept.bytes + answer.len() > BYTES_MAX {
            kept.pages.clear();
            kept.bytes = 0;
        }
        kept.bytes += answer.len();
        if let Some((_, old)) = kept.pages.insert((household.0, query.to_owned()), (revision, answer)) {
            kept.bytes -= old.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: HouseholdId = HouseholdId(1);

    #[test]
    fn an_answer_is_served_only_at_its_revision_and_for_its_household_and_query() {
        let a = Answers::default();
        a.put(H, "limit=50", 7, Bytes::from_static(b"[1]"));
        assert_eq!(a.get(H, "limit=50", 7).as_deref(), Some(&b"[1]"[..]));
        assert_eq!(a.get(H, "limit=50", 8), None, "the revision moved");
        assert_eq!(a.get(HouseholdId(2), "limit=50", 7), None, "another household");
        assert_eq!(a.get(H, "limit=51", 7), None, "another query");
        a.put(H, "limit=50", 8, Bytes::from_static(b"[2]"));
        assert_eq!(a.get(H, "limit=50", 7), None);
        assert_eq!(a.get(H, "limit=50", 8).as_deref(), Some(&b"[2]"[..]));
    }

    #[test]
    fn the_cache_stays_within_its_bounds() {
        let a = Answers::default();
        for n in 0..(ENTRIES_MAX + 10) {
            a.put(H, &format!("offset={n}"), 1, Bytes::from(vec![b' '; 1000]));
        }
        let kept = a.kept.lock().unwrap();
        assert!(kept.pages.len() <= ENTRIES_MAX);
        assert_eq!(kept.bytes, kept.pages.values().map(|(_, b)| b.len()).sum::<usize>());
        drop(kept);
        a.put(H, "big", 1, Bytes::from(vec![b' '; BYTES_MAX / 8 + 1]));
        assert_eq!(a.get(H, "big", 1), None, "an answer too large is not kept");
    }
}
