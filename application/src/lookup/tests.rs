//! The lookup's order, cache policy, withheld prefixes and budget, against mocks of its ports.

use super::*;
use crate::RepoError;
use crate::jobs::Jobs;
use crate::ports::clock::MockClock;
use crate::ports::inventory::MockInventoryRepo;
use crate::ports::labels::{MockCodeReader, MockLabelPrinter};
use crate::ports::lookup::{MockLookupCache, MockProductSource};
use crate::ports::places::MockPlaceRepo;
use crate::ports::{ItemPage, ProductCandidate};
use chrono::{TimeZone, Utc};
use std::sync::atomic::{AtomicUsize, Ordering};
use trove_domain::Timestamp;
use trove_domain::code::Codes;
use trove_domain::item::Condition;
use trove_domain::label::LabelTarget;

const H: HouseholdId = HouseholdId(3);
const URL: &str = "http://trove.local:8080";
/// A GTIN-13 no item carries.
const NUTELLA: &str = "3017620422003";

fn now() -> Timestamp {
    Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()
}

/// The household's items: item 7 "Drill" carries the UPC-A 036000291452.
fn items() -> MockInventoryRepo {
    let mut drill = trove_domain::testing::named(7, "Drill", "drill", Condition::Good);
    drill.codes = Codes::parse([(None, "036000291452")]).unwrap();
    let mut items = MockInventoryRepo::new();
    let stored = drill.clone();
    items
        .expect_get()
        .returning(move |_, id| if id == stored.id { Ok(stored.clone()) } else { Err(RepoError::NotFound) });
    items.expect_list().returning(move |_, q| {
        let found: Vec<_> = [drill.clone()]
            .into_iter()
            .filter(|i| q.code.as_deref().is_some_and(|k| i.codes.find(k).is_some()))
            .collect();
        Ok(ItemPage { total: found.len() as u64, items: found, more: false })
    });
    items
}

fn lookup(cache: MockLookupCache, sources: Vec<Arc<dyn ProductSource>>, budget: Duration) -> Lookup {
    let items: Arc<dyn InventoryRepo> = Arc::new(items());
    let labels = Labels::new(
        items.clone(),
        Arc::new(MockPlaceRepo::new()),
        Arc::new(MockLabelPrinter::new()),
        Arc::new(MockCodeReader::new()),
        PublicUrl::new(URL).unwrap(),
        Jobs::new(1, 1),
    );
    let mut clock = MockClock::new();
    clock.expect_now().returning(now);
    Lookup::new(labels, PublicUrl::new(URL).unwrap(), items, Arc::new(cache), sources, Arc::new(clock))
        .with_budget(budget)
}

fn candidate(name: &str) -> ProductCandidate {
    ProductCandidate {
        name: name.into(),
        brand: Some("Acme".into()),
        item_type: None,
        image_url: None,
        attribution: None,
        source_url: format!("https://example.org/{name}"),
    }
}

/// A provider called `name` that answers `answer` after `delay`; it checks, when dropped, that it was asked
/// exactly `times` times (a mock's answer cannot wait, and a slow provider must).
struct Fake {
    name: &'static str,
    times: usize,
    delay: Duration,
    answer: Result<Vec<ProductCandidate>, ProviderFailed>,
    asked: AtomicUsize,
}

impl Drop for Fake {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            assert_eq!(self.asked.load(Ordering::SeqCst), self.times, "{} was asked", self.name);
        }
    }
}

#[async_trait::async_trait]
impl ProductSource for Fake {
    fn name(&self) -> String {
        self.name.to_owned()
    }

    fn knows(&self, _: &Code) -> bool {
        true
    }

    async fn look_up(&self, _: &Code) -> Result<Vec<ProductCandidate>, ProviderFailed> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay).await;
        self.answer.clone()
    }
}

fn source(
    name: &'static str,
    times: usize,
    delay: Duration,
    answer: Result<Vec<ProductCandidate>, ProviderFailed>,
) -> Arc<dyn ProductSource> {
    Arc::new(Fake { name, times, delay, answer, asked: AtomicUsize::new(0) })
}

fn empty_cache() -> MockLookupCache {
    let mut cache = MockLookupCache::new();
    cache.expect_cached().returning(|_, _| Ok(None));
    cache
}

fn products(looked: Looked) -> Products {
    match looked {
        Looked::Products(p) => p,
        other => panic!("products expected, not {other:?}"),
    }
}

#[tokio::test]
async fn our_label_is_answered_as_its_item_before_anything_is_asked() {
    let link = PublicUrl::new(URL).unwrap().link(LabelTarget::Item(ItemId(7)));
    // No cache and no provider expectations: asking either would panic.
    let l = lookup(MockLookupCache::new(), vec![], DEFAULT_BUDGET);
    match l.look_up(H, &link).await.unwrap() {
        Looked::Label(scanned) => {
            assert_eq!((scanned.target, scanned.name.as_str()), (LabelTarget::Item(ItemId(7)), "Drill"))
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_item_carrying_the_code_in_any_form_is_answered_before_the_cache() {
    let l = lookup(MockLookupCache::new(), vec![source("food", 0, Duration::ZERO, Ok(vec![]))], DEFAULT_BUDGET);
    for typed in ["036000291452", "0036000291452", "00036000291452"] {
        match l.look_up(H, typed).await.unwrap() {
            Looked::Item { id, name, .. } => assert_eq!((id, name.as_str()), (ItemId(7), "Drill")),
            other => panic!("{typed}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_cached_answer_is_served_without_asking() {
    let mut cache = MockLookupCache::new();
    cache.expect_cached().withf(|key, at| key == "03017620422003" && *at == now()).returning(|_, _| {
        Ok(Some(CachedLookup {
            candidates: vec![SourcedCandidate {
                source: "food".into(),
                candidate: candidate("Nutella"),
                fetched_at: now(),
            }],
            asked: vec!["food".into()],
            fetched_at: now(),
        }))
    });
    let l = lookup(cache, vec![source("food", 0, Duration::ZERO, Ok(vec![]))], DEFAULT_BUDGET);
    let p = products(l.look_up(H, NUTELLA).await.unwrap());
    assert!(p.cached);
    assert_eq!((p.candidates[0].candidate.name.as_str(), p.asked), ("Nutella", vec!["food".to_owned()]));
}

#[tokio::test]
async fn a_hit_is_kept_ninety_days_in_the_providers_order_and_three_at_most() {
    let mut cache = empty_cache();
    cache
        .expect_keep()
        .times(1)
        .withf(|key, lookup, until| {
            key == "03017620422003" && lookup.candidates.len() == 4 && *until == now() + HIT_KEPT
        })
        .returning(|_, _, _| Ok(()));
    let slow_first = source("food", 1, Duration::from_millis(50), Ok(vec![candidate("a"), candidate("b")]));
    let fast_second = source("products", 1, Duration::ZERO, Ok(vec![candidate("c"), candidate("d")]));
    let failing = source(
        "beauty",
        1,
        Duration::ZERO,
        Err(ProviderFailed::Failed { provider: "beauty".into(), reason: "html".into() }),
    );
    let l = lookup(cache, vec![slow_first, fast_second, failing], DEFAULT_BUDGET);
    let p = products(l.look_up(H, NUTELLA).await.unwrap());
    let names: Vec<&str> = p.candidates.iter().map(|c| c.candidate.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(p.candidates[2].source, "products");
    assert_eq!(p.asked, ["food", "products", "beauty"]);
    assert!(!p.cached);
}

#[tokio::test]
async fn a_miss_of_every_provider_is_kept_seven_days() {
    let mut cache = empty_cache();
    cache
        .expect_keep()
        .times(1)
        .withf(|_, lookup, until| lookup.candidates.is_empty() && *until == now() + MISS_KEPT)
        .returning(|_, _, _| Ok(()));
    let l = lookup(cache, vec![source("food", 1, Duration::ZERO, Ok(vec![]))], DEFAULT_BUDGET);
    let p = products(l.look_up(H, NUTELLA).await.unwrap());
    assert!(p.candidates.is_empty());
    assert_eq!(p.asked, ["food"]);
}

#[tokio::test]
async fn a_failure_or_a_provider_past_the_budget_leaves_no_miss_cached() {
    // No `keep` expected: keeping would panic.
    let waiting = source("food", 1, Duration::ZERO, Err(ProviderFailed::Waiting { provider: "food".into() }));
    let slow = source("library", 1, Duration::from_secs(30), Ok(vec![candidate("late")]));
    let l = lookup(empty_cache(), vec![waiting, slow], Duration::from_millis(100));
    let started = std::time::Instant::now();
    let p = products(l.look_up(H, NUTELLA).await.unwrap());
    assert!(started.elapsed() < Duration::from_secs(5), "the budget bounds the wait");
    assert!(p.candidates.is_empty());
    assert_eq!(p.asked, ["food", "library"], "the providers asked are named even when they gave nothing");
}

#[tokio::test]
async fn in_store_and_issn_codes_are_never_sent_anywhere() {
    // Neither the cache nor the provider is expected: asking either would panic.
    let l = lookup(MockLookupCache::new(), vec![source("food", 0, Duration::ZERO, Ok(vec![]))], DEFAULT_BUDGET);
    for (code, why) in [
        ("2012345000001", Unknowable::InStore),
        ("0212345000007", Unknowable::InStore),
        ("9771234567003", Unknowable::Issn),
    ] {
        let p = products(l.look_up(H, code).await.unwrap());
        assert_eq!((p.withheld, p.asked.len(), p.candidates.len()), (Some(why), 0, 0), "{code}");
    }
}

#[tokio::test]
async fn a_provider_that_cannot_know_the_code_is_not_asked() {
    let mut books = MockProductSource::new();
    books.expect_name().returning(|| "library".to_owned());
    books.expect_knows().returning(|c| c.is_book());
    let mut cache = empty_cache();
    cache.expect_keep().returning(|_, _, _| Ok(()));
    let l = lookup(cache, vec![Arc::new(books), source("food", 1, Duration::ZERO, Ok(vec![]))], DEFAULT_BUDGET);
    assert_eq!(products(l.look_up(H, NUTELLA).await.unwrap()).asked, ["food"]);
}

#[tokio::test]
async fn a_text_that_is_no_product_code_is_refused_naming_the_problem() {
    let l = lookup(MockLookupCache::new(), vec![], DEFAULT_BUDGET);
    for (raw, says) in [
        ("3017620422004", "check digit of gtin 3017620422004 is wrong: it should be 3"),
        ("30176204x2003", "must hold only digits"),
        ("301762042200312345", "has 18 digits"),
        ("abc", "must hold only digits"),
    ] {
        match l.look_up(H, raw).await {
            Err(Error::Invalid(message)) => assert!(message.contains(says), "{raw}: {message}"),
            other => panic!("{raw}: {other:?}"),
        }
    }
}
