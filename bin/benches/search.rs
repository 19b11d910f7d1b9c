//! Search and totals benchmarks, on SQLite and PostgreSQL.
//!
//! 100,000 generated items (`bin/benches/generated_inventory`) in 100 places (10 rooms of 10 shelves), one name in
//! a hundred carrying the word "Kestrel". Timed, each over `RUNS` runs, median and p95:
//! 1. `Inventory::list` (what `GET /api/items?q=` calls) for a word in 1% of the names, a prefix of it, the word
//!    with a typo, a deep page (offset 500) and a page by cursor; next to the same search written by hand
//!    over the index (the count, then the ranked page) and the LIKE search the store ran before (one LIKE per
//!    word over the name and the profile: the count, then the page in id order).
//! 2. The first page of the whole listing (`GET /api/items`): its total kept (nothing written since the last
//!    page) and counted again (the household's revision moved just before), next to COUNT(*) and the page by
//!    hand.
//!
//! `cargo bench -p trove --bench search` (a release build; PostgreSQL on 127.0.0.1:5432 with trust auth, or
//! `TROVE_TEST_PG_URL` as for the tests); `search sqlite` or `search postgres` runs one backend. Figures go to
//! BENCHMARKS.md and docs/perf/search-totals-import.md.

#[path = "generated_inventory/mod.rs"]
mod generated_inventory;

use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement};
use std::sync::Arc;
use std::time::{Duration, Instant};
use trove_application::items::Inventory;
use trove_application::ports::{Clock, HouseholdRepo, InventoryRepo, ItemQuery, PlaceRepo};
use trove_db::Store;
use trove_domain::item::ItemName;
use trove_domain::place::{NewPlace, PlaceName};
use trove_domain::{HouseholdId, ItemId, PlaceId};

const ITEMS: usize = 100_000;
const RUNS: usize = 50;
/// The word in one name in a hundred.
const WORD: &str = "kestrel";

struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> trove_domain::Timestamp {
        chrono::Utc::now()
    }
}

/// Median and p95 of the times.
fn spread(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.95))
}

async fn timed<F, Fut>(mut run: F) -> (Duration, Duration)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    run().await;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        run().await;
        times.push(t.elapsed());
    }
    spread(times)
}

async fn places(places: &dyn PlaceRepo, h: HouseholdId) -> Vec<PlaceId> {
    let rec = trove_domain::history::Recording::new(chrono::Utc::now(), None, trove_domain::history::Action::Create);
    let new = |name: String, parent| NewPlace { name: PlaceName::new(&name).unwrap(), parent_id: parent, note: None };
    let mut out = Vec::new();
    for r in 0..10 {
        let room = places.insert(h, new(format!("Room {r}"), None), &rec).await.unwrap().id;
        for s in 0..10 {
            out.push(places.insert(h, new(format!("Shelf {s}"), Some(room)), &rec).await.unwrap().id);
        }
    }
    out
}

/// The search by hand over the index: the count, then the ranked page of 51 rows.
fn by_hand_index(backend: DbBackend, h: i64, query: &str) -> [String; 2] {
    match backend {
        DbBackend::Postgres => {
            let filter =
                format!("household_id = {h} AND gone_reason IS NULL AND search @@ to_tsquery('simple', '{query}')");
            [
                format!("SELECT COUNT(*) FROM items WHERE {filter}"),
                format!(
                    "SELECT * FROM items WHERE {filter} \
                     ORDER BY -ts_rank(search, to_tsquery('simple', '{query}')), id LIMIT 51"
                ),
            ]
        }
        _ => {
            let filter =
                format!("items_search MATCH '{query}' AND items.household_id = {h} AND items.gone_reason IS NULL");
            let from = "items_search JOIN items ON items.id = items_search.rowid";
            [
                format!("SELECT COUNT(*) FROM {from} WHERE {filter}"),
                format!(
                    "SELECT items.* FROM {from} WHERE {filter} \
                     ORDER BY bm25(items_search, 10.0, 4.0, 2.0, 2.0, 1.0), items.id LIMIT 51"
                ),
            ]
        }
    }
}

/// The search the store ran before the index: one LIKE over the name and the profile, the count, then the
/// page of 51 rows in id order.
fn by_hand_like(h: i64, word: &str) -> [String; 2] {
    let filter = format!(
        "household_id = {h} AND gone_reason IS NULL AND LOWER(name || ' ' || profile) LIKE '%{word}%' ESCAPE '\\'"
    );
    [
        format!("SELECT COUNT(*) FROM items WHERE {filter}"),
        format!("SELECT * FROM items WHERE {filter} ORDER BY id LIMIT 51"),
    ]
}

async fn run_by_hand(raw: &DatabaseConnection, [count, page]: &[String; 2]) -> (i64, usize) {
    let backend = raw.get_database_backend();
    let total = raw.query_one_raw(Statement::from_string(backend, count.clone())).await.unwrap().unwrap();
    let rows = raw.query_all_raw(Statement::from_string(backend, page.clone())).await.unwrap();
    (total.try_get_by_index::<i64>(0).unwrap(), rows.len())
}

fn row(backend: &str, what: &str, total: u64, (p50, p95): (Duration, Duration)) {
    println!("| {backend} | {what} | {total} | {p50:.2?} | {p95:.2?} |");
}

async fn bench(name: &str, url: &str) {
    let store = Arc::new(Store::connect(url).await.unwrap());
    store.migrate().await.unwrap();
    let h = HouseholdRepo::ensure_household(store.as_ref(), "bench").await.unwrap();
    let started = Instant::now();
    let shelves = places(store.as_ref(), h).await;
    let mut items = generated_inventory::new_items(ITEMS);
    for (n, item) in items.iter_mut().enumerate() {
        item.place_id = Some(shelves[n % shelves.len()]);
        if n % 100 == 7 {
            item.name = ItemName::new(&format!("{} Kestrel", item.name.as_str())).unwrap();
        }
    }
    let at = generated_inventory::labelled_at();
    for batch in items.chunks(10_000) {
        InventoryRepo::import(store.as_ref(), h, batch.to_vec(), at, &|_: &trove_application::ports::ImportWritten| {
            Vec::<trove_domain::history::Event>::new()
        })
        .await
        .unwrap();
    }
    println!("{name}: {ITEMS} items written (and indexed) in {:.1?}", started.elapsed());

    let recorder = trove_application::recorder::Recorder::new(Arc::new(SystemClock));
    let inventory = Inventory::new(store.clone(), store.clone(), store.clone(), Arc::new(SystemClock), recorder);
    let raw: DatabaseConnection = Database::connect(url).await.unwrap();
    let backend = raw.get_database_backend();
    // Fresh statistics of every table on PostgreSQL, as autovacuum would have (the import refreshes those of
    // `items`); SQLite's are the import's own (`Store::analyze_sqlite`).
    if backend == DbBackend::Postgres {
        raw.execute_unprepared("ANALYZE").await.unwrap();
    }
    let list = |q: Option<&str>, offset: u64, after: Option<ItemId>| {
        let query = ItemQuery { q: q.map(str::to_owned), limit: 50, offset, after, ..ItemQuery::default() };
        let inventory = &inventory;
        async move { inventory.list(h, &query).await.unwrap() }
    };

    println!("| backend | what | total | median | p95 |");
    println!("|---|---|---:|---:|---:|");
    let first = list(Some(WORD), 0, None).await;
    assert_eq!(first.total, (ITEMS / 100) as u64);
    assert!(first.items.iter().all(|i| i.name.as_str().contains("Kestrel")));
    for (what, q) in [
        ("`Inventory::list`, \"kestrel\" (1% of the names)", "kestrel"),
        ("`Inventory::list`, \"kest\" (a prefix)", "kest"),
        ("`Inventory::list`, \"kestrl\" (a typo)", "kestrl"),
        ("`Inventory::list`, \"raspbery\" (a typo)", "raspbery"),
        ("`Inventory::list`, \"kestrel shelf\" (two words, one in the place)", "kestrel shelf"),
    ] {
        let total = list(Some(q), 0, None).await.total;
        row(
            name,
            what,
            total,
            timed(|| async {
                std::hint::black_box(list(Some(q), 0, None).await);
            })
            .await,
        );
    }
    let deep = timed(|| async {
        std::hint::black_box(list(Some(WORD), 500, None).await);
    })
    .await;
    row(name, "`Inventory::list`, \"kestrel\", offset 500", first.total, deep);
    let cursor = first.items.last().map(|i| i.id);
    let by_cursor = timed(|| async {
        std::hint::black_box(list(Some(WORD), 0, cursor).await);
    })
    .await;
    row(name, "`Inventory::list`, \"kestrel\", the second page by cursor", first.total, by_cursor);

    let index_query = if backend == DbBackend::Postgres { "kestrel:*" } else { "\"kestrel\"*" };
    let hand = by_hand_index(backend, h.0, index_query);
    let (total, rows) = run_by_hand(&raw, &hand).await;
    assert_eq!((total as u64, rows), (first.total, 51));
    let t = timed(|| async {
        std::hint::black_box(run_by_hand(&raw, &hand).await);
    })
    .await;
    row(name, "by hand over the index, \"kestrel\" (count, ranked page)", total as u64, t);
    let like = by_hand_like(h.0, WORD);
    let (total, _) = run_by_hand(&raw, &like).await;
    let t = timed(|| async {
        std::hint::black_box(run_by_hand(&raw, &like).await);
    })
    .await;
    row(name, "by hand, before: one LIKE (count, page by id)", total as u64, t);

    let whole = list(None, 0, None).await.total;
    let kept = timed(|| async {
        std::hint::black_box(list(None, 0, None).await);
    })
    .await;
    row(name, "`Inventory::list`, whole listing, first page, total kept", whole, kept);
    let bump = "UPDATE households SET item_revision = item_revision + 1";
    let mut recount = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        raw.execute_unprepared(bump).await.unwrap();
        let t = Instant::now();
        std::hint::black_box(list(None, 0, None).await);
        recount.push(t.elapsed());
    }
    row(name, "`Inventory::list`, whole listing, first page, counted again", whole, spread(recount));
    let plain = [
        format!("SELECT COUNT(*) FROM items WHERE household_id = {} AND gone_reason IS NULL", h.0),
        format!("SELECT * FROM items WHERE household_id = {} AND gone_reason IS NULL ORDER BY id LIMIT 51", h.0),
    ];
    let t = timed(|| async {
        std::hint::black_box(run_by_hand(&raw, &plain).await);
    })
    .await;
    row(name, "by hand: COUNT(*) and the page", whole, t);
    let only_page = ["SELECT CAST(0 AS BIGINT)".to_owned(), plain[1].clone()];
    let t = timed(|| async {
        std::hint::black_box(run_by_hand(&raw, &only_page).await);
    })
    .await;
    row(name, "by hand: the page alone", whole, t);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wants = |part: &str| args.is_empty() || args.iter().any(|a| a == part);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    if wants("sqlite") {
        let url = trove_db::testing::fresh_sqlite_url();
        rt.block_on(bench("SQLite", &url));
        rt.block_on(trove_db::testing::discard(&url)).unwrap();
    }
    if wants("postgres") {
        let url = rt.block_on(trove_db::testing::fresh_postgres_url()).unwrap();
        rt.block_on(bench("PostgreSQL", &url));
        rt.block_on(trove_db::testing::discard(&url)).unwrap();
    }
}
