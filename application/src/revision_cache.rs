//! A per-household cache of something built from the whole inventory (the match index, the `list_inventory`
//! listing), kept while the household's item revision (`InventoryRepo::revision`) is unchanged: one key lookup
//! instead of reading every item. Correct across processes sharing one database, since the revision moves in the
//! transaction of every write of an item, a place or a medium on an item.

use crate::Error;
use crate::ports::InventoryRepo;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use trove_domain::HouseholdId;

/// Households kept; past this the cache starts over (a household's next request rebuilds).
const HOUSEHOLDS: usize = 32;

/// The cache.
pub struct RevisionCache<T> {
    entries: Mutex<HashMap<HouseholdId, (i64, Arc<T>)>>,
}

impl<T> Default for RevisionCache<T> {
    fn default() -> Self {
        Self { entries: Mutex::new(HashMap::new()) }
    }
}

impl<T> std::fmt::Debug for RevisionCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.entries.lock().map(|e| e.len()).unwrap_or_default();
        f.debug_struct("RevisionCache").field("households", &n).finish()
    }
}

impl<T> RevisionCache<T> {
    /// The household's value: the cached one while the household's item revision is unchanged, else `build()`'s.
    ///
    /// # Errors
    /// When the store fails, or `build` does.
    pub async fn get<F, Fut>(
        &self,
        items: &dyn InventoryRepo,
        household: HouseholdId,
        build: F,
    ) -> Result<Arc<T>, Error>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        self.get_matching(items, household, |_| true, build).await
    }

    /// [`RevisionCache::get`], where the cached value is kept only while `still` also holds of it (it was built
    /// from something besides the items, the catalogue say, that must not have changed either).
    ///
    /// # Errors
    /// When the store fails, or `build` does.
    pub async fn get_matching<F, Fut>(
        &self,
        items: &dyn InventoryRepo,
        household: HouseholdId,
        still: impl FnOnce(&T) -> bool,
        build: F,
    ) -> Result<Arc<T>, Error>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let revision = items.revision(household).await?;
        let poisoned = || Error::Unexpected(anyhow::anyhow!("the inventory cache is poisoned"));
        if let Some((at, value)) = self.entries.lock().map_err(|_| poisoned())?.get(&household)
            && *at == revision
            && still(value)
        {
            return Ok(value.clone());
        }
        let value = Arc::new(build().await?);
        let mut entries = self.entries.lock().map_err(|_| poisoned())?;
        if entries.len() >= HOUSEHOLDS && !entries.contains_key(&household) {
            entries.clear();
        }
        // Keyed by the revision read before building: a write in between makes the next request rebuild, never
        // serve a stale value.
        entries.insert(household, (revision, value.clone()));
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::inventory::MockInventoryRepo;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn rebuilds_only_when_the_revision_moves() {
        let revisions = Mutex::new(vec![8, 7, 7]);
        let mut items = MockInventoryRepo::new();
        items.expect_revision().times(3).returning(move |_| Ok(revisions.lock().unwrap().pop().unwrap()));
        let cache = RevisionCache::<u32>::default();
        let builds = AtomicU32::new(0);
        let mut got = Vec::new();
        for _ in 0..3 {
            let v = cache
                .get(&items, HouseholdId(1), || async { Ok(builds.fetch_add(1, Ordering::SeqCst) + 10) })
                .await
                .unwrap();
            got.push(*v);
        }
        assert_eq!(got, vec![10, 10, 11], "built, reused at the same revision, rebuilt at a new one");
        assert_eq!(builds.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn households_are_kept_apart() {
        let mut items = MockInventoryRepo::new();
        items.expect_revision().returning(|_| Ok(1));
        let cache = RevisionCache::<i64>::default();
        for h in [1, 2, 1, 2] {
            let v = cache.get(&items, HouseholdId(h), || async move { Ok(h * 100) }).await.unwrap();
            assert_eq!(*v, h * 100);
        }
    }
}
